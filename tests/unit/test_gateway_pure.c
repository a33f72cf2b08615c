/* tests/unit/test_gateway_pure.c: the gateway's pure parts: routes, auth
 * (tokens, bearer parsing, scopes, constant-time compare, origin allowlist)
 * and the validation of POST /v1/sessions bodies, screenshot options and
 * share requests; the rate limits' buckets. */
#include "gateway/action/run.h"
#include "gateway/api/api_int.h"
#include "gateway/api/routes.h"
#include "gateway/core/auth.h"
#include "gateway/core/rate.h"
#include "gateway/session/session_spec.h"
#include "gateway/stream/share.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void test_routes(void **state)
{
	struct route r;

	(void)state;
	assert_int_equal(route_parse(M_GET, "/healthz").kind, R_HEALTH);
	assert_int_equal(route_parse(M_POST, "/healthz").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_GET, "/v1/sessions").kind, R_SESSIONS_LIST);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/").kind, R_SESSIONS_LIST);
	assert_int_equal(route_parse(M_POST, "/v1/sessions").kind, R_SESSIONS_CREATE);
	assert_int_equal(route_parse(M_DELETE, "/v1/sessions").kind, R_METHOD_NOT_ALLOWED);
	/* tokens: list and mint, revoke, rotate */
	assert_int_equal(route_parse(M_GET, "/v1/sessions/x1/tokens").kind, R_SESSION_TOKENS);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/x1/tokens").kind, R_SESSION_TOKENS);
	assert_int_equal(route_parse(M_PUT, "/v1/sessions/x1/tokens").kind, R_METHOD_NOT_ALLOWED);
	r = route_parse(M_DELETE, "/v1/sessions/x1/tokens/t0123abcde");
	assert_int_equal(r.kind, R_SESSION_TOKEN);
	assert_string_equal(r.id, "x1");
	assert_string_equal(r.sub, "t0123abcde");
	r = route_parse(M_POST, "/v1/sessions/x1/tokens/control/rotate");
	assert_int_equal(r.kind, R_SESSION_TOKEN_ROTATE);
	assert_string_equal(r.sub, "control");
	assert_int_equal(route_parse(M_GET, "/v1/sessions/x1/tokens/control/rotate").kind,
			 R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/x1/tokens/control").kind,
			 R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_DELETE, "/v1/sessions/x1/tokens/").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_DELETE, "/v1/sessions/x1/tokens/a/b").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_DELETE,
				     "/v1/sessions/x1/tokens/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
				 .kind,
			 R_NOT_FOUND); /* longer than a token id */
	assert_int_equal(route_parse(M_DELETE, "/v1/sessions/x1/share").kind, R_SESSION_SHARE);
	r = route_parse(M_GET, "/v1/sessions/s_0123abcd");
	assert_int_equal(r.kind, R_SESSION_GET);
	assert_string_equal(r.id, "s_0123abcd");
	assert_int_equal(route_parse(M_DELETE, "/v1/sessions/s_1").kind, R_SESSION_DELETE);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/screenshot").kind,
			 R_SESSION_SCREENSHOT);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/screenshot").kind,
			 R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/thumbnail").kind,
			 R_SESSION_THUMBNAIL);
	assert_int_equal(route_parse(M_PUT, "/v1/sessions/s_1/thumbnail").kind,
			 R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/actions").kind, R_SESSION_ACTIONS);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/control").kind, R_SESSION_CONTROL_WS);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/nope").kind, R_NOT_FOUND);
	/* the guest's services */
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/exec").kind, R_SESSION_EXEC);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/exec/stream").kind,
			 R_SESSION_EXEC_WS);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/cdp").kind, R_SESSION_CDP_WS);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/cdp/json/version").kind,
			 R_SESSION_CDP_VERSION);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/cdp/json/version/").kind,
			 R_SESSION_CDP_VERSION);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/cdp/json/list").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/cdp").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_PUT, "/v1/sessions/s_1/egress").kind, R_SESSION_EGRESS);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/egress").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/egress/log").kind,
			 R_SESSION_EGRESS_LOG);
	assert_int_equal(route_parse(M_PUT, "/v1/sessions/s_1/clipboard").kind,
			 R_SESSION_CLIPBOARD);
	assert_int_equal(route_parse(M_DELETE, "/v1/sessions/s_1/clipboard").kind,
			 R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/open").kind, R_SESSION_OPEN);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/launch").kind, R_SESSION_LAUNCH);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/launch").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/../etc").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/a.b").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_GET, "/v1/sessionsX").kind, R_NOT_FOUND);
	/* A node name of 20 and 16 more, the longest id sess_alloc makes: fits;
	 * one more character: no such path (404), on every route of a session. */
	r = route_parse(M_GET, "/v1/sessions/abcdefghijklmnopqrst0123456789abcdef");
	assert_int_equal(r.kind, R_SESSION_GET);
	assert_int_equal(strlen(r.id), ROUTE_SESSION_ID_MAX);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/abcdefghijklmnopqrst0123456789abcdefg")
				 .kind,
			 R_NOT_FOUND); /* 37 characters */
	assert_int_equal(route_parse(M_POST,
				     "/v1/sessions/abcdefghijklmnopqrst0123456789abcdefg/actions")
				 .kind,
			 R_NOT_FOUND);
	assert_int_equal(
		route_parse(M_GET,
			    "/v1/sessions/"
			    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
			.kind,
		R_NOT_FOUND); /* 65 characters */
	/* A template name may be longer than a session id. */
	r = route_parse(M_GET, "/v1/templates/abcdefghijklmnopqrst0123456789abcdefghijkl");
	assert_int_equal(r.kind, R_TEMPLATE_GET);
	assert_int_equal(strlen(r.id), 42);
	assert_int_equal(route_parse(M_GET, "/").kind, R_ROOT); /* redirects to the web viewer */
	assert_int_equal(route_parse(M_GET, "/nope").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_GET, "/v1/templates").kind, R_TEMPLATES_LIST);
	assert_int_equal(route_parse(M_POST, "/v1/templates").kind, R_TEMPLATES_CREATE);
	assert_int_equal(route_parse(M_DELETE, "/v1/templates").kind, R_METHOD_NOT_ALLOWED);
	r = route_parse(M_GET, "/v1/templates/desktop-ready");
	assert_int_equal(r.kind, R_TEMPLATE_GET);
	assert_string_equal(r.id, "desktop-ready");
	assert_int_equal(route_parse(M_DELETE, "/v1/templates/t1").kind, R_TEMPLATE_DELETE);
	assert_int_equal(route_parse(M_GET, "/v1/templates/t1/x").kind, R_NOT_FOUND);
	/* Moving templates; "import" and "gc" stay names for GET and DELETE. */
	r = route_parse(M_GET, "/v1/templates/t1/export");
	assert_int_equal(r.kind, R_TEMPLATE_EXPORT);
	assert_string_equal(r.id, "t1");
	assert_int_equal(route_parse(M_POST, "/v1/templates/t1/export").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_GET, "/v1/templates/t1/export/").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_POST, "/v1/templates/import").kind, R_TEMPLATE_IMPORT);
	assert_int_equal(route_parse(M_GET, "/v1/templates/import").kind, R_TEMPLATE_GET);
	assert_int_equal(route_parse(M_POST, "/v1/templates/gc").kind, R_TEMPLATES_GC);
	assert_int_equal(route_parse(M_DELETE, "/v1/templates/gc").kind, R_TEMPLATE_DELETE);
	assert_int_equal(route_parse(M_POST, "/v1/templates/other").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_GET, "/v1/templates/../x").kind, R_NOT_FOUND);
}

