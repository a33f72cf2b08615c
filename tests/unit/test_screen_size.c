/* tests/unit/test_screen_size.c: a session's screen size as its guest's
 * frames show it (gateway/session/screen_size.c): a new frame size is taken
 * as it is; past what QEMU's VNC server shows (2560x2048) the session's own
 * size, or the size the guest said it set, is kept when the frame agrees;
 * the guest's word wins only when the frame agrees with it. */
#include "display/mirror.h"
#include "gateway/session/screen_size.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define NONE ((struct screen_size){ 0, 0 })

static struct screen_size sz(int w, int h)
{
	return (struct screen_size){ w, h };
}

/* follow() with its answer checked: changed or not, and the size. */
static void expect(struct screen_size cur, struct screen_size said, struct screen_size frame,
		   bool changed, int w, int h)
{
	struct screen_size out = { -1, -1 };

	assert_int_equal(screen_size_follow(cur, said, frame, &out), changed);
	assert_int_equal(out.width, w);
	assert_int_equal(out.height, h);
}

static void test_fits(void **state)
{
	(void)state;
	assert_int_equal(DISPLAY_MIRROR_MAX_WIDTH, 2560);
	assert_int_equal(DISPLAY_MIRROR_MAX_HEIGHT, 2048);
	assert_true(screen_size_fits(sz(1280, 800), sz(1280, 800)));
	assert_false(screen_size_fits(sz(1280, 800), sz(800, 600)));
	assert_false(screen_size_fits(sz(1280, 800), sz(1280, 801)));
	/* QEMU shows the top-left 2560x2048 of a larger screen */
	assert_true(screen_size_fits(sz(3840, 2160), sz(2560, 2048)));
	assert_true(screen_size_fits(sz(2560, 2048), sz(2560, 2048)));
	assert_true(screen_size_fits(sz(5120, 1080), sz(2560, 1080)));
	assert_false(screen_size_fits(sz(3840, 2160), sz(3840, 2160)));
	assert_false(screen_size_fits(sz(2559, 2160), sz(2560, 2048)));
	assert_false(screen_size_fits(NONE, sz(0, 0)));
}

static void test_follows_the_frame(void **state)
{
	(void)state;
	expect(sz(1280, 800), NONE, sz(1280, 800), false, 1280, 800);
	expect(sz(1280, 800), NONE, sz(800, 600), true, 800, 600);
	expect(sz(800, 600), NONE, sz(1280, 800), true, 1280, 800);
	expect(sz(1280, 800), NONE, sz(64, 64), true, 64, 64);
	expect(sz(1280, 800), NONE, sz(1920, 1080), true, 1920, 1080);
	/* a frame of no size says nothing */
	expect(sz(1280, 800), NONE, sz(0, 0), false, 1280, 800);
	expect(sz(1280, 800), sz(800, 600), sz(0, 600), false, 1280, 800);
}

static void test_past_what_qemu_shows(void **state)
{
	(void)state;
	/* a session made at 3840x2160 keeps it: QEMU shows 2560x2048 of it */
	expect(sz(3840, 2160), NONE, sz(2560, 2048), false, 3840, 2160);
	/* one side below QEMU's most is exact, the other kept */
	expect(sz(3840, 2160), NONE, sz(2560, 1080), true, 3840, 1080);
	expect(sz(3840, 2160), NONE, sz(1920, 2048), true, 1920, 2160);
	/* from a smaller screen: at least QEMU's most, nothing more known */
	expect(sz(1280, 800), NONE, sz(2560, 2048), true, 2560, 2048);
	expect(sz(1280, 800), NONE, sz(2560, 900), true, 2560, 900);
	/* back below: exact again */
	expect(sz(3840, 2160), NONE, sz(1280, 800), true, 1280, 800);
}

static void test_what_the_guest_said(void **state)
{
	(void)state;
	/* the frame agrees: the guest's word, also past what QEMU shows */
	expect(sz(1280, 800), sz(3840, 2160), sz(2560, 2048), true, 3840, 2160);
	expect(sz(3840, 2160), sz(3000, 2100), sz(2560, 2048), true, 3000, 2100);
	expect(sz(1280, 800), sz(1024, 768), sz(1024, 768), true, 1024, 768);
	expect(sz(1024, 768), sz(1024, 768), sz(1024, 768), false, 1024, 768);
	/* the frame does not agree (yet, or any more): the frame rules */
	expect(sz(1280, 800), sz(1024, 768), sz(1280, 800), false, 1280, 800);
	expect(sz(1280, 800), sz(1024, 768), sz(800, 600), true, 800, 600);
	expect(sz(1280, 800), sz(3840, 2160), sz(2560, 1440), true, 2560, 1440);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fits),
		cmocka_unit_test(test_follows_the_frame),
		cmocka_unit_test(test_past_what_qemu_shows),
		cmocka_unit_test(test_what_the_guest_said),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
