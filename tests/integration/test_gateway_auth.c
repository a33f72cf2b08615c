/* tests/integration/test_gateway_auth.c: who may do what, as docs/api.md's
 * "Tokens and their rights" says. A table test runs every route of the
 * gateway's route table (gateway/api/route_table.c: a route without a call
 * here fails the test, and the rights each needs are its row's) and every
 * WebSocket against every kind of credential (none, a wrong one, the
 * operator key, the session's control and view tokens, another session's
 * control token, minted tokens with chosen scopes, a revoked and an
 * expired one) and checks each answer: allowed, or refused with 401 (not
 * valid here) or 403 (valid, lacking a scope). Then: revocation and
 * rotation close live sockets; a share link ends with DELETE .../share;
 * watchers cannot take an operation's place; a control socket that fails
 * its first-message auth is closed; minted tokens survive a restart. API
 * keys (POST /v1/keys) are in the table too: the operator's rights but
 * managing keys; a revoked one is nothing; one works as E2B's X-API-KEY,
 * its revocation closes its live sockets, and keys survive a restart. Two
 * tiny guests under one `vitrine serve`, whose control sockets have
 * CONTROL_AUTH_MS (instead of 10 s) for a first-message token, through the
 * test hook VITRINE_TEST_CONTROL_AUTH_MS (docs/vmm.md). */
#include "common/http_client.h"
#include "gateway/api/routes.h"
#include "gateway/core/auth.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/ws_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#define CONTROL_AUTH_MS 1000

static struct gateway_proc gw;
static struct gateway_session a, b;

enum kind {
	K_NONE,
	K_BOGUS,
	K_OPERATOR,
	K_CONTROL,
	K_VIEW,
	K_OTHER,
	K_EXEC,
	K_EGRESS,
	K_REVOKED,
	K_EXPIRED,
	K_APIKEY,
	K_APIKEY_REVOKED,
	K_N
};
static const char *const kind_names[K_N] = {
	"none",	   "bogus",   "operator",     "control",
	"view",	   "other",   "minted{exec}", "minted{view,egress}",
	"revoked", "expired", "api key",      "revoked api key"
};
static char tokens[K_N][128];
static char apikey_id[32]; /* of tokens[K_APIKEY] */
static unsigned rights[K_N];

static struct http_resp call(const char *method, const char *path, const char *token,
			     const char *body)
{
	struct http_resp r;

	if (http_request("127.0.0.1", gw.port, method, path, token && *token ? token : NULL, body,
			 body ? strlen(body) : 0, 60, &r) < 0)
		fail_msg("%s %s: no answer", method, path);
	return r;
}

