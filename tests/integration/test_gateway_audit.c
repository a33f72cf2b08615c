/* tests/integration/test_gateway_audit.c: the audit log and the access log
 * (docs/audit.md) of one gateway with one tiny guest. Every kind of entry
 * a request makes is driven once — create, pause, resume, fork, delete,
 * template create/delete, a command (over HTTP and over the exec socket),
 * file put/get, clipboard, open, launch, egress rules, tokens minted,
 * rotated and revoked, sharing links minted and revoked, control taken and
 * released through a control share, the VNC door, refused authentications over HTTP (no token, a wrong one, one
 * lacking a scope, a sharing link's) and at a WebSocket upgrade — and
 * read back: event, principal kind, token id (the token hash's prefix),
 * session and remote. Then every log the test can see (audit, access, the
 * gateway's stderr, the session's run dir and records) is searched for
 * every token the test used: none may be there. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/core/auth.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/stream_client.h"
#include "tests/lib/ws_client.h"

#include <dirent.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static struct gateway_session sess;
static char audit_path[96], access_path[96], stderr_path[96];
/* Every secret the test held, to look for in the logs. */
static char secrets[16][AUTH_TOKEN_LEN + 64];
static int n_secrets;

static void keep_secret(const char *t)
{
	assert_true(n_secrets < 16);
	assert_true(strlen(t) >= 20);
	snprintf(secrets[n_secrets++], sizeof(secrets[0]), "%s", t);
}

static void token_id(const char *token, char out[9])
{
	char h[AUTH_HASH_LEN + 1];

	auth_token_hash(token, h);
	snprintf(out, 9, "%.8s", h);
}

static int setup(void **state)
{
	const pid_t pid = getpid();

	(void)state;
	snprintf(audit_path, sizeof(audit_path), "/tmp/vitrine-audit-%d.log", (int)pid);
	snprintf(access_path, sizeof(access_path), "/tmp/vitrine-access-%d.log", (int)pid);
	snprintf(stderr_path, sizeof(stderr_path), "/tmp/vitrine-audit-stderr-%d.log", (int)pid);
	unlink(audit_path);
	unlink(access_path);
	unlink(stderr_path);
	setenv("VITRINE_TEST_GATEWAY_STDERR", stderr_path, 1);
	if (gateway_proc_start(&gw, (const char *const[]){ "--audit-log", audit_path,
							   "--access-log", access_path,
							   "--log-format", "json", NULL }) < 0)
		return -1;
	unsetenv("VITRINE_TEST_GATEWAY_STDERR");
	if (gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &sess) < 0)
		return -1;
	keep_secret(gw.key);
	keep_secret(sess.control);
	keep_secret(sess.view);
	return 0;
}

/* The gateway's stderr goes to a file the test reads: a sanitizer report
 * there (a leak found at exit, say) is passed on and fails the group. */
static bool sanitizer_said(void)
{
	char *text = NULL;
	bool said;

	if (fs_read_file(stderr_path, 64 << 20, &text, NULL) < 0)
		return false;
	said = strstr(text, "Sanitizer") || strstr(text, "runtime error");
	if (said)
		fprintf(stderr, "the gateway's stderr:\n%s\n", text);
	free(text);
	return said;
}

static int teardown(void **state)
{
	int rc;

	(void)state;
	gateway_proc_delete_sessions(&gw);
	rc = gateway_proc_stop(&gw) == 0 && !sanitizer_said() ? 0 : -1;
	unlink(audit_path);
	unlink(access_path);
	unlink(stderr_path);
	return rc;
}

/* method path with token: its status, the body parsed into *out when out
 * is not NULL. */
static int call_path(const char *method, const char *path, const char *token, const char *body,
		     json_t **out)
{
	struct http_resp r;
	int status;

	assert_int_equal(http_request("127.0.0.1", gw.port, method, path, token, body,
				      body ? strlen(body) : 0, 120, &r),
			 0);
	status = r.status;
	if (out)
		*out = r.body ? json_loads(r.body, 0, NULL) : NULL;
	http_resp_free(&r);
	return status;
}

/* The same on /v1/sessions/{id}SUB. */
static int call(const char *method, const char *sub, const char *token, const char *body,
		json_t **out)
{
	char path[512];

	snprintf(path, sizeof(path), "/v1/sessions/%s%s", sess.id, sub);
	return call_path(method, path, token, body, out);
}

static void expect(int got, int want, const char *what)
{
	if (got != want)
		fail_msg("%s: HTTP %d, wanted %d", what, got, want);
}

