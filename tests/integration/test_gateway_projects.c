/* tests/integration/test_gateway_projects.c: projects, the gateway's
 * tenants (docs/api.md "Projects"). Two projects' keys against every route
 * of the route table (tests/lib/route_calls.c: the table of
 * test_gateway_auth) and every WebSocket: a key on its own project's
 * session has the operator's rights there but "admin" and "root"; on the
 * other project's, every call answers 404, as for a session that is not
 * there, and leaves the session as it was; a revoked project key is
 * nothing, and one revoked through another project stays valid; "root"
 * only where the operator allows it. Templates by their names' prefix: one
 * project's cannot be seen, started, exported or deleted by another, nor
 * named outside its prefix.
 * The E2B door: a project key is E2B's team key, its list its own, another
 * project's sandbox not found. Quotas (sessions, vcpus, memory, disk) refuse
 * creates, forks, resumes, saves and E2B creates with 429 "quota" before
 * anything starts; usage by project adds up; the audit names the project;
 * /metrics has each project's series. Projects, keys and sessions' projects
 * survive a restart; a project with sessions or templates is not removed,
 * an empty one is, with its keys. Tiny guests under one `vitrine serve`. */
#include "common/http_client.h"
#include "gateway/api/routes.h"
#include "gateway/core/auth.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/route_calls.h"
#include "tests/lib/ws_client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static struct gateway_session sa, sb; /* project pa's, project pb's */
static char key_a[128], key_b[128], key_revoked[128], key_q[128];
static char audit_path[96];

static struct http_resp call(const char *method, const char *path, const char *token,
			     const char *body)
{
	struct http_resp r;

	if (http_request("127.0.0.1", gw.port, method, path, token && *token ? token : NULL, body,
			 body ? strlen(body) : 0, 60, &r) < 0)
		fail_msg("%s %s: no answer", method, path);
	return r;
}

/* The status of a call, its answer freed. */
static int status_of(const char *method, const char *path, const char *token, const char *body)
{
	struct http_resp r = call(method, path, token, body);
	int status = r.status;

	http_resp_free(&r);
	return status;
}

/* An E2B call with X-API-KEY. */
static struct http_resp e2b(const char *method, const char *path, const char *key, const char *body)
{
	char headers[160];
	struct http_resp r;

	snprintf(headers, sizeof(headers), "X-API-KEY: %s\r\n", key);
	if (http_request_headers("127.0.0.1", gw.port, method, path, NULL, headers, body,
				 body ? strlen(body) : 0, 60, &r) < 0)
		fail_msg("E2B %s %s: no answer", method, path);
	return r;
}

/* POST /v1/projects/NAME/keys: the key into out; its id into id (may be
 * NULL). */
