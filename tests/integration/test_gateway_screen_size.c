/* tests/integration/test_gateway_screen_size.c: a session's size follows its
 * guest's screen. A tiny guest made at 1280x800 switches to 800x600
 * (tinymode, run as root through POST .../exec; its holder marks clicks as
 * tinyfb does) and back: each time the session's JSON, the record, a
 * `screen_resized` event (to the events API and to a live viewer), a
 * screenshot's size and X-Vitrine-Screen, a new viewer's hello and the
 * actions' bounds all say the guest's size, and clicks land on the exact
 * pixel asked, corners and the screenshot space included, from the API
 * and from a person holding the live view's control. At 800x600 a fork,
 * a pause to disk and its resume, and a gateway killed and replaced keep
 * the size (no event), and a template made at 1280x800 restores at
 * 1280x800 beside it. */
#include "common/base64.h"
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"
#include "tests/lib/stream_client.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define MARK 0xFFFFFF /* a click mark's centre; red (0xFF0000) around it */
#define GREEN 0x00FF00 /* the top-left square of tinyfb's and tinymode's pictures */
#define MAGENTA 0xFF00FF /* the bottom-right one */

static struct gateway_proc gw;
static struct gateway_session sess;
static char tpl[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tpl, sizeof(tpl), "test-screen-size-%d", (int)getpid());
	if (gateway_proc_start(&gw, NULL) < 0)
		return -1;
	return gateway_proc_create_session(&gw,
					   "{\"image\":\"tiny\",\"width\":1280,\"height\":800}",
					   120, &sess);
}

static int teardown(void **state)
{
	struct http_resp r;
	char path[128];

	(void)state;
	gateway_proc_delete_sessions(&gw);
	snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
	if (http_request("127.0.0.1", gw.port, "DELETE", path, gw.key, NULL, 0, 30, &r) == 0)
		http_resp_free(&r);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static struct http_resp req(const char *token, const char *method, const char *path,
			    const char *body, int status, const char *code)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, token, body,
			      body ? strlen(body) : 0, 120, &r);

	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("%s %s %s -> %d %.300s (want %d %s)", method, path, body ? body : "",
			 rc < 0 ? rc : r.status, rc == 0 && r.body ? r.body : "", status,
			 code ? code : "");
	return r;
}

static void sess_path(char *out, size_t len, const char *id, const char *what)
{
	snprintf(out, len, "/v1/sessions/%s%s", id, what);
}

/* Runs cmd as root in the guest of id; fails unless it exits 0. */
static void run_as_root(const char *id, const char *cmd)
{
	char path[128], body[256];
	struct http_resp r;

	sess_path(path, sizeof(path), id, "/exec");
	snprintf(body, sizeof(body), "{\"cmd\":\"%s\",\"user\":\"root\",\"cwd\":\"/\"}", cmd);
	r = req(gw.key, "POST", path, body, 200, NULL);
	if (json_integer_value(json_object_get(r.json, "exit_code")) != 0)
		fail_msg("%s: %s", cmd, r.body);
	http_resp_free(&r);
}

/* The session's width and height (its JSON). */
static void json_size(const char *id, int *w, int *h)
{
	char path[128];
	struct http_resp r;

	sess_path(path, sizeof(path), id, "");
	r = req(gw.key, "GET", path, NULL, 200, NULL);
	*w = (int)json_integer_value(json_object_get(r.json, "width"));
	*h = (int)json_integer_value(json_object_get(r.json, "height"));
	http_resp_free(&r);
}

/* Waits (20 s at most) until the session's JSON says w x h. */
static void expect_json_size(const char *id, int w, int h)
{
	int64_t t0 = fs_now_ms();
	int jw, jh;

	for (;;) {
		json_size(id, &jw, &jh);
		if (jw == w && jh == h)
			return;
		if (fs_now_ms() - t0 > 20000)
			fail_msg("session %s says %dx%d, not %dx%d", id, jw, jh, w, h);
		usleep(100 * 1000);
	}
}

/* The session's events after seq as an array (decref it); *last the
 * newest seq. */
