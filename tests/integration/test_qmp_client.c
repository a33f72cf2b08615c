/* tests/integration/test_qmp_client.c: the QMP socket client
 * (vmm-qemu/qmp_client.c) against a scripted fake monitor on a real unix
 * socket: greeting, negotiation, replies split across writes, events at any
 * time, SCM_RIGHTS fd passing, error replies, timeouts and a monitor that
 * hangs up. */
#include "vmm-qemu/qmp_client.h"

#include "tests/lib/fake_monitor.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void fake_start(struct fake_monitor *f, const struct fake_step *script)
{
	assert_int_equal(fake_monitor_start(f, "fake monitor", script), 0);
}

static void fake_finish(struct fake_monitor *f)
{
	const char *failure = fake_monitor_finish(f);

	if (failure)
		fail_msg("%s: %s", f->name, failure);
}

#define GREETING "{\"QMP\": {\"version\": {}, \"capabilities\": []}}\r\n"

static int events_seen;
static char last_event[64];

static void on_event(void *ud, const char *name, const json_t *data)
{
	(void)ud;
	(void)data;
	events_seen++;
	snprintf(last_event, sizeof(last_event), "%s", name);
}

static void test_call_with_events_and_split_reply(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_SEND, GREETING, 0 },
		{ FAKE_EXPECT, "\"qmp_capabilities\"", 0 },
		{ FAKE_SEND, "{\"return\": {}, \"id\": @ID}\r\n", 0 },
		{ FAKE_EXPECT, "\"query-status\"", 0 },
		{ FAKE_SEND, "{\"event\": \"RESUME\", \"timestamp\": {}}\r\n{\"return\": {\"sta",
		  0 },
		{ FAKE_SLEEP_MS, NULL, 50 },
		{ FAKE_SEND, "tus\": \"running\"}, \"id\": @ID}\r\n", 0 },
		{ FAKE_EXPECT, "\"bogus\"", 0 },
		{ FAKE_SEND,
		  "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command bogus has not been found\"}, \"id\": @ID}\r\n",
		  0 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake_monitor f;
	json_t *ret = NULL;
	char err[512];

	(void)state;
	events_seen = 0;
	fake_start(&f, script);
	assert_int_equal(qmp_client_connect(f.path, 2000, on_event, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "query-status", NULL, -1, &ret, 5000, err, sizeof(err)),
			 0);
	assert_string_equal(json_string_value(json_object_get(ret, "status")), "running");
	json_decref(ret);
	assert_int_equal(events_seen, 1);
	assert_string_equal(last_event, "RESUME");
	assert_int_equal(qmp_client_call(c, "bogus", NULL, -1, NULL, 5000, err, sizeof(err)),
			 -EREMOTEIO);
	assert_non_null(strstr(err, "CommandNotFound"));
	qmp_client_destroy(c);
	fake_finish(&f);
}

static void test_fd_passing(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_SEND, GREETING, 0 },
		{ FAKE_EXPECT, "qmp_capabilities", 0 },
		{ FAKE_SEND, "{\"return\": {}, \"id\": @ID}\n", 0 },
		{ FAKE_EXPECT_FD, "\"getfd\"", 0 },
		{ FAKE_SEND, "{\"return\": {}, \"id\": @ID}\n", 0 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake_monitor f;
	char err[512];
	int p[2];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "through the socket", 18), 18);
	close(p[1]);
	assert_int_equal(qmp_client_connect(f.path, 2000, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "getfd", json_pack("{s:s}", "fdname", "x"), p[0], NULL,
					 5000, err, sizeof(err)),
			 0);
	close(p[0]);
	qmp_client_destroy(c);
	fake_finish(&f);
	assert_string_equal(f.fd_content, "through the socket");
}

static void test_timeout_then_late_reply_is_dropped(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_SEND, GREETING, 0 },
		{ FAKE_EXPECT, "qmp_capabilities", 0 },
		{ FAKE_SEND, "{\"return\": {}, \"id\": @ID}\n", 0 },
		{ FAKE_EXPECT, "\"slow\"", 0 },
		{ FAKE_SLEEP_MS, NULL, 300 },
		{ FAKE_EXPECT, "\"fast\"", 0 },
		{ FAKE_SEND, "{\"return\": {}, \"id\": @PREV}\n", 0 },
		{ FAKE_SEND, "{\"return\": 42, \"id\": @ID}\n", 0 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake_monitor f;
	json_t *ret = NULL;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qmp_client_connect(f.path, 2000, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "slow", NULL, -1, NULL, 100, err, sizeof(err)),
			 -ETIMEDOUT);
	assert_non_null(strstr(err, "no reply"));
	/* The late reply to "slow" arrives first and must be discarded. */
	assert_int_equal(qmp_client_call(c, "fast", NULL, -1, &ret, 5000, err, sizeof(err)), 0);
	assert_int_equal(json_integer_value(ret), 42);
	json_decref(ret);
	qmp_client_destroy(c);
	fake_finish(&f);
}

static void test_monitor_hangs_up(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_SEND, GREETING, 0 },
		{ FAKE_EXPECT, "qmp_capabilities", 0 },
		{ FAKE_SEND, "{\"return\": {}, \"id\": @ID}\n", 0 },
		{ FAKE_EXPECT, "\"quit\"", 0 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake_monitor f;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qmp_client_connect(f.path, 2000, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "quit", NULL, -1, NULL, 5000, err, sizeof(err)),
			 -EPIPE);
	assert_non_null(strstr(err, "closed"));
	qmp_client_destroy(c);
	fake_finish(&f);
}

static void test_garbage_from_monitor(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_SEND, "this is not QMP\n", 0 },
		{ FAKE_SLEEP_MS, NULL, 200 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake_monitor f;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qmp_client_connect(f.path, 2000, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "query-status", NULL, -1, NULL, 5000, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "malformed JSON"));
	qmp_client_destroy(c);
	fake_finish(&f);
}

static void test_connect_nowhere_times_out(void **state)
{
	struct qmp_client *c = NULL;
	char err[512];

	(void)state;
	assert_int_equal(qmp_client_connect("/tmp/vitrine-no-such.sock", 100, NULL, NULL, &c, err,
					    sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "vitrine-no-such.sock"));
	assert_null(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_with_events_and_split_reply),
		cmocka_unit_test(test_fd_passing),
		cmocka_unit_test(test_timeout_then_late_reply_is_dropped),
		cmocka_unit_test(test_monitor_hangs_up),
		cmocka_unit_test(test_garbage_from_monitor),
		cmocka_unit_test(test_connect_nowhere_times_out),
	};

	return cmocka_run_group_tests_name("qmp client vs fake monitor", tests, NULL, NULL);
}