static int make_key(const char *project, char *out, char *id)
{
	char path[96];
	struct http_resp r;
	const char *k;

	snprintf(path, sizeof(path), "/v1/projects/%s/keys", project);
	r = call("POST", path, gw.key, "{\"name\":\"agent\"}");
	k = json_string_value(json_object_get(r.json, "key"));
	if (r.status != 201 || !k ||
	    strcmp(json_string_value(json_object_get(r.json, "project")) ?: "", project)) {
		print_error("POST %s: %d %s\n", path, r.status, r.body ? r.body : "");
		http_resp_free(&r);
		return -1;
	}
	snprintf(out, 128, "%s", k);
	if (id)
		snprintf(id, 32, "%s", json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
	return 0;
}

static int make_project(const char *body)
{
	struct http_resp r = call("POST", "/v1/projects", gw.key, body);
	int ok = r.status == 201;

	if (!ok)
		print_error("POST /v1/projects %s: %d %s\n", body, r.status, r.body ? r.body : "");
	http_resp_free(&r);
	return ok ? 0 : -1;
}

static int setup(void **state)
{
	const char *args[] = { "--audit-log", audit_path, NULL };
	char id[32], path[96];

	(void)state;
	snprintf(audit_path, sizeof(audit_path), "/tmp/vitrine-projects-audit-%d.log", getpid());
	if (gateway_proc_start(&gw, args) < 0)
		return -1;
	if (make_project("{\"name\":\"pa\"}") < 0 || make_project("{\"name\":\"pb\"}") < 0 ||
	    make_project("{\"name\":\"pq\"}") < 0 || make_key("pa", key_a, NULL) < 0 ||
	    make_key("pb", key_b, NULL) < 0 || make_key("pq", key_q, NULL) < 0 ||
	    make_key("pa", key_revoked, id) < 0)
		return -1;
	snprintf(path, sizeof(path), "/v1/keys/%s", id);
	if (status_of("DELETE", path, gw.key, NULL) != 200)
		return -1;
	if (gateway_proc_create_session_as(&gw, key_a, "{\"image\":\"tiny\"}", 180, &sa) < 0 ||
	    gateway_proc_create_session_as(&gw, key_b, "{\"image\":\"tiny\"}", 180, &sb) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	unlink(audit_path);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* Every route and method of the table has a call in route_calls[], and each
 * call says the rights its row needs: the matrix below covers the table. */
static void test_every_route_has_a_call(void **state)
{
	int missing = 0;

	(void)state;
	for (int k = 0; k < R_KIND_COUNT; k++)
		for (int m = M_GET; m < M_OTHER; m++) {
			bool found = false;

			if (!route_table[k].pattern || !(route_table[k].methods & (1u << m)))
				continue;
			for (size_t i = 0; i < route_calls_n && !found; i++)
				found = route_call_method(route_calls[i].method) ==
						(enum route_method)m &&
					route_call_route(&route_calls[i], "x").kind ==
						(enum route_kind)k;
			if (!found) {
				print_error("route %s (method %d) has no call\n",
					    route_kind_names[k], m);
				missing++;
			}
		}
	assert_int_equal(missing, 0);
}

/* What a session looks like to its operator: its state, tokens, egress
 * rules and whether it has a recording; a call of another project must
 * change none of it. */
static void snapshot(const struct gateway_session *s, char *out, size_t len)
{
	static const char *const parts[] = { "", "/tokens", "/egress", "/recording" };
	size_t o = 0;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		char path[128];
		struct http_resp r;
		json_t *j;
		char *text;

		snprintf(path, sizeof(path), "/v1/sessions/%s%s", s->id, parts[i]);
		r = call("GET", path, gw.key, NULL);
		j = r.json ? json_deep_copy(r.json) : NULL;
		if (j && i == 0) { /* what moves on its own */
			json_object_del(j, "age_ms");
			json_object_del(j, "usage");
			json_object_del(j, "expires_in_ms");
		}
		text = j ? json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
		o += (size_t)snprintf(out + o, len - o, "%d %s\n", r.status, text ? text : "");
		free(text);
		json_decref(j);
		http_resp_free(&r);
		if (o >= len)
			fail_msg("snapshot too long");
	}
}

enum who { OWN, FOREIGN, REVOKED };

/* The status a call of key (who it is to the session) must get: 0 for
 * allowed (anything but 401/403/404 where the session is its own), else
 * that status. */
static int want_status(const struct route_call *c, enum who who)
{
	if (c->need & ROUTE_NO_TOKEN)
		return 0;
	if (who == REVOKED)
		return 401;
	if (who == FOREIGN && route_call_names_session(c))
		return 404;
	if (c->need & (ROUTE_OPERATOR_KEY | AUTH_R_ADMIN | AUTH_R_ROOT))
		return 403;
	return 0;
}

/* Runs every call of the table on s with key as who; returns the failures. */
static int run_calls(const struct gateway_session *s, const char *key, enum who who,
		     const char *name)
{
	int failed = 0;

	for (size_t i = 0; i < route_calls_n; i++) {
		const struct route_call *c = &route_calls[i];
		int want = want_status(c, who), got;
		char path[256];

		/* rotating the control token is kept for the test of rotation
		 * (test_gateway_auth): here it would change s */
		if (strstr(c->path, "/rotate") && !want)
			continue;
		route_call_path(c->path, s->id, path, sizeof(path));
		got = status_of(c->method, path, key, c->body);
		/* allowed: anything but 401/403, and but 404 on its own session
		 * (a missing token, file, frame or recording may be 404) */
		if (want ? got != want
			 : got == 401 || got == 403 ||
				    (got == 404 && strstr(c->path, "%s") &&
				     !strstr(c->path, "nosuch") && !strstr(c->path, "none") &&
				     !strstr(c->path, "recording"))) {
			print_error("%s %s with %s: %d (want %s%d)\n", c->method, c->path, name,
				    got, want ? "" : "anything but 401/403/404, e.g. ",
				    want ? want : 200);
			failed++;
		}
	}
	return failed;
}

/* The two-project matrix: each project's key on the other's session (404,
 * nothing changed), a revoked key (401), each on its own (its rights), the
 * operator (everything). */
static void test_matrix(void **state)
{
	char before_a[8192], before_b[8192], after[8192];
	int failed = 0;

	(void)state;
	snapshot(&sa, before_a, sizeof(before_a));
	snapshot(&sb, before_b, sizeof(before_b));
	failed += run_calls(&sa, key_b, FOREIGN, "pb's key on pa's session");
	failed += run_calls(&sb, key_a, FOREIGN, "pa's key on pb's session");
	failed += run_calls(&sa, key_revoked, REVOKED, "pa's revoked key");
	snapshot(&sa, after, sizeof(after));
	assert_string_equal(after, before_a);
	snapshot(&sb, after, sizeof(after));
	assert_string_equal(after, before_b);
	failed += run_calls(&sa, key_a, OWN, "pa's key on its own");
	failed += run_calls(&sb, key_b, OWN, "pb's key on its own");
	print_message("%zu calls x 5 project keys checked\n", route_calls_n);
	assert_int_equal(failed, 0);
	/* a project's key reads its own project alone */
	assert_int_equal(status_of("GET", "/v1/projects/pa", key_a, NULL), 200);
	assert_int_equal(status_of("GET", "/v1/projects/pa", key_b, NULL), 404);
	assert_int_equal(status_of("GET", "/v1/projects", key_a, NULL), 403);
}

/* A project's key is revoked through its project (DELETE
 * /v1/projects/NAME/keys/ID, the operator key alone): through another
 * project it is not there (404) and stays valid. */
static void test_project_key_revoke(void **state)
{
	char key[128], id[32], path[96];

	(void)state;
	assert_int_equal(make_key("pa", key, id), 0);
	assert_int_equal(status_of("GET", "/v1/projects/pa", key, NULL), 200);
	snprintf(path, sizeof(path), "/v1/projects/pb/keys/%s", id);
	assert_int_equal(status_of("DELETE", path, gw.key, NULL), 404);
	snprintf(path, sizeof(path), "/v1/projects/nosuch/keys/%s", id);
	assert_int_equal(status_of("DELETE", path, gw.key, NULL), 404);
	snprintf(path, sizeof(path), "/v1/projects/pa/keys/%s", id);
	assert_int_equal(status_of("DELETE", path, key_a, NULL), 403);
	assert_int_equal(status_of("GET", "/v1/projects/pa", key, NULL), 200);
	assert_int_equal(status_of("DELETE", path, gw.key, NULL), 200);
	assert_int_equal(status_of("GET", "/v1/projects/pa", key, NULL), 401);
	assert_int_equal(status_of("DELETE", path, gw.key, NULL), 404);
}

/* "root" is a project's only where the operator allows it: commands as
 * root, and tokens minted with it. */
static void test_root(void **state)
{
	const char *root = "{\"cmd\":\"true\",\"cwd\":\"/\",\"user\":\"root\"}";
	char exec[128], tokens[128];

	(void)state;
	snprintf(exec, sizeof(exec), "/v1/sessions/%s/exec", sa.id);
	snprintf(tokens, sizeof(tokens), "/v1/sessions/%s/tokens", sa.id);
	assert_int_equal(status_of("POST", exec, key_a, root), 403);
	assert_int_equal(status_of("POST", tokens, key_a, "{\"scopes\":[\"root\"]}"), 403);
	assert_int_equal(status_of("PATCH", "/v1/projects/pa", gw.key, "{\"allow_root\":true}"),
			 200);
	assert_int_not_equal(status_of("POST", exec, key_a, root), 403);
	assert_int_equal(status_of("POST", tokens, key_a, "{\"scopes\":[\"root\"]}"), 201);
	assert_int_equal(status_of("PATCH", "/v1/projects/pa", gw.key, "{\"allow_root\":false}"),
			 200);
	assert_int_equal(status_of("POST", exec, key_a, root), 403);
	/* a project's key changes no project */
	assert_int_equal(status_of("PATCH", "/v1/projects/pa", key_a, "{\"allow_root\":true}"),
			 403);
}

/* Lists: a project's key sees its own sessions; the operator all, or one
 * project's with ?project=. */
static void test_lists(void **state)
{
	struct http_resp r;
	json_t *list;

	(void)state;
	r = call("GET", "/v1/sessions", key_a, NULL);
	list = json_object_get(r.json, "sessions");
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "id")),
			    sa.id);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "project")),
			    "pa");
	http_resp_free(&r);
	r = call("GET", "/v1/sessions?project=pb", gw.key, NULL);
	list = json_object_get(r.json, "sessions");
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "id")),
			    sb.id);
	http_resp_free(&r);
	r = call("GET", "/v1/sessions", gw.key, NULL);
	assert_true(json_array_size(json_object_get(r.json, "sessions")) >= 2);
	http_resp_free(&r);
}

