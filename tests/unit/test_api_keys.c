/* tests/unit/test_api_keys.c: the operator's API keys (gateway/core/
 * api_keys.c) and POST /v1/keys's body (api_keys_parse): keys shaped e2b_ +
 * 40 hex with ids key_ + 8, only hashes kept, matched among all, removed,
 * bounded at API_KEYS_MAX; names checked; a project's keys carry it and
 * go with it; the file's form round-trips and refuses
 * what it did not write (bad ids, hashes, names, extra fields, a second
 * of an id); a missing file is no keys; the file is 0600. */
#include "gateway/api/bodies.h"
#include "gateway/core/key_table.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void assert_shape(const char *secret, const struct api_key *k)
{
	assert_int_equal(strlen(secret), API_KEY_SECRET_LEN);
	assert_memory_equal(secret, "e2b_", 4);
	for (const char *p = secret + 4; *p; p++)
		assert_non_null(strchr("0123456789abcdef", *p));
	assert_int_equal(strlen(k->id), API_KEY_ID_LEN);
	assert_memory_equal(k->id, "key_", 4);
	assert_int_equal(strlen(k->hash), AUTH_HASH_LEN);
}

static void test_add_match_remove(void **state)
{
	struct api_keys t = { 0 };
	char s1[API_KEY_SECRET_LEN + 1], s2[API_KEY_SECRET_LEN + 1], h[AUTH_HASH_LEN + 1];
	const struct api_key *a, *b;
	char id_a[API_KEY_ID_LEN + 1];

	(void)state;
	assert_non_null(a = api_keys_add(&t, "ci", NULL, 1000, s1));
	assert_shape(s1, a);
	snprintf(id_a, sizeof(id_a), "%s", a->id);
	assert_non_null(b = api_keys_add(&t, "", NULL, 2000, s2));
	assert_shape(s2, b);
	assert_string_not_equal(s1, s2);
	assert_string_not_equal(id_a, b->id);
	assert_int_equal(t.n, 2);
	/* The secret is not kept: only its hash. */
	assert_null(strstr(t.k[0].hash, s1 + 4));
	auth_token_hash(s1, h);
	assert_string_equal(api_keys_match(&t, h)->id, id_a);
	assert_string_equal(api_keys_match(&t, h)->name, "ci");
	auth_token_hash(s2, h);
	assert_ptr_equal(api_keys_match(&t, h), &t.k[1]);
	auth_token_hash("e2b_0000000000000000000000000000000000000000", h);
	assert_null(api_keys_match(&t, h));
	assert_null(api_keys_match(&t, ""));
	assert_null(api_keys_match(&t, NULL));
	/* Revoked: no longer matches; the other still does. */
	assert_int_equal(api_keys_remove(&t, id_a), 0);
	assert_int_equal(api_keys_remove(&t, id_a), -ENOENT);
	auth_token_hash(s1, h);
	assert_null(api_keys_match(&t, h));
	auth_token_hash(s2, h);
	assert_non_null(api_keys_match(&t, h));
	assert_int_equal(t.n, 1);
}

static void test_bounds_and_names(void **state)
{
	struct api_keys t = { 0 };
	char s[API_KEY_SECRET_LEN + 1], long_name[API_KEY_NAME_MAX + 2];

	(void)state;
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_true(api_keys_name_ok("ci pipeline-2 agent@host:eu.1_x"));
	assert_true(api_keys_name_ok(""));
	assert_false(api_keys_name_ok(long_name));
	long_name[API_KEY_NAME_MAX] = '\0';
	assert_true(api_keys_name_ok(long_name));
	assert_false(api_keys_name_ok("tab\there"));
	assert_false(api_keys_name_ok("new\nline"));
	assert_false(api_keys_name_ok("quote\""));
	assert_false(api_keys_name_ok("caf\xc3\xa9"));
	assert_false(api_keys_name_ok(NULL));
	errno = 0;
	assert_null(api_keys_add(&t, "bad/name", NULL, 0, s));
	assert_int_equal(errno, EINVAL);
	for (int i = 0; i < API_KEYS_MAX; i++)
		assert_non_null(api_keys_add(&t, "k", NULL, i, s));
	errno = 0;
	assert_null(api_keys_add(&t, "one more", NULL, 0, s));
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(t.n, API_KEYS_MAX);
	/* Every id differs. */
	for (int i = 0; i < t.n; i++)
		for (int j = i + 1; j < t.n; j++)
			assert_string_not_equal(t.k[i].id, t.k[j].id);
}

