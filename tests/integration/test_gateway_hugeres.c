/* tests/integration/test_gateway_hugeres.c: a guest that switches its screen
 * to a huge resolution does not take the gateway down or away from other
 * sessions. Two tiny guests on one gateway; in one, root runs tinymode
 * (guest-images/tiny/tinymode.c) through the exec API to flip the screen
 * between huge and ordinary sizes, the largest the guest kernel takes
 * included. After each flip the huge session's screenshot has the size QEMU
 * shows (its VNC server crops to 2560x2048; QEMU's virtio-gpu refuses
 * 8192x8192, so the screen falls back to tinyfb's), the other session
 * answers a screenshot, a click and a command in normal time, its screen
 * untouched, and the gateway's RSS stays within a bound. Flips in a row
 * from big to small (where QEMU drops the mirror's connection) leave the
 * screen mirrored; once the guest gives its screen back, the memory is
 * given back too. Prints the figures. */
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"
#include "tests/lib/ppm.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* QEMU 7.2's VNC server (ui/vnc.h VNC_MAX_WIDTH/HEIGHT) shows at most this
 * much of a guest's screen, its top-left corner. */
#define VNC_MAX_W 2560
#define VNC_MAX_H 2048
#define TINY_W 1280
#define TINY_H 800
#define GREEN 0x00FF00 /* the top-left square of tinyfb's and tinymode's pictures */

/* The gateway's growth while the guest is huge. At the largest screen QEMU
 * shows, 2560x2048, one frame is 20 MiB of RGBX, and the gateway holds for
 * that session at most: the mirror's framebuffer (20 MiB), its map of
 * pixels received until the first full update (5 MiB), the published frame
 * (20 MiB) and the next one while it is copied (20 MiB), one screenshot's
 * encoding scratch (PNG: 15 MiB of RGB rows; JPEG: TurboJPEG's output
 * buffer, under 20 MiB), ~100 MiB in all. Measured here: +35 MiB
 * (framebuffer and frame; the encodings are brief). 128 MiB leaves room for
 * the worst case and glibc's bookkeeping; under ASan its quarantine
 * (256 MiB by default) holds freed frames too. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_BOUND_KIB (448 * 1024)
#else
#define RSS_BOUND_KIB (128 * 1024)
#endif
/* Once the guest is back at 1280x800, what is left of the huge frames
 * (they were mmapped, cli/gw_start.c): one 4 MiB frame and change. Under ASan
 * freed memory stays in its quarantine: not checked. */
#define RSS_AFTER_KIB (16 * 1024)
/* The other session's calls during the flips (normal: well under a second
 * on an idle machine; the huge guest's drawing of 248 MiB takes a core for
 * seconds, more on a CI machine busy with other guests). */
#define OTHER_CALL_MS 20000

static struct gateway_proc gw;
static struct gateway_session huge, other;

static int setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);
	if (gateway_proc_start(&gw, NULL) < 0)
		return -1;
	/* 8192x7936 is 248 MiB of dumb buffer in the guest's memory */
	if (gateway_proc_create_session(&gw, "{\"image\":\"tiny\",\"memory_mib\":1024}", 180,
					&huge) < 0)
		return -1;
	return gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &other);
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long rss_peak;

static void sample_rss(void)
{
	long rss = gateway_proc_rss_kib(&gw);

	assert_true(rss > 0); /* the gateway is alive */
	if (rss > rss_peak)
		rss_peak = rss;
}

/* Runs cmd as root in the huge guest; returns its stdout (owned). */
static char *run_as_root(const char *cmd)
{
	char path[128], body[256];
	struct http_resp r;
	json_t *out;
	char *text;

	snprintf(path, sizeof(path), "/v1/sessions/%s/exec", huge.id);
	snprintf(body, sizeof(body), "{\"cmd\":\"%s\",\"user\":\"root\",\"cwd\":\"/\"}", cmd);
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path, gw.key, body,
				      strlen(body), 60, &r),
			 0);
	if (r.status != 200)
		fail_msg("%s: %d %s", cmd, r.status, r.body ? r.body : "");
	out = json_object_get(r.json, "stdout");
	if (json_integer_value(json_object_get(r.json, "exit_code")) != 0 || !json_is_string(out))
		fail_msg("%s: %s", cmd, r.body);
	text = strdup(json_string_value(out));
	http_resp_free(&r);
	return text;
}