/* The WebSockets: a project's key opens its own session's, never another
 * project's. */
static void test_websockets(void **state)
{
	static const char *const sockets[] = { "control", "stream", "exec/stream", "cdp" };
	int failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(sockets) / sizeof(sockets[0]); i++) {
		char path[128];
		int status = 0, fd;

		snprintf(path, sizeof(path), "/v1/sessions/%s/%s", sa.id, sockets[i]);
		if ((fd = ws_connect(gw.port, path, key_b, NULL, &status)) >= 0) {
			print_error("WS %s opened with another project's key\n", sockets[i]);
			close(fd);
			failed++;
		}
		if ((fd = ws_connect(gw.port, path, key_revoked, NULL, &status)) >= 0) {
			print_error("WS %s opened with a revoked key\n", sockets[i]);
			close(fd);
			failed++;
		}
		if ((fd = ws_connect(gw.port, path, key_a, NULL, &status)) < 0) {
			print_error("WS %s refused its project's key (%d)\n", sockets[i], status);
			failed++;
		} else {
			close(fd);
		}
	}
	assert_int_equal(failed, 0);
}

/* Waits for template name to be ready (as key sees it). */
static void wait_template(const char *name, const char *key)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	for (int i = 0; i < 600; i++) {
		struct http_resp r = call("GET", path, key, NULL);
		const char *st = json_string_value(json_object_get(r.json, "status"));
		bool building = r.status == 200 && st && !strcmp(st, "building");

		if (!building) {
			if (r.status != 200 || !st || strcmp(st, "ready"))
				fail_msg("template %s: %d %s", name, r.status,
					 r.body ? r.body : "");
			http_resp_free(&r);
			return;
		}
		http_resp_free(&r);
		usleep(100 * 1000);
	}
	fail_msg("template %s never ready", name);
}

