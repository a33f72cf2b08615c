/* tests/integration/test_tiny.c: the tiny guest under real QEMU: it boots,
 * its screen shows its test pattern, QMP clicks land on exact pixels
 * (corners included) and typed keys arrive, also when queued without
 * waiting (vmm_vm_input). One guest serves the group. */
#include "tests/lib/guest.h"
#include "tests/lib/ppm.h"
#include "vmm-qemu/input.h"

#include <errno.h>

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
static size_t cursor; /* markers before this index were consumed */

static int setup(void **state)
{
	(void)state;
	return test_guest_boot(&guest, "tiny", W, H, NULL, NULL, 60000) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	test_guest_destroy(&guest);
	return 0;
}

static void test_screen_shows_pattern(void **state)
{
	static const struct {
		int x, y;
		uint32_t rgb;
	} probes[] = {
		{ 0, 0, 0x00FF00 },	  { 63, 63, 0x00FF00 },	    { W - 1, 0, 0x0000FF },
		{ W - 64, 63, 0x0000FF }, { 0, H - 1, 0xFFFF00 },   { W - 1, H - 1, 0xFF00FF },
		{ 64, 80, 0x00FFFF },	  { W - 65, 95, 0x00FFFF }, { 64, 64, 0x203040 },
		{ W / 2, 200, 0x203040 }, { 20, H / 2, 0x000000 },
	};
	struct ppm img;
	int x0, y0, x1, y1;

	(void)state;
	/* "ready" is printed as the pattern is drawn; QEMU's copy of the screen
	 * follows shortly after. */
	for (int tries = 0;; tries++) {
		assert_int_equal(test_guest_screen(&guest, &img), 0);
		if (ppm_pixel(&img, 0, 0) == 0x00FF00 || tries == 50)
			break;
		ppm_free(&img);
		usleep(100 * 1000);
	}
	assert_int_equal(img.width, W);
	assert_int_equal(img.height, H);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		if (ppm_pixel(&img, probes[i].x, probes[i].y) != probes[i].rgb)
			fail_msg("pixel (%d,%d) is %06x, want %06x", probes[i].x, probes[i].y,
				 ppm_pixel(&img, probes[i].x, probes[i].y), probes[i].rgb);
	assert_true(ppm_find_bbox(&img, 0x00FF00, 0, &x0, &y0, &x1, &y1));
	assert_int_equal(x0, 0);
	assert_int_equal(y0, 0);
	assert_int_equal(x1, 63);
	assert_int_equal(y1, 63);
	ppm_free(&img);
}

/* Clicks (x, y); checks the guest saw exactly that and drew its mark there. */
static void click_lands(int x, int y)
{
	const struct vmm_marker *m;
	char want[16];
	struct ppm img;
	int tries = 0;

	assert_int_equal(test_guest_click(&guest, x, y, "left"), 0);
	m = test_guest_wait_marker(&guest, &cursor, "event", "click", 10000);
	assert_non_null(m);
	snprintf(want, sizeof(want), "%d", x);
	if (strcmp(vmm_marker_get(m, "x"), want))
		fail_msg("clicked x=%d, guest saw x=%s", x, vmm_marker_get(m, "x"));
	snprintf(want, sizeof(want), "%d", y);
	if (strcmp(vmm_marker_get(m, "y"), want))
		fail_msg("clicked y=%d, guest saw y=%s", y, vmm_marker_get(m, "y"));
	/* The mark reaches QEMU's screen asynchronously: retry briefly. */
	for (;;) {
		assert_int_equal(test_guest_screen(&guest, &img), 0);
		if (ppm_pixel(&img, x, y) == 0xFFFFFF || ++tries == 20)
			break;
		ppm_free(&img);
	}
	if (ppm_pixel(&img, x, y) != 0xFFFFFF)
		fail_msg("no white centre at (%d,%d): %06x", x, y, ppm_pixel(&img, x, y));
	/* Red around the centre, clipped at the screen's edges. */
	for (int dy = -2; dy <= 2; dy++)
		for (int dx = -2; dx <= 2; dx++) {
			int px = x + dx, py = y + dy;

			if ((dx || dy) && px >= 0 && py >= 0 && px < W && py < H &&
			    ppm_pixel(&img, px, py) != 0xFF0000)
				fail_msg("(%d,%d) near click (%d,%d) is %06x, want red", px, py, x,
					 y, ppm_pixel(&img, px, py));
		}
	ppm_free(&img);
}