/* Mints a token on a with body; its secret into out, its id into id. */
static void mint(const char *body, char *out, char *id)
{
	struct http_resp r;
	char path[128];

	snprintf(path, sizeof(path), "/v1/sessions/%s/tokens", a.id);
	r = call("POST", path, gw.key, body);
	if (r.status != 201)
		fail_msg("mint %s: %d %s", body, r.status, r.body);
	snprintf(out, 128, "%s", json_string_value(json_object_get(r.json, "token")));
	if (id)
		snprintf(id, 32, "%s", json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
}

/* POST /v1/keys with body (operator key): the key into out, its id into
 * id. Returns 0, or -1 after printing why. */
static int make_key(const char *body, char *out, char *id)
{
	struct http_resp r = call("POST", "/v1/keys", gw.key, body);
	const char *k = json_string_value(json_object_get(r.json, "key"));

	if (r.status != 201 || !k || strncmp(k, "e2b_", 4)) {
		print_error("POST /v1/keys %s: %d %s\n", body, r.status, r.body ? r.body : "");
		http_resp_free(&r);
		return -1;
	}
	snprintf(out, 128, "%s", k);
	snprintf(id, 32, "%s", json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
	return 0;
}

static int setup(void **state)
{
	char id[32], ms[16];
	struct http_resp r;
	char path[128];

	(void)state;
	snprintf(ms, sizeof(ms), "%d", CONTROL_AUTH_MS);
	setenv("VITRINE_TEST_CONTROL_AUTH_MS", ms, 1);
	if (gateway_proc_start(&gw, NULL) < 0)
		return -1;
	unsetenv("VITRINE_TEST_CONTROL_AUTH_MS");
	if (gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &a) < 0 ||
	    gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &b) < 0)
		return -1;
	snprintf(tokens[K_BOGUS], 128, "not-a-token-of-anything");
	snprintf(tokens[K_OPERATOR], 128, "%s", gw.key);
	snprintf(tokens[K_CONTROL], 128, "%s", a.control);
	snprintf(tokens[K_VIEW], 128, "%s", a.view);
	snprintf(tokens[K_OTHER], 128, "%s", b.control);
	mint("{\"scopes\":[\"exec\"]}", tokens[K_EXEC], NULL);
	mint("{\"scopes\":[\"view\",\"egress\"],\"ttl_s\":3600}", tokens[K_EGRESS], NULL);
	mint("{\"scopes\":[\"view\",\"act\"]}", tokens[K_REVOKED], id);
	mint("{\"scopes\":[\"view\",\"act\"],\"ttl_s\":1}", tokens[K_EXPIRED], NULL);
	snprintf(path, sizeof(path), "/v1/sessions/%s/tokens/%s", a.id, id);
	r = call("DELETE", path, gw.key, NULL);
	if (r.status != 200)
		return -1;
	http_resp_free(&r);
	if (make_key("{\"name\":\"table\"}", tokens[K_APIKEY], apikey_id) < 0 ||
	    make_key("{}", tokens[K_APIKEY_REVOKED], id) < 0)
		return -1;
	snprintf(path, sizeof(path), "/v1/keys/%s", id);
	r = call("DELETE", path, gw.key, NULL);
	if (r.status != 200)
		return -1;
	http_resp_free(&r);
	sleep(2); /* the expired one ends */
	rights[K_OPERATOR] = AUTH_RIGHTS_OPERATOR;
	rights[K_APIKEY] = AUTH_RIGHTS_OPERATOR;
	rights[K_CONTROL] = AUTH_RIGHTS_CONTROL;
	rights[K_VIEW] = AUTH_RIGHTS_VIEW;
	rights[K_EXEC] = AUTH_R_EXEC;
	rights[K_EGRESS] = AUTH_R_VIEW | AUTH_R_EGRESS;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* One call of a route: method, path ("%s" is session a's id), body, and
 * the rights it needs as docs/api.md says (AUTH_R_*, or routes.h's
 * ROUTE_NO_TOKEN and ROUTE_OPERATOR_KEY). A body or query that is wrong on
 * purpose makes an allowed call answer 400 without doing anything. Every
 * route and method of gateway/api/route_table.c must have a call here, and
 * its row must say the rights the call needs (but "root" or "share" that a
 * body asks for): test_every_route_has_a_call. */
struct call {
	const char *method, *path, *body;
	unsigned need;
};

/* Paths without a session (any valid token is known there: one that lacks
 * "admin" gets 403), and one naming a session that does not exist (401 to
 * all but the operator, so that ids cannot be probed). */
static bool global_path(const char *path)
{
	return !strstr(path, "%s") && !strstr(path, "nosuchsession");
}

static const struct call calls[] = {
	{ "GET", "/healthz", NULL, ROUTE_NO_TOKEN },
	{ "GET", "/", NULL, ROUTE_NO_TOKEN },
	{ "GET", "/v1/sessions", NULL, AUTH_R_ADMIN },
	{ "POST", "/v1/sessions", "{\"bogus\":1}", AUTH_R_ADMIN },
	{ "GET", "/v1/templates", NULL, AUTH_R_ADMIN },
	{ "POST", "/v1/templates", "{\"bogus\":1}", AUTH_R_ADMIN },
	{ "GET", "/v1/templates/nosuchtemplate", NULL, AUTH_R_ADMIN },
	{ "DELETE", "/v1/templates/nosuchtemplate", NULL, AUTH_R_ADMIN },
	{ "GET", "/v1/templates/nosuchtemplate/export", NULL, AUTH_R_ADMIN },
	{ "POST", "/v1/templates/import", "not a template", AUTH_R_ADMIN }, /* no ?name= */
	{ "POST", "/v1/templates/gc", NULL, AUTH_R_ADMIN }, /* no ?older_than_s= */
	{ "GET", "/metrics", NULL, AUTH_R_ADMIN },
	{ "GET", "/v1/usage", NULL, AUTH_R_ADMIN },
	{ "GET", "/v1/sessions/%s", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/screenshot?format=png", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/thumbnail", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/events", NULL, AUTH_R_VIEW },
	{ "POST", "/v1/sessions/%s/actions", "{\"action\":\"no_such_action\"}", AUTH_R_ACT },
	/* WebSocket routes asked without an upgrade: 426 when allowed */
	{ "GET", "/v1/sessions/%s/control", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/stream", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/exec/stream", NULL, AUTH_R_EXEC },
	{ "GET", "/v1/sessions/%s/cdp", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/cdp/json/version", NULL, AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/pause", "{\"mode\":\"bogus\"}", AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/resume", "{\"bogus\":1}", AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/open", "{}", AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/launch", "{}", AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/clipboard", NULL, AUTH_R_ACT },
	{ "PUT", "/v1/sessions/%s/clipboard", "{}", AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/egress", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/egress/log", NULL, AUTH_R_ACT },
	/* a guest's port (nothing listens on 1: 502 when let through) */
	{ "GET", "/v1/sessions/%s/ports/1/", NULL, AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/ports/1/x", "{}", AUTH_R_ACT },
	{ "PUT", "/v1/sessions/%s/ports/1/x", "{}", AUTH_R_ACT },
	{ "DELETE", "/v1/sessions/%s/ports/1/x", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/ports/1", NULL, AUTH_R_ACT },
	{ "PUT", "/v1/sessions/%s/ports/1", "{\"public\":false}", AUTH_R_SHARE },
	{ "POST", "/v1/sessions/%s/ports/1", NULL, AUTH_R_SHARE },
	{ "PUT", "/v1/sessions/%s/egress", "[]", AUTH_R_EGRESS },
	{ "POST", "/v1/sessions/%s/exec", "{\"cmd\":\"true\",\"cwd\":\"/\"}", AUTH_R_EXEC },
	{ "POST", "/v1/sessions/%s/exec", "{\"cmd\":\"true\",\"cwd\":\"/\",\"user\":\"root\"}",
	  AUTH_R_EXEC | AUTH_R_ROOT },
	{ "GET", "/v1/sessions/%s/files?path=/tmp/none", NULL, AUTH_R_EXEC },
	{ "PUT", "/v1/sessions/%s/files?path=/etc/none", "x",
	  AUTH_R_EXEC }, /* a path not allowed */
	{ "POST", "/v1/sessions/%s/fork", "{\"bogus\":1}", AUTH_R_FORK },
	{ "POST", "/v1/sessions/%s/share", "{\"scope\":\"view\"}", AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/share", "{\"scope\":\"control\"}", AUTH_R_ACT | AUTH_R_SHARE },
	{ "DELETE", "/v1/sessions/%s/share", NULL, AUTH_R_ACT | AUTH_R_SHARE },
	{ "POST", "/v1/sessions/%s/vnc", NULL, AUTH_R_VNC }, /* opened, then closed below */
	{ "DELETE", "/v1/sessions/%s/vnc", NULL, AUTH_R_VNC },
	{ "GET", "/v1/sessions/%s/trajectory", NULL, AUTH_R_VIEW },
	/* asked before a recording exists (404), which is then started and
	 * stopped */
	{ "GET", "/v1/sessions/%s/recording", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/recording/frames/0", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/recording.webm", NULL, AUTH_R_VIEW },
	{ "POST", "/v1/sessions/%s/recording/start", NULL, AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/recording/stop", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/tokens", NULL, AUTH_R_ADMIN },
	{ "POST", "/v1/sessions/%s/tokens", "{\"scopes\":[]}", AUTH_R_ADMIN },
	{ "DELETE", "/v1/sessions/%s/tokens/tnosuch000", NULL, AUTH_R_ADMIN },
	{ "POST", "/v1/sessions/%s/tokens/control/rotate", "{}", AUTH_R_ADMIN },
	{ "DELETE", "/v1/sessions/nosuchsession", NULL, AUTH_R_ADMIN },
	{ "GET", "/v1/keys", NULL, AUTH_R_ADMIN | ROUTE_OPERATOR_KEY },
	{ "POST", "/v1/keys", "{\"bogus\":1}", AUTH_R_ADMIN | ROUTE_OPERATOR_KEY },
	{ "DELETE", "/v1/keys/key_nosuch00", NULL, AUTH_R_ADMIN | ROUTE_OPERATOR_KEY },
};

static enum route_method method_of(const char *name)
{
	static const char *const names[] = {
		[M_GET] = "GET", [M_POST] = "POST", [M_DELETE] = "DELETE", [M_PUT] = "PUT"
	};

	for (int m = M_GET; m < M_OTHER; m++)
		if (!strcmp(name, names[m]))
			return (enum route_method)m;
	return M_OTHER;
}

static void expand(char *out, size_t len, const char *tmpl);

/* The route a call is, from the route table's parser. */
static struct route route_of(const struct call *c)
{
	char path[256];

	expand(path, sizeof(path), c->path);
	path[strcspn(path, "?")] = '\0';
	return route_parse(method_of(c->method), path);
}

/* tmpl with its "%s" replaced by session a's id. */
static void expand(char *out, size_t len, const char *tmpl)
{
	const char *at = strstr(tmpl, "%s");

	if (!at)
		snprintf(out, len, "%s", tmpl);
	else
		snprintf(out, len, "%.*s%s%s", (int)(at - tmpl), tmpl, a.id, at + 2);
}

/* The status a call with kind must get: 0 for "allowed" (anything but
 * 401/403), else 401 or 403. */
static int want_status(const struct call *c, enum kind k)
{
	unsigned have = rights[k], need = c->need;

	if (need & ROUTE_NO_TOKEN)
		return 0;
	if (k == K_OTHER && global_path(c->path))
		have = AUTH_RIGHTS_CONTROL; /* a session token like any other there */
	if (need & ROUTE_OPERATOR_KEY)
		return k == K_OPERATOR ? 0 : have ? 403 : 401;
	if ((have & need) == need)
		return 0;
	if (strstr(c->path, "nosuchsession"))
		return 401;
	return have ? 403 : 401;
}

/* Every route and method of the table (but E2B's, which have their own
 * keys: tests/e2b) has a call, every call is a route, and the row says the
 * rights the call needs. */
static void test_every_route_has_a_call(void **state)
{
	int missing = 0, routes = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct route rt = route_of(&calls[i]);

		unsigned row;

		if (rt.kind == R_NOT_FOUND || rt.kind == R_METHOD_NOT_ALLOWED)
			fail_msg("%s %s is no route", calls[i].method, calls[i].path);
		row = route_right(rt.kind, method_of(calls[i].method));
		if ((calls[i].need & row) != row ||
		    (calls[i].need & ~row & ~(unsigned)(AUTH_R_ROOT | AUTH_R_SHARE)))
			fail_msg("%s %s: its row (%s) says rights 0x%x, the call needs 0x%x",
				 calls[i].method, calls[i].path, route_kind_names[rt.kind], row,
				 calls[i].need);
	}
	for (int k = 0; k < R_KIND_COUNT; k++)
		for (int m = M_GET; m < M_OTHER; m++) {
			bool found = false;

			if (!route_table[k].pattern || !(route_table[k].methods & (1u << m)))
				continue;
			routes++;
			for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]) && !found; i++)
				found = method_of(calls[i].method) == (enum route_method)m &&
					route_of(&calls[i]).kind == (enum route_kind)k;
			if (!found) {
				print_error("route %s (%s method %d) has no call in calls[]\n",
					    route_kind_names[k], route_table[k].pattern, m);
				missing++;
			}
		}
	print_message("%d routes x methods, each with a call\n", routes);
	assert_int_equal(missing, 0);
}

static void test_route_table(void **state)
{
	int checked = 0, failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		for (int k = 0; k < K_N; k++) {
			const struct call *c = &calls[i];
			char path[256];
			struct http_resp r;
			int want = want_status(c, k);

			/* rotating the control token is allowed to the operator
			 * (and its API keys): keep that one for the test of
			 * rotation below */
			if (strstr(c->path, "/rotate") && (k == K_OPERATOR || k == K_APIKEY))
				continue;
			expand(path, sizeof(path), c->path);
			r = call(c->method, path, tokens[k], c->body);
			checked++;
			if (want ? r.status != want : r.status == 401 || r.status == 403) {
				print_error("%s %s with %s: %d (want %s%d) %s\n", c->method,
					    c->path, kind_names[k], r.status,
					    want ? "" : "anything but 401/403, e.g. ",
					    want ? want : 200, r.body ? r.body : "");
				failed++;
			}
			http_resp_free(&r);
		}
	print_message("%d route x credential calls checked\n", checked);
	assert_int_equal(failed, 0);
}

/* A WebSocket path of a and the rights its upgrade needs (a credential in
 * the Authorization header is checked at the upgrade). */
static void test_websocket_table(void **state)
{
	static const struct {
		const char *path;
		unsigned need;
	} sockets[] = {
		{ "/v1/sessions/%s/control", AUTH_R_ACT },
		{ "/v1/sessions/%s/stream", AUTH_R_VIEW },
		{ "/v1/sessions/%s/exec/stream", AUTH_R_EXEC },
		{ "/v1/sessions/%s/cdp", AUTH_R_ACT },
	};
	int failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(sockets) / sizeof(sockets[0]); i++)
		for (int k = 1; k < K_N; k++) { /* none: a first message may still come */
			char path[256];
			int status = 0, fd;
			bool want = (rights[k] & sockets[i].need) == sockets[i].need;

			/* the tiny guest has no Chromium: its CDP socket opens and
			 * then closes, which is still "allowed" */
			expand(path, sizeof(path), sockets[i].path);
			fd = ws_connect(gw.port, path, tokens[k], NULL, &status);
			if ((fd >= 0) != want) {
				print_error("WS %s with %s: %s (status %d)\n", sockets[i].path,
					    kind_names[k], fd >= 0 ? "opened" : "refused", status);
				failed++;
			}
			if (fd >= 0)
				close(fd);
		}
	assert_int_equal(failed, 0);
}

/* Waits up to timeout_ms for fd to be closed by the server with 1008. */
static void expect_closed_1008(int fd, int timeout_ms, const char *what)
{
	struct ws_msg m;

	for (int waited = 0; waited < timeout_ms; waited += 500) {
		if (ws_recv(fd, 500, &m) < 0)
			continue;
		if (m.opcode == WS_CLOSE) {
			if (m.close_code != 1008)
				fail_msg("%s: closed with %d, want 1008", what, m.close_code);
			ws_msg_free(&m);
			close(fd);
			return;
		}
		ws_msg_free(&m);
	}
	fail_msg("%s: still open after %d ms", what, timeout_ms);
}

static void test_revocation_closes_live_sockets(void **state)
{
	char token[128], id[32], path[256];
	struct http_resp r;
	int fd, status;

	(void)state;
	mint("{\"scopes\":[\"view\",\"act\"]}", token, id);
	snprintf(path, sizeof(path), "/v1/sessions/%s/control", a.id);
	fd = ws_connect(gw.port, path, token, NULL, &status);
	assert_true(fd >= 0);
	/* the socket works: an action answers */
	assert_int_equal(ws_send_text(fd, "{\"action\":\"cursor_position\",\"id\":1}"), 0);
	{
		char *reply = ws_recv_text(fd, 30000);

		assert_non_null(reply);
		assert_non_null(strstr(reply, "\"id\":1"));
		free(reply);
	}
	snprintf(path, sizeof(path), "/v1/sessions/%s/tokens/%s", a.id, id);
	r = call("DELETE", path, gw.key, NULL);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	expect_closed_1008(fd, 5000, "control socket of a revoked token");
	/* and the token is refused from now on */
	snprintf(path, sizeof(path), "/v1/sessions/%s", a.id);
	r = call("GET", path, token, NULL);
	assert_int_equal(r.status, 401);
	http_resp_free(&r);
	/* an exec socket of a minted token closes on revocation too */
	{
		char tok2[128], id2[32];
		int efd;

		mint("{\"scopes\":[\"exec\"]}", tok2, id2);
		snprintf(path, sizeof(path), "/v1/sessions/%s/exec/stream", a.id);
		efd = ws_connect(gw.port, path, tok2, NULL, &status);
		assert_true(efd >= 0);
		assert_int_equal(ws_send_text(efd, "{\"cmd\":\"sleep 60\",\"cwd\":\"/\"}"), 0);
		snprintf(path, sizeof(path), "/v1/sessions/%s/tokens/%s", a.id, id2);
		r = call("DELETE", path, gw.key, NULL);
		assert_int_equal(r.status, 200);
		http_resp_free(&r);
		expect_closed_1008(efd, 5000, "exec socket of a revoked token");
	}
	/* revoking it again: 404 */
	snprintf(path, sizeof(path), "/v1/sessions/%s/tokens/%s", a.id, id);
	r = call("DELETE", path, gw.key, NULL);
	assert_int_equal(r.status, 404);
	http_resp_free(&r);
}

/* GET /v2/sandboxes (E2B's list) with key as X-API-KEY: its status. */
static int e2b_list(const char *key)
{
	char hdr[200];
	struct http_resp r;
	int status;

	snprintf(hdr, sizeof(hdr), "X-API-KEY: %s\r\n", key);
	if (http_request_headers("127.0.0.1", gw.port, "GET", "/v2/sandboxes", NULL, hdr, NULL, 0,
				 60, &r) < 0)
		fail_msg("GET /v2/sandboxes: no answer");
	status = r.status;
	http_resp_free(&r);
	return status;
}

static void test_api_keys(void **state)
{
	char key[128], id[32], path[256];
	struct http_resp r;
	int fd, status;

	(void)state;
	assert_int_equal(make_key("{\"name\":\"e2b agent\"}", key, id), 0);
	assert_int_equal(strlen(key), 44);
	/* E2B's SDKs send it as X-API-KEY; a revoked one is refused there. */
	assert_int_equal(e2b_list(key), 200);
	assert_int_equal(e2b_list(tokens[K_APIKEY_REVOKED]), 401);
	/* Listed by the operator key, never with a secret. */
	r = call("GET", "/v1/keys", gw.key, NULL);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, id));
	assert_non_null(strstr(r.body, "e2b agent"));
	assert_null(strstr(r.body, key));
	assert_null(strstr(r.body, "\"hash\""));
	http_resp_free(&r);
	/* Its live sockets close once it is revoked. */
	snprintf(path, sizeof(path), "/v1/sessions/%s/control", a.id);
	fd = ws_connect(gw.port, path, key, NULL, &status);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "/v1/keys/%s", id);
	r = call("DELETE", path, gw.key, NULL);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	expect_closed_1008(fd, 5000, "control socket of a revoked API key");
	assert_int_equal(e2b_list(key), 401);
	r = call("GET", "/v1/sessions", key, NULL);
	assert_int_equal(r.status, 401);
	http_resp_free(&r);
	r = call("DELETE", path, gw.key, NULL);
	assert_int_equal(r.status, 404);
	http_resp_free(&r);
}

