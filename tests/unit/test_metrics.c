/* tests/unit/test_metrics.c: the metrics' pure parts: what counting does to
 * the rendered text (exact series and values, cumulative buckets, one
 * HELP/TYPE per family), label escaping, the /proc parsers, and a scrape
 * for the token-less door naming no session. */
#include "gateway/core/metrics.h"
#include "gateway/core/metrics_proc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

static const char *const routes[] = { "not_found", "health", "session_screenshot" };

static char *render(void)
{
	struct metrics_now now = { .sessions_ready = 2, .sessions_paused_disk = 1, .viewers = 3 };

	now.queues[METRICS_QUEUE_GUEST] = (struct work_queue_stats){
		.queued = 4, .running = 2, .submitted = 17, .rejected = 3
	};
	now.queues[METRICS_QUEUE_BULK] = (struct work_queue_stats){ .finished = 1, .cancelled = 5 };
	struct bytebuf b = { 0 };
	char *s;

	assert_int_equal(metrics_render(&now, &b), 0);
	s = malloc(b.len + 1);
	memcpy(s, b.data, b.len);
	s[b.len] = '\0';
	bytebuf_free(&b);
	return s;
}

/* The value of the series named exactly line_start (name and labels). */
static double value(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	fail_msg("no series %s", series);
	return -1;
}

static bool has(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return true;
	return false;
}

