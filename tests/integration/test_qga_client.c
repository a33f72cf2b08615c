/* tests/integration/test_qga_client.c: the guest-agent socket client
 * (vmm-qemu/qga_client.c) against a scripted fake qemu-ga on a real unix
 * socket: the delimited sync past stale bytes, calls, guest-exec with
 * status polling, error replies, a timeout and the resync after it, an agent
 * that hangs up or talks garbage, and the asynchronous interface. */
#include "vmm-qemu/qga_client.h"

#include "common/fsutil.h"
#include "tests/lib/fake_monitor.h"

#include <errno.h>
#include <poll.h>
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
	assert_int_equal(fake_monitor_start(f, "fake agent", script), 0);
}

static void fake_finish(struct fake_monitor *f)
{
	const char *failure = fake_monitor_finish(f);

	if (failure)
		fail_msg("%s: %s", f->name, failure);
}

static void test_sync_past_stale_bytes_then_calls(void **state)
{
	static const struct fake_step script[] = {
		/* Left in the port by an earlier client. */
		{ FAKE_SEND,
		  "{\"return\": {\"pid\": 3}}\n\xff{\"return\": 1234}\n{\"error\": {\"cla", 0 },
		{ FAKE_EXPECT_SYNC, NULL, 0 },
		{ FAKE_SEND, "ss\": \"GenericError\", \"desc\": \"JSON parse error\"}}\n", 0 },
		{ FAKE_SLEEP_MS, NULL, 30 },
		{ FAKE_SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ FAKE_EXPECT, "{\"execute\":\"guest-info\"}", 0 },
		{ FAKE_SEND, "{\"return\": {\"version\": \"7.2.", 0 },
		{ FAKE_SLEEP_MS, NULL, 30 },
		{ FAKE_SEND, "15\", \"supported_commands\": []}}\n", 0 },
		{ FAKE_EXPECT,
		  "{\"execute\":\"guest-file-open\",\"arguments\":{\"path\":\"/nope\"}}", 0 },
		{ FAKE_SEND,
		  "{\"error\": {\"class\": \"GenericError\", \"desc\": \"failed to open file '/nope' (mode: 'r')\"}}\n",
		  0 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	struct qga_client *c;
	struct fake_monitor f;
	json_t *ret = NULL;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	assert_int_equal(qga_client_call(c, "guest-info", NULL, &ret, 5000, err, sizeof(err)), 0);
	assert_string_equal(json_string_value(json_object_get(ret, "version")), "7.2.15");
	json_decref(ret);
	assert_int_equal(qga_client_call(c, "guest-file-open", json_pack("{s:s}", "path", "/nope"),
					 NULL, 5000, err, sizeof(err)),
			 -EREMOTEIO);
	assert_non_null(strstr(err, "GenericError"));
	assert_non_null(strstr(err, "/nope"));
	/* The agent hung up: the next call says so. */
	assert_int_equal(qga_client_call(c, "guest-ping", NULL, NULL, 5000, err, sizeof(err)),
			 -EPIPE);
	qga_client_destroy(c);
	fake_finish(&f);
	/* A random id each session, positive. */
	assert_true(strtoll(f.sync_ids[0], NULL, 10) > 0);
}

static void test_exec_polls_until_exit(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_EXPECT_SYNC, NULL, 0 },
		{ FAKE_SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ FAKE_EXPECT,
		  "\"execute\":\"guest-exec\",\"arguments\":{\"path\":\"sh\",\"arg\":[\"-c\",\"cat; echo oops >&2; exit 3\"],\"capture-output\":true,\"env\":[\"A=1\"],\"input-data\":\"R3LDvMOfZSwg5LiW55WM\"}",
		  0 },
		{ FAKE_SEND, "{\"return\": {\"pid\": 4711}}\n", 0 },
		{ FAKE_EXPECT, "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":4711}}",
		  0 },
		{ FAKE_SEND, "{\"return\": {\"exited\": false}}\n", 0 },
		{ FAKE_EXPECT, "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":4711}}",
		  0 },
		{ FAKE_SEND, "{\"return\": {\"exited\": false}}\n", 0 },
		{ FAKE_EXPECT, "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":4711}}",
		  0 },
		{ FAKE_SEND,
		  "{\"return\": {\"exitcode\": 3, \"out-data\": \"R3LDvMOfZSwg5LiW55WM\", \"err-data\": \"b29wcwo=\", \"exited\": true}}\n",
		  0 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	const char *argv[] = { "sh", "-c", "cat; echo oops >&2; exit 3", NULL };
	const char *env[] = { "A=1", NULL };
	const char *text = "Grüße, 世界";
	struct qga_exec_result r;
	struct qga_client *c;
	struct fake_monitor f;
	int64_t t0, ms;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	t0 = fs_now_ms();
	assert_int_equal(qga_client_exec(c, argv, env, text, strlen(text), 5000, &r, err,
					 sizeof(err)),
			 0);
	ms = fs_now_ms() - t0;
	assert_true(r.exited);
	assert_int_equal(r.pid, 4711);
	assert_int_equal(r.exit_code, 3);
	assert_int_equal(r.signal, 0);
	assert_string_equal(r.out, text);
	assert_int_equal(r.out_len, strlen(text));
	assert_string_equal(r.err, "oops\n");
	/* Three polls: after 20, 30 and 45 ms; not the seconds of slow polling. */
	printf("exec with three status polls: %lld ms\n", (long long)ms);
	assert_true(ms >= 90 && ms < 1000);
	qga_exec_result_free(&r);
	qga_client_destroy(c);
	fake_finish(&f);
}

