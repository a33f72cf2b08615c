/* tests/integration/test_gateway_pause.c: session lifecycles through the
 * gateway with the tiny guest: a template made through the API; pause and
 * resume in memory and on disk keep the screen (the guest's marks of
 * earlier clicks) and take clicks after; a paused session refuses actions
 * unless asked to resume; fork copies the screen and the copies diverge;
 * a timeout fires after its time and not before, with an "expiring" event
 * first; an idle timeout pauses to disk; per-session limits (400), the
 * session limit (429) and the memory budget (503) refuse cleanly; bad
 * requests get their errors; QEMU killed under a session fails it; a
 * pause to disk with no room is refused (507) and one that runs out of
 * room half way keeps the guest running; nothing is left behind. */
#include "common/base64.h"
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/net.h"
#include "tests/lib/png.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cmocka.h>

#define MARK 0xFFFFFF /* the centre pixel of a click mark */

static struct gateway_proc gw;
static struct gateway_proc *cur = &gw; /* the gateway requests go to */
static char tpl[64], tpl_body[128];

static struct http_resp req_as(const char *token, const char *method, const char *path,
			       const char *body, int status, const char *code)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", cur->port, method, path, token, body,
			      body ? strlen(body) : 0, 120, &r);

	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("%s %s %s -> %d %.300s (want %d %s)", method, path, body ? body : "",
			 r.status, r.body ? r.body : "", status, code ? code : "");
	return r;
}

static struct http_resp req(const char *method, const char *path, const char *body, int status,
			    const char *code)
{
	return req_as(cur->key, method, path, body, status, code);
}

static void req_free(const char *method, const char *path, const char *body, int status,
		     const char *code)
{
	struct http_resp r = req(method, path, body, status, code);

	http_resp_free(&r);
}

static const char *str(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));

	return s ? s : "";
}

/* A new session from the template (ready), its id into id. */
static void create(char *id, size_t len, const char *extra)
{
	char body[256];
	struct http_resp r;

	snprintf(body, sizeof(body), "{\"template\":\"%s\"%s}", tpl, extra ? extra : "");
	r = req("POST", "/v1/sessions?wait=ready", body, 201, NULL);
	assert_string_equal(str(r.json, "status"), "ready");
	snprintf(id, len, "%s", str(r.json, "id"));
	http_resp_free(&r);
}

static void sess_path(char *out, size_t len, const char *id, const char *what)
{
	snprintf(out, len, "/v1/sessions/%s%s", id, what);
}

static void decode_png(json_t *shot, struct ppm *img)
{
	const char *b64 = str(shot, "data");
	unsigned char *raw = malloc(strlen(b64) + 1);
	size_t n;

	assert_non_null(raw);
	assert_int_equal(base64_decode(b64, strlen(b64), raw, strlen(b64), &n), 0);
	assert_int_equal(png_decode(raw, n, img), 0);
	free(raw);
}

/* Clicks (x, y) in session id and returns the settled screenshot. */
static void click(const char *id, int x, int y, struct ppm *img)
{
	char path[128], body[256];
	struct http_resp r;

	sess_path(path, sizeof(path), id, "/actions");
	snprintf(
		body, sizeof(body),
		"{\"action\":\"left_click\",\"coordinate\":[%d,%d],\"screenshot\":{\"format\":\"png\"}}",
		x, y);
	r = req("POST", path, body, 200, NULL);
	decode_png(json_object_get(r.json, "screenshot"), img);
	http_resp_free(&r);
}

/* The settled screen of session id. */
static void screen(const char *id, struct ppm *img)
{
	char path[128];
	struct http_resp r;

	sess_path(path, sizeof(path), id, "/actions");
	r = req("POST", path, "{\"action\":\"screenshot\",\"screenshot\":{\"format\":\"png\"}}",
		200, NULL);
	decode_png(json_object_get(r.json, "screenshot"), img);
	http_resp_free(&r);
}

static bool marked(const char *id, int x, int y)
{
	struct ppm img;
	bool m;

	screen(id, &img);
	m = ppm_pixel(&img, x, y) == MARK;
	ppm_free(&img);
	return m;
}

/* A command's stdout in session id (the tiny guest: busybox, no home). */
static char *sh(const char *id, const char *cmd)
{
	char path[128];
	json_t *body = json_pack("{s:s, s:s}", "cmd", cmd, "cwd", "/");
	char *text = json_dumps(body, JSON_COMPACT), *out;
	struct http_resp r;

	sess_path(path, sizeof(path), id, "/exec");
	r = req("POST", path, text, 200, NULL);
	if (json_integer_value(json_object_get(r.json, "exit_code")) != 0)
		fail_msg("%s: exit %d: %s", cmd,
			 (int)json_integer_value(json_object_get(r.json, "exit_code")),
			 str(r.json, "stderr"));
	out = strdup(str(r.json, "stdout"));
	http_resp_free(&r);
	free(text);
	json_decref(body);
	return out;
}