static void test_counts_render(void **state)
{
	char *t;

	(void)state;
	metrics_reset();
	metrics_set_routes(routes, 3);
	metrics_http(2, 200, 3000); /* 3 ms */
	metrics_http(2, 200, 700000); /* 0.7 s */
	metrics_http(2, 404, 100);
	metrics_http(1, 418, 100); /* no slot of its own: its class */
	metrics_http(7, 200, 1); /* no such route: ignored */
	metrics_op(METRICS_OP_PAUSE, true, 1500);
	metrics_op(METRICS_OP_PAUSE, false, 10);
	metrics_op(METRICS_OP_DELETE, true, 0);
	metrics_act(METRICS_ACT_ANTHROPIC, true, 20000);
	metrics_act(METRICS_ACT_SCREENSHOT, false, 1);
	metrics_cmd(METRICS_CMD_TIMED_OUT, 60000);
	metrics_stream_frame(1000);
	metrics_stream_frame(24);
	t = render();
	/* the queues, each state and result of each */
	assert_int_equal(value(t, "vitrine_work_jobs{queue=\"guest\",state=\"queued\"}"), 4);
	assert_int_equal(value(t, "vitrine_work_jobs{queue=\"guest\",state=\"running\"}"), 2);
	assert_int_equal(value(t, "vitrine_work_jobs{queue=\"bulk\",state=\"finished\"}"), 1);
	assert_int_equal(value(t, "vitrine_work_jobs{queue=\"encode\",state=\"queued\"}"), 0);
	assert_int_equal(value(t, "vitrine_work_jobs_total{queue=\"guest\",result=\"accepted\"}"),
			 17);
	assert_int_equal(value(t, "vitrine_work_jobs_total{queue=\"guest\",result=\"rejected\"}"),
			 3);
	assert_int_equal(value(t, "vitrine_work_jobs_total{queue=\"bulk\",result=\"cancelled\"}"),
			 5);
	assert_int_equal(
		value(t, "vitrine_http_requests_total{route=\"session_screenshot\",code=\"200\"}"),
		2);
	assert_int_equal(
		value(t, "vitrine_http_requests_total{route=\"session_screenshot\",code=\"404\"}"),
		1);
	assert_int_equal(value(t, "vitrine_http_requests_total{route=\"health\",code=\"4xx\"}"), 1);
	assert_false(has(t, "vitrine_http_requests_total{route=\"not_found\",code=\"200\"}"));
	/* buckets are cumulative: 3 ms and 0.1 ms are <= 0.005, 0.7 s <= 1 */
	assert_int_equal(
		value(t,
		      "vitrine_http_request_duration_seconds_bucket{route=\"session_screenshot\",le=\"0.005\"}"),
		2);
	assert_int_equal(
		value(t,
		      "vitrine_http_request_duration_seconds_bucket{route=\"session_screenshot\",le=\"0.5\"}"),
		2);
	assert_int_equal(
		value(t,
		      "vitrine_http_request_duration_seconds_bucket{route=\"session_screenshot\",le=\"1\"}"),
		3);
	assert_int_equal(
		value(t,
		      "vitrine_http_request_duration_seconds_bucket{route=\"session_screenshot\",le=\"+Inf\"}"),
		3);
	assert_int_equal(
		value(t,
		      "vitrine_http_request_duration_seconds_count{route=\"session_screenshot\"}"),
		3);
	assert_true(
		value(t,
		      "vitrine_http_request_duration_seconds_sum{route=\"session_screenshot\"}") >
			0.7030 &&
		value(t,
		      "vitrine_http_request_duration_seconds_sum{route=\"session_screenshot\"}") <
			0.7032);
	assert_int_equal(value(t, "vitrine_session_operations_total{op=\"pause\",result=\"ok\"}"),
			 1);
	assert_int_equal(value(t,
			       "vitrine_session_operations_total{op=\"pause\",result=\"error\"}"),
			 1);
	assert_int_equal(value(t, "vitrine_session_operations_total{op=\"delete\",result=\"ok\"}"),
			 1);
	assert_int_equal(value(t, "vitrine_session_operation_duration_seconds_count{op=\"pause\"}"),
			 1);
	assert_int_equal(
		value(t,
		      "vitrine_session_operation_duration_seconds_bucket{op=\"pause\",le=\"1\"}"),
		0);
	assert_int_equal(
		value(t,
		      "vitrine_session_operation_duration_seconds_bucket{op=\"pause\",le=\"2.5\"}"),
		1);
	assert_false(has(t, "vitrine_session_operation_duration_seconds_count{op=\"delete\"}"));
	assert_int_equal(value(t, "vitrine_actions_total{kind=\"anthropic\",result=\"ok\"}"), 1);
	assert_int_equal(value(t, "vitrine_actions_total{kind=\"screenshot\",result=\"error\"}"),
			 1);
	assert_int_equal(value(t, "vitrine_action_duration_seconds_count{kind=\"screenshot\"}"), 0);
	assert_int_equal(value(t, "vitrine_commands_total{result=\"timed_out\"}"), 1);
	assert_int_equal(value(t, "vitrine_command_duration_seconds_bucket{le=\"60\"}"), 1);
	assert_int_equal(value(t, "vitrine_stream_frames_total"), 2);
	assert_int_equal(value(t, "vitrine_stream_bytes_total"), 1024);
	assert_int_equal(value(t, "vitrine_sessions{state=\"ready\"}"), 2);
	assert_int_equal(value(t, "vitrine_sessions{state=\"paused_disk\"}"), 1);
	assert_int_equal(value(t, "vitrine_stream_viewers"), 3);
	assert_false(has(t, "vitrine_guest_memory_budget_bytes")); /* no budget */
	/* each family's HELP and TYPE come once, before its series */
	{
		const char *p = strstr(t, "# TYPE vitrine_actions_total counter\n");

		assert_non_null(p);
		assert_null(strstr(p + 1, "# TYPE vitrine_actions_total "));
		assert_true(p < strstr(t, "vitrine_actions_total{"));
	}
	free(t);
	metrics_reset();
	t = render();
	assert_int_equal(value(t, "vitrine_stream_frames_total"), 0);
	assert_false(
		has(t, "vitrine_http_requests_total{route=\"session_screenshot\",code=\"200\"}"));
	free(t);
}

static void test_escape(void **state)
{
	char out[32];

	(void)state;
	metrics_escape("a\"b\\c\nd", out, sizeof(out));
	assert_string_equal(out, "a\\\"b\\\\c\\nd");
	metrics_escape("abcdef", out, 4);
	assert_string_equal(out, "ab"); /* room for an escape pair and the NUL is kept */
}