static void test_json_round_trip_and_refusals(void **state)
{
	static const char *bad[] = {
		"{}",
		"[{\"id\":\"key_abcdefgh\",\"name\":\"x\",\"hash\":\"00\",\"created_at\":1}]",
		"[{\"id\":\"key_ABCDEFGH\",\"name\":\"x\",\"hash\":\"%s\",\"created_at\":1}]",
		"[{\"id\":\"tok_abcdefgh\",\"name\":\"x\",\"hash\":\"%s\",\"created_at\":1}]",
		"[{\"id\":\"key_abcdefgh\",\"name\":\"x\\n\",\"hash\":\"%s\",\"created_at\":1}]",
		"[{\"id\":\"key_abcdefgh\",\"name\":\"x\",\"hash\":\"%s\",\"created_at\":1,"
		"\"secret\":\"e2b_00\"}]",
		"[{\"id\":\"key_abcdefgh\",\"name\":\"x\",\"hash\":\"%s\",\"created_at\":1},"
		"{\"id\":\"key_abcdefgh\",\"name\":\"y\",\"hash\":\"%s\",\"created_at\":2}]",
	};
	char hash[AUTH_HASH_LEN + 1], text[1024], err[256], s[API_KEY_SECRET_LEN + 1];
	struct api_keys t = { 0 }, back = { 0 };
	json_t *j;

	(void)state;
	assert_non_null(api_keys_add(&t, "a", NULL, 11, s));
	assert_non_null(api_keys_add(&t, "b c", NULL, 22, s));
	j = api_keys_to_json(&t);
	assert_int_equal(api_keys_from_json(j, &back, err, sizeof(err)), 0);
	json_decref(j);
	assert_int_equal(back.n, 2);
	assert_memory_equal(back.k, t.k, sizeof(t.k[0]) * 2);
	/* What the API shows: no hash, only its first 8 digits. */
	j = api_key_json(&t.k[0]);
	assert_null(json_object_get(j, "hash"));
	assert_int_equal(strlen(json_string_value(json_object_get(j, "prefix"))), 8);
	assert_memory_equal(json_string_value(json_object_get(j, "prefix")), t.k[0].hash, 8);
	assert_int_equal(json_integer_value(json_object_get(j, "created_at")), 11);
	json_decref(j);

	memset(hash, 'a', AUTH_HASH_LEN);
	hash[AUTH_HASH_LEN] = '\0';
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* each "%s" in bad[i] is a good hash */
		const char *p = bad[i];
		size_t o = 0;

		while (*p && o + AUTH_HASH_LEN + 1 < sizeof(text)) {
			if (p[0] == '%' && p[1] == 's') {
				memcpy(text + o, hash, AUTH_HASH_LEN);
				o += AUTH_HASH_LEN;
				p += 2;
			} else {
				text[o++] = *p++;
			}
		}
		text[o] = '\0';
		assert_non_null(j = json_loads(text, 0, NULL));
		back.n = 5;
		err[0] = '\0';
		if (api_keys_from_json(j, &back, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted %s", text);
		assert_int_equal(back.n, 0);
		assert_true(err[0] != '\0');
		json_decref(j);
	}
}

/* A project's key: made with its project, kept in the file, shown by the
 * API; a key of a file from before projects has none (an admin key); a
 * project's removal takes its keys alone; a bad project name is refused. */
static void test_project_keys(void **state)
{
	char err[256], s[API_KEY_SECRET_LEN + 1];
	struct api_keys t = { 0 }, back = { 0 };
	const struct api_key *k;
	json_t *j;

	(void)state;
	assert_non_null(api_keys_add(&t, "admin", NULL, 1, s));
	assert_non_null(k = api_keys_add(&t, "agent", "acme", 2, s));
	assert_string_equal(k->project, "acme");
	assert_ptr_equal(api_keys_match(&t, k->hash), k);
	assert_non_null(api_keys_add(&t, "other", "beta-2", 3, s));
	errno = 0;
	assert_null(api_keys_add(&t, "x", "Bad_Name", 4, s));
	assert_int_equal(errno, EINVAL);
	j = api_keys_to_json(&t);
	assert_null(json_object_get(json_array_get(j, 0), "project"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(j, 1), "project")),
			    "acme");
	assert_int_equal(api_keys_from_json(j, &back, err, sizeof(err)), 0);
	json_decref(j);
	assert_int_equal(back.n, 3);
	assert_memory_equal(back.k, t.k, sizeof(t.k[0]) * 3);
	j = api_key_json(&t.k[0]);
	assert_true(json_is_null(json_object_get(j, "project")) || !json_object_get(j, "project"));
	json_decref(j);
	j = api_key_json(&t.k[1]);
	assert_string_equal(json_string_value(json_object_get(j, "project")), "acme");
	json_decref(j);
	/* a project name the table could not have made */
	j = json_pack("[{s:s, s:s, s:s, s:I, s:s}]", "id", "key_abcdefgh", "name", "x", "hash",
		      t.k[0].hash, "created_at", (json_int_t)1, "project", "../etc");
	assert_int_equal(api_keys_from_json(j, &back, err, sizeof(err)), -EINVAL);
	json_decref(j);
	assert_int_equal(api_keys_remove_project(&t, "acme"), 1);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.k[0].name, "admin");
	assert_string_equal(t.k[1].project, "beta-2");
	assert_int_equal(api_keys_remove_project(&t, "acme"), 0);
}