/* The other session's work: a screenshot (its screen still tinyfb's at
 * 1280x800), a click, a command, each 200; returns the slowest in ms. */
static int64_t serve_other(void)
{
	static const struct {
		const char *method, *sub, *body;
	} calls[] = {
		{ "GET", "/screenshot?format=png", NULL },
		{ "POST", "/actions", "{\"action\":\"left_click\",\"coordinate\":[300,300]}" },
		{ "POST", "/exec", "{\"cmd\":\"echo ok\",\"cwd\":\"/\"}" },
	};
	int64_t slowest = 0;

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		char path[256];
		struct http_resp r;
		int64_t t0 = now_ms(), ms;

		snprintf(path, sizeof(path), "/v1/sessions/%s%s", other.id, calls[i].sub);
		assert_int_equal(http_request("127.0.0.1", gw.port, calls[i].method, path,
					      other.control, calls[i].body,
					      calls[i].body ? strlen(calls[i].body) : 0, 60, &r),
				 0);
		ms = now_ms() - t0;
		if (r.status != 200)
			fail_msg("the other session's %s %s: %d %s", calls[i].method, calls[i].sub,
				 r.status, r.body ? r.body : "");
		if (i == 0) {
			struct ppm img;

			assert_int_equal(png_decode(r.body, r.body_len, &img), 0);
			assert_int_equal(img.width, TINY_W);
			assert_int_equal(img.height, TINY_H);
			assert_true(ppm_close(ppm_pixel(&img, 8, 8), 0x00FF00, 8));
			assert_true(ppm_close(ppm_pixel(&img, TINY_W / 2, 88), 0x00FFFF, 8));
			ppm_free(&img);
		}
		if (i == 2)
			assert_non_null(strstr(r.body, "ok\\n"));
		http_resp_free(&r);
		if (ms > slowest)
			slowest = ms;
	}
	return slowest;
}

/* The huge session's screenshot, decoded into *img; fails with the answer
 * when it is not an image. */
static void huge_screenshot(struct ppm *img)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot?format=png", huge.id);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, huge.control, NULL, 0, 60,
				      &r),
			 0);
	if (r.status != 200 || png_decode(r.body, r.body_len, img) < 0)
		fail_msg("the huge session's screenshot: %d %s", r.status,
			 r.status != 200 && r.body ? r.body : "");
	http_resp_free(&r);
}

/* Waits (up to 20 s, sampling the RSS) until the huge session's screenshot
 * is w x h with top_left at its top-left corner (the guest's screen may
 * pass through tinyfb's on the way: tinymode ends the old holder first);
 * fails with the last size and pixel seen. */
static void expect_huge_screen(int w, int h, uint32_t top_left)
{
	int64_t t0 = now_ms();

	for (;;) {
		struct ppm img = { 0 };
		uint32_t px;
		bool there;

		sample_rss();
		huge_screenshot(&img);
		px = ppm_pixel(&img, 8, 8);
		there = img.width == w && img.height == h && ppm_close(px, top_left, 8);
		if (!there && now_ms() - t0 > 20000)
			fail_msg("the huge session's screen is %dx%d with %06x top left, not %dx%d "
				 "with %06x",
				 img.width, img.height, px, w, h, top_left);
		ppm_free(&img);
		if (there)
			return;
		usleep(250 * 1000);
	}
}

