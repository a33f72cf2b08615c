/* tests/integration/test_stream.c: the live stream (WS /v1/sessions/{id}/stream)
 * through `vitrine serve` on a tiny guest: a viewer gets a whole frame at
 * once that matches a screenshot, then changed rectangles; quality is per
 * viewer; 20 viewers with one that never reads all keep up while the
 * gateway's memory stays bounded; the control lease (take/release, view
 * tokens only watch, agents refused with 409 meanwhile, audit log); sharing
 * tokens; malformed messages close the socket with their close code and
 * nothing else; silent viewers are hung up on (by a second gateway with a
 * session of its own, whose viewers' idle limit is QUIET_IDLE_S: the
 * first's viewers, the one that never reads among twenty included, must
 * not be hung up on while the other tests run). */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "display/stream_wire.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"
#include "tests/lib/stream_client.h"
#include "tests/lib/ws_client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#define W 1280
#define H 800
#define QUIET_IDLE_S 2

static struct gateway_proc gw;
static char sid[64], ctl[64], view[64], path_stream[128], audit[128];
/* test_silent_viewer_hung_up's gateway (--stream-idle-s QUIET_IDLE_S) and
 * session */
static struct gateway_proc quiet_gw;
static struct gateway_session quiet_sess;

static int setup(void **state)
{
	const char *body = "{\"image\":\"tiny\",\"width\":1280,\"height\":800}";
	const char *args[] = { "--stream-idle-s", "15", "--audit-log", audit, NULL };
	struct gateway_session created;

	(void)state;
	snprintf(audit, sizeof(audit), "/tmp/vitrine-stream-audit-%d.log", (int)getpid());
	unlink(audit);
	if (gateway_proc_start(&gw, args) < 0)
		return -1;
	if (gateway_proc_create_session(&gw, body, 120, &created) < 0)
		return -1;
	snprintf(sid, sizeof(sid), "%s", created.id);
	snprintf(ctl, sizeof(ctl), "%s", created.control);
	snprintf(view, sizeof(view), "%s", created.view);
	snprintf(path_stream, sizeof(path_stream), "/v1/sessions/%s/stream", sid);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(audit);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* A viewer of session id on g with token in its header (NULL: none). */
static int viewer_at(const struct gateway_proc *g, const char *id, const char *token)
{
	char path[128];
	int status, fd;

	snprintf(path, sizeof(path), "/v1/sessions/%s/stream", id);
	fd = ws_connect(g->port, path, token, NULL, &status);
	if (fd < 0)
		fail_msg("stream upgrade refused: HTTP %d", status);
	return fd;
}

static int viewer(const char *token)
{
	return viewer_at(&gw, sid, token);
}

/* Connects with a header token and reads the hello. */
static int viewer_hello_at(const struct gateway_proc *g, const char *id, const char *token,
			   const char *scope, struct sc_screen *s)
{
	int fd = viewer_at(g, id, token);
	json_t *j = sc_wait_json(fd, "hello", s, 30000);

	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "scope")), scope);
	assert_int_equal(json_integer_value(json_object_get(j, "width")), W);
	assert_int_equal(json_integer_value(json_object_get(j, "height")), H);
	json_decref(j);
	return fd;
}

static int viewer_hello(const char *token, const char *scope, struct sc_screen *s)
{
	return viewer_hello_at(&gw, sid, token, scope, s);
}

/* POST action to session id's actions on g with token: the status, and
 * the error's code into code (when not NULL). */
static int act_status_at(const struct gateway_proc *g, const char *id, const char *token,
			 const char *action, char *code, size_t codelen)
{
	struct http_resp r;
	char path[128];
	int st;

	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", id);
	if (http_request("127.0.0.1", g->port, "POST", path, token, action, strlen(action), 60,
			 &r) < 0)
		fail_msg("action %s: no answer", action);
	st = r.status;
	if (code)
		snprintf(code, codelen, "%s", st == 200 ? "" : http_error_code(&r));
	http_resp_free(&r);
	return st;
}

static int act_status(const char *token, const char *action, char *code, size_t codelen)
{
	return act_status_at(&gw, sid, token, action, code, codelen);
}