static void test_clicks_land_exactly(void **state)
{
	static const int points[][2] = { { 0, 0 },     { W - 1, H - 1 }, { W - 1, 0 },
					 { 0, H - 1 }, { W / 2, H / 2 }, { 321, 457 },
					 { 1, 798 },   { 1277, 3 } };

	(void)state;
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
		click_lands(points[i][0], points[i][1]);
}

static void test_other_buttons(void **state)
{
	const struct vmm_marker *m;

	(void)state;
	assert_int_equal(test_guest_click(&guest, 700, 300, "right"), 0);
	m = test_guest_wait_marker(&guest, &cursor, "event", "click", 10000);
	assert_non_null(m);
	assert_string_equal(vmm_marker_get(m, "button"), "right");
	assert_int_equal(test_guest_click(&guest, 701, 301, "middle"), 0);
	m = test_guest_wait_marker(&guest, &cursor, "event", "click", 10000);
	assert_non_null(m);
	assert_string_equal(vmm_marker_get(m, "button"), "middle");
}

static void test_typed_keys_arrive(void **state)
{
	const struct vmm_marker *m;

	(void)state;
	assert_int_equal(test_guest_key(&guest, NULL, "h"), 0);
	m = test_guest_wait_marker(&guest, &cursor, "event", "key", 10000);
	assert_non_null(m);
	assert_string_equal(vmm_marker_get(m, "code"), "35"); /* KEY_H */
	assert_int_equal(test_guest_key(&guest, NULL, "i"), 0);
	assert_int_equal(test_guest_key(&guest, "shift", "1"), 0);
	m = test_guest_wait_marker(&guest, &cursor, "text", "hi!", 10000);
	assert_non_null(m);
	assert_int_equal(test_guest_key(&guest, NULL, "ret"), 0);
	m = test_guest_wait_marker(&guest, &cursor, "line", "hi!", 10000);
	assert_non_null(m);
}

/* Moves input.h's events into one array. */
static void append_events(json_t *all, json_t *built)
{
	assert_non_null(built);
	assert_int_equal(json_array_extend(all, json_object_get(built, "events")), 0);
	json_decref(built);
}

static void test_input_queued(void **state)
{
	const struct vmm_marker *m;
	json_t *events = json_array();
	char err[512];

	(void)state;
	/* One array: move, press, release; sent without waiting for QEMU. */
	append_events(events, vmm_input_move(411, 233, W, H));
	append_events(events, vmm_input_button("left", true));
	append_events(events, vmm_input_button("left", false));
	assert_int_equal(vmm_vm_input(guest.vm, events, err, sizeof(err)), 0);
	m = test_guest_wait_marker(&guest, &cursor, "event", "click", 10000);
	assert_non_null(m);
	assert_string_equal(vmm_marker_get(m, "x"), "411");
	assert_string_equal(vmm_marker_get(m, "y"), "233");
	assert_string_equal(vmm_marker_get(m, "button"), "left");
	/* input.h's objects as they come. */
	assert_int_equal(vmm_vm_input(guest.vm, vmm_input_move(90, 80, W, H), err, sizeof(err)), 0);
	assert_int_equal(vmm_vm_input(guest.vm, vmm_input_button("right", true), err, sizeof(err)),
			 0);
	assert_int_equal(vmm_vm_input(guest.vm, vmm_input_button("right", false), err, sizeof(err)),
			 0);
	m = test_guest_wait_marker(&guest, &cursor, "event", "click", 10000);
	assert_non_null(m);
	assert_string_equal(vmm_marker_get(m, "x"), "90");
	assert_string_equal(vmm_marker_get(m, "button"), "right");
	/* Anything else is refused before it reaches QEMU. */
	assert_int_equal(vmm_vm_input(guest.vm, json_string("click"), err, sizeof(err)), -EINVAL);
	assert_int_equal(vmm_vm_input(guest.vm, json_pack("{s:i}", "x", 1), err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(vmm_vm_input(guest.vm, NULL, err, sizeof(err)), -ENOMEM);
	/* The guest is still fine. */
	assert_int_equal(vmm_vm_qmp(guest.vm, "query-status", NULL, NULL, 5000, err, sizeof(err)),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_screen_shows_pattern),
		cmocka_unit_test(test_clicks_land_exactly),
		cmocka_unit_test(test_other_buttons),
		cmocka_unit_test(test_typed_keys_arrive),
		cmocka_unit_test(test_input_queued),
	};

	return cmocka_run_group_tests_name("tiny guest", tests, setup, teardown);
}
