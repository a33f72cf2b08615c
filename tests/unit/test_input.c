/* tests/unit/test_input.c: pixel -> absolute axis mapping and the QMP
 * input-send-event JSON (vmm-qemu/input.c). */
#include "vmm-qemu/input.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Every pixel of every plausible axis length maps back to itself under the
 * guest's mapping (libinput: floor(abs * size / (max + 1))). */
static void test_abs_round_trip_every_pixel(void **state)
{
	static const int sizes[] = { 200, 320, 768, 800, 1024, 1080, 1280, 1366, 1920, 2160, 3840 };

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int size = sizes[s];

		for (int p = 0; p < size; p++) {
			int abs = vmm_input_abs(p, size);
			int back = (int)((long long)abs * size / (VMM_ABS_MAX + 1));

			if (abs < 0 || abs > VMM_ABS_MAX || back != p)
				fail_msg("size %d pixel %d -> abs %d -> pixel %d", size, p, abs,
					 back);
		}
	}
}

static void test_abs_clamps(void **state)
{
	(void)state;
	assert_int_equal(vmm_input_abs(-5, 1280), vmm_input_abs(0, 1280));
	assert_int_equal(vmm_input_abs(5000, 1280), vmm_input_abs(1279, 1280));
	assert_int_equal(vmm_input_abs(0, 0), 0);
	assert_int_equal(vmm_input_abs(0, 1), 16384);
}

static void expect_json(json_t *j, const char *want)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);

	assert_non_null(s);
	assert_string_equal(s, want);
	free(s);
	json_decref(j);
}

static void test_event_json(void **state)
{
	(void)state;
	expect_json(vmm_input_move(0, 799, 1280, 800),
		    "{\"events\":[{\"data\":{\"axis\":\"x\",\"value\":12},\"type\":\"abs\"},"
		    "{\"data\":{\"axis\":\"y\",\"value\":32747},\"type\":\"abs\"}]}");
	expect_json(
		vmm_input_button("left", true),
		"{\"events\":[{\"data\":{\"button\":\"left\",\"down\":true},\"type\":\"btn\"}]}");
	expect_json(
		vmm_input_key("shift", false),
		"{\"events\":[{\"data\":{\"down\":false,\"key\":{\"data\":\"shift\",\"type\":\"qcode\"}},"
		"\"type\":\"key\"}]}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abs_round_trip_every_pixel),
		cmocka_unit_test(test_abs_clamps),
		cmocka_unit_test(test_event_json),
	};

	return cmocka_run_group_tests_name("input", tests, NULL, NULL);
}