static void test_proc_parsers(void **state)
{
	uint64_t ticks, rss, pss;

	(void)state;
	assert_int_equal(metrics_proc_stat_ticks(
				 "1234 (qemu (x) y) S 1 1234 1234 0 -1 4194560 5000 0 3 0 "
				 "700 50 0 0 20 0 9 0 12345 1000000 2000 18446744073709551615",
				 &ticks),
			 0);
	assert_int_equal(ticks, 750);
	assert_int_equal(metrics_proc_stat_ticks("1234 qemu S 1", &ticks), -EINVAL);
	assert_int_equal(metrics_proc_stat_ticks("1 (a) S 1 2", &ticks), -EINVAL);
	assert_int_equal(metrics_proc_rollup("00400000-7fff [rollup]\nRss:              2048 kB\n"
					     "Pss:               1024 kB\nPss_Anon: 3 kB\n",
					     &rss, &pss),
			 0);
	assert_int_equal(rss, 2048 * 1024);
	assert_int_equal(pss, 1024 * 1024);
	assert_int_equal(metrics_proc_rollup("Rss: 1 kB\n", &rss, &pss), -EINVAL);
}

/* The sampler: this process's own figures appear for a session that names
 * its pid, and go when the session does. */
static void test_sampler(void **state)
{
	struct metrics_session s = {
		.id = "vmtest", .pid = getpid(), .guest_memory_bytes = 1 << 20, .vcpus = 2
	};
	struct bytebuf b = { 0 };
	char *t = NULL;

	(void)state;
	assert_int_equal(metrics_proc_start(), 0);
	metrics_proc_sync(&s, 1);
	for (int i = 0; i < 100; i++) {
		bytebuf_free(&b);
		assert_int_equal(metrics_proc_render(&b), 0);
		assert_int_equal(bytebuf_append(&b, "", 1), 0);
		if (strstr((char *)b.data,
			   "vitrine_session_qemu_resident_bytes{session=\"vmtest\"}"))
			break;
		usleep(20 * 1000);
	}
	t = (char *)b.data;
	assert_int_equal(value(t, "vitrine_session_vcpus{session=\"vmtest\"}"), 2);
	assert_int_equal(value(t, "vitrine_session_guest_memory_bytes{session=\"vmtest\"}"),
			 1 << 20);
	assert_true(value(t, "vitrine_session_qemu_resident_bytes{session=\"vmtest\"}") > 0);
	assert_true(value(t, "vitrine_session_qemu_proportional_bytes{session=\"vmtest\"}") > 0);
	bytebuf_free(&b);
	metrics_proc_sync(NULL, 0);
	assert_int_equal(metrics_proc_render(&b), 0);
	assert_int_equal(bytebuf_append(&b, "", 1), 0);
	assert_null(strstr((char *)b.data, "vmtest"));
	bytebuf_free(&b);
	metrics_proc_stop();
}

/* The token-less door's scrape (no_session_series) names no session: the
 * per-session families are left out, the rest is the same. */
static void test_no_session_series(void **state)
{
	struct metrics_session s = { .id = "vmsecret42", .pid = 0, .vcpus = 2 };
	struct metrics_now now = { .sessions_ready = 1 };
	struct bytebuf b = { 0 };

	(void)state;
	metrics_proc_sync(&s, 1);
	assert_int_equal(metrics_render(&now, &b), 0);
	assert_int_equal(bytebuf_append(&b, "", 1), 0);
	assert_non_null(strstr((char *)b.data, "vitrine_session_vcpus{session=\"vmsecret42\"} 2"));
	bytebuf_free(&b);
	now.no_session_series = true;
	assert_int_equal(metrics_render(&now, &b), 0);
	assert_int_equal(bytebuf_append(&b, "", 1), 0);
	assert_null(strstr((char *)b.data, "vmsecret42"));
	assert_null(strstr((char *)b.data, "session=\""));
	assert_int_equal(value((char *)b.data, "vitrine_sessions{state=\"ready\"}"), 1);
	bytebuf_free(&b);
	metrics_proc_sync(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_render),	  cmocka_unit_test(test_escape),
		cmocka_unit_test(test_proc_parsers),	  cmocka_unit_test(test_sampler),
		cmocka_unit_test(test_no_session_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
