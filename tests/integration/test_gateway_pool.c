/* tests/integration/test_gateway_pool.c: a template's warm pool
 * (PATCH /v1/templates/{name} {"pool": N}, docs/templates.md "Warm pools")
 * on the tiny guest: bad bodies and unknown templates are refused; a pool
 * of 2 fills (GET shows it) with members no route, listing or lookup
 * shows; three creates sent at once are two hits and one miss ("boot":
 * {"pool"}); the hits are ready and usable, the pool refills, and no id
 * or token is ever handed out twice (a claimed member keeps its unseen
 * id, its tokens are new); an E2B create is served from the pool; under
 * the memory budget a real create drops a member and succeeds; a gateway
 * killed with -9 adopts its members, which are still claimed. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/core/auth.h"
#include "tests/lib/gateway_proc.h"

#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define MAX_IDS 64

static struct gateway_proc gw;
static char tpl[64];
static int mem; /* a member's memory_mib (the template's) */
/* every session id and token hash seen so far: none may come twice */
static char seen[MAX_IDS][72];
static int n_seen;

static int vitrine(const char *args)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null 2>&1", bin, args);
	return system(cmd);
}

/* The gateway runs with a memory budget of 5.5 members: room for every
 * test's sessions and members at once, but not for a session of 4 members'
 * memory beside a full pool of 2 (test_memory_budget). */
static int setup(void **state)
{
	static char budget[16];
	static const char *args[] = { "--memory-budget-mib", budget, NULL };
	char cmd[256], path[512];
	json_t *t;

	(void)state;
	snprintf(tpl, sizeof(tpl), "test-pool-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "template create %s --image tiny --settle 1", tpl);
	if (vitrine(cmd) != 0) {
		fprintf(stderr, "vitrine %s failed\n", cmd);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/templates/%s/template.json",
		 getenv("VITRINE_HOME") ? getenv("VITRINE_HOME") : "/var/lib/vitrine", tpl);
	if (!(t = json_load_file(path, 0, NULL)) ||
	    (mem = (int)json_integer_value(json_object_get(t, "memory_mib"))) <= 0) {
		fprintf(stderr, "%s: no memory_mib\n", path);
		json_decref(t);
		return -1;
	}
	json_decref(t);
	snprintf(budget, sizeof(budget), "%d", 5 * mem + mem / 2);
	return gateway_proc_start(&gw, args);
}

static int teardown(void **state)
{
	char args[128];

	(void)state;
	gateway_proc_delete_sessions(&gw);
	gateway_proc_stop(&gw);
	snprintf(args, sizeof(args), "template rm %s", tpl);
	vitrine(args);
	return 0;
}

static struct http_resp req(const char *method, const char *path, const char *body, int status,
			    const char *code)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, gw.key, body,
			      body ? strlen(body) : 0, 60, &r);

	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("%s %s -> %d %.400s (want %d %s)", method, path, r.status,
			 r.body ? r.body : "", status, code ? code : "");
	return r;
}

/* Notes s (an id or a token's hash) as handed out; fails when it was before. */
static void first_time(const char *s)
{
	for (int i = 0; i < n_seen; i++)
		if (!strcmp(seen[i], s))
			fail_msg("%s was handed out twice", s);
	assert_true(n_seen < MAX_IDS);
	snprintf(seen[n_seen++], sizeof(seen[0]), "%s", s);
}

static void set_pool(int n)
{
	char path[128], body[32];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
	snprintf(body, sizeof(body), "{\"pool\":%d}", n);
	r = req("PATCH", path, body, 200, NULL);
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(r.json, "pool"), "size")),
			 n);
	http_resp_free(&r);
}

/* The pool's "ready" and "refilling" now. */
static void pool_now(int *ready, int *refilling)
{
	char path[128];
	struct http_resp r;
	json_t *p;

	snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
	r = req("GET", path, NULL, 200, NULL);
	p = json_object_get(r.json, "pool");
	*ready = (int)json_integer_value(json_object_get(p, "ready"));
	*refilling = (int)json_integer_value(json_object_get(p, "refilling"));
	http_resp_free(&r);
}

/* Waits (up to 5 min: refills are restores on a loaded host) until the
 * pool has n members ready and none refilling. */
static void wait_pool(int n)
{
	int ready = -1, refilling = -1;

	for (int i = 0; i < 1500; i++) {
		pool_now(&ready, &refilling);
		if (ready == n && refilling == 0)
			return;
		usleep(200 * 1000);
	}
	fail_msg("pool of %s: %d ready, %d refilling (want %d ready)", tpl, ready, refilling, n);
}