static void test_tokens(void **state)
{
	char a[AUTH_TOKEN_LEN + 1], b[AUTH_TOKEN_LEN + 1];

	(void)state;
	assert_int_equal(auth_new_token(a), 0);
	assert_int_equal(auth_new_token(b), 0);
	assert_int_equal(strlen(a), AUTH_TOKEN_LEN);
	assert_int_equal(strspn(a,
				"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
			 AUTH_TOKEN_LEN);
	assert_string_not_equal(a, b);
	assert_true(auth_equal(a, a));
	assert_false(auth_equal(a, b));
	assert_false(auth_equal("abc", "abcd"));
	assert_false(auth_equal("abcd", "abc"));
	assert_true(auth_equal("", ""));
}

static void test_bearer(void **state)
{
	char t[64];

	(void)state;
	assert_int_equal(auth_parse_bearer("Bearer abc123", t, sizeof(t)), 0);
	assert_string_equal(t, "abc123");
	assert_int_equal(auth_parse_bearer("bearer   xyz", t, sizeof(t)), 0);
	assert_string_equal(t, "xyz");
	assert_int_equal(auth_parse_bearer("Basic abc", t, sizeof(t)), -EINVAL);
	assert_int_equal(auth_parse_bearer("Bearer ", t, sizeof(t)), -EINVAL);
	assert_int_equal(auth_parse_bearer("Bearer a b", t, sizeof(t)), -EINVAL);
	assert_int_equal(auth_parse_bearer(NULL, t, sizeof(t)), -EINVAL);
	assert_int_equal(auth_parse_bearer("Bearer 0123456789", t, 5), -EINVAL);
}

static void test_scopes(void **state)
{
	char ctl[AUTH_HASH_LEN + 1], view[AUTH_HASH_LEN + 1];

	(void)state;
	/* Sessions keep only the hashes of their tokens. */
	auth_token_hash("ctl", ctl);
	auth_token_hash("view", view);
	assert_string_equal(ctl,
			    "8d64666b3a57b53101d5ec122525a781485120c5ee7be962ba492bef42096341");
	assert_string_not_equal(ctl, view);
	{
		char op[AUTH_HASH_LEN + 1], h[AUTH_HASH_LEN + 1], ex[AUTH_HASH_LEN + 1];
		struct auth_grant g[2] = {
			{ .id = "t000000001", .rights = AUTH_R_EXEC | AUTH_R_ADMIN },
			{ .id = "t000000002", .rights = AUTH_R_VIEW, .expires_unix_ms = 5000 }
		};
		const char *which;

		auth_token_hash("op", op);
		auth_token_hash("minted", g[0].hash);
		auth_token_hash("short", g[1].hash);
		assert_int_equal(auth_rights_of_hash(op, op, ctl, view, g, 2, 1000, &which),
				 AUTH_RIGHTS_OPERATOR);
		assert_string_equal(which, "operator");
		assert_int_equal(auth_rights_of_hash(ctl, op, ctl, view, g, 2, 1000, &which),
				 AUTH_RIGHTS_CONTROL);
		assert_string_equal(which, "control");
		assert_int_equal(auth_rights_of_hash(view, op, ctl, view, g, 2, 1000, NULL),
				 AUTH_RIGHTS_VIEW);
		/* a minted token has what it was given, never "admin" */
		assert_int_equal(auth_rights_of_hash(g[0].hash, op, ctl, view, g, 2, 1000, &which),
				 AUTH_R_EXEC);
		assert_string_equal(which, "t000000001");
		assert_int_equal(auth_rights_of_hash(g[1].hash, op, ctl, view, g, 2, 4999, NULL),
				 AUTH_R_VIEW);
		assert_int_equal(auth_rights_of_hash(g[1].hash, op, ctl, view, g, 2, 5000, &which),
				 0); /* expired */
		assert_string_equal(which, "");
		auth_token_hash("other", h);
		assert_int_equal(auth_rights_of_hash(h, op, ctl, view, g, 2, 1000, NULL), 0);
		assert_int_equal(auth_rights_of_hash("", op, ctl, view, g, 2, 1000, NULL), 0);
		assert_int_equal(auth_rights_of_hash(NULL, op, ctl, view, g, 2, 1000, NULL), 0);
		/* a session without hashes (adopted from a record that had
		 * none, or revoked) grants nothing */
		assert_int_equal(auth_rights_of_hash(ctl, "", "", "", NULL, 0, 1000, NULL), 0);
		auth_token_hash("", ex);
		assert_int_equal(auth_rights_of_hash(ex, "", NULL, NULL, NULL, 0, 1000, NULL), 0);
	}
	/* the control token acts and runs commands; only the operator forks,
	 * widens egress, runs as root, shares control or opens VNC */
	assert_int_equal(AUTH_RIGHTS_CONTROL & (AUTH_R_ROOT | AUTH_R_EGRESS | AUTH_R_FORK |
						AUTH_R_SHARE | AUTH_R_VNC | AUTH_R_ADMIN),
			 0);
	assert_int_equal(auth_right_by_name("egress"), AUTH_R_EGRESS);
	assert_int_equal(auth_right_by_name("admin"), 0); /* not mintable */
	assert_int_equal(auth_right_by_name("bogus"), 0);
	assert_int_equal(auth_right_by_name(NULL), 0);
	for (unsigned b = 1; b & AUTH_RIGHTS_MINTABLE; b <<= 1)
		assert_int_equal(auth_right_by_name(auth_right_name(b)), b);
	assert_int_equal(auth_scope_from_rights(AUTH_RIGHTS_CONTROL), AUTH_CONTROL);
	assert_int_equal(auth_scope_from_rights(AUTH_R_VIEW), AUTH_VIEW);
	assert_int_equal(auth_scope_from_rights(AUTH_R_EXEC), AUTH_NONE);
	{
		char id[AUTH_GRANT_ID_LEN + 1];

		assert_int_equal(auth_new_grant_id(id), 0);
		assert_int_equal(strlen(id), AUTH_GRANT_ID_LEN);
		assert_int_equal(id[0], 't');
		assert_int_equal(strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789"),
				 AUTH_GRANT_ID_LEN);
	}
	assert_true(AUTH_VIEW < AUTH_CONTROL && AUTH_CONTROL < AUTH_OPERATOR);
}

static void test_origins(void **state)
{
	(void)state;
	assert_true(auth_origin_allowed(NULL, "http://a"));
	assert_true(auth_origin_allowed("http://a", "http://a"));
	assert_true(auth_origin_allowed("HTTP://A", "http://a"));
	assert_true(auth_origin_allowed("http://b", "http://a, http://b"));
	assert_true(auth_origin_allowed("http://evil", "*"));
	assert_false(auth_origin_allowed("http://evil", "http://a,http://b"));
	assert_false(auth_origin_allowed("http://a.evil", "http://a"));
	assert_false(auth_origin_allowed("http://a", ""));
	assert_false(auth_origin_allowed("http://a", NULL));
}

/* A bucket of burst requests that gains one every interval; keys apart;
 * a refusal counts nothing; a full table forgets the key nearest to full
 * and never refuses a new one. */
static void test_rate(void **state)
{
	static struct rate_table rt; /* 256 slots: too big for the stack's taste */
	const struct rate_limit lim = { .burst = 3, .interval_ms = 1000 };
	int64_t wait = -1;
	char key[16];

	(void)state;
	memset(&rt, 0, sizeof(rt));
	for (int i = 0; i < 3; i++)
		assert_true(rate_allow(&rt, "1.2.3.4", &lim, 5000, &wait));
	assert_int_equal(wait, 0);
	assert_false(rate_allow(&rt, "1.2.3.4", &lim, 5000, &wait));
	assert_int_equal(wait, 1000);
	assert_false(rate_would_allow(&rt, "1.2.3.4", &lim, 5999, &wait));
	assert_int_equal(wait, 1);
	assert_true(rate_allow(&rt, "5.6.7.8", &lim, 5000, NULL)); /* another key */
	assert_true(rate_allow(&rt, "1.2.3.4", &lim, 6000, NULL)); /* one regained */
	assert_false(rate_allow(&rt, "1.2.3.4", &lim, 6000, &wait));
	for (int i = 0; i < 1000; i++) /* refused asking does not push it further */
		assert_false(rate_allow(&rt, "1.2.3.4", &lim, 6500, NULL));
	assert_true(rate_allow(&rt, "1.2.3.4", &lim, 7000, NULL));
	assert_true(rate_would_allow(&rt, "1.2.3.4", &lim, 100000, &wait)); /* full again */
	/* a flood of new keys: each gets its burst */
	for (int i = 0; i < 3 * RATE_TABLE_MAX; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_true(rate_allow(&rt, key, &lim, 7000 + i, NULL));
	}
}

static void test_key_file(void **state)
{
	char path[64], key[128], again[128], err[256];

	(void)state;
	snprintf(path, sizeof(path), "/tmp/vitrine-key-test-%d", (int)getpid());
	unlink(path);
	assert_int_equal(auth_load_or_create_key(path, key, sizeof(key), err, sizeof(err)), 0);
	assert_int_equal(strlen(key), AUTH_TOKEN_LEN);
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(auth_load_or_create_key(path, again, sizeof(again), err, sizeof(err)), 0);
	assert_string_equal(key, again);
	unlink(path);
}

static int parse(const char *body, struct session_request *req, struct api_error *e)
{
	return session_request_parse(body, strlen(body), req, e);
}

static void expect_bad(const char *body, const char *code, const char *needle)
{
	struct session_request req;
	struct api_error e;

	assert_int_equal(parse(body, &req, &e), -EINVAL);
	assert_int_equal(e.status, 400);
	assert_string_equal(e.code, code);
	if (!strstr(e.message, needle))
		fail_msg("'%s': message '%s' lacks '%s'", body, e.message, needle);
}

static void test_session_request(void **state)
{
	struct session_request req;
	struct api_error e;

	(void)state;
	assert_int_equal(parse("{}", &req, &e), 0);
	assert_string_equal(req.image, "desktop");
	assert_int_equal(req.width, 0);
	assert_true(egress_rules_empty(req.egress)); /* no network by default */
	session_request_free(&req);
	assert_int_equal(parse("{\"egress\":{\"allow\":[\"*.example.org\",\"web.test:8080\"]}}",
			       &req, &e),
			 0);
	assert_true(egress_rules_allows(req.egress, "a.example.org", 443));
	assert_true(egress_rules_allows(req.egress, "web.test", 8080));
	assert_false(egress_rules_allows(req.egress, "web.test", 80));
	session_request_free(&req);
	assert_null(req.egress);
	expect_bad("{\"egress\":{\"allow\":[\"bad host\"]}}", "invalid_argument",
		   "egress.allow[0]");
	expect_bad("{\"egress\":[\"x.org\"]}", "invalid_argument", "egress");
	assert_int_equal(
		parse("{\"image\":\"tiny\",\"width\":1024,\"height\":768,\"vcpus\":1,"
		      "\"memory_mib\":512,\"url\":\"https://example.org/a?b=c\",\"timeout_s\":60}",
		      &req, &e),
		0);
	assert_string_equal(req.image, "tiny");
	assert_int_equal(req.width, 1024);
	assert_int_equal(req.height, 768);
	assert_int_equal(req.vcpus, 1);
	assert_int_equal(req.memory_mib, 512);
	assert_string_equal(req.url, "https://example.org/a?b=c");
	assert_int_equal(req.timeout_s, 60);
	assert_false(req.from_template);
	session_request_free(&req);
	assert_int_equal(parse("{\"template\":\"desktop-ready\"}", &req, &e), 0);
	assert_string_equal(req.image, "desktop-ready");
	assert_true(req.from_template);
	session_request_free(&req);
	assert_int_equal(parse("{\"page\":\"<p>hi</p>\"}", &req, &e), 0);
	assert_string_equal(req.page, "<p>hi</p>");
	assert_string_equal(req.url, SESSION_PAGE_URL);
	session_request_free(&req);
	assert_null(req.page);
	expect_bad("{\"page\":\"\"}", "invalid_argument", "page");
	expect_bad("{\"page\":3}", "invalid_argument", "page");
	expect_bad("", "invalid_json", "not valid JSON");
	expect_bad("3", "invalid_json", "object");
	expect_bad("{\"x\":1}", "invalid_argument", "unknown field 'x'");
	expect_bad("{\"image\":\"a\",\"image\":\"b\"}", "invalid_json", "duplicate");
	expect_bad("{\"image\":\"A/B\"}", "invalid_argument", "image");
	expect_bad("{\"image\":\"\"}", "invalid_argument", "image");
	expect_bad("{\"image\":5}", "invalid_argument", "image");
	expect_bad("{\"width\":100}", "out_of_range", "width");
	expect_bad("{\"height\":1.5}", "invalid_argument", "height");
	expect_bad("{\"memory_mib\":64}", "out_of_range", "memory_mib");
	expect_bad("{\"timeout_s\":0}", "out_of_range", "timeout_s");
	expect_bad("{\"url\":\"ftp://x\"}", "invalid_argument", "url");
	expect_bad("{\"url\":7}", "invalid_argument", "url");
	/* jansson refuses NUL inside strings before we see them. */
	expect_bad("{\"url\":\"http://a\\u0000b\"}", "invalid_json", "not valid JSON");
	/* keyboard layouts: the host's xkb data, canonical "layout(variant)" */
	assert_int_equal(parse("{}", &req, &e), 0);
	assert_string_equal(req.keyboard_layout, "");
	session_request_free(&req);
	assert_int_equal(parse("{\"keyboard_layout\":\"de\"}", &req, &e), 0);
	assert_string_equal(req.keyboard_layout, "de");
	session_request_free(&req);
	assert_int_equal(parse("{\"keyboard_layout\":\"de:nodeadkeys\"}", &req, &e), 0);
	assert_string_equal(req.keyboard_layout, "de(nodeadkeys)");
	session_request_free(&req);
	assert_int_equal(parse("{\"keyboard_layout\":\"fr(azerty)\"}", &req, &e), 0);
	assert_string_equal(req.keyboard_layout, "fr(azerty)");
	session_request_free(&req);
	expect_bad("{\"keyboard_layout\":\"klingon\"}", "invalid_argument",
		   "xkb has no layout \"klingon\"");
	expect_bad("{\"keyboard_layout\":\"de(qwerty-dvorak)\"}", "invalid_argument",
		   "variant \"qwerty-dvorak\"");
	expect_bad("{\"keyboard_layout\":\"de; rm\"}", "invalid_argument",
		   "not an xkb layout name");
	expect_bad("{\"keyboard_layout\":7}", "invalid_argument", "keyboard_layout");
}

/* Screenshot options are read whole: as an int, 2^32 + 50 passed as
 * quality 50 and 2^32 - 1 as "absent" (found by tests/fuzz/fuzz_requests). */
static void test_shot_opts(void **state)
{
	static const char *bad[] = {
		"{\"quality\": 4294967346}",
		"{\"width\": 4294967297}",
		"{\"quality\": 4294967295}",
		"{\"quiet_ms\": -1}",
		"{\"timeout_ms\": 60001}",
		"{\"format\": \"gif\"}",
		"{\"extra\": 1}",
	};
	struct shot_opts o;
	struct api_error e;
	json_t *j;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = json_loads(bad[i], 0, NULL);
		shot_opts_default(&o);
		if (shot_opts_parse(j, &o, &e) == 0)
			fail_msg("accepted %s", bad[i]);
		assert_int_equal(e.status, 400);
		json_decref(j);
	}
	j = json_loads("{\"format\": \"png\", \"quality\": 1, \"width\": 16384, \"quiet_ms\": 0}",
		       0, NULL);
	shot_opts_default(&o);
	assert_int_equal(shot_opts_parse(j, &o, &e), 0);
	assert_int_equal(o.enc.format, DISPLAY_FORMAT_PNG);
	assert_int_equal(o.enc.quality, 1);
	assert_int_equal(o.enc.max_width, 16384);
	assert_int_equal(o.enc.max_height, 0);
	assert_int_equal(o.quiet_ms, 0);
	assert_int_equal(o.timeout_ms, 5000);
	json_decref(j);
}