static void assert_sh(const char *id, const char *cmd, const char *want)
{
	char *out = sh(id, cmd);

	assert_string_equal(out, want);
	free(out);
}

static void delete_session(const char *id)
{
	char path[128];

	sess_path(path, sizeof(path), id, "");
	req_free("DELETE", path, NULL, 200, NULL);
}

/* Run dirs and checkpoint folders in dir (a guest's supervisor log,
 * shim-vm-*.log, goes with its run dir and is not counted). */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "vm-", 3);
	if (d)
		closedir(d);
	return n;
}

/* After each test: no session survives into the next one, even when the
 * test failed half-way. */
static int delete_all(void **state)
{
	(void)state;
	return gateway_proc_delete_sessions(&gw);
}

static int setup(void **state)
{
	const char *args[] = {
		"--max-sessions",      "3",   "--max-vcpus", "2", "--max-memory-mib", "512",
		"--memory-budget-mib", "800", NULL
	};
	char body[256];

	(void)state;
	if (gateway_proc_start(&gw, args) < 0)
		return -1;
	snprintf(tpl, sizeof(tpl), "test-pause-%d", (int)getpid());
	snprintf(tpl_body, sizeof(tpl_body), "{\"template\":\"%s\"}", tpl);
	snprintf(body, sizeof(body),
		 "{\"name\":\"%s\",\"image\":\"tiny\",\"width\":800,\"height\":600}", tpl);
	return gateway_proc_make_template(&gw, body, 300, NULL);
}

static int teardown(void **state)
{
	char path[128];
	struct http_resp r;

	(void)state;
	gateway_proc_delete_sessions(&gw); /* a template in use cannot go */
	snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
	http_request("127.0.0.1", gw.port, "DELETE", path, gw.key, NULL, 0, 30, &r);
	http_resp_free(&r);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static void test_template_api_errors(void **state)
{
	char body[160];

	(void)state;
	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"image\":\"tiny\"}", tpl);
	req_free("POST", "/v1/templates", body, 409, "template_exists");
	req_free("POST", "/v1/templates", "{\"name\":\"a b\",\"image\":\"tiny\"}", 400,
		 "invalid_argument");
	req_free("POST", "/v1/templates", "{\"image\":\"tiny\"}", 400, "invalid_argument");
	req_free("POST", "/v1/templates", "{\"name\":\"x\",\"image\":\"no-such-image\"}", 404,
		 "unknown_image");
	req_free("POST", "/v1/templates", "{\"name\":\"x\",\"image\":\"tiny\",\"timeout_s\":5}",
		 400, "invalid_argument");
	req_free("POST", "/v1/templates", "{\"name\":\"x\",\"image\":\"tiny\",\"vcpus\":4}", 400,
		 "limit_exceeded");
	req_free("POST", "/v1/templates", "[1]", 400, "invalid_json");
}

static void test_pause_resume_memory(void **state)
{
	char id[64], path[128];
	struct http_resp r;
	struct ppm img;

	(void)state;
	create(id, sizeof(id), NULL);
	click(id, 100, 100, &img);
	assert_int_equal(ppm_pixel(&img, 100, 100), MARK);
	ppm_free(&img);

	sess_path(path, sizeof(path), id, "/pause");
	r = req("POST", path, "{\"mode\":\"memory\"}", 200, NULL);
	assert_string_equal(str(r.json, "status"), "paused");
	assert_string_equal(str(r.json, "paused"), "memory");
	http_resp_free(&r);
	req_free("POST", path, "{\"mode\":\"memory\"}", 200, NULL); /* again: no change */
	/* Its screen can be read, but it takes no action. */
	sess_path(path, sizeof(path), id, "/screenshot");
	req_free("GET", path, NULL, 200, NULL);
	sess_path(path, sizeof(path), id, "/actions");
	req_free("POST", path, "{\"action\":\"left_click\",\"coordinate\":[5,5]}", 409,
		 "session_paused");

	sess_path(path, sizeof(path), id, "/resume");
	r = req("POST", path, NULL, 200, NULL);
	assert_string_equal(str(r.json, "status"), "ready");
	http_resp_free(&r);
	req_free("POST", path, NULL, 200, NULL); /* resuming a running session: no change */
	click(id, 200, 200, &img);
	assert_int_equal(ppm_pixel(&img, 100, 100), MARK); /* from before the pause */
	assert_int_equal(ppm_pixel(&img, 200, 200), MARK);
	ppm_free(&img);
	delete_session(id);
}

