/* tests/unit/test_progress.c: the timeline of a guest's start
 * (gateway/session/progress.c): phases in order with their times, the JSON
 * while under way and once over, and what it ignores (a repeated phase,
 * anything after the end, a timeline never begun, a full one). */
#include "gateway/session/progress.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static const char *phase_at(const json_t *list, size_t i, json_int_t *ms)
{
	json_t *o = json_array_get(list, i);

	*ms = json_integer_value(json_object_get(o, "ms"));
	return json_string_value(json_object_get(o, "phase"));
}

static void test_under_way_and_ready(void **state)
{
	struct progress p;
	json_int_t ms;
	json_t *j;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_false(progress_begun(&p));
	assert_null(progress_json(&p, 5000));
	progress_begin(&p, PROGRESS_QUEUED, 1000);
	progress_enter(&p, PROGRESS_PREPARING, 1010);
	progress_enter(&p, PROGRESS_PREPARING, 1020); /* already in it: nothing */
	progress_enter(&p, PROGRESS_SPAWNING, 1100);
	progress_enter(&p, PROGRESS_BOOTING, 1300);
	j = progress_json(&p, 2000);
	assert_string_equal(json_string_value(json_object_get(j, "phase")), "booting_guest");
	assert_int_equal(json_integer_value(json_object_get(j, "phase_ms")), 700);
	assert_int_equal(json_integer_value(json_object_get(j, "elapsed_ms")), 1000);
	assert_int_equal(json_array_size(json_object_get(j, "phases")), 3);
	assert_string_equal(phase_at(json_object_get(j, "phases"), 0, &ms), "queued");
	assert_int_equal(ms, 10);
	assert_string_equal(phase_at(json_object_get(j, "phases"), 1, &ms), "preparing");
	assert_int_equal(ms, 90);
	assert_string_equal(phase_at(json_object_get(j, "phases"), 2, &ms), "spawning");
	assert_int_equal(ms, 200);
	json_decref(j);

	progress_enter(&p, PROGRESS_SCREEN, 2500);
	progress_end(&p, true, 2600);
	progress_enter(&p, PROGRESS_SPAWNING, 2700); /* over: nothing */
	progress_end(&p, false, 2800); /* over already */
	j = progress_json(&p, 9000);
	assert_string_equal(json_string_value(json_object_get(j, "phase")), "ready");
	assert_null(json_object_get(j, "phase_ms"));
	assert_null(json_object_get(j, "failed_in"));
	assert_int_equal(json_integer_value(json_object_get(j, "elapsed_ms")), 1600);
	assert_int_equal(json_array_size(json_object_get(j, "phases")), 5);
	assert_string_equal(phase_at(json_object_get(j, "phases"), 3, &ms), "booting_guest");
	assert_int_equal(ms, 1200);
	assert_string_equal(phase_at(json_object_get(j, "phases"), 4, &ms), "connecting_screen");
	assert_int_equal(ms, 100);
	json_decref(j);
}

static void test_failed_and_clock_steps(void **state)
{
	struct progress p;
	json_int_t ms, sum = 0;
	json_t *j;
	size_t i;

	(void)state;
	progress_begin(&p, PROGRESS_SAVING, 500);
	progress_enter(&p, PROGRESS_LOADING, 400); /* a clock read before the start: no -100 */
	progress_end(&p, false, 900);
	j = progress_json(&p, 1000);
	assert_string_equal(json_string_value(json_object_get(j, "phase")), "failed");
	assert_string_equal(json_string_value(json_object_get(j, "failed_in")), "loading_state");
	assert_string_equal(phase_at(json_object_get(j, "phases"), 0, &ms), "saving_state");
	assert_int_equal(ms, 0);
	assert_string_equal(phase_at(json_object_get(j, "phases"), 1, &ms), "loading_state");
	assert_int_equal(ms, 400);
	json_decref(j);

	/* A full timeline keeps counting into its last step. */
	progress_begin(&p, PROGRESS_QUEUED, 1);
	for (int k = 0; k < 3 * PROGRESS_MAX_STEPS; k++)
		progress_enter(&p, k % 2 ? PROGRESS_SPAWNING : PROGRESS_MONITOR, 10 * (k + 1));
	progress_end(&p, true, 1000);
	j = progress_json(&p, 1000);
	assert_int_equal(json_array_size(json_object_get(j, "phases")), PROGRESS_MAX_STEPS);
	for (i = 0; i < PROGRESS_MAX_STEPS; i++) {
		phase_at(json_object_get(j, "phases"), i, &ms);
		sum += ms;
	}
	assert_int_equal(sum, json_integer_value(json_object_get(j, "elapsed_ms")));
	assert_int_equal(sum, 999);
	json_decref(j);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(progress_phase_name(PROGRESS_MONITOR), "connecting_monitor");
	assert_string_equal(progress_phase_name((enum progress_phase)99), "unknown");
	assert_string_equal(progress_describe("booting_guest"), "waiting for the guest");
	assert_string_equal(progress_describe("warp_drive"), "warp_drive");
	assert_int_equal(progress_of_step(VMM_STEP_RUN_DIR), PROGRESS_PREPARING);
	assert_int_equal(progress_of_step(VMM_STEP_MONITOR), PROGRESS_MONITOR);
	assert_int_equal(progress_of_step(VMM_STEP_LOAD), PROGRESS_LOADING);
	assert_int_equal(progress_of_step(VMM_STEP_SAVE), PROGRESS_SAVING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_under_way_and_ready),
		cmocka_unit_test(test_failed_and_clock_steps),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