static void click_at(const struct gateway_proc *g, const char *id, const char *token, int x, int y)
{
	char a[160];

	snprintf(a, sizeof(a), "{\"action\":\"left_click\",\"coordinate\":[%d,%d]}", x, y);
	assert_int_equal(act_status_at(g, id, token, a, NULL, 0), 200);
}

static void click(int x, int y)
{
	click_at(&gw, sid, ctl, x, y);
}

static struct ppm screenshot_png(void)
{
	struct ppm img;

	assert_int_equal(gateway_proc_screenshot(&gw, sid, view, &img), 0);
	return img;
}

/* A click mark (a 5x5 red square) at (x, y), as JPEG renders it. */
static bool has_mark(const struct ppm *img, int x, int y)
{
	uint32_t c = ppm_pixel(img, x, y);
	int red = 0;

	if (c == 0xFFFFFFFFu || (c >> 16) < 200)
		return false;
	for (int dy = -1; dy <= 1; dy++)
		for (int dx = -1; dx <= 1; dx++) {
			uint32_t p = ppm_pixel(img, x + dx, y + dy);

			red += (dx || dy) && p != 0xFFFFFFFFu && (p >> 16) > 150 &&
			       ((p >> 8) & 0xff) < 100 && (p & 0xff) < 100;
		}
	return red >= 6;
}

/* Reads frames until the viewer's screen shows a click mark at (x, y). */
static void wait_mark(int fd, struct sc_screen *s, int x, int y)
{
	int64_t deadline = fs_now_ms() + 40000;

	/* JPEG blurs the white centre pixel into its red square, so look for
	 * the red around it on the dark background. */
	while (!has_mark(&s->img, x, y)) {
		if (fs_now_ms() > deadline || sc_wait_frame(fd, s, s->seq, 5000) < 0) {
			for (int dy = -3; dy <= 3; dy++) {
				for (int dx = -3; dx <= 3; dx++)
					fprintf(stderr, " %06x",
						ppm_pixel(&s->img, x + dx, y + dy));
				fprintf(stderr, "\n");
			}
			fail_msg("viewer never showed the mark at (%d,%d): %06x", x, y,
				 ppm_pixel(&s->img, x, y));
		}
	}
}

static void test_full_frame_then_deltas(void **state)
{
	struct sc_screen s = { 0 }, s2 = { 0 };
	struct ppm shot;
	double d;
	int fd, fd2, keys;

	(void)state;
	fd = viewer_hello(view, "view", &s);
	assert_int_equal(sc_wait_frame(fd, &s, 0, 30000), 0);
	assert_int_equal(s.keys, 1); /* the first frame is whole */
	shot = screenshot_png();
	d = ppm_mean_diff(&s.img, &shot);
	assert_true(d >= 0); /* the same size */
	if (d > 3.0)
		fail_msg("the streamed screen differs from the screenshot: mean %.2f", d);
	assert_true(ppm_close(ppm_pixel(&s.img, 10, 10), 0x00FF00, 40));
	ppm_free(&shot);

	/* A change arrives as a delta: not a whole frame. */
	keys = s.keys;
	click(200, 150);
	wait_mark(fd, &s, 200, 150);
	assert_int_equal(s.keys, keys);
	shot = screenshot_png();
	d = ppm_mean_diff(&s.img, &shot);
	assert_true(d >= 0); /* the same size */
	if (d > 3.0)
		fail_msg("after deltas the screen differs from the screenshot: mean %.2f", d);
	ppm_free(&shot);

	/* A viewer that reconnects gets a whole frame at once, mark included. */
	close(fd);
	fd2 = viewer_hello(view, "view", &s2);
	assert_int_equal(sc_wait_frame(fd2, &s2, 0, 30000), 0);
	assert_int_equal(s2.keys, 1);
	assert_true(has_mark(&s2.img, 200, 150));
	close(fd2);
	sc_screen_free(&s);
	sc_screen_free(&s2);
}

/* The size of the first whole frame a viewer at quality q receives (the
 * quality given with the auth message, so it applies from the first frame). */
