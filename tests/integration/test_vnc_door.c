/* tests/integration/test_vnc_door.c: a session opened to standard VNC
 * clients (POST /v1/sessions/{id}/vnc) on a tiny guest, driven with
 * libvncclient: only a control token opens it; it listens on loopback; the
 * wrong password is refused; a view-password client sees the screen and its
 * clicks do nothing; a control-password client's click and key reach the
 * guest while the agent is refused (409), and the agent gets control back
 * when it leaves; DELETE closes the door. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"

#include <rfb/rfbclient.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static char sid[64], ctl[64], view[64], path_vnc[128], view_pw[16], control_pw[16];
static int port;
static const char *password; /* for the next client */

static int setup(void **state)
{
	const char *body = "{\"image\":\"tiny\",\"width\":1280,\"height\":800}";
	struct gateway_session created;

	(void)state;
	if (gateway_proc_start(&gw, NULL) < 0)
		return -1;
	if (gateway_proc_create_session(&gw, body, 120, &created) < 0)
		return -1;
	snprintf(sid, sizeof(sid), "%s", created.id);
	snprintf(ctl, sizeof(ctl), "%s", created.control);
	snprintf(view, sizeof(view), "%s", created.view);
	snprintf(path_vnc, sizeof(path_vnc), "/v1/sessions/%s/vnc", sid);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static void quiet(const char *fmt, ...)
{
	(void)fmt;
}

static char *get_password(rfbClient *cl)
{
	(void)cl;
	return strdup(password);
}

/* Connects with pw; NULL when refused. */
static rfbClient *vnc_connect(const char *pw)
{
	rfbClient *cl = rfbGetClient(8, 3, 4);

	rfbClientLog = quiet;
	rfbClientErr = quiet;
	password = pw;
	cl->GetPassword = get_password;
	free(cl->serverHost);
	cl->serverHost = strdup("127.0.0.1");
	cl->serverPort = port;
	if (!rfbInitClient(cl, NULL, NULL))
		return NULL; /* rfbInitClient freed it */
	return cl;
}

/* rfbClientCleanup leaves the framebuffer its default allocator made. */
static void vnc_close(rfbClient *cl)
{
	free(cl->frameBuffer);
	cl->frameBuffer = NULL;
	rfbClientCleanup(cl);
}

/* Services the client for ms milliseconds. Returns false if it dropped. */
static bool pump(rfbClient *cl, int ms)
{
	int64_t end = fs_now_ms() + ms;

	while (fs_now_ms() < end) {
		int n = WaitForMessage(cl, 50000);

		if (n < 0 || (n > 0 && !HandleRFBServerMessage(cl)))
			return false;
	}
	return true;
}

static uint32_t fb_pixel(rfbClient *cl, int x, int y)
{
	const uint8_t *p = cl->frameBuffer + ((size_t)y * cl->width + x) * 4;

	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static struct ppm screenshot_png(void)
{
	struct ppm img;

	assert_int_equal(gateway_proc_screenshot(&gw, sid, gw.key, &img), 0);
	return img;
}

static bool mark_at(int x, int y)
{
	struct ppm img = screenshot_png();
	bool yes = ppm_pixel(&img, x, y) == 0xFFFFFF && ppm_pixel(&img, x - 1, y) == 0xFF0000;

	ppm_free(&img);
	return yes;
}

static size_t typed_pixels(void)
{
	struct ppm img = screenshot_png();
	size_t n = 0;

	for (int y = 360; y < 440; y++)
		for (int x = 16; x < 1264; x++)
			n += ppm_pixel(&img, x, y) == 0xE0E0E0;
	ppm_free(&img);
	return n;
}

static int agent_status(void)
{
	char path[160];
	const char *a = "{\"action\":\"mouse_move\",\"coordinate\":[2,2]}";
	struct http_resp r;
	int st;

	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", sid);
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path, ctl, a, strlen(a), 30,
				      &r),
			 0);
	st = r.status;
	http_resp_free(&r);
	return st;
}

/* Whether /proc/net/tcp has a listener on port bound to 127.0.0.1 only. */
static bool listens_on_loopback_only(void)
{
	char *text = NULL, want[32], any[32];
	bool lo, other;

	snprintf(want, sizeof(want), "0100007F:%04X", port);
	snprintf(any, sizeof(any), ":%04X 00000000:0000 0A", port);
	assert_int_equal(fs_read_file("/proc/net/tcp", 1 << 20, &text, NULL), 0);
	lo = strstr(text, want) != NULL;
	other = false;
	for (char *p = strstr(text, any); p; p = strstr(p + 1, any))
		other |= strncmp(p - 8, "0100007F", 8) != 0;
	free(text);
	return lo && !other;
}

static void test_open_the_door(void **state)
{
	struct http_resp r;

	(void)state;
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path_vnc, view, "", 0, 10, &r),
			 0);
	assert_int_equal(r.status, 403);
	http_resp_free(&r);
	/* the control token (an agent's) lacks the "vnc" scope */
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path_vnc, ctl, "", 0, 10, &r),
			 0);
	assert_int_equal(r.status, 403);
	http_resp_free(&r);
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path_vnc, gw.key, "", 0, 10,
				      &r),
			 0);
	assert_int_equal(r.status, 201);
	port = (int)json_integer_value(json_object_get(r.json, "port"));
	assert_string_equal(json_string_value(json_object_get(r.json, "host")), "127.0.0.1");
	snprintf(view_pw, sizeof(view_pw), "%s",
		 json_string_value(json_object_get(r.json, "view_password")));
	snprintf(control_pw, sizeof(control_pw), "%s",
		 json_string_value(json_object_get(r.json, "control_password")));
	http_resp_free(&r);
	assert_true(port > 0);
	assert_int_equal(strlen(view_pw), 8);
	assert_string_not_equal(view_pw, control_pw);
	assert_true(listens_on_loopback_only());
	/* Asking again answers the same door. */
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path_vnc, gw.key, "", 0, 10,
				      &r),
			 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_integer_value(json_object_get(r.json, "port")), port);
	http_resp_free(&r);
	assert_null(vnc_connect("wrongpw!"));
}