/* Templates are a project's by their names ("pa_..."): another project
 * neither sees, starts, exports nor deletes them; a project names its own
 * alone; the operator sees all. */
static void test_templates(void **state)
{
	char body[160];
	struct http_resp r;
	bool listed;
	size_t i;
	json_t *t;

	(void)state;
	snprintf(body, sizeof(body), "{\"name\":\"t\",\"from_session\":\"%s\"}", sa.id);
	assert_int_equal(status_of("POST", "/v1/templates", key_a, body), 400);
	snprintf(body, sizeof(body), "{\"name\":\"pb_t\",\"from_session\":\"%s\"}", sa.id);
	assert_int_equal(status_of("POST", "/v1/templates", key_a, body), 400);
	/* another project's session cannot be saved */
	snprintf(body, sizeof(body), "{\"name\":\"pb_t\",\"from_session\":\"%s\"}", sa.id);
	assert_int_equal(status_of("POST", "/v1/templates", key_b, body), 404);
	snprintf(body, sizeof(body), "{\"name\":\"pa_t\",\"from_session\":\"%s\"}", sa.id);
	assert_int_equal(status_of("POST", "/v1/templates", key_a, body), 202);
	wait_template("pa_t", key_a);
	assert_int_equal(status_of("GET", "/v1/templates/pa_t", key_b, NULL), 404);
	assert_int_equal(status_of("GET", "/v1/templates/pa_t/export", key_b, NULL), 404);
	assert_int_equal(status_of("DELETE", "/v1/templates/pa_t", key_b, NULL), 404);
	assert_int_equal(status_of("POST", "/v1/sessions", key_b, "{\"template\":\"pa_t\"}"), 404);
	assert_int_equal(status_of("GET", "/v1/templates/pa_t", gw.key, NULL), 200);
	r = call("GET", "/v1/templates", key_b, NULL);
	listed = false;
	json_array_foreach(json_object_get(r.json, "templates"), i, t)
		listed |= !strcmp(json_string_value(json_object_get(t, "name")) ?: "", "pa_t");
	assert_false(listed);
	http_resp_free(&r);
	r = call("GET", "/v1/templates", key_a, NULL);
	listed = false;
	json_array_foreach(json_object_get(r.json, "templates"), i, t)
		listed |= !strcmp(json_string_value(json_object_get(t, "name")) ?: "", "pa_t");
	assert_true(listed);
	http_resp_free(&r);
	/* a project with a template is not removed */
	assert_int_equal(status_of("DELETE", "/v1/projects/pa", gw.key, NULL), 409);
	assert_int_equal(status_of("DELETE", "/v1/templates/pa_t", key_a, NULL), 200);
}