static size_t key_frame_size(int q)
{
	struct ws_msg m;
	int fd = viewer(NULL);
	size_t len = 0;
	char msg[256];
	json_t *j;

	snprintf(msg, sizeof(msg), "{\"type\":\"auth\",\"token\":\"%s\",\"quality\":%d}", view, q);
	assert_int_equal(ws_send(fd, 1, msg, strlen(msg)), 0);
	j = sc_wait_json(fd, "hello", NULL, 10000);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "quality")), q);
	json_decref(j);
	while (!len) {
		assert_int_equal(ws_recv(fd, 10000, &m), 0);
		if (m.opcode == WS_BINARY && stream_wire_type(m.data, m.len) == STREAM_WIRE_FRAME)
			len = m.len;
		ws_msg_free(&m);
	}
	/* Settings change it later too, and are acknowledged. */
	assert_int_equal(sc_send_json(fd, json_pack("{s:s, s:i, s:i}", "type", "settings",
						    "quality", 50, "max_fps", 5)),
			 0);
	j = sc_wait_json(fd, "settings", NULL, 10000);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "quality")), 50);
	assert_int_equal(json_integer_value(json_object_get(j, "max_fps")), 5);
	json_decref(j);
	close(fd);
	return len;
}

static void test_quality_per_viewer(void **state)
{
	size_t lo, hi;

	(void)state;
	lo = key_frame_size(5);
	hi = key_frame_size(95);
	/* The tiny guest's screen is flat colours: JPEG sizes differ less
	 * than on a real page, but they differ. */
	if (!(lo < hi))
		fail_msg("quality 5 gave %zu bytes, quality 95 %zu", lo, hi);
}

#define N_VIEWERS 20

static void test_twenty_viewers_one_never_reads(void **state)
{
	int fds[N_VIEWERS], small = 4096, clicks = 12;
	struct sc_screen s[N_VIEWERS];
	long rss0, rss1;

	(void)state;
	memset(s, 0, sizeof(s));
	for (int i = 0; i < N_VIEWERS; i++) {
		fds[i] = viewer(view);
		if (i == 0) /* the slow one: a tiny receive buffer, never read */
			setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	for (int i = 1; i < N_VIEWERS; i++)
		assert_int_equal(sc_wait_frame(fds[i], &s[i], 0, 30000), 0);
	rss0 = gateway_proc_rss_kib(&gw);
	for (int c = 0; c < clicks; c++) {
		int x = 100 + c * 80, y = 300 + (c % 3) * 100;

		click(x, y);
		/* Every reading viewer catches up with this click's mark. */
		for (int i = 1; i < N_VIEWERS; i++)
			wait_mark(fds[i], &s[i], x, y);
	}
	rss1 = gateway_proc_rss_kib(&gw);
	printf("    gateway RSS %ld KiB -> %ld KiB over %d clicks, %d viewers\n", rss0, rss1,
	       clicks, N_VIEWERS);
	/* Bounded: a frame per viewer at most (4 MB each at 1280x800), not a queue. */
	if (rss1 - rss0 > 96 * 1024)
		fail_msg("gateway memory grew by %ld KiB", rss1 - rss0);
	for (int i = 1; i < N_VIEWERS; i++) {
		assert_true(s[i].frames >= 2);
		assert_int_equal(s[i].keys, 1); /* deltas after the first */
		close(fds[i]);
		sc_screen_free(&s[i]);
	}
	close(fds[0]);
}

static bool audit_has(const char *event, const char *reason)
{
	char *text = NULL;
	bool found = false;

	if (fs_read_file(audit, 1 << 20, &text, NULL) < 0)
		return false;
	for (char *line = strtok(text, "\n"); line && !found; line = strtok(NULL, "\n"))
		found = strstr(line, event) && strstr(line, sid) &&
			(!reason || strstr(line, reason));
	free(text);
	return found;
}

/* Whether the session's events (GET .../events) hold one of type. */
static bool event_has(const char *type)
{
	struct http_resp r;
	char path[128];
	json_t *ev;
	size_t i;
	bool found = false;

	snprintf(path, sizeof(path), "/v1/sessions/%s/events", sid);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, ctl, NULL, 0, 10, &r), 0);
	if (r.status != 200)
		fail_msg("events: %d %s", r.status, r.body ? r.body : "");
	json_array_foreach(json_object_get(r.json, "events"), i, ev)
		found |= !strcmp(json_string_value(json_object_get(ev, "type")) ?: "", type);
	http_resp_free(&r);
	return found;
}