static void test_huge_resolution(void **state)
{
	/* The guest asks, QEMU shows: what the mirror must then have. */
	static const struct {
		const char *mode;
		int w, h; /* the screenshot's size */
		uint32_t top_left;
	} flips[] = {
		{ "5120x2160", VNC_MAX_W, VNC_MAX_H, GREEN },
		{ "1920x1080", 1920, 1080, GREEN },
		/* the largest the guest kernel takes that fits QEMU's 256 MiB */
		{ "8192x7936", VNC_MAX_W, VNC_MAX_H, GREEN },
		/* past virtio-gpu's max_hostmem: QEMU refuses the buffer and
		 * shows its "Display output is not active." at the old size */
		{ "8192x8192", TINY_W, TINY_H, 0x000000 },
		{ "2560x2048", VNC_MAX_W, VNC_MAX_H, GREEN },
		{ "640x480", 640, 480, GREEN },
		{ "8192x4096", VNC_MAX_W, VNC_MAX_H, GREEN },
	};
	long rss0, rss_after;
	int64_t before, during = 0, after;
	struct ppm img;

	(void)state;
	/* Idle: both sessions have served a screenshot at their size. */
	before = serve_other();
	expect_huge_screen(TINY_W, TINY_H, GREEN);
	rss0 = gateway_proc_rss_kib(&gw);
	assert_true(rss0 > 0);
	rss_peak = rss0;
	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		char cmd[64], want[64], *out;
		int64_t t0 = now_ms(), ms;
		bool shown = strcmp(flips[i].mode, "8192x8192") != 0;

		snprintf(cmd, sizeof(cmd), "tinymode %s", flips[i].mode);
		out = run_as_root(cmd);
		snprintf(want, sizeof(want), "tinymode: %s pid=", flips[i].mode);
		if (!strstr(out, want))
			fail_msg("%s said: %s", cmd, out);
		free(out);
		expect_huge_screen(flips[i].w, flips[i].h, flips[i].top_left);
		print_message("%-9s -> screenshot %dx%d%s after %lld ms; gateway RSS %ld KiB\n",
			      flips[i].mode, flips[i].w, flips[i].h,
			      shown ? "" : " (QEMU refused it)", (long long)(now_ms() - t0),
			      gateway_proc_rss_kib(&gw));
		ms = serve_other();
		if (ms > during)
			during = ms;
		sample_rss();
	}
	/* Flips in a row, big to small: QEMU ends a VNC client whose queue
	 * outgrows five updates of the new size, and the mirror connects
	 * again (display/mirror.c reconnect). */
	free(run_as_root("for i in 1 2 3 4; do tinymode 2560x2048; tinymode 640x480; done"));
	expect_huge_screen(640, 480, GREEN);
	print_message("8 flips between 2560x2048 and 640x480: mirrored; gateway RSS %ld KiB\n",
		      gateway_proc_rss_kib(&gw));
	/* The guest gives the screen back: tinyfb's pattern at 1280x800. */
	free(run_as_root("tinymode off"));
	expect_huge_screen(TINY_W, TINY_H, GREEN);
	huge_screenshot(&img);
	assert_true(ppm_close(ppm_pixel(&img, TINY_W / 2, 88), 0x00FFFF, 8));
	ppm_free(&img);
	after = serve_other();
	usleep(500 * 1000);
	rss_after = gateway_proc_rss_kib(&gw);
	print_message("gateway RSS: %ld KiB idle, %ld KiB at most while huge (+%ld KiB), "
		      "%ld KiB after (+%ld KiB)\n",
		      rss0, rss_peak, rss_peak - rss0, rss_after, rss_after - rss0);
	print_message("slowest call of the other session: %lld ms before, %lld ms during, "
		      "%lld ms after\n",
		      (long long)before, (long long)during, (long long)after);
	assert_true(rss_peak - rss0 < RSS_BOUND_KIB);
#if !defined(__SANITIZE_ADDRESS__)
	assert_true(rss_after - rss0 < RSS_AFTER_KIB);
#endif
	assert_true(during < OTHER_CALL_MS);
	/* Both sessions are still there and ready. */
	for (int k = 0; k < 2; k++) {
		char path[128];
		struct http_resp r;

		snprintf(path, sizeof(path), "/v1/sessions/%s", k ? other.id : huge.id);
		assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, gw.key, NULL, 0,
					      30, &r),
				 0);
		assert_int_equal(r.status, 200);
		assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ready");
		http_resp_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_huge_resolution),
	};

	return cmocka_run_group_tests_name("a guest at a huge resolution", tests, setup, teardown);
}