static void test_rotation_and_shares(void **state)
{
	char path[256], share[128];
	struct http_resp r;
	int fd, status;

	(void)state;
	/* a viewer with a share link, and one with the view token */
	snprintf(path, sizeof(path), "/v1/sessions/%s/share", a.id);
	r = call("POST", path, a.control, "{\"scope\":\"view\"}");
	assert_int_equal(r.status, 201);
	snprintf(share, sizeof(share), "%s", json_string_value(json_object_get(r.json, "token")));
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/stream", a.id);
	fd = ws_connect(gw.port, path, share, NULL, &status);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "/v1/sessions/%s/share", a.id);
	r = call("DELETE", path, a.control, NULL); /* needs "share" */
	assert_int_equal(r.status, 403);
	http_resp_free(&r);
	r = call("DELETE", path, gw.key, NULL);
	assert_int_equal(r.status, 200);
	assert_true(json_integer_value(json_object_get(r.json, "revoked")) >= 1);
	http_resp_free(&r);
	expect_closed_1008(fd, 5000, "viewer of a revoked share link");

	/* rotation: the old view token stops, its viewer closes, the new one works */
	snprintf(path, sizeof(path), "/v1/sessions/%s/stream", a.id);
	fd = ws_connect(gw.port, path, a.view, NULL, &status);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "/v1/sessions/%s/tokens/view/rotate", a.id);
	r = call("POST", path, gw.key, "{}");
	assert_int_equal(r.status, 200);
	snprintf(tokens[K_VIEW], 128, "%s", json_string_value(json_object_get(r.json, "token")));
	http_resp_free(&r);
	expect_closed_1008(fd, 5000, "viewer of a rotated view token");
	snprintf(path, sizeof(path), "/v1/sessions/%s", a.id);
	r = call("GET", path, a.view, NULL);
	assert_int_equal(r.status, 401);
	http_resp_free(&r);
	r = call("GET", path, tokens[K_VIEW], NULL);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	snprintf(a.view, sizeof(a.view), "%.63s", tokens[K_VIEW]);
	/* minted tokens are listed without their secrets */
	snprintf(path, sizeof(path), "/v1/sessions/%s/tokens", a.id);
	r = call("GET", path, gw.key, NULL);
	assert_int_equal(r.status, 200);
	assert_null(strstr(r.body, tokens[K_EXEC]));
	assert_non_null(strstr(r.body, "\"egress\""));
	http_resp_free(&r);
}