static void test_exec_cannot_start(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_EXPECT_SYNC, NULL, 0 },
		{ FAKE_SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ FAKE_EXPECT, "\"guest-exec\"", 0 },
		{ FAKE_SEND,
		  "{\"error\": {\"class\": \"GenericError\", \"desc\": \"Guest agent command failed, error was 'Failed to execute child process \\u201cnope\\u201d (No such file or directory)'\"}}\n",
		  0 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	const char *argv[] = { "nope", NULL };
	const char *empty[] = { NULL };
	struct qga_exec_result r;
	struct qga_client *c;
	struct fake_monitor f;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	assert_int_equal(qga_client_exec(c, empty, NULL, NULL, 0, 5000, &r, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(qga_client_exec(c, argv, NULL, NULL, 0, 5000, &r, err, sizeof(err)),
			 -EREMOTEIO);
	assert_non_null(strstr(err, "No such file"));
	assert_null(r.out);
	qga_client_destroy(c);
	fake_finish(&f);
}

static void test_timeout_resyncs(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_EXPECT_SYNC, NULL, 0 },
		{ FAKE_SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ FAKE_EXPECT, "\"guest-fsfreeze-freeze\"", 0 },
		/* Too slow: the client gives up and sends a new sync. */
		{ FAKE_EXPECT_SYNC, NULL, 0 },
		{ FAKE_SEND, "{\"return\": 2}\n", 0 }, /* the late reply */
		{ FAKE_SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ FAKE_EXPECT, "\"guest-get-time\"", 0 },
		{ FAKE_SEND, "{\"return\": 1700000000000000000}\n", 0 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	struct qga_client *c;
	struct fake_monitor f;
	json_t *ret = NULL;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	assert_int_equal(qga_client_call(c, "guest-fsfreeze-freeze", NULL, NULL, 150, err,
					 sizeof(err)),
			 -ETIMEDOUT);
	assert_non_null(strstr(err, "no reply"));
	assert_int_equal(qga_client_call(c, "guest-get-time", NULL, &ret, 5000, err, sizeof(err)),
			 0);
	assert_true(json_integer_value(ret) == 1700000000000000000LL);
	json_decref(ret);
	qga_client_destroy(c);
	fake_finish(&f);
	assert_int_equal(f.n_syncs, 2);
	assert_string_not_equal(f.sync_ids[0], f.sync_ids[1]);
}

static void test_exec_timeout_kills_nothing(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_EXPECT_SYNC, NULL, 0 },
		{ FAKE_SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ FAKE_EXPECT, "\"guest-exec\"", 0 },
		{ FAKE_SEND, "{\"return\": {\"pid\": 99}}\n", 0 },
		{ FAKE_ANSWER_ALL, "{\"return\": {\"exited\": false}}\n", 0 },
	};
	const char *argv[] = { "sleep", "1000", NULL };
	struct qga_exec_result r;
	struct qga_client *c;
	struct fake_monitor f;
	int64_t t0, ms;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	t0 = fs_now_ms();
	assert_int_equal(qga_client_exec(c, argv, NULL, NULL, 0, 600, &r, err, sizeof(err)),
			 -ETIMEDOUT);
	ms = fs_now_ms() - t0;
	assert_int_equal(r.pid, 99);
	assert_null(r.out);
	assert_non_null(strstr(err, "did not exit"));
	assert_true(ms >= 600 && ms < 900);
	qga_client_destroy(c);
	fake_finish(&f);
	/* Backed off to 100 ms: about 20+30+45+67+100+100+100+100 ms. */
	printf("%d status polls in 600 ms\n", f.answered);
	assert_true(f.answered >= 5 && f.answered <= 10);
	/* Nothing asked the agent to kill the process: only status polls. */
}

