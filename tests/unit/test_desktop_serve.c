/* tests/unit/test_desktop_serve.c: the desktop commands served by the
 * gateway (gateway/e2b/desktop_serve.c) on a session of the test's own (a
 * struct sess with no guest) and a real lws context, whose loop hands the
 * answers over: what each answer-at-once command prints and exits with
 * (parsed back as the SDK parses it), the stream's state from one command
 * to the next as the SDK's stream.start() and stop() go, input refused by a
 * session that is not ready, Xvfb's sizes refused with their reason (which
 * xdpyinfo then gives), commands that are not the desktop's left
 * alone, and the held screenshots' table (bound, expiry, replacement) and
 * its per-session take and remove. Input, scrot, xdg-open, gtk-launch and
 * Xvfb's new size on a running guest are the integration's
 * (docs/e2b-desktop.md). */
#include "display/encode.h"
#include "gateway/core/gw.h"
#include "gateway/e2b/desktop_held.h"
#include "gateway/e2b/desktop_serve.h"
#include "gateway/session/session.h"
#include "gateway/session/session_int.h" /* a session of the test's own, no guest */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct gw gw;
static struct sess sess;

struct answer {
	int calls;
	enum desktop_kind kind;
	int exit_code;
	char out[512];
	char err[512];
	bool has_error;
	int status;
	bool lingers;
};

static void on_done(void *ud, const struct desktop_answer *a)
{
	struct answer *got = ud;

	got->calls++;
	got->kind = a->kind;
	got->exit_code = a->exit_code;
	snprintf(got->out, sizeof(got->out), "%.*s", (int)a->out_len, a->out);
	snprintf(got->err, sizeof(got->err), "%.*s", (int)a->err_len, a->err);
	got->has_error = a->error != NULL;
	got->status = a->error ? a->error->status : 0;
	got->lingers = a->lingers;
}

/* Runs line through the hook as Process.Start would and waits for its
 * answer; returns the hook's rc. */
static int serve(const char *line, struct answer *got)
{
	const char *args[] = { "-l", "-c", line };
	struct desktop_serve *d = NULL;
	int rc;

	memset(got, 0, sizeof(*got));
	rc = desktop_serve_try(&sess, "/bin/bash", args, 3, on_done, got, &d);
	if (rc == 0) {
		assert_null(d);
		return 0;
	}
	assert_non_null(d);
	assert_int_equal(got->calls, 0); /* never inside the caller */
	for (int i = 0; i < 2000 && !got->calls; i++) {
		lws_service(gw.ctx, -1); /* no waiting in poll: the timer is due at once */
		usleep(1000);
	}
	assert_int_equal(got->calls, 1);
	return rc;
}

static int setup(void **state)
{
	struct lws_context_creation_info info;

	(void)state;
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	lws_set_log_level(LLL_ERR, NULL);
	gw.ctx = lws_create_context(&info);
	assert_non_null(gw.ctx);
	memset(&sess, 0, sizeof(sess));
	sess.gw = &gw;
	snprintf(sess.id, sizeof(sess.id), "testdesk0000000000000");
	sess.state = SESS_STARTING; /* no guest: input is refused */
	sess.width = 1280;
	sess.height = 800;
	sess.pointer_x = 17;
	sess.pointer_y = 799;
	return 0;
}

/* What the session does when it is freed: tells its listeners. */
static int teardown(void **state)
{
	(void)state;
	while (sess.listeners) {
		struct sess_listener *l = sess.listeners;

		l->notify(l, &sess, SESS_SIGNAL_DESTROY, NULL);
		assert_true(sess.listeners != l); /* it let go */
	}
	lws_context_destroy(gw.ctx);
	return 0;
}