static void test_pause_resume_disk(void **state)
{
	char id[64], path[128];
	struct http_resp r;
	struct ppm img;

	(void)state;
	create(id, sizeof(id), NULL);
	click(id, 150, 120, &img);
	ppm_free(&img);
	assert_int_equal(gateway_proc_guests(&gw), 1);
	/* The guest agent runs commands, and keeps running them across a
	 * pause to disk (a new QEMU, a new link to the same agent). */
	assert_sh(id, "echo kept > /tmp/mark && echo ok", "ok\n");

	sess_path(path, sizeof(path), id, "/pause");
	r = req("POST", path, "{\"mode\":\"disk\"}", 200, NULL);
	assert_string_equal(str(r.json, "status"), "paused");
	assert_string_equal(str(r.json, "paused"), "disk");
	http_resp_free(&r);
	/* QEMU is gone; its state is a checkpoint folder. */
	assert_int_equal(gateway_proc_guests(&gw), 0);
	assert_int_equal(entries(gw.run_base), 1);
	sess_path(path, sizeof(path), id, "/screenshot");
	req_free("GET", path, NULL, 409, "session_paused");
	sess_path(path, sizeof(path), id, "/fork");
	req_free("POST", path, NULL, 409, "session_paused");
	sess_path(path, sizeof(path), id, "/actions");
	req_free("POST", path, "{\"action\":\"left_click\",\"coordinate\":[5,5]}", 409,
		 "session_paused");

	/* An action may resume it: it runs once the guest is back. */
	sess_path(path, sizeof(path), id, "/actions?auto_resume=1");
	r = req("POST", path,
		"{\"action\":\"left_click\",\"coordinate\":[250,220],\"screenshot\":{\"format\":\"png\"}}",
		200, NULL);
	decode_png(json_object_get(r.json, "screenshot"), &img);
	assert_int_equal(ppm_pixel(&img, 150, 120), MARK); /* from before the pause */
	assert_int_equal(ppm_pixel(&img, 250, 220), MARK);
	ppm_free(&img);
	http_resp_free(&r);
	assert_int_equal(gateway_proc_guests(&gw), 1);
	assert_int_equal(entries(gw.run_base), 1); /* the checkpoint went */

	/* And explicitly, twice. */
	for (int i = 0; i < 2; i++) {
		sess_path(path, sizeof(path), id, "/pause");
		req_free("POST", path, "{\"mode\":\"disk\"}", 200, NULL);
		sess_path(path, sizeof(path), id, "/resume");
		r = req("POST", path, "{}", 200, NULL);
		assert_string_equal(str(r.json, "status"), "ready");
		/* The resume was a start of its own: QEMU read the checkpoint. */
		{
			json_t *boot = json_object_get(r.json, "boot"), *ph;
			bool loaded = false;
			size_t k;

			assert_string_equal(str(boot, "phase"), "ready");
			json_array_foreach(json_object_get(boot, "phases"), k, ph)
				loaded |= !strcmp(str(ph, "phase"), "loading_state");
			assert_true(loaded);
			assert_string_equal(str(json_array_get(json_object_get(boot, "phases"), 0),
						"phase"),
					    "queued");
		}
		http_resp_free(&r);
	}
	/* A resume that comes while the session is busy pausing waits for
	 * the pause to end, then resumes (it was refused as busy before). */
	{
		bool pausing = false;
		json_int_t last;
		size_t k;
		json_t *ev;
		int fd;

		sess_path(path, sizeof(path), id, "/events");
		r = req("GET", path, NULL, 200, NULL);
		last = json_integer_value(json_object_get(r.json, "last"));
		http_resp_free(&r);
		sess_path(path, sizeof(path), id, "/pause");
		fd = net_send_request(gw.port, gw.key, "POST", path, "{\"mode\":\"disk\"}");
		assert_true(fd >= 0);
		for (int i = 0; i < 10 && !pausing; i++) { /* until the pause has begun */
			snprintf(path, sizeof(path), "/v1/sessions/%s/events?after=%lld&wait_s=20",
				 id, (long long)last);
			r = req("GET", path, NULL, 200, NULL);
			json_array_foreach(json_object_get(r.json, "events"), k, ev)
				pausing |= !strcmp(str(ev, "type"), "busy") &&
					   !strcmp(str(ev, "busy"), "pausing");
			last = json_integer_value(json_object_get(r.json, "last"));
			http_resp_free(&r);
		}
		assert_true(pausing);
		sess_path(path, sizeof(path), id, "/resume");
		r = req("POST", path, "{}", 200, NULL);
		assert_string_equal(str(r.json, "status"), "ready");
		http_resp_free(&r);
		close(fd);
	}
	assert_true(marked(id, 250, 220));
	assert_sh(id, "cat /tmp/mark", "kept\n");
	/* Deleting a session paused on disk removes its checkpoint. */
	sess_path(path, sizeof(path), id, "/pause");
	req_free("POST", path, "{\"mode\":\"disk\"}", 200, NULL);
	delete_session(id);
	assert_int_equal(entries(gw.run_base), 0);
}