/* The E2B door with project keys: each lists its own, another project's
 * sandbox is not found. */
static void test_e2b(void **state)
{
	static const char *const calls[][2] = {
		{ "GET", "" },	      { "DELETE", "" },	      { "POST", "/timeout" },
		{ "POST", "/pause" }, { "POST", "/connect" },
	};
	struct http_resp r;
	json_t *list;

	(void)state;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		char path[128];

		snprintf(path, sizeof(path), "/sandboxes/%s%s", sa.id, calls[i][1]);
		r = e2b(calls[i][0], path, key_b, "{\"timeout\":60}");
		if (r.status != 404)
			fail_msg("E2B %s %s with pb's key: %d %s", calls[i][0], path, r.status,
				 r.body ? r.body : "");
		http_resp_free(&r);
	}
	r = e2b("GET", "/sandboxes", key_a, NULL);
	list = r.json;
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(list, 0), "sandboxID")),
			    sa.id);
	http_resp_free(&r);
	r = e2b("GET", "/sandboxes/x", key_revoked, NULL);
	assert_int_equal(r.status, 401);
	http_resp_free(&r);
	/* sa is still there and running */
	{
		char path[128];

		snprintf(path, sizeof(path), "/v1/sessions/%s", sa.id);
		r = call("GET", path, key_a, NULL);
		assert_int_equal(r.status, 200);
		assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ready");
		http_resp_free(&r);
	}
}

/* PATCH /v1/projects/pq with body (the operator). */
static void set_quota(const char *body)
{
	struct http_resp r = call("PATCH", "/v1/projects/pq", gw.key, body);

	if (r.status != 200)
		fail_msg("PATCH pq %s: %d %s", body, r.status, r.body ? r.body : "");
	http_resp_free(&r);
}

/* How many sessions project pq has, as the operator lists them. */
static int pq_sessions(void)
{
	struct http_resp r = call("GET", "/v1/sessions?project=pq", gw.key, NULL);
	int n = (int)json_array_size(json_object_get(r.json, "sessions"));

	http_resp_free(&r);
	return n;
}

/* A refusal: 429 "quota" naming quota, with nothing started (the native
 * API's error, or E2B's {code, message}). */
static void expect_quota(struct http_resp r, const char *quota, const char *what)
{
	const json_t *err = json_object_get(r.json, "error");
	const char *msg = json_string_value(json_object_get(err ? err : r.json, "message"));
	const char *code = json_string_value(json_object_get(err, "code"));
	char want[48];

	snprintf(want, sizeof(want), "\"%s\"", quota);
	if (r.status != 429 || (err && (!code || strcmp(code, "quota"))) || !msg ||
	    !strstr(msg, want))
		fail_msg("%s: %d %s (want 429 quota %s)", what, r.status, r.body ? r.body : "",
			 quota);
	http_resp_free(&r);
}