static json_t *events_after(const char *id, json_int_t seq, json_int_t *last)
{
	char path[160];
	struct http_resp r;
	json_t *ev;

	snprintf(path, sizeof(path), "/v1/sessions/%s/events?after=%lld", id, (long long)seq);
	r = req(gw.key, "GET", path, NULL, 200, NULL);
	ev = json_incref(json_object_get(r.json, "events"));
	if (last)
		*last = json_integer_value(json_object_get(r.json, "last"));
	http_resp_free(&r);
	return ev;
}

/* How many screen_resized events after seq there are; the last one's size
 * in *w, *h. */
static int resized_events(const char *id, json_int_t seq, int *w, int *h)
{
	json_t *ev = events_after(id, seq, NULL), *v;
	size_t i;
	int n = 0;

	json_array_foreach(ev, i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "type")), "screen_resized"))
			continue;
		n++;
		*w = (int)json_integer_value(json_object_get(v, "width"));
		*h = (int)json_integer_value(json_object_get(v, "height"));
	}
	json_decref(ev);
	return n;
}

static json_int_t last_event(const char *id)
{
	json_int_t last = 0;

	json_decref(events_after(id, 0, &last));
	return last;
}

/* A PNG screenshot of id, decoded; its size and X-Vitrine-Screen must be
 * w x h. */
static void shot(const char *id, const char *token, int w, int h, struct ppm *img)
{
	char path[160], v[64], want[64];
	struct http_resp r;

	sess_path(path, sizeof(path), id, "/screenshot?format=png");
	r = req(token, "GET", path, NULL, 200, NULL);
	assert_int_equal(png_decode(r.body, r.body_len, img), 0);
	snprintf(want, sizeof(want), "%dx%d", w, h);
	assert_string_equal(http_header(&r, "x-vitrine-screen", v, sizeof(v)), want);
	snprintf(want, sizeof(want), "%d", w);
	assert_string_equal(http_header(&r, "x-vitrine-width", v, sizeof(v)), want);
	http_resp_free(&r);
	if (img->width != w || img->height != h)
		fail_msg("the screenshot is %dx%d, not %dx%d", img->width, img->height, w, h);
	/* the picture's corners: the whole screen is there */
	assert_true(ppm_close(ppm_pixel(img, 8, 8), GREEN, 8));
	assert_true(ppm_close(ppm_pixel(img, w - 8, h - 8), MAGENTA, 8));
}

static bool has_mark(const struct ppm *img, int x, int y)
{
	return ppm_pixel(img, x, y) == MARK && ppm_pixel(img, x == 0 ? 1 : x - 1, y) == 0xFF0000;
}

/* An action on id with the control token: its status and error code. */
static void act(const char *id, const char *token, const char *action, int status, const char *code)
{
	char path[128];
	struct http_resp r;

	sess_path(path, sizeof(path), id, "/actions");
	r = req(token, "POST", path, action, status, code);
	http_resp_free(&r);
}

/* A left click at (x, y) (in a sw x sh screenshot's space when sw > 0);
 * the settled screenshot in its reply must show the mark at (mx, my). */
static void click_lands(const char *id, const char *token, int x, int y, int sw, int sh, int mx,
			int my)
{
	char path[128], body[320];
	struct http_resp r;
	struct ppm img;
	size_t n = 0;
	const char *b64;
	unsigned char *raw;

	snprintf(body, sizeof(body),
		 "{\"action\":\"left_click\",\"coordinate\":[%d,%d],\"screenshot\":{\"format\":"
		 "\"png\"}}",
		 x, y);
	if (sw > 0)
		snprintf(body, sizeof(body),
			 "{\"action\":\"left_click\",\"coordinate\":[%d,%d],\"coordinate_space\":"
			 "\"screenshot\",\"screenshot_width\":%d,\"screenshot_height\":%d,"
			 "\"screenshot\":{\"format\":\"png\"}}",
			 x, y, sw, sh);
	sess_path(path, sizeof(path), id, "/actions");
	r = req(token, "POST", path, body, 200, NULL);
	b64 = json_string_value(json_object_get(json_object_get(r.json, "screenshot"), "data"));
	assert_non_null(b64);
	raw = malloc(strlen(b64));
	assert_int_equal(base64_decode(b64, strlen(b64), raw, strlen(b64), &n), 0);
	assert_int_equal(png_decode(raw, n, &img), 0);
	free(raw);
	if (!has_mark(&img, mx, my))
		fail_msg("%s: no mark at (%d,%d) (%dx%d screenshot): %06x", body, mx, my, img.width,
			 img.height, ppm_pixel(&img, mx, my));
	ppm_free(&img);
	http_resp_free(&r);
}