static void test_exec_stream_root_needs_root(void **state)
{
	char path[256];
	int fd, status;

	(void)state;
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec/stream", a.id);
	fd = ws_connect(gw.port, path, a.control, NULL, &status);
	assert_true(fd >= 0);
	assert_int_equal(ws_send_text(fd, "{\"cmd\":\"id -u\",\"cwd\":\"/\",\"user\":\"root\"}"),
			 0);
	expect_closed_1008(fd, 10000, "a root command on the control token's exec socket");
	/* the operator's runs */
	fd = ws_connect(gw.port, path, gw.key, NULL, &status);
	assert_true(fd >= 0);
	assert_int_equal(ws_send_text(fd, "{\"cmd\":\"id -u\",\"cwd\":\"/\",\"user\":\"root\"}"),
			 0);
	{
		bool saw_zero = false;
		struct ws_msg m;

		for (int i = 0; i < 10 && !saw_zero && ws_recv(fd, 10000, &m) == 0; i++) {
			saw_zero = m.opcode == WS_BINARY && m.len >= 2 &&
				   memmem(m.data, m.len, "0\n", 2);
			if (m.opcode == WS_CLOSE)
				i = 10;
			ws_msg_free(&m);
		}
		assert_true(saw_zero);
	}
	close(fd);
}

