/* tests/unit/test_recipe.c: a template's recipe (gateway/template/recipe.c)
 * and the body that carries it (api_recipe_body_parse): the steps become
 * exactly the commands exec runs (a copy is a shell writing stdin to the
 * path with its mode, a run a shell line or argv, as the user asked), the
 * session part is what POST /v1/sessions takes, every refusal is a 400
 * naming the field, and the hash changes with any step, any file's
 * contents and the base, and with nothing else (key order). */
#include "gateway/api/api_recipe.h"
#include "gateway/guest/exec.h"
#include "gateway/template/recipe.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* Parses text into *r; the status (0 when taken) and, on refusal, the code. */
static int parse(const char *text, struct recipe *r, struct api_error *e)
{
	json_t *j = json_loads(text, 0, NULL);
	int rc;

	assert_non_null(j);
	memset(e, 0, sizeof(*e));
	rc = recipe_parse(j, r, e);
	json_decref(j);
	return rc < 0 ? e->status : 0;
}

/* What step i runs, as "root?|argv...|stdin", into out. */
static void step_runs(const struct recipe *r, int i, char *out, size_t len)
{
	char *text = json_dumps(r->steps[i].exec, JSON_COMPACT);
	struct api_error e;
	struct exec_job *j = exec_parse(text, strlen(text), &e);
	const void *in;
	size_t n = 0, in_len;

	free(text);
	assert_non_null(j);
	n += (size_t)snprintf(out + n, len - n, "%s", exec_as_root(j) ? "root" : "user");
	for (const char *const *a = exec_argv(j); *a; a++)
		n += (size_t)snprintf(out + n, len - n, "|%s", *a);
	in = exec_stdin(j, &in_len);
	snprintf(out + n, len - n, "|%.*s", (int)in_len, in ? (const char *)in : "");
	exec_free(j);
}

static void test_steps(void **state)
{
	struct recipe r;
	struct api_error e;
	char out[1024];
	bool is_tpl;

	(void)state;
	assert_int_equal(
		parse("{\"image\":\"tiny\",\"width\":800,\"height\":600,\"vcpus\":1,"
		      "\"memory_mib\":256,\"egress\":{\"allow\":[\"example.org\"]},\"steps\":["
		      "{\"copy\":{\"to\":\"/etc/app.conf\",\"content\":\"x=1\\n\",\"mode\":\"0600\"},"
		      "\"user\":\"root\"},"
		      "{\"name\":\"bin\",\"copy\":{\"to\":\"/tmp/b\",\"content_b64\":\"YWJj\"}},"
		      "{\"run\":\"echo hi > /tmp/x\"},"
		      "{\"name\":\"argv\",\"run\":[\"/bin/touch\",\"/tmp/y\"],\"user\":\"root\","
		      "\"timeout\":600}]}",
		      &r, &e),
		0);
	assert_int_equal(r.n_steps, 4);
	assert_string_equal(recipe_base(&r, &is_tpl), "tiny");
	assert_false(is_tpl);
	assert_int_equal(r.steps[0].kind, RECIPE_STEP_COPY);
	assert_string_equal(r.steps[0].name, "copy /etc/app.conf");
	step_runs(&r, 0, out, sizeof(out));
	assert_string_equal(out, "root|/bin/sh|-c|mkdir -p \"$(dirname \"$0\")\" && cat > \"$0\" "
				 "&& chmod \"$1\" \"$0\"|/etc/app.conf|0600|x=1\n");
	step_runs(&r, 1, out, sizeof(out));
	assert_string_equal(r.steps[1].name, "bin");
	assert_string_equal(strstr(out, "|/tmp/b|"), "|/tmp/b|0644|abc"); /* the default mode */
	assert_string_equal(r.steps[2].name, "run 3");
	assert_int_equal(r.steps[2].kind, RECIPE_STEP_RUN);
	step_runs(&r, 2, out, sizeof(out));
	assert_string_equal(out, "user|/bin/sh|-c|echo hi > /tmp/x|");
	step_runs(&r, 3, out, sizeof(out));
	assert_string_equal(out, "root|/bin/touch|/tmp/y|");
	assert_string_equal(json_string_value(json_object_get(r.session, "image")), "tiny");
	assert_int_equal(json_integer_value(json_object_get(r.session, "width")), 800);
	assert_non_null(json_object_get(r.session, "egress"));
	assert_null(json_object_get(r.session, "steps"));
	recipe_free(&r);

	assert_int_equal(parse("{\"template\":\"base\"}", &r, &e), 0);
	assert_string_equal(recipe_base(&r, &is_tpl), "base");
	assert_true(is_tpl);
	assert_int_equal(r.n_steps, 0);
	recipe_free(&r);
}