/* The audit log's entries, each a parsed line (every line must parse). */
static json_t *read_audit(void)
{
	char *text = NULL;
	json_t *all = json_array();

	assert_int_equal(fs_read_file(audit_path, 4 << 20, &text, NULL), 0);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		json_t *j = json_loads(line, 0, NULL);

		if (!j)
			fail_msg("audit line is not JSON: %s", line);
		json_array_append_new(all, j);
	}
	free(text);
	return all;
}

/* The first entry of event by a principal of kind whose token is token
 * (NULL: the principal must be null), on session sid (NULL: any); fails
 * when there is none. Checks time and remote on the way. */
static json_t *find(json_t *all, const char *event, const char *kind, const char *token,
		    const char *sid)
{
	char tid[9] = "";
	size_t i;
	json_t *e;

	if (token)
		token_id(token, tid);
	json_array_foreach(all, i, e)
	{
		json_t *p = json_object_get(e, "principal");
		const char *t = json_string_value(json_object_get(e, "time"));

		if (strcmp(json_string_value(json_object_get(e, "event")), event))
			continue;
		if (kind && (!json_is_object(p) ||
			     strcmp(json_string_value(json_object_get(p, "kind")), kind) ||
			     strcmp(json_string_value(json_object_get(p, "token_id")), tid)))
			continue;
		if (!kind && !json_is_null(p))
			continue;
		if (sid && (!json_is_string(json_object_get(e, "session")) ||
			    strcmp(json_string_value(json_object_get(e, "session")), sid)))
			continue;
		/* 2026-12-01T20:07:30.123Z */
		assert_non_null(t);
		assert_int_equal(strlen(t), 24);
		assert_int_equal(t[10], 'T');
		assert_int_equal(t[19], '.');
		assert_int_equal(t[23], 'Z');
		if (kind) /* a request's: the client's address */
			assert_string_equal(json_string_value(json_object_get(e, "remote")),
					    "127.0.0.1");
		return e;
	}
	fail_msg("no audit entry %s by %s %s on %s", event, kind ? kind : "null", tid,
		 sid ? sid : "any session");
	return NULL;
}

static json_int_t field_int(json_t *e, const char *key)
{
	json_t *v = json_object_get(e, key);

	if (!json_is_integer(v))
		fail_msg("entry has no integer %s", key);
	return json_integer_value(v);
}

/* Whether the file at path holds needle. */
static bool file_has(const char *path, const char *needle)
{
	char *text = NULL;
	size_t len = 0;
	bool found;

	if (fs_read_file(path, 64 << 20, &text, &len) < 0)
		return false;
	found = memmem(text, len, needle, strlen(needle)) != NULL;
	free(text);
	return found;
}

/* Searches every regular file under dir for every secret; returns how many
 * files were read. */
static int grep_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int files = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char p[1024];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			files += grep_tree(p);
			continue;
		}
		/* disks and memory files are not logs */
		if (!S_ISREG(st.st_mode) || st.st_size > (8 << 20))
			continue;
		files++;
		for (int i = 0; i < n_secrets; i++)
			if (file_has(p, secrets[i]))
				fail_msg("%s holds token %d", p, i);
	}
	closedir(d);
	return files;
}