static void test_control_socket_auth(void **state)
{
	char path[256];
	struct ws_msg m;
	int fd, status;

	(void)state;
	snprintf(path, sizeof(path), "/v1/sessions/%s/control", a.id);
	/* a wrong first-message token: an error, then the socket closes */
	fd = ws_connect(gw.port, path, NULL, NULL, &status);
	assert_true(fd >= 0);
	assert_int_equal(ws_send_text(fd, "{\"token\":\"wrong\"}"), 0);
	assert_int_equal(ws_recv(fd, 10000, &m), 0);
	assert_int_equal(m.opcode, WS_TEXT);
	assert_non_null(strstr((char *)m.data, "unauthorized"));
	ws_msg_free(&m);
	expect_closed_1008(fd, 5000, "control socket after a failed auth");
	/* silence: closed after the auth deadline (CONTROL_AUTH_MS) */
	fd = ws_connect(gw.port, path, NULL, NULL, &status);
	assert_true(fd >= 0);
	expect_closed_1008(fd, CONTROL_AUTH_MS + 5000, "control socket that never authenticates");
}

static int connect_raw(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_watchers_leave_room_for_operations(void **state)
{
	struct http_resp r;
	char path[256];
	int fds[9];

	(void)state;
	/* eight long polls of events with the view token: all are parked */
	snprintf(path, sizeof(path), "/v1/sessions/%s/events?after=1000000&wait_s=30", a.id);
	for (int i = 0; i < 9; i++) {
		char req[512];

		fds[i] = -1;
		if (i == 8)
			break;
		fds[i] = connect_raw(gw.port);
		assert_true(fds[i] >= 0);
		snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n",
			 path, a.view);
		assert_true(write(fds[i], req, strlen(req)) == (ssize_t)strlen(req));
	}
	usleep(500 * 1000);
	/* a ninth is refused at once */
	r = call("GET", path, a.view, NULL);
	assert_int_equal(r.status, 503);
	http_resp_free(&r);
	/* and a command still gets in */
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec", a.id);
	r = call("POST", path, a.control, "{\"cmd\":\"echo hi\",\"cwd\":\"/\"}");
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "hi"));
	http_resp_free(&r);
	for (int i = 0; i < 8; i++)
		close(fds[i]);
}