static void test_agent_hangs_up_mid_exec(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_EXPECT_SYNC, NULL, 0 },
		{ FAKE_SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ FAKE_EXPECT, "\"guest-exec\"", 0 },
		{ FAKE_SEND, "{\"return\": {\"pid\": 5}}\n", 0 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	const char *argv[] = { "true", NULL };
	struct qga_exec_result r;
	struct qga_client *c;
	struct fake_monitor f;
	int64_t t0;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	t0 = fs_now_ms();
	assert_int_equal(qga_client_exec(c, argv, NULL, NULL, 0, 5000, &r, err, sizeof(err)),
			 -EPIPE);
	assert_true(fs_now_ms() - t0 < 1000);
	assert_non_null(strstr(err, "closed"));
	qga_client_destroy(c);
	fake_finish(&f);
}

static void test_garbage_after_sync(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_EXPECT_SYNC, NULL, 0 },
		{ FAKE_SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ FAKE_EXPECT, "\"guest-ping\"", 0 },
		{ FAKE_SEND, "this is not JSON\n", 0 }, /* the reply to the ping */
		{ FAKE_SLEEP_MS, NULL, 200 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	struct qga_client *c;
	struct fake_monitor f;
	int64_t t0;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	assert_int_equal(qga_client_call(c, "guest-ping", NULL, NULL, 5000, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "malformed JSON"));
	/* Broken stays broken, at once. */
	t0 = fs_now_ms();
	assert_int_equal(qga_client_call(c, "guest-ping", NULL, NULL, 5000, err, sizeof(err)),
			 -EPROTO);
	assert_true(fs_now_ms() - t0 < 100);
	qga_client_destroy(c);
	fake_finish(&f);
}

struct async_rec {
	int done;
	char text[128];
};

static void async_reply(void *ud, const json_t *ret, const struct qga_error *qerr)
{
	struct async_rec *a = ud;

	a->done++;
	if (qerr)
		snprintf(a->text, sizeof(a->text), "error %s", qerr->cls);
	else
		snprintf(a->text, sizeof(a->text), "%lld", (long long)json_integer_value(ret));
}

static void test_async_interface(void **state)
{
	static const struct fake_step script[] = {
		{ FAKE_EXPECT_SYNC, NULL, 0 },
		{ FAKE_SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ FAKE_EXPECT, "\"guest-get-time\"", 0 },
		{ FAKE_SEND, "{\"return\": 11}\n", 0 },
		{ FAKE_EXPECT, "\"guest-get-time\"", 0 },
		{ FAKE_SEND, "{\"return\": 22}\n", 0 },
		{ FAKE_EXPECT, "\"guest-ping\"", 0 },
		{ FAKE_SLEEP_MS, NULL, 100 },
		{ FAKE_HANG_UP, NULL, 0 },
	};
	struct async_rec a = { 0 }, b = { 0 }, p = { 0 };
	struct qga_client *c;
	struct fake_monitor f;
	char err[512];
	int rc = 0;

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	/* Queued at once; the machine sends them one after the other. */
	assert_true(qga_command(qga_client_qga(c), "guest-get-time", NULL, async_reply, &a) > 0);
	assert_true(qga_command(qga_client_qga(c), "guest-get-time", NULL, async_reply, &b) > 0);
	assert_true(qga_command(qga_client_qga(c), "guest-ping", NULL, async_reply, &p) > 0);
	for (int i = 0; i < 500 && rc == 0; i++) {
		struct pollfd pfd = { .fd = qga_client_fd(c), .events = qga_client_poll_events(c) };

		if (poll(&pfd, 1, 10) > 0)
			rc = qga_client_service(c, pfd.revents, err, sizeof(err));
	}
	assert_int_equal(rc, -EPIPE);
	assert_int_equal(a.done, 1);
	assert_string_equal(a.text, "11");
	assert_int_equal(b.done, 1);
	assert_string_equal(b.text, "22");
	assert_int_equal(p.done, 0);
	assert_true(qga_synced(qga_client_qga(c)));
	qga_client_destroy(c); /* the ping fails now */
	assert_int_equal(p.done, 1);
	assert_string_equal(p.text, "error Disconnected");
	qga_client_destroy(NULL);
	fake_finish(&f);
}

static void test_connect_nowhere_times_out(void **state)
{
	struct qga_client *c = NULL;
	char err[512];

	(void)state;
	assert_int_equal(qga_client_connect("/tmp/vitrine-no-such-qga.sock", 100, &c, err,
					    sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "vitrine-no-such-qga.sock"));
	assert_null(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_past_stale_bytes_then_calls),
		cmocka_unit_test(test_exec_polls_until_exit),
		cmocka_unit_test(test_exec_cannot_start),
		cmocka_unit_test(test_timeout_resyncs),
		cmocka_unit_test(test_exec_timeout_kills_nothing),
		cmocka_unit_test(test_agent_hangs_up_mid_exec),
		cmocka_unit_test(test_garbage_after_sync),
		cmocka_unit_test(test_async_interface),
		cmocka_unit_test(test_connect_nowhere_times_out),
	};

	return cmocka_run_group_tests_name("qga client vs fake agent", tests, NULL, NULL);
}