static int share(const char *body, enum auth_scope *want, int *ttl, struct api_error *e)
{
	return api_share_parse(body, strlen(body), want, ttl, e);
}

/* POST /v1/sessions/{id}/share bodies (api_share_parse). */
static void test_share_request(void **state)
{
	enum auth_scope want = AUTH_NONE;
	struct api_error e;
	int ttl;

	(void)state;
	assert_int_equal(share("{\"scope\":\"control\",\"ttl_s\":60}", &want, &ttl, &e), 0);
	assert_int_equal(want, AUTH_CONTROL);
	assert_int_equal(ttl, 60);
	assert_int_equal(share("{\"scope\":\"view\"}", &want, &ttl, &e), 0);
	assert_int_equal(want, AUTH_VIEW);
	assert_int_equal(ttl, SHARE_DEFAULT_TTL_S);
	assert_int_equal(share("", &want, &ttl, &e), -EINVAL);
	assert_string_equal(e.code, "invalid_argument");
	assert_int_equal(share("[1]", &want, &ttl, &e), -EINVAL);
	assert_string_equal(e.code, "invalid_json");
	assert_int_equal(share("{\"scope\":\"view\",\"ttl_s\":86401}", &want, &ttl, &e), -EINVAL);
	assert_string_equal(e.code, "out_of_range");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),	  cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_bearer),	  cmocka_unit_test(test_scopes),
		cmocka_unit_test(test_origins),	  cmocka_unit_test(test_rate),
		cmocka_unit_test(test_key_file),  cmocka_unit_test(test_session_request),
		cmocka_unit_test(test_shot_opts), cmocka_unit_test(test_share_request),
	};

	return cmocka_run_group_tests_name("gateway pure parts", tests, NULL, NULL);
}