static void test_file(void **state)
{
	char dir[] = "/tmp/vitrine-api-keys-XXXXXX", path[96], err[256], s[API_KEY_SECRET_LEN + 1];
	struct api_keys t = { 0 }, back = { 0 };
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/api-keys.json", dir);
	assert_int_equal(api_keys_load(&t, path, err, sizeof(err)), 0); /* missing: none */
	assert_int_equal(t.n, 0);
	assert_non_null(api_keys_add(&t, "saved", NULL, 5, s));
	assert_int_equal(api_keys_save(&t, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(api_keys_load(&back, path, err, sizeof(err)), 0);
	assert_int_equal(back.n, 1);
	assert_string_equal(back.k[0].name, "saved");
	assert_string_equal(back.k[0].hash, t.k[0].hash);
	/* A broken file is an error naming it, not an empty table. */
	assert_non_null(f = fopen(path, "w"));
	fputs("[{\"id\":", f);
	fclose(f);
	assert_int_equal(api_keys_load(&back, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	unlink(path);
	rmdir(dir);
}

static void test_post_body(void **state)
{
	char name[API_KEY_NAME_MAX + 1];
	struct api_error e;

	(void)state;
	assert_int_equal(api_keys_parse("", 0, name, sizeof(name), &e), 0);
	assert_string_equal(name, "");
	assert_int_equal(api_keys_parse("{}", 2, name, sizeof(name), &e), 0);
	assert_string_equal(name, "");
	assert_int_equal(api_keys_parse("{\"name\":\"ci 1\"}", 15, name, sizeof(name), &e), 0);
	assert_string_equal(name, "ci 1");
	assert_int_equal(api_keys_parse("{\"nam\":\"x\"}", 11, name, sizeof(name), &e), -EINVAL);
	assert_int_equal(e.status, 400);
	assert_int_equal(api_keys_parse("{\"name\":7}", 10, name, sizeof(name), &e), -EINVAL);
	assert_int_equal(api_keys_parse("{\"name\":\"a\\u0000b\"}", 19, name, sizeof(name), &e),
			 -EINVAL);
	assert_int_equal(api_keys_parse("{\"name\":\"a/b\"}", 14, name, sizeof(name), &e), -EINVAL);
	assert_string_equal(e.code, "invalid_argument");
	assert_int_equal(api_keys_parse("[", 1, name, sizeof(name), &e), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_match_remove),
		cmocka_unit_test(test_bounds_and_names),
		cmocka_unit_test(test_json_round_trip_and_refusals),
		cmocka_unit_test(test_project_keys),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_post_body),
	};

	return cmocka_run_group_tests_name("api keys", tests, NULL, NULL);
}