static void test_fork(void **state)
{
	char id[64], child[64], path[128];
	struct http_resp r;
	struct ppm img;
	bool seen = false;
	json_t *v;
	size_t i;

	(void)state;
	create(id, sizeof(id), NULL);
	click(id, 120, 300, &img);
	ppm_free(&img);
	assert_sh(id, "echo before > /tmp/f", "");
	sess_path(path, sizeof(path), id, "/fork?wait=ready");
	r = req("POST", path, NULL, 201, NULL);
	assert_string_equal(str(r.json, "status"), "ready");
	assert_string_equal(str(r.json, "forked_from"), id);
	assert_non_null(json_object_get(json_object_get(r.json, "tokens"), "control"));
	/* The copy's start: the original's state saved, then loaded. */
	{
		const json_t *phases = json_object_get(json_object_get(r.json, "boot"), "phases");

		assert_string_equal(str(json_object_get(r.json, "boot"), "phase"), "ready");
		assert_string_equal(str(json_array_get(phases, 1), "phase"), "saving_state");
		assert_string_equal(str(json_array_get(phases, json_array_size(phases) - 1),
					"phase"),
				    "connecting_screen");
	}
	snprintf(child, sizeof(child), "%s", str(r.json, "id"));
	http_resp_free(&r);
	assert_int_equal(gateway_proc_guests(&gw), 2);

	/* Both have the click from before; then each only its own. */
	click(child, 500, 300, &img);
	assert_int_equal(ppm_pixel(&img, 120, 300), MARK);
	ppm_free(&img);
	click(id, 600, 400, &img);
	assert_int_equal(ppm_pixel(&img, 120, 300), MARK);
	assert_int_not_equal(ppm_pixel(&img, 500, 300), MARK);
	ppm_free(&img);
	assert_false(marked(child, 600, 400));
	/* Each copy's agent answers its own session: the file from before the
	 * fork is in both, one written after only in its own. */
	assert_sh(child, "cat /tmp/f; echo child > /tmp/g", "before\n");
	assert_sh(id, "cat /tmp/f; cat /tmp/g 2>/dev/null || echo none", "before\nnone\n");
	assert_sh(child, "cat /tmp/g", "child\n");

	sess_path(path, sizeof(path), id, "/events");
	r = req("GET", path, NULL, 200, NULL);
	json_array_foreach(json_object_get(r.json, "events"), i, v)
		seen |= !strcmp(str(v, "type"), "forked") && !strcmp(str(v, "into"), child);
	assert_true(seen);
	http_resp_free(&r);
	delete_session(child);
	delete_session(id);
	assert_int_equal(gateway_proc_guests(&gw), 0);
}

/* Per-session limits 400, the session limit 429, the memory budget 503
 * (gateway: 3 sessions, 2 vcpus, 512 MiB each, 800 MiB in all). */
static void test_limits(void **state)
{
	char a[64], b[64], c[64], path[128];

	(void)state;
	req_free("POST", "/v1/sessions", "{\"image\":\"tiny\",\"vcpus\":4}", 400, "limit_exceeded");
	req_free("POST", "/v1/sessions", "{\"image\":\"tiny\",\"memory_mib\":1024}", 400,
		 "limit_exceeded");
	create(a, sizeof(a), NULL);
	create(b, sizeof(b), NULL);
	/* 2 x 256 MiB in use: 300 more is over the budget. */
	req_free("POST", "/v1/sessions", "{\"image\":\"tiny\",\"memory_mib\":300}", 503,
		 "capacity");
	create(c, sizeof(c), NULL);
	req_free("POST", "/v1/sessions", tpl_body, 429, "too_many_sessions");
	sess_path(path, sizeof(path), a, "/fork");
	req_free("POST", path, NULL, 429, "too_many_sessions");
	assert_int_equal(gateway_proc_guests(&gw), 3);
	delete_session(a);
	delete_session(b);
	delete_session(c);
}