static void expect_error(int fd, struct sc_screen *s, const char *code)
{
	json_t *j = sc_wait_json(fd, "error", s, 10000);

	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "code")), code);
	json_decref(j);
}

/* Whether GET /v1/sessions/{id} names a person in control. */
static bool controlled_by_someone(void)
{
	struct http_resp r;
	char path[128];
	bool yes;

	snprintf(path, sizeof(path), "/v1/sessions/%s", sid);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, view, NULL, 0, 10, &r), 0);
	assert_true(json_is_string(json_object_get(r.json, "controlled_by")) ||
		    json_is_null(json_object_get(r.json, "controlled_by")));
	yes = json_is_string(json_object_get(r.json, "controlled_by"));
	http_resp_free(&r);
	return yes;
}

static void pointer(int fd, int x, int y, int buttons)
{
	assert_int_equal(sc_send_json(fd, json_pack("{s:s, s:i, s:i, s:i}", "type", "pointer", "x",
						    x, "y", y, "buttons", buttons)),
			 0);
}

static void test_control_lease(void **state)
{
	struct sc_screen sa = { 0 }, sb = { 0 };
	char code[64];
	struct ppm shot;
	int a, b;
	json_t *j;

	(void)state;
	a = viewer_hello(ctl, "control", &sa);
	b = viewer_hello(view, "view", &sb);
	/* The view token only watches: no take, no input. */
	assert_int_equal(ws_send(b, 1, "{\"type\":\"take\"}", 15), 0);
	expect_error(b, &sb, "forbidden");
	pointer(b, 500, 300, 1);
	pointer(b, 500, 300, 0);
	expect_error(b, &sb, "forbidden");
	/* Control without the lease: refused too. */
	pointer(a, 520, 320, 1);
	expect_error(a, &sa, "not_controller");

	assert_int_equal(ws_send(a, 1, "{\"type\":\"take\"}", 15), 0);
	j = sc_wait_json(a, "control", &sa, 10000);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "you")));
	json_decref(j);
	j = sc_wait_json(b, "control", &sb, 10000);
	assert_non_null(j);
	assert_false(json_is_true(json_object_get(j, "you")));
	assert_true(json_is_object(json_object_get(j, "controller")));
	json_decref(j);
	assert_true(audit_has("control_taken", NULL));
	assert_true(event_has("control_taken"));

	/* Agents are refused while a person drives. */
	assert_int_equal(act_status(ctl, "{\"action\":\"left_click\",\"coordinate\":[5,5]}", code,
				    sizeof(code)),
			 409);
	assert_string_equal(code, "controlled_by_viewer");
	assert_true(controlled_by_someone());

	/* The person's click lands, and the watcher sees it. */
	pointer(a, 300, 200, 0);
	pointer(a, 300, 200, 1);
	pointer(a, 300, 200, 0);
	wait_mark(b, &sb, 300, 200);
	assert_int_equal(sb.cursor_x, 300);
	assert_int_equal(sb.cursor_y, 200);
	/* The view token's click did nothing. */
	shot = screenshot_png();
	assert_false(ppm_close(ppm_pixel(&shot, 500, 300), 0xFFFFFF, 40));
	assert_true(ppm_close(ppm_pixel(&shot, 300, 200), 0xFFFFFF, 40));
	ppm_free(&shot);

	assert_int_equal(ws_send(a, 1, "{\"type\":\"release\"}", 18), 0);
	j = sc_wait_json(b, "control", &sb, 10000);
	assert_non_null(j);
	assert_true(json_is_null(json_object_get(j, "controller")));
	json_decref(j);
	assert_true(audit_has("control_released", "released"));
	assert_true(event_has("control_released"));
	assert_false(controlled_by_someone());
	assert_int_equal(act_status(ctl, "{\"action\":\"mouse_move\",\"coordinate\":[5,5]}", NULL,
				    0),
			 200);

	/* Taking again and hanging up gives control back too. */
	assert_int_equal(ws_send(a, 1, "{\"type\":\"take\"}", 15), 0);
	j = sc_wait_json(b, "control", &sb, 10000);
	assert_non_null(j);
	json_decref(j);
	close(a);
	j = sc_wait_json(b, "control", &sb, 10000);
	assert_non_null(j);
	assert_true(json_is_null(json_object_get(j, "controller")));
	json_decref(j);
	assert_true(audit_has("control_released", "disconnected"));
	assert_int_equal(act_status(ctl, "{\"action\":\"mouse_move\",\"coordinate\":[6,6]}", NULL,
				    0),
			 200);
	close(b);
	sc_screen_free(&sa);
	sc_screen_free(&sb);
}