static void test_quotas(void **state)
{
	struct gateway_session s1;
	char path[128], body[160];
	int guests;

	(void)state;
	set_quota("{\"quota\":{\"sessions\":1}}");
	assert_int_equal(gateway_proc_create_session_as(&gw, key_q, "{\"image\":\"tiny\"}", 180,
							&s1),
			 0);
	guests = gateway_proc_guests(&gw);
	expect_quota(call("POST", "/v1/sessions", key_q, "{\"image\":\"tiny\"}"), "sessions",
		     "a second session");
	snprintf(path, sizeof(path), "/v1/sessions/%s/fork", s1.id);
	expect_quota(call("POST", path, key_q, NULL), "sessions", "a fork");
	expect_quota(e2b("POST", "/sandboxes", key_q, "{\"templateID\":\"tiny\"}"), "sessions",
		     "an E2B create");
	set_quota("{\"quota\":{\"sessions\":null,\"vcpus\":3}}");
	expect_quota(call("POST", "/v1/sessions", key_q, "{\"image\":\"tiny\"}"), "vcpus",
		     "2 more vcpus");
	set_quota("{\"quota\":{\"vcpus\":null,\"memory_mib\":300}}");
	expect_quota(call("POST", "/v1/sessions", key_q, "{\"image\":\"tiny\"}"), "memory_mib",
		     "256 MiB more");
	set_quota("{\"quota\":{\"memory_mib\":null,\"disk_gib\":0}}");
	expect_quota(call("POST", "/v1/sessions", key_q, "{\"image\":\"tiny\"}"), "disk_gib",
		     "a create at the disk quota");
	snprintf(body, sizeof(body), "{\"name\":\"pq_t\",\"from_session\":\"%s\"}", s1.id);
	expect_quota(call("POST", "/v1/templates", key_q, body), "disk_gib", "a template save");
	assert_int_equal(pq_sessions(), 1);
	assert_int_equal(gateway_proc_guests(&gw), guests);
	/* the operator is held to no project's quota */
	assert_int_equal(status_of("POST", "/v1/sessions", gw.key, "{\"bogus\":1}"), 400);
	/* a resume from disk asks for the vCPUs again */
	set_quota("{\"quota\":{\"disk_gib\":null}}");
	snprintf(path, sizeof(path), "/v1/sessions/%s/pause", s1.id);
	assert_int_equal(status_of("POST", path, key_q, "{\"mode\":\"disk\"}"), 200);
	set_quota("{\"quota\":{\"vcpus\":1}}");
	snprintf(path, sizeof(path), "/v1/sessions/%s/resume", s1.id);
	expect_quota(call("POST", path, key_q, NULL), "vcpus", "a resume from disk");
	snprintf(path, sizeof(path), "/v1/sessions/%s", s1.id);
	{
		struct http_resp r = call("GET", path, key_q, NULL);

		assert_string_equal(json_string_value(json_object_get(r.json, "status")), "paused");
		http_resp_free(&r);
	}
	set_quota("{\"quota\":{\"vcpus\":null}}");
	snprintf(path, sizeof(path), "/v1/sessions/%s/resume", s1.id);
	assert_int_equal(status_of("POST", path, key_q, NULL), 200);
	/* what the project holds, as its key sees it */
	{
		struct http_resp r = call("GET", "/v1/projects/pq", key_q, NULL);
		json_t *u = json_object_get(r.json, "usage");

		assert_int_equal(r.status, 200);
		assert_int_equal(json_integer_value(json_object_get(u, "sessions")), 1);
		assert_int_equal(json_integer_value(json_object_get(u, "vcpus")), 2);
		assert_int_equal(json_integer_value(json_object_get(u, "memory_mib")), 256);
		http_resp_free(&r);
	}
	snprintf(path, sizeof(path), "/v1/sessions/%s", s1.id);
	assert_int_equal(status_of("DELETE", path, key_q, NULL), 200);
}

/* GET /v1/usage: a project's key sees its own sessions; each project's
 * sums are its sessions' figures added up. */
