/* tests/unit/test_display_frame.c: refcounted frames, damage bookkeeping and
 * the "screen settled" state machine, without any VNC server. */
#include "display/frame.h"
#include "display/settle.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_frame_refcount_and_pixels(void **state)
{
	struct display_frame *f = display_frame_create(4, 3), *g;

	(void)state;
	assert_non_null(f);
	assert_int_equal(f->stride, 16);
	assert_int_equal(display_frame_pixel(f, 0, 0), 0);
	f->pixels[1 * 16 + 2 * 4 + 0] = 0x12; /* R G B X at (2, 1) */
	f->pixels[1 * 16 + 2 * 4 + 1] = 0x34;
	f->pixels[1 * 16 + 2 * 4 + 2] = 0x56;
	assert_int_equal(display_frame_pixel(f, 2, 1), 0x123456);
	assert_int_equal(display_frame_pixel(f, 4, 0), 0xFFFFFFFFu);
	assert_int_equal(display_frame_pixel(f, -1, 0), 0xFFFFFFFFu);
	g = display_frame_ref(f);
	assert_ptr_equal(g, f);
	assert_int_equal(atomic_load(&f->refs), 2);
	display_frame_unref(g);
	assert_int_equal(atomic_load(&f->refs), 1);
	display_frame_unref(f); /* frees; ASan checks */
	display_frame_unref(NULL);
	assert_null(display_frame_ref(NULL));
	assert_null(display_frame_create(0, 10));
	assert_null(display_frame_create(10, -1));
}

static void test_size_limits(void **state)
{
	struct display_frame *f;

	(void)state;
	assert_true(display_size_ok(1, 1));
	assert_true(display_size_ok(DISPLAY_MAX_SIDE, DISPLAY_MAX_PIXELS / DISPLAY_MAX_SIDE));
	assert_true(display_size_ok(4096, 4096));
	assert_false(display_size_ok(DISPLAY_MAX_SIDE + 1, 1));
	assert_false(display_size_ok(1, DISPLAY_MAX_SIDE + 1));
	assert_false(display_size_ok(4097, 4096)); /* sides fine, too many pixels */
	assert_false(display_size_ok(16384, 16384));
	assert_false(display_size_ok(0, 10));
	assert_false(display_size_ok(10, -1));
	assert_null(display_frame_create(16384, 16384));
	assert_null(display_frame_create(DISPLAY_MAX_SIDE + 1, 2));
	assert_null(display_frame_create(5000, 4000));
	f = display_frame_create(DISPLAY_MAX_SIDE, DISPLAY_MAX_PIXELS / DISPLAY_MAX_SIDE);
	assert_non_null(f);
	assert_int_equal(f->stride, DISPLAY_MAX_SIDE * 4);
	display_frame_unref(f);
}

static void test_damage_merges_and_clips(void **state)
{
	struct display_damage d;

	(void)state;
	display_damage_clear(&d);
	display_damage_add(&d, (struct display_rect){ 10, 10, 16, 1 }, 100, 100);
	display_damage_add(&d, (struct display_rect){ 10, 11, 16, 1 }, 100, 100); /* row below */
	assert_int_equal(d.n, 1);
	assert_int_equal(d.rects[0].h, 2);
	display_damage_add(&d, (struct display_rect){ 12, 10, 2, 2 }, 100, 100); /* inside */
	assert_int_equal(d.n, 1);
	display_damage_add(&d, (struct display_rect){ 50, 50, 5, 5 }, 100, 100); /* apart */
	assert_int_equal(d.n, 2);
	display_damage_add(&d, (struct display_rect){ 0, 0, 60, 60 }, 100, 100); /* swallows both */
	assert_int_equal(d.n, 1);
	assert_int_equal(d.rects[0].w, 60);
	display_damage_add(&d, (struct display_rect){ 90, 90, 50, 50 }, 100, 100); /* clipped */
	assert_int_equal(d.n, 2);
	assert_int_equal(d.rects[1].w, 10);
	assert_int_equal(d.rects[1].h, 10);
	display_damage_add(&d, (struct display_rect){ 200, 0, 5, 5 }, 100, 100); /* outside */
	assert_int_equal(d.n, 2);
	assert_int_equal(d.bounds.x, 0);
	assert_int_equal(d.bounds.w, 100);
	assert_int_equal(d.bounds.h, 100);
}