static void test_answers(void **state)
{
	struct answer a;
	int w, h, x, y;

	(void)state;
	assert_int_equal(serve("xrandr", &a), 1);
	assert_int_equal(a.kind, DESKTOP_XRANDR);
	assert_int_equal(a.exit_code, 0);
	/* getScreenSize's /(\d+x\d+)/: the first WxH without spaces */
	assert_int_equal(sscanf(strstr(a.out, "connected"), "connected primary %dx%d", &w, &h), 2);
	assert_int_equal(w, 1280);
	assert_int_equal(h, 800);
	assert_int_equal(serve("xdotool getmouselocation", &a), 1);
	assert_int_equal(sscanf(a.out, "x:%d y:%d screen:0", &x, &y), 2);
	assert_int_equal(x, 17);
	assert_int_equal(y, 799);
	/* Xvfb at the screen's size: nothing to set */
	assert_int_equal(serve("Xvfb :0 -ac -screen 0 1280x800x24 -retro -dpi 96 -nolisten tcp "
			       "-nolisten unix",
			       &a),
			 1);
	assert_int_equal(a.exit_code, 0);
	assert_true(a.lingers);
	assert_int_equal(serve("xdpyinfo -display :0", &a), 1);
	assert_int_equal(a.exit_code, 0);
	assert_non_null(strstr(a.out, "dimensions:    1280x800 pixels"));
	assert_int_equal(serve("startxfce4", &a), 1);
	assert_int_equal(a.exit_code, 0);
	assert_true(a.lingers);
	assert_int_equal(serve("ps aux | grep 77 | grep -v grep | head -n 1", &a), 1);
	assert_int_equal(a.exit_code, 0);
	assert_string_equal(a.out, ""); /* no "[xfce4-session] <defunct>" */
	assert_int_equal(serve("xdotool type --delay 75 -- ''", &a), 1);
	assert_int_equal(a.exit_code, 0);
	/* not the desktop's: the guest runs them */
	assert_int_equal(serve("ls /tmp", &a), 0);
	assert_int_equal(serve("xrandr; id", &a), 0);
	assert_int_equal(a.calls, 0);
}

/* Xvfb at another size than the screen's: refused with a reason (the
 * depth, sizes a session cannot have, a session with no guest to set it
 * in), which xdpyinfo then gives too, until an Xvfb that works. Setting
 * it in a running guest is the e2b desktop test's. */
static void test_xvfb_sizes(void **state)
{
	static const struct {
		const char *size, *why;
	} bad[] = {
		{ "1024x768x16", "the guest's screen has depth 24, not 16" },
		{ "5000x5000x24", "a 5000x5000 screen is not one a session can have (320x200 to "
				  "3840x2160)" },
		{ "319x600x24", "a 319x600 screen is not one" },
		{ "1024x2161x24", "a 1024x2161 screen is not one" },
		{ "1024x768x24", "the session is not running: its screen (1280x800) cannot be set "
				 "to 1024x768" },
	};
	char line[160];
	struct answer a;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line),
			 "Xvfb :0 -ac -screen 0 %s -retro -dpi 96 -nolisten tcp "
			 "-nolisten unix",
			 bad[i].size);
		assert_int_equal(serve(line, &a), 1);
		assert_int_equal(a.kind, DESKTOP_XVFB);
		assert_int_equal(a.exit_code, 1);
		assert_false(a.lingers);
		if (!strstr(a.err, bad[i].why))
			fail_msg("%s: %s", bad[i].size, a.err);
		assert_non_null(strstr(a.err, "vitrine: Xvfb: "));
		/* the display "is not there": xdpyinfo says why */
		assert_int_equal(serve("xdpyinfo -display :0", &a), 1);
		assert_int_equal(a.exit_code, 1);
		assert_non_null(strstr(a.err, "unable to open display \":0\""));
		assert_non_null(strstr(a.err, bad[i].why));
		assert_string_equal(a.out, "");
	}
	/* the session's own size works, and xdpyinfo with it */
	assert_int_equal(serve("Xvfb :0 -ac -screen 0 1280x800x24 -retro -dpi 96 -nolisten tcp "
			       "-nolisten unix",
			       &a),
			 1);
	assert_int_equal(a.exit_code, 0);
	assert_true(a.lingers);
	assert_int_equal(serve("xdpyinfo -display :0", &a), 1);
	assert_int_equal(a.exit_code, 0);
	assert_non_null(strstr(a.out, "dimensions:    1280x800 pixels"));
}

/* VNCServer.start(): pgrep (not running), x11vnc, novnc_proxy, netstat
 * until the port shows; stop(): pgrep (running), pkill. */