/* The session's record on disk says w x h. */
static void record_says(const char *id, int w, int h)
{
	char path[200];
	json_t *rec, *screen;

	snprintf(path, sizeof(path), "%s/%s.json", gw.state_dir, id);
	rec = json_load_file(path, 0, NULL);
	assert_non_null(rec);
	screen = json_object_get(rec, "screen");
	assert_int_equal(json_integer_value(json_array_get(screen, 0)), w);
	assert_int_equal(json_integer_value(json_array_get(screen, 1)), h);
	json_decref(rec);
}

/* A live viewer of id with token: its hello must say w x h. */
static int viewer(const char *id, const char *token, int w, int h, struct sc_screen *s)
{
	char path[128];
	int status, fd;
	json_t *j;

	sess_path(path, sizeof(path), id, "/stream");
	fd = ws_connect(gw.port, path, token, NULL, &status);
	if (fd < 0)
		fail_msg("stream upgrade refused: HTTP %d", status);
	j = sc_wait_json(fd, "hello", s, 30000);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "width")), w);
	assert_int_equal(json_integer_value(json_object_get(j, "height")), h);
	json_decref(j);
	return fd;
}

static void pointer(int fd, int x, int y, int buttons)
{
	assert_int_equal(sc_send_json(fd, json_pack("{s:s, s:i, s:i, s:i}", "type", "pointer", "x",
						    x, "y", y, "buttons", buttons)),
			 0);
}

/* Waits for the viewer's screen_resized event and then a frame of w x h. */
static void viewer_sees_resize(int fd, struct sc_screen *s, int w, int h)
{
	int64_t t0 = fs_now_ms();

	for (;;) {
		json_t *j = sc_wait_json(fd, "event", s, 20000), *ev;

		assert_non_null(j);
		ev = json_object_get(j, "event");
		if (!strcmp(json_string_value(json_object_get(ev, "type")), "screen_resized")) {
			assert_int_equal(json_integer_value(json_object_get(ev, "width")), w);
			assert_int_equal(json_integer_value(json_object_get(ev, "height")), h);
			json_decref(j);
			break;
		}
		json_decref(j);
		assert_true(fs_now_ms() - t0 < 20000);
	}
	while (s->img.width != w || s->img.height != h) {
		assert_int_equal(sc_wait_frame(fd, s, s->seq, 10000), 0);
		assert_true(fs_now_ms() - t0 < 30000);
	}
}