static void test_view_password_only_watches(void **state)
{
	rfbClient *cl = vnc_connect(view_pw);
	int64_t deadline = fs_now_ms() + 15000;

	(void)state;
	assert_non_null(cl);
	assert_int_equal(cl->width, 1280);
	assert_int_equal(cl->height, 800);
	while (fb_pixel(cl, 10, 10) != 0x00FF00 && fs_now_ms() < deadline)
		assert_true(pump(cl, 100));
	assert_int_equal(fb_pixel(cl, 10, 10), 0x00FF00); /* the green corner */
	assert_int_equal(fb_pixel(cl, 1270, 790), 0xFF00FF); /* the magenta one */
	SendPointerEvent(cl, 700, 500, rfbButton1Mask);
	SendPointerEvent(cl, 700, 500, 0);
	SendKeyEvent(cl, 'q', TRUE);
	SendKeyEvent(cl, 'q', FALSE);
	assert_true(pump(cl, 1500));
	assert_false(mark_at(700, 500));
	assert_int_equal(typed_pixels(), 0);
	assert_int_equal(agent_status(), 200); /* no lease taken */
	vnc_close(cl);
}

static void test_control_password_drives(void **state)
{
	rfbClient *cl = vnc_connect(control_pw);
	int64_t deadline;

	(void)state;
	assert_non_null(cl);
	assert_true(pump(cl, 300));
	SendPointerEvent(cl, 350, 600, 0);
	SendPointerEvent(cl, 350, 600, rfbButton1Mask);
	SendPointerEvent(cl, 350, 600, 0);
	deadline = fs_now_ms() + 15000;
	while (!mark_at(350, 600) && fs_now_ms() < deadline)
		assert_true(pump(cl, 200));
	assert_true(mark_at(350, 600));
	/* The VNC client now holds control: the agent waits. */
	assert_int_equal(agent_status(), 409);
	SendKeyEvent(cl, 'v', TRUE);
	SendKeyEvent(cl, 'v', FALSE);
	deadline = fs_now_ms() + 15000;
	while (typed_pixels() == 0 && fs_now_ms() < deadline)
		assert_true(pump(cl, 200));
	assert_true(typed_pixels() > 0);
	/* The VNC client saw its own click. */
	deadline = fs_now_ms() + 10000;
	while (fb_pixel(cl, 350, 600) != 0xFFFFFF && fs_now_ms() < deadline)
		assert_true(pump(cl, 100));
	assert_int_equal(fb_pixel(cl, 350, 600), 0xFFFFFF);
	vnc_close(cl);
	/* It left: control goes back. */
	deadline = fs_now_ms() + 10000;
	while (agent_status() != 200 && fs_now_ms() < deadline)
		usleep(100 * 1000);
	assert_int_equal(agent_status(), 200);
}

static void test_close_the_door(void **state)
{
	struct http_resp r;

	(void)state;
	assert_int_equal(http_request("127.0.0.1", gw.port, "DELETE", path_vnc, gw.key, NULL, 0, 10,
				      &r),
			 0);
	assert_int_equal(r.status, 200);
	assert_true(json_is_true(json_object_get(r.json, "stopped")));
	http_resp_free(&r);
	assert_null(vnc_connect(control_pw));
}

/* Guessing: five wrong passwords from an address, each answered after a
 * second, and then even the right one is refused there for a minute. */
static void test_guessing_is_locked_out(void **state)
{
	struct http_resp r;
	rfbClient *cl;
	int64_t t0;

	(void)state;
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path_vnc, gw.key, "", 0, 10,
				      &r),
			 0);
	assert_int_equal(r.status, 201);
	port = (int)json_integer_value(json_object_get(r.json, "port"));
	snprintf(view_pw, sizeof(view_pw), "%s",
		 json_string_value(json_object_get(r.json, "view_password")));
	http_resp_free(&r);
	t0 = fs_now_ms();
	for (int i = 0; i < 5; i++)
		assert_null(vnc_connect("guess123"));
	assert_true(fs_now_ms() - t0 >= 4500); /* a second each */
	assert_null(vnc_connect(view_pw));
	/* a new door starts afresh */
	assert_int_equal(http_request("127.0.0.1", gw.port, "DELETE", path_vnc, gw.key, NULL, 0, 10,
				      &r),
			 0);
	http_resp_free(&r);
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path_vnc, gw.key, "", 0, 10,
				      &r),
			 0);
	port = (int)json_integer_value(json_object_get(r.json, "port"));
	snprintf(view_pw, sizeof(view_pw), "%s",
		 json_string_value(json_object_get(r.json, "view_password")));
	http_resp_free(&r);
	cl = vnc_connect(view_pw);
	assert_non_null(cl);
	vnc_close(cl);
	assert_int_equal(http_request("127.0.0.1", gw.port, "DELETE", path_vnc, gw.key, NULL, 0, 10,
				      &r),
			 0);
	http_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_the_door),
		cmocka_unit_test(test_view_password_only_watches),
		cmocka_unit_test(test_control_password_drives),
		cmocka_unit_test(test_close_the_door),
		cmocka_unit_test(test_guessing_is_locked_out),
	};

	return cmocka_run_group_tests_name("VNC door (tiny guest)", tests, setup, teardown);
}