/* Sends one message on a fresh authenticated (or not) socket and expects
 * the close code. */
static void expect_close(bool auth_first, int opcode, const char *msg, size_t len, int code)
{
	int fd = auth_first ? viewer(ctl) : viewer(NULL);
	int64_t deadline = fs_now_ms() + 10000;
	struct ws_msg m;

	assert_int_equal(ws_send(fd, opcode, msg, len), 0);
	for (;;) {
		if (fs_now_ms() > deadline || ws_recv(fd, 10000, &m) < 0)
			fail_msg("no close frame after %.40s", msg);
		if (m.opcode == WS_CLOSE)
			break;
		ws_msg_free(&m);
	}
	if (m.close_code != code)
		fail_msg("%.60s: close code %d, want %d", msg, m.close_code, code);
	ws_msg_free(&m);
	close(fd);
}

static void test_malformed_messages_close(void **state)
{
	char big[6000], tok[200];
	struct sc_screen s = { 0 };
	struct http_resp r;
	int fd;

	(void)state;
	memset(big, ' ', sizeof(big));
	big[0] = '{';
	big[sizeof(big) - 1] = '}';
	expect_close(true, 2, "\x01\x02\x03", 3, 1003);
	expect_close(true, 1, "{nope", 5, 1007);
	expect_close(true, 1, "[1,2]", 5, 1007);
	expect_close(true, 1, "{\"type\":\"fly\"}", 14, 1008);
	expect_close(true, 1, "{\"no\":\"type\"}", 13, 1008);
	expect_close(true, 1, "{\"type\":\"pointer\",\"x\":99999,\"y\":1}", 34, 1008);
	expect_close(true, 1, "{\"type\":\"key\",\"code\":\"NoSuchKey\",\"down\":true}", 45, 1008);
	expect_close(true, 1, "{\"type\":\"settings\",\"quality\":0}", 31, 1008);
	expect_close(true, 1, "{\"type\":\"take\",\"extra\":1}", 25, 1008);
	expect_close(true, 1, big, sizeof(big), 1009);
	/* Without a header, the first message must be a good auth. */
	expect_close(false, 1, "{\"type\":\"take\"}", 15, 1008);
	snprintf(tok, sizeof(tok), "{\"type\":\"auth\",\"token\":\"%s\"}",
		 "not-a-real-token-at-all");
	expect_close(false, 1, tok, strlen(tok), 1008);
	/* Nothing else was hurt: the gateway answers, a viewer still streams. */
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", "/healthz", NULL, NULL, 0, 10,
				      &r),
			 0);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	fd = viewer_hello(view, "view", &s);
	assert_int_equal(sc_wait_frame(fd, &s, 0, 30000), 0);
	close(fd);
	sc_screen_free(&s);
}

static void test_upgrades_refused(void **state)
{
	char path[128];
	struct http_resp r;
	int status;

	(void)state;
	assert_int_equal(ws_connect(gw.port, path_stream, "wrong-token-wrong", NULL, &status), -1);
	assert_int_equal(ws_connect(gw.port, path_stream, view, "http://evil.example", &status),
			 -1);
	assert_int_equal(ws_connect(gw.port, "/v1/sessions/s_nope/stream", view, NULL, &status),
			 -1);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path_stream, view, NULL, 0, 10,
				      &r),
			 0);
	assert_int_equal(r.status, 426);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/stream", sid);
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path, view, "{}", 2, 10, &r),
			 0);
	assert_int_equal(r.status, 405);
	http_resp_free(&r);
}