/* The guest goes to 800x600: everything says so, clicks land exactly. */
static void test_follows_the_guest(void **state)
{
	struct sc_screen sv = { 0 }, sc = { 0 };
	json_int_t seq = last_event(sess.id);
	struct ppm img;
	int fd, fc, w = 0, h = 0;
	json_t *j;

	(void)state;
	shot(sess.id, sess.view, 1280, 800, &img);
	ppm_free(&img);
	/* The edge of the screen it was made with. */
	act(sess.id, sess.control, "{\"action\":\"mouse_move\",\"coordinate\":[1279,799]}", 200,
	    NULL);
	fd = viewer(sess.id, sess.view, 1280, 800, &sv);

	run_as_root(sess.id, "tinymode 800x600");
	expect_json_size(sess.id, 800, 600);
	assert_int_equal(resized_events(sess.id, seq, &w, &h), 1);
	assert_int_equal(w, 800);
	assert_int_equal(h, 600);
	record_says(sess.id, 800, 600);
	viewer_sees_resize(fd, &sv, 800, 600);
	shot(sess.id, sess.view, 800, 600, &img);
	ppm_free(&img);

	/* Actions at the new size: the edge is 799,599. */
	act(sess.id, sess.control, "{\"action\":\"left_click\",\"coordinate\":[800,0]}", 400,
	    "out_of_range");
	act(sess.id, sess.control, "{\"action\":\"left_click\",\"coordinate\":[0,600]}", 400,
	    "out_of_range");
	act(sess.id, sess.control, "{\"type\":\"click\",\"x\":800,\"y\":10,\"button\":\"left\"}",
	    400, NULL);
	click_lands(sess.id, sess.control, 799, 599, 0, 0, 799, 599);
	click_lands(sess.id, sess.control, 0, 0, 0, 0, 0, 0);
	click_lands(sess.id, sess.control, 799, 0, 0, 0, 799, 0);
	click_lands(sess.id, sess.control, 0, 599, 0, 0, 0, 599);
	click_lands(sess.id, sess.control, 401, 299, 0, 0, 401, 299);
	/* (100,50) of a 400x300 screenshot is the screen's (200,100) */
	click_lands(sess.id, sess.control, 100, 50, 400, 300, 200, 100);
	/* the pointer the move above left at 1279,799 is on the screen now */
	{
		char path[128];
		struct http_resp r;

		sess_path(path, sizeof(path), sess.id, "/actions");
		r = req(sess.control, "POST", path, "{\"action\":\"cursor_position\"}", 200, NULL);
		json_t *at = json_object_get(r.json, "result");

		assert_true(json_is_integer(json_object_get(at, "x")));
		assert_true(json_integer_value(json_object_get(at, "x")) < 800);
		assert_true(json_integer_value(json_object_get(at, "y")) < 600);
		http_resp_free(&r);
	}

	/* A person in the live view: hello at the new size, a click lands. */
	fc = viewer(sess.id, sess.control, 800, 600, &sc);
	assert_int_equal(ws_send(fc, 1, "{\"type\":\"take\"}", 15), 0);
	j = sc_wait_json(fc, "control", &sc, 10000);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "you")));
	json_decref(j);
	pointer(fc, 650, 450, 0);
	pointer(fc, 650, 450, 1);
	pointer(fc, 650, 450, 0);
	for (int i = 0;; i++) {
		shot(sess.id, sess.view, 800, 600, &img);
		if (has_mark(&img, 650, 450))
			break;
		assert_true(i < 100);
		ppm_free(&img);
		usleep(100 * 1000);
	}
	ppm_free(&img);
	assert_int_equal(ws_send(fc, 1, "{\"type\":\"release\"}", 18), 0);
	close(fc);
	close(fd);
	sc_screen_free(&sc);
	sc_screen_free(&sv);
}

/* Waits until GET says status and no job runs (20 s at most). */
static void expect_status(const char *id, const char *status)
{
	char path[128];

	sess_path(path, sizeof(path), id, "");
	for (int i = 0;; i++) {
		struct http_resp r = req(gw.key, "GET", path, NULL, 200, NULL);
		bool there = !strcmp(json_string_value(json_object_get(r.json, "status")),
				     status) &&
			     !json_object_get(r.json, "busy");

		http_resp_free(&r);
		if (there)
			return;
		if (i > 200)
			fail_msg("session %s never became %s", id, status);
		usleep(100 * 1000);
	}
}

/* At 800x600: a fork, a pause to disk and its resume, a new gateway keep
 * it; a template of the image's size restores at that size. */