/* The first "expiring" event's in_ms and the seq after it, or -1. */
static int64_t wait_event(const char *id, const char *type, int64_t *after, int wait_s)
{
	char path[160];
	struct http_resp r;
	json_t *v;
	size_t i;
	int64_t found = -1;

	snprintf(path, sizeof(path), "/v1/sessions/%s/events?after=%lld&wait_s=%d", id,
		 (long long)*after, wait_s);
	r = req("GET", path, NULL, 200, NULL);
	json_array_foreach(json_object_get(r.json, "events"), i, v)
	{
		*after = json_integer_value(json_object_get(v, "seq"));
		if (found < 0 && !strcmp(str(v, "type"), type))
			found = json_integer_value(json_object_get(v, "in_ms"));
	}
	http_resp_free(&r);
	return found;
}

static void test_timeout(void **state)
{
	char id[64], path[128];
	int64_t t0, gone_ms = 0, after = 0, in_ms = -1;
	struct http_resp r;

	(void)state;
	t0 = fs_now_ms();
	create(id, sizeof(id), ",\"timeout_s\":3");
	sess_path(path, sizeof(path), id, "");
	r = req("GET", path, NULL, 200, NULL);
	assert_string_equal(str(r.json, "on_expiry"), "kill");
	assert_true(json_integer_value(json_object_get(r.json, "expires_in_ms")) <= 3000);
	http_resp_free(&r);
	/* The warning comes first (half of a short timeout ahead) ... */
	while (in_ms < 0 && fs_now_ms() - t0 < 3000)
		in_ms = wait_event(id, "expiring", &after, 1);
	assert_true(in_ms > 0 && in_ms <= 1600);
	/* ... the session lives until its time, and is gone within 2 s of it. */
	while (fs_now_ms() - t0 < 6000) {
		struct http_resp g;

		http_request("127.0.0.1", gw.port, "GET", path, gw.key, NULL, 0, 10, &g);
		if (g.status == 404) {
			gone_ms = fs_now_ms() - t0;
			http_resp_free(&g);
			break;
		}
		assert_int_equal(g.status, 200);
		assert_true(fs_now_ms() - t0 < 5000);
		http_resp_free(&g);
		usleep(50 * 1000);
	}
	print_message("timeout_s=3: gone after %lld ms (from before the create)\n",
		      (long long)gone_ms);
	assert_true(gone_ms >= 3000 && gone_ms <= 5000);
	/* Its QEMU quits on a job thread, right after. */
	for (int i = 0; i < 40 && gateway_proc_guests(&gw); i++)
		usleep(50 * 1000);
	assert_int_equal(gateway_proc_guests(&gw), 0);
}

static void test_idle_timeout_pauses(void **state)
{
	char id[64], path[128];
	struct http_resp r;
	int64_t t0;

	(void)state;
	create(id, sizeof(id), ",\"idle_timeout_s\":2,\"on_expiry\":\"pause\"");
	/* Activity keeps it alive past its idle time. */
	t0 = fs_now_ms();
	while (fs_now_ms() - t0 < 3000) {
		assert_false(marked(id, 1, 1));
		usleep(500 * 1000);
	}
	sess_path(path, sizeof(path), id, "");
	r = req("GET", path, NULL, 200, NULL);
	assert_string_equal(str(r.json, "status"), "ready");
	http_resp_free(&r);
	/* Left alone, it is paused to disk. */
	for (int i = 0; i < 100; i++) {
		r = req("GET", path, NULL, 200, NULL);
		if (!strcmp(str(r.json, "status"), "paused") && !json_object_get(r.json, "busy")) {
			assert_string_equal(str(r.json, "paused"), "disk");
			http_resp_free(&r);
			break;
		}
		http_resp_free(&r);
		usleep(100 * 1000);
	}
	assert_int_equal(gateway_proc_guests(&gw), 0);
	sess_path(path, sizeof(path), id, "/resume");
	req_free("POST", path, NULL, 200, NULL);
	delete_session(id);
}