/* Reads what the server sends on fd within timeout_ms until it closes;
 * returns the bytes (caller frees), NULL when it stays open. */
static char *read_until_closed(int fd, int timeout_ms)
{
	char *buf = calloc(1, 65536);
	size_t used = 0;
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = timeout_ms % 1000 * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		ssize_t n = read(fd, buf + used, 65535 - used);

		if (n == 0)
			return buf;
		if (n < 0 || (used += (size_t)n) >= 65535) {
			free(buf);
			return NULL;
		}
	}
}

static void test_bodies_refused_before_they_are_read(void **state)
{
	char req[512], *got;
	int fd;

	(void)state;
	/* a 1 MB body announced with a wrong token: 401 at once, and the
	 * connection closes without waiting for the body */
	fd = connect_raw(gw.port);
	assert_true(fd >= 0);
	snprintf(req, sizeof(req),
		 "POST /v1/sessions/%s/exec HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Authorization: Bearer wrong-token\r\nContent-Length: 1000000\r\n\r\n",
		 a.id);
	assert_true(write(fd, req, strlen(req)) == (ssize_t)strlen(req));
	got = read_until_closed(fd, 5000);
	assert_non_null(got);
	assert_non_null(strstr(got, " 401 "));
	assert_non_null(strstr(got, "unauthorized"));
	free(got);
	close(fd);
	/* no token at all: the same */
	fd = connect_raw(gw.port);
	snprintf(req, sizeof(req),
		 "PUT /v1/sessions/%s/egress HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Content-Length: 1000000\r\n\r\n",
		 a.id);
	assert_true(write(fd, req, strlen(req)) == (ssize_t)strlen(req));
	got = read_until_closed(fd, 5000);
	assert_non_null(got);
	assert_non_null(strstr(got, " 401 "));
	free(got);
	close(fd);
	/* a good token: the gateway waits for the body */
	fd = connect_raw(gw.port);
	snprintf(req, sizeof(req),
		 "POST /v1/sessions/%s/exec HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Authorization: Bearer %s\r\nContent-Length: 1000000\r\n\r\n",
		 a.id, a.control);
	assert_true(write(fd, req, strlen(req)) == (ssize_t)strlen(req));
	assert_null(read_until_closed(fd, 1500));
	close(fd);
}