static void test_what_keeps_the_size(void **state)
{
	json_int_t seq = last_event(sess.id);
	char path[160], child[64], child_ctl[64], body[200];
	struct http_resp r;
	struct ppm img;
	int w, h;

	(void)state;
	json_size(sess.id, &w, &h);
	assert_int_equal(w, 800);
	assert_int_equal(h, 600);

	/* A fork copies the screen as it is. */
	sess_path(path, sizeof(path), sess.id, "/fork?wait=ready");
	r = req(gw.key, "POST", path, NULL, 201, NULL);
	assert_int_equal(json_integer_value(json_object_get(r.json, "width")), 800);
	assert_int_equal(json_integer_value(json_object_get(r.json, "height")), 600);
	snprintf(child, sizeof(child), "%s", json_string_value(json_object_get(r.json, "id")));
	snprintf(child_ctl, sizeof(child_ctl), "%s",
		 json_string_value(json_object_get(json_object_get(r.json, "tokens"), "control")));
	http_resp_free(&r);
	shot(child, child_ctl, 800, 600, &img);
	ppm_free(&img);
	click_lands(child, child_ctl, 799, 300, 0, 0, 799, 300);
	assert_int_equal(resized_events(child, 0, &w, &h), 0);
	sess_path(path, sizeof(path), child, "");
	r = req(gw.key, "DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);

	/* A pause to disk and a resume: a new QEMU, the same screen. */
	sess_path(path, sizeof(path), sess.id, "/pause");
	r = req(gw.key, "POST", path, "{\"mode\":\"disk\"}", 200, NULL);
	http_resp_free(&r);
	expect_status(sess.id, "paused");
	json_size(sess.id, &w, &h);
	assert_int_equal(w * 10000 + h, 800 * 10000 + 600);
	record_says(sess.id, 800, 600);
	sess_path(path, sizeof(path), sess.id, "/resume");
	r = req(gw.key, "POST", path, "{}", 200, NULL);
	http_resp_free(&r);
	expect_status(sess.id, "ready");
	shot(sess.id, sess.view, 800, 600, &img);
	assert_true(has_mark(&img, 799, 599)); /* from before the pause */
	ppm_free(&img);
	click_lands(sess.id, sess.control, 10, 590, 0, 0, 10, 590);

	/* A new gateway reads the size from the record. */
	assert_true(WIFSIGNALED(gateway_proc_kill(&gw, SIGKILL)));
	assert_int_equal(gateway_proc_restart(&gw, NULL), 0);
	expect_status(sess.id, "ready");
	json_size(sess.id, &w, &h);
	assert_int_equal(w * 10000 + h, 800 * 10000 + 600);
	shot(sess.id, sess.view, 800, 600, &img);
	ppm_free(&img);
	click_lands(sess.id, sess.control, 790, 10, 0, 0, 790, 10);
	act(sess.id, sess.control, "{\"action\":\"left_click\",\"coordinate\":[800,599]}", 400,
	    "out_of_range");
	assert_int_equal(resized_events(sess.id, seq, &w, &h), 0);

	/* A template made at the image's size restores at it, no resize. */
	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"image\":\"tiny\"}", tpl);
	assert_int_equal(gateway_proc_make_template(&gw, body, 120, NULL), 0);
	{
		struct gateway_session t;

		snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
		assert_int_equal(gateway_proc_create_session(&gw, body, 120, &t), 0);
		json_size(t.id, &w, &h);
		assert_int_equal(w * 10000 + h, 1280 * 10000 + 800);
		shot(t.id, t.view, 1280, 800, &img);
		ppm_free(&img);
		usleep(200 * 1000); /* a few heartbeats */
		assert_int_equal(resized_events(t.id, 0, &w, &h), 0);
		sess_path(path, sizeof(path), t.id, "");
		r = req(gw.key, "DELETE", path, NULL, 200, NULL);
		http_resp_free(&r);
	}
}

/* Back to tinyfb's 1280x800: everything follows again. */
static void test_and_back(void **state)
{
	json_int_t seq = last_event(sess.id);
	struct ppm img;
	int w = 0, h = 0;

	(void)state;
	run_as_root(sess.id, "tinymode off");
	expect_json_size(sess.id, 1280, 800);
	assert_int_equal(resized_events(sess.id, seq, &w, &h), 1);
	assert_int_equal(w * 10000 + h, 1280 * 10000 + 800);
	record_says(sess.id, 1280, 800);
	shot(sess.id, sess.view, 1280, 800, &img);
	ppm_free(&img);
	act(sess.id, sess.control, "{\"action\":\"left_click\",\"coordinate\":[1280,0]}", 400,
	    "out_of_range");
	click_lands(sess.id, sess.control, 1279, 799, 0, 0, 1279, 799);
	click_lands(sess.id, sess.control, 900, 650, 0, 0, 900, 650);
	click_lands(sess.id, sess.control, 160, 100, 640, 400, 320, 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_follows_the_guest),
		cmocka_unit_test(test_what_keeps_the_size),
		cmocka_unit_test(test_and_back),
	};

	return cmocka_run_group_tests_name("a session's size follows its guest's screen", tests,
					   setup, teardown);
}