static char *share(const char *token, const char *body, int want_status)
{
	char path[128];
	struct http_resp r;
	char *t = NULL;

	snprintf(path, sizeof(path), "/v1/sessions/%s/share", sid);
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path, token, body, strlen(body),
				      10, &r),
			 0);
	if (r.status != want_status)
		fail_msg("share %s: %d %s", body, r.status, r.body ? r.body : "");
	if (r.status == 201) {
		const char *url = json_string_value(json_object_get(r.json, "url"));

		t = strdup(json_string_value(json_object_get(r.json, "token")));
		/* The token rides in the fragment, which browsers never send. */
		assert_non_null(strstr(url, "/web/#s="));
		assert_non_null(strstr(url, t));
	}
	http_resp_free(&r);
	return t;
}

static int auth_with(const char *token)
{
	char msg[256];
	int fd = viewer(NULL);

	snprintf(msg, sizeof(msg), "{\"type\":\"auth\",\"token\":\"%s\",\"name\":\"guest\"}",
		 token);
	assert_int_equal(ws_send(fd, 1, msg, strlen(msg)), 0);
	return fd;
}

static void test_share_tokens(void **state)
{
	char *tv, *tc, *tshort;
	struct ws_msg m;
	json_t *j;
	int fd;

	(void)state;
	tv = share(ctl, "{\"scope\":\"view\"}", 201);
	/* control links need the "share" scope: the operator's, not the agent's */
	free(share(ctl, "{\"scope\":\"control\",\"ttl_s\":60}", 403));
	tc = share(gw.key, "{\"scope\":\"control\",\"ttl_s\":60}", 201);
	free(share(view, "{\"scope\":\"control\"}", 403));
	free(share(view, "{\"scope\":\"view\"}", 403)); /* a watcher mints nothing */
	free(share(ctl, "{\"scope\":\"admin\"}", 400));
	free(share(ctl, "{\"scope\":\"view\",\"ttl_s\":0}", 400));
	tshort = share(gw.key, "{\"scope\":\"view\",\"ttl_s\":1}", 201);

	fd = auth_with(tv);
	j = sc_wait_json(fd, "hello", NULL, 10000);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "scope")), "view");
	assert_string_equal(json_string_value(json_object_get(j, "name")), "guest");
	json_decref(j);
	close(fd);
	fd = auth_with(tc);
	j = sc_wait_json(fd, "hello", NULL, 10000);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "scope")), "control");
	json_decref(j);
	close(fd);
	/* A share token is for the stream only, not the REST API. */
	assert_int_equal(act_status(tc, "{\"action\":\"mouse_move\",\"coordinate\":[5,5]}", NULL,
				    0),
			 401);
	/* An expired one is refused. */
	usleep(1500 * 1000);
	fd = auth_with(tshort);
	do {
		assert_int_equal(ws_recv(fd, 10000, &m), 0);
		ws_msg_free(&m);
	} while (m.opcode != WS_CLOSE);
	assert_int_equal(m.close_code, 1008);
	close(fd);
	free(tv);
	free(tc);
	free(tshort);
}

static int quiet_setup(void **state)
{
	char idle[16];
	const char *args[] = { "--stream-idle-s", idle, NULL };

	(void)state;
	snprintf(idle, sizeof(idle), "%d", QUIET_IDLE_S);
	if (gateway_proc_start(&quiet_gw, args) < 0)
		return -1;
	return gateway_proc_create_session(&quiet_gw,
					   "{\"image\":\"tiny\",\"width\":1280,\"height\":800}",
					   120, &quiet_sess);
}

static int quiet_teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&quiet_gw);
	return gateway_proc_stop(&quiet_gw) == 0 ? 0 : -1;
}

/* On quiet_gw, whose idle limit is QUIET_IDLE_S. */
static void test_silent_viewer_hung_up(void **state)
{
	struct sc_screen s = { 0 };
	int quiet, live;
	char buf[65536];
	ssize_t n;
	int64_t deadline;

	(void)state;
	quiet = viewer_at(&quiet_gw, quiet_sess.id, quiet_sess.view);
	live = viewer_hello_at(&quiet_gw, quiet_sess.id, quiet_sess.view, "view", &s);
	/* The live viewer answers PINGs (ws_recv does) past the idle limit. */
	deadline = fs_now_ms() + (QUIET_IDLE_S + 3) * 1000;
	while (fs_now_ms() < deadline) {
		struct ws_msg m;

		if (ws_recv(live, 500, &m) == 0 && m.opcode == WS_CLOSE)
			fail_msg("the gateway closed a viewer that answers its pings");
		if (m.opcode == WS_BINARY)
			sc_apply(&s, m.data, m.len);
		ws_msg_free(&m);
	}
	/* The quiet one, which never read or answered, has been hung up on. */
	do
		n = read(quiet, buf, sizeof(buf));
	while (n > 0);
	assert_int_equal(n, 0);
	/* The live one still streams. */
	click_at(&quiet_gw, quiet_sess.id, quiet_sess.control, 640, 700);
	wait_mark(live, &s, 640, 700);
	close(quiet);
	close(live);
	sc_screen_free(&s);
}