/* Waits for the hello of a viewer that authenticated in its header. */
static bool hello(int fd)
{
	char *t = ws_recv_text(fd, 10000);
	bool ok = t && strstr(t, "\"hello\"");

	free(t);
	return ok;
}

static void test_viewers_per_session_are_bounded(void **state)
{
	int strangers[16], viewers[32], fd, status;
	char path[256];

	(void)state;
	snprintf(path, sizeof(path), "/v1/sessions/%s/stream", a.id);
	/* sixteen sockets that never say who they are ... */
	for (int i = 0; i < 16; i++) {
		strangers[i] = ws_connect(gw.port, path, NULL, NULL, &status);
		assert_true(strangers[i] >= 0);
	}
	/* ... and a seventeenth is closed at once */
	fd = ws_connect(gw.port, path, NULL, NULL, &status);
	assert_true(fd >= 0);
	expect_closed_1008(fd, 3000, "the 17th unauthenticated viewer");
	/* they do not keep out viewers with a token: 32 of them */
	for (int i = 0; i < 32; i++) {
		viewers[i] = ws_connect(gw.port, path, a.view, NULL, &status);
		assert_true(viewers[i] >= 0);
		assert_true(hello(viewers[i]));
	}
	fd = ws_connect(gw.port, path, a.view, NULL, &status);
	assert_true(fd >= 0);
	expect_closed_1008(fd, 3000, "the 33rd viewer");
	for (int i = 0; i < 16; i++)
		close(strangers[i]);
	for (int i = 0; i < 32; i++)
		close(viewers[i]);
	/* once they are gone, there is room again */
	usleep(500 * 1000);
	fd = ws_connect(gw.port, path, a.view, NULL, &status);
	assert_true(fd >= 0);
	assert_true(hello(fd));
	close(fd);
}

