/* tests/integration/test_display_qemu.c: the mirror against real QEMU with
 * the tiny guest: the mirrored frame equals a QMP screendump pixel for
 * pixel, a click's red/white mark shows at the exact pixel, and after 5 s of
 * idle screen (QEMU's refresh backed off) a fresh frame still comes fast. */
#include "common/fsutil.h"
#include "display/mirror.h"
#include "tests/lib/guest.h"
#include "tests/lib/ppm.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define W 1280
#define H 800

static struct test_guest guest;
static struct display_mirror *mirror;
static size_t cursor;

static int setup(void **state)
{
	char path[512], err[512];

	(void)state;
	if (test_guest_boot(&guest, "tiny", W, H, NULL, NULL, 60000) < 0)
		return -1;
	vmm_vm_socket(guest.vm, VMM_SOCKET_VNC, path, sizeof(path));
	if (display_mirror_start(path, NULL, NULL, &mirror, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	display_mirror_stop(mirror);
	test_guest_destroy(&guest);
	return 0;
}

/* Number of pixels where the mirror and a screendump differ. */
static long diff_with_screendump(struct display_frame *f, int *fx, int *fy)
{
	struct ppm img;
	long diff = 0;

	assert_int_equal(test_guest_screen(&guest, &img), 0);
	assert_int_equal(img.width, f->width);
	assert_int_equal(img.height, f->height);
	for (int y = 0; y < img.height; y++)
		for (int x = 0; x < img.width; x++)
			if (ppm_pixel(&img, x, y) != display_frame_pixel(f, x, y) && !diff++) {
				*fx = x;
				*fy = y;
			}
	ppm_free(&img);
	return diff;
}

static void test_frame_equals_screendump(void **state)
{
	struct display_frame *f = NULL;
	long diff = -1;
	int x = 0, y = 0;

	(void)state;
	/* The pattern is drawn as "ready" prints: let both copies catch up. */
	for (int tries = 0; tries < 30 && diff != 0; tries++) {
		display_frame_unref(f);
		assert_int_equal(display_mirror_wait_fresh(mirror, 5000), 0);
		f = display_mirror_latest(mirror);
		assert_non_null(f);
		diff = diff_with_screendump(f, &x, &y);
		if (diff)
			usleep(100 * 1000);
	}
	if (diff)
		fail_msg("%ld pixels differ, first at (%d,%d)", diff, x, y);
	assert_int_equal(f->width, W);
	assert_int_equal(f->height, H);
	assert_int_equal(display_frame_pixel(f, 0, 0), 0x00FF00);
	display_frame_unref(f);
}

static void test_click_mark_in_mirror(void **state)
{
	static const int points[][2] = { { 321, 457 }, { W - 1, H - 1 }, { 0, 0 }, { 1277, 3 } };

	(void)state;
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		int x = points[i][0], y = points[i][1];
		struct display_frame *f = NULL;
		int64_t t0;

		assert_int_equal(test_guest_click(&guest, x, y, "left"), 0);
		assert_non_null(test_guest_wait_marker(&guest, &cursor, "event", "click", 10000));
		t0 = fs_now_ms();
		for (int tries = 0; tries < 50; tries++) {
			display_frame_unref(f);
			assert_int_equal(display_mirror_wait_fresh(mirror, 5000), 0);
			f = display_mirror_latest(mirror);
			if (display_frame_pixel(f, x, y) == 0xFFFFFF)
				break;
			usleep(20 * 1000);
		}
		print_message("click (%d,%d) visible in the mirror %ld ms after the guest saw it\n",
			      x, y, (long)(fs_now_ms() - t0));
		if (display_frame_pixel(f, x, y) != 0xFFFFFF)
			fail_msg("no white centre at (%d,%d): %06x", x, y,
				 display_frame_pixel(f, x, y));
		for (int dy = -2; dy <= 2; dy++)
			for (int dx = -2; dx <= 2; dx++) {
				int px = x + dx, py = y + dy;

				if ((dx || dy) && px >= 0 && py >= 0 && px < W && py < H &&
				    display_frame_pixel(f, px, py) != 0xFF0000)
					fail_msg("(%d,%d) near click is %06x, want red", px, py,
						 display_frame_pixel(f, px, py));
			}
		display_frame_unref(f);
	}
}

static void test_fresh_after_idle(void **state)
{
	struct display_frame *f;
	int64_t t0, t1, t2;
	int x = 0, y = 0;

	(void)state;
	/* 5 s without input or changes: QEMU's refresh interval has backed off
	 * (30 ms + 50 ms per idle refresh, up to 3 s). */
	sleep(5);
	t0 = fs_now_ms();
	assert_int_equal(display_mirror_wait_fresh(mirror, 5000), 0);
	t1 = fs_now_ms();
	print_message("fresh after 5 s idle, nothing changed: %ld ms\n", (long)(t1 - t0));
	assert_true(t1 - t0 < 500);
	sleep(5);
	/* A change the mirror has not been told about yet, then fresh. */
	assert_int_equal(test_guest_click(&guest, 600, 300, "left"), 0);
	assert_non_null(test_guest_wait_marker(&guest, &cursor, "event", "click", 10000));
	t1 = fs_now_ms();
	assert_int_equal(display_mirror_wait_fresh(mirror, 5000), 0);
	t2 = fs_now_ms();
	f = display_mirror_latest(mirror);
	print_message("fresh after 5 s idle with a change pending: %ld ms (pixel %06x)\n",
		      (long)(t2 - t1), display_frame_pixel(f, 600, 300));
	assert_true(t2 - t1 < 500);
	assert_int_equal(diff_with_screendump(f, &x, &y), 0);
	display_frame_unref(f);
	/* The nudge never reaches the guest as a key. */
	assert_null(test_guest_wait_marker(&guest, &cursor, "event", "key", 500));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_equals_screendump),
		cmocka_unit_test(test_click_mark_in_mirror),
		cmocka_unit_test(test_fresh_after_idle),
	};

	return cmocka_run_group_tests_name("display mirror, tiny guest", tests, setup, teardown);
}