/* Reads event messages until a "state" one with status (and paused, when
 * not NULL) arrives. */
static void wait_state_event(int fd, struct sc_screen *s, const char *status, const char *paused)
{
	for (int i = 0; i < 20; i++) {
		json_t *j = sc_wait_json(fd, "event", s, 60000), *e;
		bool hit;

		assert_non_null(j);
		e = json_object_get(j, "event");
		hit = !strcmp(json_string_value(json_object_get(e, "type")) ?: "", "state") &&
		      !strcmp(json_string_value(json_object_get(e, "status")) ?: "", status) &&
		      (!paused ||
		       !strcmp(json_string_value(json_object_get(e, "paused")) ?: "", paused));
		json_decref(j);
		if (hit)
			return;
	}
	fail_msg("no state event %s %s", status, paused ? paused : "");
}

static void session_op(const char *what, const char *body)
{
	char path[160];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s/%s", sid, what);
	if (http_request("127.0.0.1", gw.port, "POST", path, ctl, body, body ? strlen(body) : 0,
			 120, &r) < 0 ||
	    r.status != 200)
		fail_msg("%s: %d %s", what, r.status, r.body ? r.body : "");
	http_resp_free(&r);
}

/* Viewers see the session paused and resumed (as events), and the picture
 * goes on after a resume from disk, which replaces the guest's QEMU and
 * the screen mirror with it. */
static void test_viewers_see_pause_and_resume(void **state)
{
	struct sc_screen s = { 0 };
	int fd;

	(void)state;
	fd = viewer_hello(view, "view", &s);
	assert_int_equal(sc_wait_frame(fd, &s, 0, 30000), 0);
	session_op("pause", "{\"mode\":\"memory\"}");
	wait_state_event(fd, &s, "paused", "memory");
	session_op("resume", NULL);
	wait_state_event(fd, &s, "ready", NULL);
	session_op("pause", "{\"mode\":\"disk\"}");
	wait_state_event(fd, &s, "paused", "disk");
	session_op("resume", NULL);
	wait_state_event(fd, &s, "ready", NULL);
	click(333, 222);
	wait_mark(fd, &s, 333, 222);
	close(fd);
	sc_screen_free(&s);
}

static void test_deleting_session_closes_viewers(void **state)
{
	struct http_resp r;
	struct ws_msg m;
	char path[128];
	int fd = viewer_hello(view, "view", NULL);

	(void)state;
	snprintf(path, sizeof(path), "/v1/sessions/%s", sid);
	assert_int_equal(http_request("127.0.0.1", gw.port, "DELETE", path, gw.key, NULL, 0, 30,
				      &r),
			 0);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	do {
		assert_int_equal(ws_recv(fd, 10000, &m), 0);
		ws_msg_free(&m);
	} while (m.opcode != WS_CLOSE);
	assert_int_equal(m.close_code, 1001);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_frame_then_deltas),
		cmocka_unit_test(test_quality_per_viewer),
		cmocka_unit_test(test_twenty_viewers_one_never_reads),
		cmocka_unit_test(test_control_lease),
		cmocka_unit_test(test_malformed_messages_close),
		cmocka_unit_test(test_upgrades_refused),
		cmocka_unit_test(test_share_tokens),
		cmocka_unit_test_setup_teardown(test_silent_viewer_hung_up, quiet_setup,
						quiet_teardown),
		cmocka_unit_test(test_viewers_see_pause_and_resume),
		cmocka_unit_test(test_deleting_session_closes_viewers),
	};

	return cmocka_run_group_tests_name("live stream (tiny guest)", tests, setup, teardown);
}