static void test_refusals(void **state)
{
	static const struct {
		const char *recipe;
		const char *code, *in_message;
	} bad[] = {
		{ "[]", "invalid_argument", "recipe" },
		{ "{}", "invalid_argument", "base" },
		{ "{\"image\":\"tiny\",\"name\":\"x\"}", "invalid_argument", "'name'" },
		{ "{\"image\":\"tiny\",\"template\":\"t\"}", "invalid_argument", "not both" },
		{ "{\"image\":\"tiny\",\"width\":1}", "out_of_range", "width" },
		{ "{\"image\":\"tiny\",\"egress\":{\"allow\":[\"\"]}}", "invalid_argument", NULL },
		{ "{\"image\":\"tiny\",\"steps\":{}}", "invalid_argument", "steps" },
		{ "{\"image\":\"tiny\",\"steps\":[1]}", "invalid_argument", "steps" },
		{ "{\"image\":\"tiny\",\"steps\":[{}]}", "invalid_argument", "exactly one" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"run\":\"\"}]}", "invalid_argument", "run" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"run\":[]}]}", "invalid_argument", "run" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"run\":[1]}]}", "invalid_argument", "run" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"run\":\"true\",\"user\":\"bob\"}]}",
		  "invalid_argument", "step 1 (run 1): user" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"run\":\"true\",\"timeout\":601}]}",
		  "invalid_argument", "timeout" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"run\":\"true\",\"x\":1}]}", "invalid_argument",
		  "'x'" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"name\":\"a\\nb\",\"run\":\"true\"}]}",
		  "invalid_argument", "name" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"rel\",\"content\":\"\"}}]}",
		  "invalid_argument", "copy.to" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"/a\"}}]}", "invalid_argument",
		  "content" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"/a\",\"content\":\"\","
		  "\"content_b64\":\"\"}}]}",
		  "invalid_argument", "content" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"/a\",\"content_b64\":\"!!\"}}]}",
		  "invalid_argument", "stdin_b64" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"/a\",\"content\":\"\","
		  "\"mode\":\"9\"}}]}",
		  "invalid_argument", "mode" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"/a\",\"content\":\"\","
		  "\"mode\":420}}]}",
		  "invalid_argument", "mode" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"/a\",\"src\":\"f\"}}]}",
		  "invalid_argument", "CLI" },
		{ "{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"/a\",\"content\":\"\"},"
		  "\"timeout\":5}]}",
		  "invalid_argument", "copy step" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct recipe r;
		struct api_error e;

		if (parse(bad[i].recipe, &r, &e) != 400 || strcmp(e.code, bad[i].code) ||
		    (bad[i].in_message && !strstr(e.message, bad[i].in_message)))
			fail_msg("%s: %d %s %s", bad[i].recipe, e.status, e.code, e.message);
		assert_int_equal(r.n_steps, 0); /* nothing held */
		assert_null(r.session);
	}
}

static void hash_of(const char *text, const char *base, char out[SHA256_HEX_LEN + 1])
{
	struct recipe r;
	struct api_error e;

	assert_int_equal(parse(text, &r, &e), 0);
	recipe_hash(&r, base, out);
	recipe_free(&r);
}

static void test_hash(void **state)
{
	char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1];

	(void)state;
	hash_of("{\"image\":\"tiny\",\"vcpus\":1,\"steps\":[{\"run\":\"true\"}]}", "image tiny 1",
		a);
	assert_int_equal(strlen(a), SHA256_HEX_LEN);
	hash_of("{\"steps\":[{\"run\":\"true\"}],\"vcpus\":1,\"image\":\"tiny\"}", "image tiny 1",
		b);
	assert_string_equal(a, b); /* key order does not matter */
	hash_of("{\"image\":\"tiny\",\"vcpus\":1,\"steps\":[{\"run\":\"true\"}]}", "image tiny 2",
		b);
	assert_string_not_equal(a, b); /* the base was rebuilt */
	hash_of("{\"image\":\"tiny\",\"vcpus\":1,\"steps\":[{\"run\":\"false\"}]}", "image tiny 1",
		b);
	assert_string_not_equal(a, b);
	hash_of("{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"/a\",\"content\":\"1\"}}]}",
		"x", a);
	hash_of("{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":\"/a\",\"content\":\"2\"}}]}",
		"x", b);
	assert_string_not_equal(a, b); /* a file's contents */
}

static void test_body(void **state)
{
	struct api_error e;
	char name[64];
	json_t *rec;

	(void)state;
	assert_int_equal(api_recipe_body_parse("{\"name\":\"t\",\"recipe\":{\"image\":\"tiny\"}}",
					       38, name, sizeof(name), &rec, &e),
			 1);
	assert_string_equal(name, "t");
	assert_true(json_is_object(rec));
	json_decref(rec);
	assert_int_equal(api_recipe_body_parse("{\"name\":\"t\",\"image\":\"tiny\"}", 27, name,
					       sizeof(name), &rec, &e),
			 0);
	assert_null(rec);
	assert_int_equal(api_recipe_body_parse("{\"name\":\"t\",\"recipe\":{},\"url\":\"x\"}", 33,
					       name, sizeof(name), &rec, &e),
			 -EINVAL);
	assert_int_equal(e.status, 400);
	assert_int_equal(api_recipe_body_parse("{\"name\":\"T\",\"recipe\":{}}", 24, name,
					       sizeof(name), &rec, &e),
			 -EINVAL);
	assert_int_equal(api_recipe_body_parse("{\"recipe\":{}}", 13, name, sizeof(name), &rec, &e),
			 -EINVAL);
	assert_int_equal(api_recipe_body_parse("{\"name\":\"t\",\"recipe\":1}", 23, name,
					       sizeof(name), &rec, &e),
			 -EINVAL);
	assert_null(rec);
	assert_int_equal(api_recipe_body_parse("nope", 4, name, sizeof(name), &rec, &e), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_body),
	};

	return cmocka_run_group_tests_name("recipes", tests, NULL, NULL);
}