static void test_usage(void **state)
{
	struct http_resp r;
	json_t *sessions, *groups, *g, *e;
	size_t i, j;

	(void)state;
	r = call("GET", "/v1/usage", key_a, NULL);
	sessions = json_object_get(r.json, "sessions");
	assert_true(json_array_size(sessions) >= 1);
	json_array_foreach(sessions, i, e)
		assert_string_equal(json_string_value(json_object_get(e, "project")) ?: "", "pa");
	http_resp_free(&r);
	r = call("GET", "/v1/usage", gw.key, NULL);
	sessions = json_object_get(r.json, "sessions");
	groups = json_object_get(r.json, "projects");
	assert_true(json_array_size(groups) >= 3); /* pa, pb, pq (ended) */
	json_array_foreach(groups, i, g)
	{
		const char *p = json_string_value(json_object_get(g, "project"));
		double run = 0,
		       want = json_number_value(
			       json_object_get(json_object_get(g, "usage"), "seconds_running"));
		int n = 0;

		json_array_foreach(sessions, j, e)
		{
			const char *ep = json_string_value(json_object_get(e, "project"));

			if (strcmp(ep ?: "", p ?: ""))
				continue;
			n++;
			run += json_number_value(
				json_object_get(json_object_get(e, "usage"), "seconds_running"));
		}
		assert_int_equal(json_integer_value(json_object_get(g, "sessions")), n);
		assert_true(run > want - 0.001 && run < want + 0.001);
	}
	http_resp_free(&r);
}

/* The audit names the project of a project's key; /metrics has each
 * project's series. */
static void test_audit_and_metrics(void **state)
{
	char *text = NULL, want[64];
	struct http_resp r;
	FILE *f;
	size_t n = 0;

	(void)state;
	assert_non_null(f = fopen(audit_path, "r"));
	assert_true(getdelim(&text, &n, '\0', f) > 0);
	fclose(f);
	assert_non_null(strstr(text, "\"project\":\"pa\""));
	assert_non_null(strstr(text, "\"project_create\""));
	free(text);
	r = call("GET", "/metrics", gw.key, NULL);
	assert_int_equal(r.status, 200);
	snprintf(want, sizeof(want), "vitrine_project_sessions{project=\"pa\"} 1");
	assert_non_null(strstr(r.body, want));
	assert_non_null(strstr(r.body, "vitrine_project_vcpus{project=\"pb\"} 2"));
	http_resp_free(&r);
}

/* A restart keeps projects, keys and each session's project. */
static void test_restart(void **state)
{
	const char *args[] = { "--audit-log", audit_path, NULL };
	char path[128];

	(void)state;
	assert_int_equal(gateway_proc_restart(&gw, args), 0);
	snprintf(path, sizeof(path), "/v1/sessions/%s?wait=ready", sa.id);
	assert_int_equal(status_of("GET", path, key_a, NULL), 200);
	assert_int_equal(status_of("GET", path, key_b, NULL), 404);
	assert_int_equal(status_of("GET", path, key_revoked, NULL), 401);
	assert_int_equal(status_of("GET", "/v1/projects/pb", key_b, NULL), 200);
}

/* A project with sessions stays; an empty one goes with its keys, which a
 * project made again under its name does not bring back. */
static void test_remove(void **state)
{
	char path[128];
	struct http_resp r;

	(void)state;
	assert_int_equal(status_of("DELETE", "/v1/projects/pb", gw.key, NULL), 409);
	assert_int_equal(status_of("POST", "/v1/projects", gw.key, "{\"name\":\"pb\"}"), 409);
	snprintf(path, sizeof(path), "/v1/sessions/%s", sb.id);
	assert_int_equal(status_of("DELETE", path, key_b, NULL), 200);
	r = call("DELETE", "/v1/projects/pb", gw.key, NULL);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_integer_value(json_object_get(r.json, "keys_revoked")), 1);
	http_resp_free(&r);
	assert_int_equal(status_of("GET", "/v1/sessions", key_b, NULL), 401);
	assert_int_equal(status_of("POST", "/v1/projects", gw.key, "{\"name\":\"pb\"}"), 201);
	assert_int_equal(status_of("GET", "/v1/sessions", key_b, NULL), 401);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_route_has_a_call),
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_project_key_revoke),
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_websockets),
		cmocka_unit_test(test_templates),
		cmocka_unit_test(test_e2b),
		cmocka_unit_test(test_quotas),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_audit_and_metrics),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_remove),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