static void test_bad_requests(void **state)
{
	char id[64], path[128], view[64], ctl[64], tpath[128];
	struct http_resp r;

	(void)state;
	r = req("POST", "/v1/sessions?wait=ready", tpl_body, 201, NULL);
	snprintf(id, sizeof(id), "%s", str(r.json, "id"));
	snprintf(view, sizeof(view), "%s", str(json_object_get(r.json, "tokens"), "view"));
	snprintf(ctl, sizeof(ctl), "%s", str(json_object_get(r.json, "tokens"), "control"));
	http_resp_free(&r);
	sess_path(path, sizeof(path), id, "/pause");
	req_free("POST", path, "{\"mode\":\"swap\"}", 400, "invalid_argument");
	req_free("POST", path, "{\"mode\":\"disk\",\"x\":1}", 400, "invalid_argument");
	req_free("POST", path, "not json", 400, "invalid_json");
	r = req_as(view, "POST", path, NULL, 403, "forbidden");
	http_resp_free(&r);
	r = req_as(ctl, "POST", path, NULL, 200, NULL); /* the control token may */
	http_resp_free(&r);
	sess_path(path, sizeof(path), id, "/resume");
	req_free("POST", path, "{\"x\":1}", 400, "invalid_argument");
	r = req_as(ctl, "POST", path, NULL, 200, NULL);
	http_resp_free(&r);
	sess_path(path, sizeof(path), id, "/fork");
	req_free("POST", path, "{\"x\":1}", 400, "invalid_argument");
	sess_path(path, sizeof(path), id, "/fork?wait=now");
	req_free("POST", path, NULL, 400, "invalid_argument");
	sess_path(path, sizeof(path), id, "/events?after=-1");
	req_free("GET", path, NULL, 400, "invalid_argument");
	sess_path(path, sizeof(path), id, "/events");
	r = req_as(view, "GET", path, NULL, 200, NULL); /* watching is enough */
	assert_true(json_array_size(json_object_get(r.json, "events")) >= 2);
	http_resp_free(&r);
	req_free("GET", "/v1/sessions/s_nosuch/events", NULL, 404, "not_found");
	req_free("POST", "/v1/sessions/s_nosuch/pause", NULL, 404, "not_found");
	req_free("GET", path, NULL, 200, NULL);
	sess_path(path, sizeof(path), id, "/pause");
	req_free("GET", path, NULL, 405, "method_not_allowed");
	req_free("POST", "/v1/sessions", "{\"image\":\"tiny\",\"on_expiry\":\"explode\"}", 400,
		 "invalid_argument");
	req_free("POST", "/v1/sessions", "{\"image\":\"tiny\",\"idle_timeout_s\":0}", 400,
		 "out_of_range");
	/* A template a session runs from cannot be deleted. */
	snprintf(tpath, sizeof(tpath), "/v1/templates/%s", tpl);
	req_free("DELETE", tpath, NULL, 409, "template_in_use");
	delete_session(id);
	assert_int_equal(gateway_proc_guests(&gw), 0);
	assert_int_equal(entries(gw.run_base), 0);
}

/* QEMU killed under a ready session: the session says it failed, with
 * how QEMU ended in its error, takes no more actions, and nothing of its
 * guest is left. */
static void test_qemu_killed(void **state)
{
	char id[64], path[PATH_MAX];
	json_t *rec, *vm;
	json_int_t qemu;
	struct http_resp r;
	int64_t t0;

	(void)state;
	create(id, sizeof(id), NULL);
	snprintf(path, sizeof(path), "%s/%s.json", gw.state_dir, id);
	rec = json_load_file(path, 0, NULL);
	assert_non_null(rec);
	snprintf(path, sizeof(path), "%s/vm.json", str(json_object_get(rec, "guest"), "run_dir"));
	json_decref(rec);
	vm = json_load_file(path, 0, NULL);
	assert_non_null(vm);
	qemu = json_integer_value(json_object_get(json_object_get(vm, "qemu"), "pid"));
	json_decref(vm);
	assert_true(qemu > 0);
	assert_int_equal(kill((pid_t)qemu, SIGKILL), 0);
	sess_path(path, sizeof(path), id, "");
	t0 = fs_now_ms();
	for (;;) { /* a generous bound: no timing is asserted */
		r = req("GET", path, NULL, 200, NULL);
		if (!strcmp(str(r.json, "status"), "failed"))
			break;
		assert_string_equal(str(r.json, "status"), "ready");
		if (fs_now_ms() - t0 > 120000)
			fail_msg("%s still ready 120 s after its QEMU was killed", id);
		http_resp_free(&r);
		usleep(20 * 1000);
	}
	print_message("QEMU killed: failed after %lld ms: %.80s\n", (long long)(fs_now_ms() - t0),
		      str(r.json, "error"));
	if (strncmp(str(r.json, "error"), "QEMU ", 5))
		fail_msg("the error does not say how QEMU ended: %s", str(r.json, "error"));
	http_resp_free(&r);
	sess_path(path, sizeof(path), id, "/actions");
	r = req("POST", path, "{\"action\":\"screenshot\"}", 409, NULL);
	http_resp_free(&r);
	for (int i = 0; i < 200 && gateway_proc_guests(&gw); i++)
		usleep(50 * 1000);
	assert_int_equal(gateway_proc_guests(&gw), 0);
	delete_session(id);
}