static void test_every_entry(void **state)
{
	char tid[9], path[256], *minted, *share_ctl, *rotated, *grant;
	json_t *j, *all, *e;
	int fd, status;
	struct sc_screen scr = { 0 };

	(void)state;
	/* Commands, files, the clipboard, open, launch: the control token. */
	expect(call("POST", "/exec", sess.control, "{\"cmd\":\"true\",\"cwd\":\"/\"}", NULL), 200,
	       "exec");
	/* A streamed command: its entry comes when its socket closes. */
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec/stream", sess.id);
	fd = ws_connect(gw.port, path, sess.control, NULL, &status);
	if (fd < 0)
		fail_msg("exec stream upgrade: HTTP %d", status);
	assert_int_equal(ws_send_text(fd, "{\"cmd\":\"exit 3\",\"cwd\":\"/\"}"), 0);
	for (char *m; (m = ws_recv_text(fd, 30000));) {
		bool done = strstr(m, "\"exit\"") != NULL;

		free(m);
		if (done)
			break;
	}
	close(fd);
	expect(call("PUT", "/files?path=/tmp/audit.txt", sess.control, "hello audit", NULL), 200,
	       "file put");
	expect(call("GET", "/files?path=/tmp/audit.txt", sess.control, NULL, NULL), 200,
	       "file get");
	call("PUT", "/clipboard", sess.control, "{\"text\":\"clip\"}", NULL);
	call("GET", "/clipboard", sess.control, NULL, NULL);
	call("POST", "/open", sess.control, "{\"url\":\"about:blank\"}", NULL);
	call("POST", "/launch", sess.control, "{\"command\":\"true\"}", NULL);
	/* Egress rules and tokens: the operator. */
	expect(call("PUT", "/egress", gw.key, "{\"allow\":[\"example.com\"]}", NULL), 200,
	       "egress");
	expect(call("POST", "/tokens", gw.key,
		    "{\"scopes\":[\"view\",\"act\",\"exec\",\"fork\",\"share\",\"vnc\"]}", &j),
	       201, "mint");
	minted = strdup(json_string_value(json_object_get(j, "token")));
	grant = strdup(json_string_value(json_object_get(j, "id")));
	json_decref(j);
	keep_secret(minted);
	/* Pause, resume, a sharing link, the VNC door, fork: the minted token. */
	expect(call("POST", "/pause", minted, "{\"mode\":\"memory\"}", NULL), 200, "pause");
	expect(call("POST", "/resume", minted, NULL, NULL), 200, "resume");
	expect(call("POST", "/share", minted, "{\"scope\":\"control\"}", &j), 201, "share");
	share_ctl = strdup(json_string_value(json_object_get(j, "token")));
	json_decref(j);
	keep_secret(share_ctl);
	/* Control taken and released by a viewer of the control link. */
	snprintf(path, sizeof(path), "/v1/sessions/%s/stream", sess.id);
	fd = ws_connect(gw.port, path, share_ctl, NULL, &status);
	if (fd < 0)
		fail_msg("stream upgrade with the share token: HTTP %d", status);
	j = sc_wait_json(fd, "hello", &scr, 30000);
	assert_non_null(j);
	json_decref(j);
	assert_int_equal(ws_send_text(fd, "{\"type\":\"take\"}"), 0);
	json_decref(sc_wait_json(fd, "control", &scr, 10000));
	assert_int_equal(ws_send_text(fd, "{\"type\":\"release\"}"), 0);
	json_decref(sc_wait_json(fd, "control", &scr, 10000));
	close(fd);
	sc_screen_free(&scr);
	/* A sharing link's token is good on the stream only. */
	expect(call("GET", "", share_ctl, NULL, NULL), 401, "share token over HTTP");
	expect(call("DELETE", "/share", minted, NULL, NULL), 200, "share revoke");
	status = call("POST", "/vnc", minted, NULL, NULL);
	assert_true(status == 200 || status == 201);
	expect(call("DELETE", "/vnc", minted, NULL, NULL), 200, "vnc close");
	expect(call("POST", "/fork", minted, NULL, &j), 201, "fork");
	{
		char child[64], cpath[128];

		snprintf(child, sizeof(child), "%s", json_string_value(json_object_get(j, "id")));
		keep_secret(json_string_value(
			json_object_get(json_object_get(j, "tokens"), "control")));
		keep_secret(
			json_string_value(json_object_get(json_object_get(j, "tokens"), "view")));
		json_decref(j);
		snprintf(cpath, sizeof(cpath), "/v1/sessions/%s", child);
		expect(call_path("DELETE", cpath, gw.key, NULL, NULL), 200, "delete the fork");
	}
	/* Rotation and revocation; templates (refused cheaply: no build). */
	expect(call("POST", "/tokens/view/rotate", gw.key, NULL, &j), 200, "rotate");
	rotated = strdup(json_string_value(json_object_get(j, "token")));
	json_decref(j);
	keep_secret(rotated);
	snprintf(path, sizeof(path), "/tokens/%s", grant);
	expect(call("DELETE", path, gw.key, NULL, NULL), 200, "revoke");
	expect(call_path("POST", "/v1/templates", gw.key, "{\"name\":\"Bad Name\"}", NULL), 400,
	       "template create");
	expect(call_path("DELETE", "/v1/templates/nosuchtemplate", gw.key, NULL, NULL), 404,
	       "template delete");
	/* Refusals: no token, a wrong one, a lacking one, a WebSocket. */
	expect(call_path("GET", "/v1/sessions", NULL, NULL, NULL), 401, "no token");
	expect(call_path("GET", "/v1/sessions", "not-a-token-of-this-gateway-at-all", NULL, NULL),
	       401, "bad token");
	expect(call("POST", "/actions", rotated, "{\"action\":\"mouse_move\",\"coordinate\":[1,1]}",
		    NULL),
	       403, "view acts");
	snprintf(path, sizeof(path), "/v1/sessions/%s/control", sess.id);
	assert_true(ws_connect(gw.port, path, rotated, NULL, &status) < 0);

	all = read_audit();
	token_id(gw.key, tid);
	e = find(all, "session_create", "operator", gw.key, sess.id);
	assert_string_equal(json_string_value(json_object_get(e, "image")), "tiny");
	e = find(all, "command", "control", sess.control, sess.id);
	assert_int_equal(field_int(e, "exit_code"), 0);
	assert_int_equal(field_int(e, "status"), 200);
	assert_string_equal(json_string_value(json_object_get(e, "user")), "desktop");
	assert_string_equal(json_string_value(json_array_get(json_object_get(e, "argv"), 2)),
			    "true");
	{
		size_t i;
		bool streamed = false;

		json_array_foreach(all, i,
				   e) if (!strcmp(json_string_value(json_object_get(e, "event")),
						  "command") &&
					  json_is_true(json_object_get(e, "websocket")))
		{
			streamed = true;
			assert_int_equal(field_int(e, "exit_code"), 3);
			token_id(sess.control, tid);
			assert_string_equal(json_string_value(
						    json_object_get(json_object_get(e, "principal"),
								    "token_id")),
					    tid);
		}
		assert_true(streamed);
	}
	e = find(all, "file_put", "control", sess.control, sess.id);
	assert_string_equal(json_string_value(json_object_get(e, "path")), "/tmp/audit.txt");
	assert_int_equal(field_int(e, "size"), 11);
	e = find(all, "file_get", "control", sess.control, sess.id);
	assert_int_equal(field_int(e, "size"), 11);
	find(all, "clipboard_set", "control", sess.control, sess.id);
	find(all, "clipboard_get", "control", sess.control, sess.id);
	find(all, "open", "control", sess.control, sess.id);
	find(all, "launch", "control", sess.control, sess.id);
	find(all, "egress_rules_set", "operator", gw.key, sess.id);
	e = find(all, "token_minted", "operator", gw.key, sess.id);
	token_id(minted, tid);
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(e, "grant"), "token_id")),
			    tid);
	e = find(all, "session_pause", "minted", minted, sess.id);
	assert_string_equal(json_string_value(json_object_get(e, "mode")), "memory");
	find(all, "session_resume", "minted", minted, sess.id);
	e = find(all, "share_minted", "minted", minted, sess.id);
	token_id(share_ctl, tid);
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(e, "share"), "token_id")),
			    tid);
	find(all, "control_taken", "share", share_ctl, sess.id);
	find(all, "control_released", "share", share_ctl, sess.id);
	find(all, "share_revoked", "minted", minted, sess.id);
	e = find(all, "auth_refused", "share", share_ctl, sess.id);
	assert_string_equal(json_string_value(json_object_get(e, "route")), "session_get");
	find(all, "vnc_door_opened", "minted", minted, sess.id);
	find(all, "vnc_door_closed", "minted", minted, sess.id);
	find(all, "session_fork", "minted", minted, sess.id);
	find(all, "session_delete", "operator", gw.key, NULL);
	e = find(all, "token_rotated", "operator", gw.key, sess.id);
	token_id(rotated, tid);
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(e, "grant"), "token_id")),
			    tid);
	find(all, "token_revoked", "operator", gw.key, sess.id);
	e = find(all, "template_create", "operator", gw.key, NULL);
	assert_int_equal(field_int(e, "status"), 400);
	find(all, "template_delete", "operator", gw.key, NULL);
	e = find(all, "auth_refused", NULL, NULL, NULL);
	assert_int_equal(field_int(e, "status"), 401);
	assert_string_equal(json_string_value(json_object_get(e, "route")), "sessions_list");
	find(all, "auth_refused", "unknown", "not-a-token-of-this-gateway-at-all", NULL);
	e = find(all, "auth_refused", "view", rotated, sess.id);
	assert_int_equal(field_int(e, "status"), 403);
	find(all, "vnc_started", NULL, NULL, sess.id); /* the door's own, no principal */
	{
		/* the refused upgrade: a WebSocket entry by the view token */
		size_t i;
		bool ws = false;

		json_array_foreach(all, i,
				   e) if (!strcmp(json_string_value(json_object_get(e, "event")),
						  "auth_refused") &&
					  json_is_true(json_object_get(e, "websocket"))) ws = true;
		assert_true(ws);
	}
	json_decref(all);

	/* The access log: routes by name, paths without their query. */
	assert_true(file_has(access_path, "\"route\":\"session_exec\""));
	assert_true(file_has(access_path, "\"route\":\"session_files\""));
	assert_false(file_has(access_path, "path=/tmp"));
	assert_false(file_has(access_path, "?"));

	/* No token anywhere. */
	assert_true(grep_tree(gw.run_base) > 0);
	grep_tree(gw.state_dir);
	for (int i = 0; i < n_secrets; i++) {
		assert_false(file_has(audit_path, secrets[i]));
		assert_false(file_has(access_path, secrets[i]));
		assert_false(file_has(stderr_path, secrets[i]));
	}
	assert_true(file_has(stderr_path, "\"level\"")); /* it did say things there */
	free(minted);
	free(grant);
	free(share_ctl);
	free(rotated);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_entry),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