static void test_damage_collapses_to_bounds(void **state)
{
	struct display_damage d;

	(void)state;
	display_damage_clear(&d);
	for (int i = 0; i < DISPLAY_DAMAGE_MAX + 3; i++)
		display_damage_add(&d, (struct display_rect){ i * 10, i * 10, 2, 2 }, 1000, 1000);
	assert_true(d.n <= DISPLAY_DAMAGE_MAX);
	/* Every rect added lies inside one of the kept rects. */
	for (int i = 0; i < DISPLAY_DAMAGE_MAX + 3; i++) {
		struct display_rect r = { i * 10, i * 10, 2, 2 };
		int inside = 0;

		for (int k = 0; k < d.n; k++)
			inside |= r.x >= d.rects[k].x && r.y >= d.rects[k].y &&
				  r.x + r.w <= d.rects[k].x + d.rects[k].w &&
				  r.y + r.h <= d.rects[k].y + d.rects[k].h;
		assert_true(inside);
	}
	assert_int_equal(d.bounds.x, 0);
	assert_int_equal(d.bounds.w, (DISPLAY_DAMAGE_MAX + 2) * 10 + 2);
}

static void test_rect_helpers(void **state)
{
	struct display_rect a = { 0, 0, 10, 10 }, b = { 9, 9, 2, 2 }, c = { 10, 0, 5, 5 },
			    e = { 0 };

	(void)state;
	assert_true(display_rect_intersects(a, b));
	assert_false(display_rect_intersects(a, c)); /* touching is not intersecting */
	assert_false(display_rect_intersects(a, e));
	b = display_rect_union(a, c);
	assert_int_equal(b.w, 15);
	assert_int_equal(b.h, 10);
	b = display_rect_union(e, c);
	assert_int_equal(b.x, 10);
}

static void test_settle_quiet_already(void **state)
{
	struct display_settle s;

	(void)state;
	/* Last change 900 ms before the start, quiet 500: settled at once. */
	display_settle_init(&s, 1000, 100, 500, 3000);
	assert_int_equal(display_settle_poll(&s, 1000), 0);
	assert_true(s.result.settled);
	assert_int_equal(s.result.waited_ms, 0);
	assert_int_equal(s.result.quiet_ms, 900);
	/* Never changed at all: settled too. */
	display_settle_init(&s, 1000, INT64_MIN, 500, 3000);
	assert_int_equal(display_settle_poll(&s, 1000), 0);
	assert_true(s.result.settled);
}

static void test_settle_waits_for_quiet(void **state)
{
	struct display_settle s;

	(void)state;
	display_settle_init(&s, 1000, 900, 500, 3000);
	assert_int_equal(display_settle_poll(&s, 1000), 400); /* until 1400 */
	display_settle_change(&s, 1200);
	assert_int_equal(display_settle_poll(&s, 1300), 400); /* until 1700 */
	display_settle_change(&s, 1100); /* older: ignored */
	assert_int_equal(display_settle_poll(&s, 1650), 50);
	assert_int_equal(display_settle_poll(&s, 1700), 0);
	assert_true(s.done);
	assert_true(s.result.settled);
	assert_int_equal(s.result.waited_ms, 700);
	assert_int_equal(s.result.quiet_ms, 500);
	display_settle_change(&s, 5000); /* no effect once decided */
	assert_int_equal(display_settle_poll(&s, 6000), 0);
	assert_int_equal(s.result.waited_ms, 700);
}

static void test_settle_times_out(void **state)
{
	struct display_settle s;
	int64_t now = 0;

	(void)state;
	display_settle_init(&s, 0, 0, 300, 1000);
	/* A change every 100 ms: never quiet; decided at the deadline. */
	for (;;) {
		int wait;

		display_settle_change(&s, now);
		wait = display_settle_poll(&s, now);
		if (!wait)
			break;
		assert_true(wait <= 300);
		now += 100;
	}
	assert_false(s.result.settled);
	assert_int_equal(s.result.waited_ms, 1000);
	assert_int_equal(s.result.quiet_ms, 0);
	/* The wait never overshoots the deadline. */
	display_settle_init(&s, 0, 900, 300, 1000);
	assert_int_equal(display_settle_poll(&s, 950), 50);
	/* quiet 0 is settled immediately. */
	display_settle_init(&s, 0, 0, 0, 1000);
	assert_int_equal(display_settle_poll(&s, 0), 0);
	assert_true(s.result.settled);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_refcount_and_pixels),
		cmocka_unit_test(test_size_limits),
		cmocka_unit_test(test_damage_merges_and_clips),
		cmocka_unit_test(test_damage_collapses_to_bounds),
		cmocka_unit_test(test_rect_helpers),
		cmocka_unit_test(test_settle_quiet_already),
		cmocka_unit_test(test_settle_waits_for_quiet),
		cmocka_unit_test(test_settle_times_out),
	};

	return cmocka_run_group_tests_name("display frame/settle", tests, NULL, NULL);
}