static void test_minted_tokens_survive_a_restart(void **state)
{
	char path[256];
	struct http_resp r;

	(void)state;
	assert_int_equal(gateway_proc_restart(&gw,
					      (const char *const[]){ "--on-stop", "kill", NULL }),
			 0);
	snprintf(path, sizeof(path), "/v1/sessions/%s?wait=ready", a.id);
	r = call("GET", path, tokens[K_EGRESS], NULL);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/egress", a.id);
	r = call("PUT", path, tokens[K_EGRESS], "{\"allow\":[]}");
	if (r.status == 401 || r.status == 403)
		fail_msg("the minted egress token after a restart: %d %s", r.status, r.body);
	http_resp_free(&r);
	/* the rotated view token holds; the revoked one stays revoked */
	snprintf(path, sizeof(path), "/v1/sessions/%s", a.id);
	r = call("GET", path, a.view, NULL);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	r = call("GET", path, tokens[K_REVOKED], NULL);
	assert_int_equal(r.status, 401);
	http_resp_free(&r);
	/* API keys too (STATE_DIR/api-keys.json) */
	r = call("GET", "/v1/sessions", tokens[K_APIKEY], NULL);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	r = call("GET", "/v1/sessions", tokens[K_APIKEY_REVOKED], NULL);
	assert_int_equal(r.status, 401);
	http_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_route_has_a_call),
		cmocka_unit_test(test_route_table),
		cmocka_unit_test(test_websocket_table),
		cmocka_unit_test(test_revocation_closes_live_sockets),
		cmocka_unit_test(test_api_keys),
		cmocka_unit_test(test_rotation_and_shares),
		cmocka_unit_test(test_exec_stream_root_needs_root),
		cmocka_unit_test(test_control_socket_auth),
		cmocka_unit_test(test_watchers_leave_room_for_operations),
		cmocka_unit_test(test_bodies_refused_before_they_are_read),
		cmocka_unit_test(test_viewers_per_session_are_bounded),
		cmocka_unit_test(test_minted_tokens_survive_a_restart),
	};

	return cmocka_run_group_tests_name("tokens and their rights", tests, setup, teardown);
}