/* The records of the state dir that say "pool": their ids into ids (n at
 * most), their control tokens' hashes into hashes. Returns how many. */
static int members(char ids[][72], char hashes[][72], int n)
{
	DIR *d = opendir(gw.state_dir);
	struct dirent *e;
	int k = 0;

	assert_non_null(d);
	while ((e = readdir(d)) && k < n) {
		char path[512];
		json_t *rec;
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", gw.state_dir, e->d_name);
		if (!(rec = json_load_file(path, 0, NULL)))
			continue;
		if (json_object_get(rec, "pool")) {
			snprintf(ids[k], 72, "%s", json_string_value(json_object_get(rec, "id")));
			snprintf(hashes[k], 72, "%s",
				 json_string_value(json_object_get(json_object_get(rec, "tokens"),
								   "control_sha256")));
			k++;
		}
		json_decref(rec);
	}
	closedir(d);
	return k;
}

/* Waits until session id is ready; its JSON in *out. */
static void wait_ready(const char *id, struct http_resp *out)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/sessions/%s?wait=ready&timeout_s=120", id);
	*out = req("GET", path, NULL, 200, NULL);
	if (strcmp(json_string_value(json_object_get(out->json, "status")), "ready"))
		fail_msg("session %s: %s", id, out->body);
}

static const char *boot_pool(const struct http_resp *r, const char *key)
{
	const char *v = json_string_value(json_object_get(json_object_get(r->json, "boot"), key));

	return v ? v : "";
}

static bool in(const char *id, char ids[][72], int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(ids[i], id))
			return true;
	return false;
}

static void test_refusals(void **state)
{
	char path[128];
	struct http_resp r;

	(void)state;
	snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
	r = req("PATCH", path, "{\"pool\":-1}", 400, "invalid_argument");
	http_resp_free(&r);
	r = req("PATCH", path, "{\"pool\":1000}", 400, "invalid_argument");
	http_resp_free(&r);
	r = req("PATCH", path, "{\"pool\":1,\"x\":1}", 400, "invalid_argument");
	http_resp_free(&r);
	r = req("PATCH", path, "{\"pool\":\"2\"}", 400, "invalid_argument");
	http_resp_free(&r);
	r = req("PATCH", "/v1/templates/nosuchtemplate", "{\"pool\":1}", 404, "unknown_template");
	http_resp_free(&r);
	/* no pool yet: no "pool" in the template */
	r = req("GET", path, NULL, 200, NULL);
	assert_null(json_object_get(r.json, "pool"));
	http_resp_free(&r);
}

static void test_hits_misses_refill(void **state)
{
	char ids[8][72], hashes[8][72], body[128], path[128];
	struct http_resp r[3], s;
	int n, hits = 0, misses = 0;

	(void)state;
	set_pool(2);
	wait_pool(2);
	n = members(ids, hashes, 8);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++) {
		/* a member is no one's: not listed, not found */
		snprintf(path, sizeof(path), "/v1/sessions/%s", ids[i]);
		s = req("GET", path, NULL, 404, NULL);
		http_resp_free(&s);
		first_time(ids[i]);
		first_time(hashes[i]);
	}
	s = req("GET", "/v1/sessions", NULL, 200, NULL);
	assert_int_equal(json_array_size(json_object_get(s.json, "sessions")), 0);
	http_resp_free(&s);

	/* Three at once (no wait: all three are in before any refill). */
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	for (int i = 0; i < 3; i++)
		r[i] = req("POST", "/v1/sessions", body, 201, NULL);
	for (int i = 0; i < 3; i++) {
		const char *id = json_string_value(json_object_get(r[i].json, "id"));
		const char *control = json_string_value(
			json_object_get(json_object_get(r[i].json, "tokens"), "control"));
		char hash[AUTH_HASH_LEN + 1];

		assert_non_null(id);
		assert_non_null(control);
		auth_token_hash(control, hash);
		if (!strcmp(boot_pool(&r[i], "pool"), "hit")) {
			hits++;
			/* the member's id, never seen; its tokens new */
			assert_true(in(id, ids, n));
			assert_false(in(hash, hashes, n));
		} else {
			misses++;
			assert_string_equal(boot_pool(&r[i], "pool"), "miss");
			assert_string_equal(boot_pool(&r[i], "pool_miss"), "empty");
			first_time(id);
		}
		first_time(hash);
		wait_ready(id, &s);
		/* the session works: a screenshot with its own token */
		{
			struct http_resp shot;

			snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot?format=png", id);
			assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, control,
						      NULL, 0, 60, &shot),
					 0);
			assert_int_equal(shot.status, 200);
			http_resp_free(&shot);
		}
		http_resp_free(&s);
	}
	assert_int_equal(hits, 2);
	assert_int_equal(misses, 1);
	for (int i = 0; i < 3; i++)
		http_resp_free(&r[i]);

	/* Refilled, with members no one has seen. */
	wait_pool(2);
	n = members(ids, hashes, 8);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++) {
		first_time(ids[i]);
		first_time(hashes[i]);
	}
	s = req("GET", "/metrics", NULL, 200, NULL);
	assert_non_null(strstr(s.body, "vitrine_pool_claims_total{result=\"hit\"} 2"));
	assert_non_null(
		strstr(s.body, "vitrine_pool_claims_total{result=\"miss\",reason=\"empty\"} 1"));
	assert_non_null(strstr(s.body, "vitrine_pool_members{state=\"ready\"} 2"));
	http_resp_free(&s);
	gateway_proc_delete_sessions(&gw);
}