static void test_stream(void **state)
{
	struct answer a;
	int port = -1;

	(void)state;
	assert_int_equal(serve("pgrep -x x11vnc", &a), 1);
	assert_int_equal(a.exit_code, 1); /* the SDK's catch: not running */
	assert_string_equal(a.out, "");
	assert_int_equal(serve("netstat -tuln | grep \":6080 \"", &a), 1);
	assert_int_equal(a.exit_code, 1);
	assert_false(desktop_stream_started(&sess, &port));
	assert_int_equal(port, 0);
	assert_int_equal(serve("x11vnc -storepasswd Ab12Cd34Ef56Gh78 ~/.vnc/passwd", &a), 1);
	assert_int_equal(a.exit_code, 0);
	assert_int_equal(serve("x11vnc -bg -display :0 -forever -wait 50 -shared -rfbport 5900 "
			       "-usepw 2>/tmp/x11vnc_stderr.log",
			       &a),
			 1);
	assert_int_equal(a.exit_code, 0);
	assert_string_equal(a.out, "PORT=5900\n");
	assert_int_equal(serve("cd /opt/noVNC/utils && ./novnc_proxy --vnc localhost:5900 "
			       "--listen 6080 --web /opt/noVNC > /tmp/novnc.log 2>&1",
			       &a),
			 1);
	assert_int_equal(a.exit_code, 0);
	assert_true(a.lingers);
	assert_int_equal(serve("netstat -tuln | grep \":6081 \"", &a), 1);
	assert_int_equal(a.exit_code, 1);
	assert_int_equal(serve("netstat -tuln | grep \":6080 \"", &a), 1);
	assert_int_equal(a.exit_code, 0);
	assert_non_null(strstr(a.out, ":6080 ")); /* waitForPort: stdout not empty */
	assert_true(desktop_stream_started(&sess, &port));
	assert_int_equal(port, 6080);
	assert_string_equal(desktop_stream_password(&sess), "Ab12Cd34Ef56Gh78");
	assert_int_equal(serve("pgrep -x x11vnc", &a), 1);
	assert_int_equal(a.exit_code, 0);
	assert_string_not_equal(a.out, ""); /* start() again: "already running" */
	assert_int_equal(serve("pkill x11vnc", &a), 1);
	assert_int_equal(a.exit_code, 0);
	assert_false(desktop_stream_started(&sess, NULL));
	assert_int_equal(serve("pgrep -x x11vnc", &a), 1);
	assert_int_equal(a.exit_code, 1);
	/* without requireAuth, no password is asked for */
	serve("x11vnc -bg -display :0 -forever -wait 50 -shared -rfbport 5900 -nopw "
	      "2>/tmp/x11vnc_stderr.log",
	      &a);
	assert_null(desktop_stream_password(&sess));
}

/* A session that is not ready refuses input and screenshots as the native
 * API does (409), as a failed command the SDK sees as CommandExitError. */
static void test_not_ready(void **state)
{
	static const char *const lines[] = {
		"xdotool mousemove --sync 10 10",
		"xdotool click 1",
		"xdotool click --repeat 3 5",
		"xdotool mousedown 1",
		"xdotool key Return",
		"xdotool type --delay 75 -- 'Grüße'",
		"scrot --pointer /tmp/screenshot-a.png",
	};
	struct display_image *img = (void *)&img;
	struct answer a;

	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		assert_int_equal(serve(lines[i], &a), 1);
		assert_int_equal(a.exit_code, 1);
		assert_true(a.has_error);
		assert_int_equal(a.status, 409);
		assert_non_null(strstr(a.err, "vitrine: the session is starting"));
	}
	assert_int_equal(desktop_held_take(&sess, "/tmp/screenshot-a.png", &img), -ENOENT);
	assert_null(img);
	assert_int_equal(serve("xdg-open https://example.com/", &a), 1);
	assert_int_equal(a.exit_code, 1);
	assert_non_null(strstr(a.err, "not running"));
}

static struct display_image *image(uint8_t tag)
{
	struct display_image *img = calloc(1, sizeof(*img));