/* A long poll outlives lws's keep-alive timeout (5 s) and answers empty
 * when nothing happened. */
static void test_events_long_poll(void **state)
{
	char id[64], path[160];
	struct http_resp r;
	int64_t last, t0;

	(void)state;
	create(id, sizeof(id), NULL);
	sess_path(path, sizeof(path), id, "/events");
	r = req("GET", path, NULL, 200, NULL);
	last = json_integer_value(json_object_get(r.json, "last"));
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/events?after=%lld&wait_s=7", id,
		 (long long)last);
	t0 = fs_now_ms();
	r = req("GET", path, NULL, 200, NULL);
	assert_true(fs_now_ms() - t0 >= 6900);
	assert_int_equal(json_array_size(json_object_get(r.json, "events")), 0);
	assert_int_equal(json_integer_value(json_object_get(r.json, "last")), last);
	http_resp_free(&r);
	delete_session(id);
}

/* Pauses id to disk on cur, which has no room for it: 507, and the session
 * is ready, its guest answers, no checkpoint is left. */
static void pause_refused(const char *id, const char *says)
{
	char path[128];
	struct http_resp r;
	struct ppm img;

	sess_path(path, sizeof(path), id, "/pause");
	r = req("POST", path, "{\"mode\":\"disk\"}", 507, "insufficient_storage");
	print_message("pause to disk: %.300s\n", r.body);
	if (!strstr(r.body, says))
		fail_msg("the error does not say \"%s\": %s", says, r.body);
	http_resp_free(&r);
	sess_path(path, sizeof(path), id, "");
	r = req("GET", path, NULL, 200, NULL);
	assert_string_equal(str(r.json, "status"), "ready");
	assert_null(json_object_get(r.json, "busy"));
	http_resp_free(&r);
	assert_int_equal(gateway_proc_checkpoints(cur), 0);
	assert_int_equal(gateway_proc_guests(cur), 1);
	click(id, 300, 300, &img); /* the guest runs, and takes actions */
	assert_int_equal(ppm_pixel(&img, 300, 300), MARK);
	ppm_free(&img);
	assert_sh(id, "echo alive", "alive\n");
}

/* Forks id on cur, which has no room for its checkpoint: 507 before
 * anything starts, no copy, no checkpoint, the original ready. */
static void fork_refused(const char *id)
{
	char path[128];
	struct http_resp r;

	sess_path(path, sizeof(path), id, "/fork");
	r = req("POST", path, NULL, 507, "insufficient_storage");
	print_message("fork: %.300s\n", r.body);
	if (!strstr(r.body, "not enough free space: forking needs about 1 MiB"))
		fail_msg("the error does not say what forking needs: %s", r.body);
	http_resp_free(&r);
	r = req("GET", "/v1/sessions", NULL, 200, NULL);
	assert_int_equal(json_array_size(json_object_get(r.json, "sessions")), 1);
	http_resp_free(&r);
	sess_path(path, sizeof(path), id, "");
	r = req("GET", path, NULL, 200, NULL);
	assert_string_equal(str(r.json, "status"), "ready");
	assert_null(json_object_get(r.json, "busy"));
	http_resp_free(&r);
	assert_int_equal(gateway_proc_checkpoints(cur), 0);
	assert_int_equal(gateway_proc_guests(cur), 1);
	assert_sh(id, "echo alive", "alive\n");
}

/* The gateway of test_pause_disk_no_room, and its tmpfs (until its teardown). */
static struct gateway_proc small;
static char small_base[64];

static int small_gone(void **state)
{
	(void)state;
	cur = &gw;
	if (small.pid > 0) {
		gateway_proc_delete_sessions(&small);
		gateway_proc_stop(&small);
	}
	if (small_base[0]) {
		umount2(small_base, MNT_DETACH);
		rmdir(small_base);
		small_base[0] = '\0';
	}
	return 0;
}