static void test_e2b_from_pool(void **state)
{
	char headers[200], body[128], path[128], ids[8][72], hashes[8][72];
	struct http_resp r, s;
	const char *id;
	int n;

	(void)state;
	wait_pool(2);
	n = members(ids, hashes, 8);
	snprintf(headers, sizeof(headers), "X-API-KEY: %s\r\n", gw.key);
	snprintf(body, sizeof(body), "{\"templateID\":\"%s\",\"timeout\":300}", tpl);
	assert_int_equal(http_request_headers("127.0.0.1", gw.port, "POST", "/sandboxes", NULL,
					      headers, body, strlen(body), 120, &r),
			 0);
	if (r.status != 201)
		fail_msg("E2B create: %d %s", r.status, r.body ? r.body : "");
	id = json_string_value(json_object_get(r.json, "sandboxID"));
	assert_non_null(id);
	snprintf(path, sizeof(path), "/v1/sessions/%s", id);
	s = req("GET", path, NULL, 200, NULL);
	assert_string_equal(boot_pool(&s, "pool"), "hit");
	assert_true(in(id, ids, n)); /* a member's id no one had seen */
	http_resp_free(&s);
	http_resp_free(&r);
	gateway_proc_delete_sessions(&gw);
}

static void test_kill9_adopts_members(void **state)
{
	char before[8][72], after[8][72], hashes[8][72], body[128];
	struct http_resp r, s;
	const char *id;
	int n;

	(void)state;
	wait_pool(2);
	n = members(before, hashes, 8);
	assert_int_equal(n, 2);
	assert_true(gateway_proc_kill(&gw, SIGKILL) >= 0);
	assert_int_equal(gateway_proc_restart(&gw, NULL), 0); /* no budget from here on */
	wait_pool(2); /* adopted, still paused: the same two */
	assert_int_equal(members(after, hashes, 8), 2);
	for (int i = 0; i < 2; i++)
		assert_true(in(after[i], before, 2));
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	r = req("POST", "/v1/sessions", body, 201, NULL);
	assert_string_equal(boot_pool(&r, "pool"), "hit");
	id = json_string_value(json_object_get(r.json, "id"));
	wait_ready(id, &s);
	http_resp_free(&s);
	http_resp_free(&r);
	gateway_proc_delete_sessions(&gw);
	set_pool(0);
}

static void test_memory_budget(void **state)
{
	char body[128];
	struct http_resp r, s;
	int ready, refilling;

	(void)state;
	wait_pool(2);
	/* 2 members + 4 more is over 5.5: one member goes, the create runs */
	snprintf(body, sizeof(body), "{\"image\":\"tiny\",\"memory_mib\":%d}", 4 * mem);
	r = req("POST", "/v1/sessions?wait=ready", body, 201, NULL);
	assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ready");
	http_resp_free(&r);
	/* and none comes back while it runs */
	pool_now(&ready, &refilling);
	assert_int_equal(ready + refilling, 1);
	s = req("GET", "/metrics", NULL, 200, NULL);
	assert_non_null(strstr(s.body, "vitrine_pool_evictions_total 1"));
	http_resp_free(&s);
	gateway_proc_delete_sessions(&gw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_hits_misses_refill),
		cmocka_unit_test(test_e2b_from_pool),
		cmocka_unit_test(test_memory_budget),
		cmocka_unit_test(test_kill9_adopts_members),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