	assert_non_null(img);
	img->data = malloc(1);
	img->data[0] = tag;
	img->len = 1;
	img->format = DISPLAY_FORMAT_PNG;
	atomic_init(&img->refs, 1);
	return img;
}

/* The files endpoint's and the remove's side, through the session. */
static void test_held_session(void **state)
{
	struct display_image *img = NULL;

	(void)state;
	assert_int_equal(desktop_held_take(&sess, "/tmp/screenshot-x.png", &img), -ENOENT);
	assert_int_equal(desktop_held_remove(&sess, "/tmp/screenshot-x.png"), -ENOENT);
	assert_int_equal(desktop_held_keep(&sess, "/tmp/screenshot-x.png", image(7)), 0);
	assert_int_equal(desktop_held_take(&sess, "/tmp/screenshot-x.png", &img), 0);
	assert_int_equal(img->data[0], 7);
	display_image_unref(img);
	img = NULL;
	/* read again (a retry), then removed */
	assert_int_equal(desktop_held_take(&sess, "/tmp/screenshot-x.png", &img), 0);
	display_image_unref(img);
	assert_int_equal(desktop_held_take(&sess, "/tmp/screenshot-y.png", &img), -ENOENT);
	assert_int_equal(desktop_held_remove(&sess, "/tmp/screenshot-x.png"), 0);
	assert_int_equal(desktop_held_remove(&sess, "/tmp/screenshot-x.png"), -ENOENT);
	assert_int_equal(desktop_held_take(&sess, "/tmp/screenshot-x.png", &img), -ENOENT);
	/* one left held: the session's end lets it go (teardown; ASan counts) */
	assert_int_equal(desktop_held_keep(&sess, "/tmp/screenshot-z.png", image(8)), 0);
}

static void test_held_table(void **state)
{
	struct desktop_held h;
	char path[64];

	(void)state;
	memset(&h, 0, sizeof(h));
	desktop_held_put(&h, "/tmp/a.png", image(1), 1000);
	assert_int_equal(desktop_held_get(&h, "/tmp/a.png", 1000)->data[0], 1);
	assert_null(desktop_held_get(&h, "/tmp/b.png", 1000));
	/* the same path again: the new picture */
	desktop_held_put(&h, "/tmp/a.png", image(2), 1001);
	assert_int_equal(desktop_held_get(&h, "/tmp/a.png", 1001)->data[0], 2);
	assert_int_equal(desktop_held_count(&h, 1001), 1);
	/* expiry */
	assert_non_null(desktop_held_get(&h, "/tmp/a.png", 1001 + DESKTOP_HELD_TTL_MS - 1));
	assert_null(desktop_held_get(&h, "/tmp/a.png", 1001 + DESKTOP_HELD_TTL_MS));
	assert_int_equal(desktop_held_count(&h, 1001 + DESKTOP_HELD_TTL_MS), 0);
	/* the bound: the oldest goes */
	for (int i = 0; i < DESKTOP_HELD_MAX + 3; i++) {
		snprintf(path, sizeof(path), "/tmp/s%d.png", i);
		desktop_held_put(&h, path, image((uint8_t)i), 5000 + i);
	}
	assert_int_equal(desktop_held_count(&h, 6000), DESKTOP_HELD_MAX);
	assert_null(desktop_held_get(&h, "/tmp/s2.png", 6000));
	assert_int_equal(desktop_held_get(&h, "/tmp/s3.png", 6000)->data[0], 3);
	assert_true(desktop_held_drop(&h, "/tmp/s3.png", 6000));
	assert_false(desktop_held_drop(&h, "/tmp/s3.png", 6000));
	assert_int_equal(desktop_held_count(&h, 6000), DESKTOP_HELD_MAX - 1);
	/* a path that is not one */
	desktop_held_put(&h, "", image(9), 6000);
	assert_int_equal(desktop_held_count(&h, 6000), DESKTOP_HELD_MAX - 1);
	desktop_held_clear(&h);
	assert_int_equal(desktop_held_count(&h, 6000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_ready, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xvfb_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_session, setup, teardown),
		cmocka_unit_test(test_held_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