/* A gateway of its own whose run base (where checkpoints go) is a 96 MiB
 * tmpfs; VITRINE_TEST_SPACE_NEED_MIB=1 makes its checks want 1 + 64 MiB
 * free. First the tmpfs is filled to 32 MiB free: a pause to disk and a
 * fork are refused before anything stops. Then with 95 MiB free the check passes, and the guest's RAM (80
 * MiB of state here, 40 MiB of random bytes more) does not fit: the save
 * fails with ENOSPC half way, and
 * the guest runs on (it was stopped, its session failed and its guest
 * destroyed before). With room again, the same guest pauses and resumes. */
static void test_pause_disk_no_room(void **state)
{
	char fill[128], id[64], path[128];
	struct statvfs vfs;
	struct http_resp r;
	FILE *f;
	int rc;

	(void)state;
	snprintf(small_base, sizeof(small_base), "/tmp/vitrine-gw-small-%d", (int)getpid());
	mkdir(small_base, 0755);
	if (mount("vitrine-test", small_base, "tmpfs", MS_NOSUID | MS_NODEV, "size=96m,mode=0755") <
	    0)
		fail_msg("mount a tmpfs on %s: %s", small_base, strerror(errno));
	setenv("VITRINE_TEST_SPACE_NEED_MIB", "1", 1);
	rc = gateway_proc_start_in(&small, small_base, NULL);
	unsetenv("VITRINE_TEST_SPACE_NEED_MIB");
	if (rc < 0)
		fail_msg("the gateway on the tmpfs did not start");
	cur = &small;
	create(id, sizeof(id), NULL);

	/* Filled to 32 MiB free: refused before anything stops. */
	snprintf(fill, sizeof(fill), "%s/filler", small_base);
	assert_int_equal(statvfs(small_base, &vfs), 0);
	f = fopen(fill, "w");
	assert_non_null(f);
	{
		static char block[1 << 20];
		long n = (long)((uint64_t)vfs.f_bavail * vfs.f_frsize >> 20) - 32;

		memset(block, 0x5a, sizeof(block));
		for (long i = 0; i < n; i++)
			assert_int_equal(fwrite(block, sizeof(block), 1, f), 1);
	}
	assert_int_equal(fclose(f), 0);
	pause_refused(id, "not enough free space: pausing to disk needs about 1 MiB");
	fork_refused(id);
	unlink(fill);

	/* Room by the check, none for the guest's RAM: fails half way. */
	assert_sh(id,
		  "cd /tmp && dd if=/dev/urandom of=b bs=1048576 count=1 2>/dev/null && "
		  "cat b b b b b b b b > c && cat c c c c c > fill && rm b c && echo ok",
		  "ok\n");
	pause_refused(id, "pause to disk failed");
	sess_path(path, sizeof(path), id, "/events");
	r = req("GET", path, NULL, 200, NULL);
	{
		bool seen = false;
		json_t *v;
		size_t i;

		json_array_foreach(json_object_get(r.json, "events"), i, v)
			seen |= !strcmp(str(v, "type"), "pause_failed") &&
				json_is_true(json_object_get(v, "out_of_space"));
		assert_true(seen);
	}
	http_resp_free(&r);

	/* With room again, the same guest pauses and resumes. */
	assert_int_equal(mount("vitrine-test", small_base, "tmpfs",
			       MS_REMOUNT | MS_NOSUID | MS_NODEV, "size=400m"),
			 0);
	sess_path(path, sizeof(path), id, "/pause");
	req_free("POST", path, "{\"mode\":\"disk\"}", 200, NULL);
	sess_path(path, sizeof(path), id, "/resume");
	req_free("POST", path, NULL, 200, NULL);
	assert_sh(id, "wc -c < /tmp/fill", "41943040\n");
	delete_session(id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_template_api_errors, delete_all),
		cmocka_unit_test_teardown(test_pause_resume_memory, delete_all),
		cmocka_unit_test_teardown(test_pause_resume_disk, delete_all),
		cmocka_unit_test_teardown(test_fork, delete_all),
		cmocka_unit_test_teardown(test_limits, delete_all),
		cmocka_unit_test_teardown(test_timeout, delete_all),
		cmocka_unit_test_teardown(test_idle_timeout_pauses, delete_all),
		cmocka_unit_test_teardown(test_bad_requests, delete_all),
		cmocka_unit_test_teardown(test_events_long_poll, delete_all),
		cmocka_unit_test_teardown(test_qemu_killed, delete_all),
		cmocka_unit_test_teardown(test_pause_disk_no_room, small_gone),
	};

	return cmocka_run_group_tests_name("gateway pause, resume, fork, lifetimes, limits", tests,
					   setup, teardown);
}
