/* tests/integration/test_qga_client.c: the guest-agent socket client
 * (vmm-qemu/qga_client.c) against a scripted fake qemu-ga on a real unix
 * socket: the delimited sync past stale bytes, calls, guest-exec with
 * status polling, error replies, a timeout and the resync after it, an agent
 * that hangs up or talks garbage, and the asynchronous interface. */
#include "vmm-qemu/qga_client.h"

#include "common/fsutil.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

/* SEND: bytes, where "@SYNC" stands for the id of the last sync seen.
 * EXPECT_SYNC: the next line is a 0xFF-prefixed guest-sync-delimited.
 * EXPECT: the next line contains text. ANSWER_ALL: every further line is
 * answered with text until the client goes away. */
enum step_kind { SEND, EXPECT, EXPECT_SYNC, SLEEP_MS, ANSWER_ALL, HANG_UP };

struct step {
	enum step_kind kind;
	const char *text;
	int ms;
};

struct fake {
	char path[108];
	int listen_fd;
	const struct step *script;
	pthread_t thread;
	char failure[512]; /* what the fake agent saw go wrong */
	int answered; /* lines answered by ANSWER_ALL */
	char sync_ids[4][32]; /* the ids of the syncs seen, in order */
	int n_syncs;
};

static int read_line(int fd, char *buf, size_t len)
{
	size_t used = 0;

	while (used + 1 < len) {
		ssize_t r = read(fd, buf + used, 1);

		if (r <= 0)
			return -1;
		if (buf[used++] == '\n')
			break;
	}
	buf[used] = '\0';
	return 0;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int c = accept(f->listen_fd, NULL, NULL);
	char sync_id[32] = "";

	for (const struct step *s = f->script; c >= 0 && s->kind != HANG_UP; s++) {
		char line[4096], out[4096];
		const char *p;
		size_t o = 0;

		switch (s->kind) {
		case SEND:
			for (p = s->text; *p && o + 40 < sizeof(out); p++) {
				if (!strncmp(p, "@SYNC", 5)) {
					o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", sync_id);
					p += 4;
				} else {
					out[o++] = *p;
				}
			}
			if (write(c, out, o) < 0)
				snprintf(f->failure, sizeof(f->failure), "write failed");
			break;
		case SLEEP_MS:
			usleep((useconds_t)s->ms * 1000);
			break;
		case EXPECT_SYNC:
		case EXPECT:
			if (read_line(c, line, sizeof(line)) < 0) {
				snprintf(f->failure, sizeof(f->failure), "EOF waiting for %s",
					 s->text ? s->text : "the sync");
				goto out;
			}
			if (s->kind == EXPECT_SYNC) {
				const char *want = "\xff{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":";

				if (strncmp(line, want, strlen(want)) != 0) {
					snprintf(f->failure, sizeof(f->failure), "not a sync: %.200s", line);
					goto out;
				}
				snprintf(sync_id, sizeof(sync_id), "%lld", strtoll(line + strlen(want), NULL, 10));
				if (f->n_syncs < 4)
					snprintf(f->sync_ids[f->n_syncs++], sizeof(f->sync_ids[0]), "%s", sync_id);
			} else if (!strstr(line, s->text)) {
				snprintf(f->failure, sizeof(f->failure), "got %.200s, want %.200s", line, s->text);
				goto out;
			}
			break;
		case ANSWER_ALL:
			while (read_line(c, line, sizeof(line)) == 0) {
				if (write(c, s->text, strlen(s->text)) < 0)
					break;
				f->answered++;
			}
			goto out;
		case HANG_UP:
			break;
		}
	}
out:
	if (c >= 0)
		close(c);
	return NULL;
}

static void fake_start(struct fake *f, const struct step *script)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/tmp/vitrine-fake-qga-%d.sock", (int)getpid());
	unlink(f->path);
	strcpy(sa.sun_path, f->path);
	f->script = script;
	f->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(f->listen_fd >= 0);
	assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->listen_fd, 1), 0);
	assert_int_equal(pthread_create(&f->thread, NULL, fake_main, f), 0);
}

static void fake_finish(struct fake *f)
{
	pthread_join(f->thread, NULL);
	close(f->listen_fd);
	unlink(f->path);
	if (f->failure[0])
		fail_msg("fake agent: %s", f->failure);
}

static void test_sync_past_stale_bytes_then_calls(void **state)
{
	static const struct step script[] = {
		/* Left in the port by an earlier client. */
		{ SEND, "{\"return\": {\"pid\": 3}}\n\xff{\"return\": 1234}\n{\"error\": {\"cla", 0 },
		{ EXPECT_SYNC, NULL, 0 },
		{ SEND, "ss\": \"GenericError\", \"desc\": \"JSON parse error\"}}\n", 0 },
		{ SLEEP_MS, NULL, 30 },
		{ SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ EXPECT, "{\"execute\":\"guest-info\"}", 0 },
		{ SEND, "{\"return\": {\"version\": \"7.2.", 0 },
		{ SLEEP_MS, NULL, 30 },
		{ SEND, "15\", \"supported_commands\": []}}\n", 0 },
		{ EXPECT, "{\"execute\":\"guest-file-open\",\"arguments\":{\"path\":\"/nope\"}}", 0 },
		{ SEND, "{\"error\": {\"class\": \"GenericError\", \"desc\": \"failed to open file '/nope' (mode: 'r')\"}}\n", 0 },
		{ HANG_UP, NULL, 0 },
	};
	struct qga_client *c;
	struct fake f;
	json_t *ret = NULL;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	assert_int_equal(qga_client_call(c, "guest-info", NULL, &ret, 5000, err, sizeof(err)), 0);
	assert_string_equal(json_string_value(json_object_get(ret, "version")), "7.2.15");
	json_decref(ret);
	assert_int_equal(qga_client_call(c, "guest-file-open", json_pack("{s:s}", "path", "/nope"), NULL,
					 5000, err, sizeof(err)),
			 -EREMOTEIO);
	assert_non_null(strstr(err, "GenericError"));
	assert_non_null(strstr(err, "/nope"));
	/* The agent hung up: the next call says so. */
	assert_int_equal(qga_client_call(c, "guest-ping", NULL, NULL, 5000, err, sizeof(err)), -EPIPE);
	qga_client_destroy(c);
	fake_finish(&f);
	/* A random id each session, positive. */
	assert_true(strtoll(f.sync_ids[0], NULL, 10) > 0);
}

static void test_exec_polls_until_exit(void **state)
{
	static const struct step script[] = {
		{ EXPECT_SYNC, NULL, 0 },
		{ SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ EXPECT, "\"execute\":\"guest-exec\",\"arguments\":{\"path\":\"sh\",\"arg\":[\"-c\",\"cat; echo oops >&2; exit 3\"],\"capture-output\":true,\"env\":[\"A=1\"],\"input-data\":\"R3LDvMOfZSwg5LiW55WM\"}", 0 },
		{ SEND, "{\"return\": {\"pid\": 4711}}\n", 0 },
		{ EXPECT, "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":4711}}", 0 },
		{ SEND, "{\"return\": {\"exited\": false}}\n", 0 },
		{ EXPECT, "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":4711}}", 0 },
		{ SEND, "{\"return\": {\"exited\": false}}\n", 0 },
		{ EXPECT, "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":4711}}", 0 },
		{ SEND, "{\"return\": {\"exitcode\": 3, \"out-data\": \"R3LDvMOfZSwg5LiW55WM\", \"err-data\": \"b29wcwo=\", \"exited\": true}}\n", 0 },
		{ HANG_UP, NULL, 0 },
	};
	const char *argv[] = { "sh", "-c", "cat; echo oops >&2; exit 3", NULL };
	const char *env[] = { "A=1", NULL };
	const char *text = "Grüße, 世界";
	struct qga_exec_result r;
	struct qga_client *c;
	struct fake f;
	int64_t t0, ms;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	t0 = fs_now_ms();
	assert_int_equal(qga_client_exec(c, argv, env, text, strlen(text), 5000, &r, err, sizeof(err)), 0);
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
	static const struct step script[] = {
		{ EXPECT_SYNC, NULL, 0 },
		{ SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ EXPECT, "\"guest-exec\"", 0 },
		{ SEND, "{\"error\": {\"class\": \"GenericError\", \"desc\": \"Guest agent command failed, error was 'Failed to execute child process \\u201cnope\\u201d (No such file or directory)'\"}}\n", 0 },
		{ HANG_UP, NULL, 0 },
	};
	const char *argv[] = { "nope", NULL };
	const char *empty[] = { NULL };
	struct qga_exec_result r;
	struct qga_client *c;
	struct fake f;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	assert_int_equal(qga_client_exec(c, empty, NULL, NULL, 0, 5000, &r, err, sizeof(err)), -EINVAL);
	assert_int_equal(qga_client_exec(c, argv, NULL, NULL, 0, 5000, &r, err, sizeof(err)), -EREMOTEIO);
	assert_non_null(strstr(err, "No such file"));
	assert_null(r.out);
	qga_client_destroy(c);
	fake_finish(&f);
}

static void test_timeout_resyncs(void **state)
{
	static const struct step script[] = {
		{ EXPECT_SYNC, NULL, 0 },
		{ SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ EXPECT, "\"guest-fsfreeze-freeze\"", 0 },
		/* Too slow: the client gives up and sends a new sync. */
		{ EXPECT_SYNC, NULL, 0 },
		{ SEND, "{\"return\": 2}\n", 0 }, /* the late reply */
		{ SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ EXPECT, "\"guest-get-time\"", 0 },
		{ SEND, "{\"return\": 1700000000000000000}\n", 0 },
		{ HANG_UP, NULL, 0 },
	};
	struct qga_client *c;
	struct fake f;
	json_t *ret = NULL;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	assert_int_equal(qga_client_call(c, "guest-fsfreeze-freeze", NULL, NULL, 150, err, sizeof(err)),
			 -ETIMEDOUT);
	assert_non_null(strstr(err, "no reply"));
	assert_int_equal(qga_client_call(c, "guest-get-time", NULL, &ret, 5000, err, sizeof(err)), 0);
	assert_true(json_integer_value(ret) == 1700000000000000000LL);
	json_decref(ret);
	qga_client_destroy(c);
	fake_finish(&f);
	assert_int_equal(f.n_syncs, 2);
	assert_string_not_equal(f.sync_ids[0], f.sync_ids[1]);
}

static void test_exec_timeout_kills_nothing(void **state)
{
	static const struct step script[] = {
		{ EXPECT_SYNC, NULL, 0 },
		{ SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ EXPECT, "\"guest-exec\"", 0 },
		{ SEND, "{\"return\": {\"pid\": 99}}\n", 0 },
		{ ANSWER_ALL, "{\"return\": {\"exited\": false}}\n", 0 },
	};
	const char *argv[] = { "sleep", "1000", NULL };
	struct qga_exec_result r;
	struct qga_client *c;
	struct fake f;
	int64_t t0, ms;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	t0 = fs_now_ms();
	assert_int_equal(qga_client_exec(c, argv, NULL, NULL, 0, 600, &r, err, sizeof(err)), -ETIMEDOUT);
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
	static const struct step script[] = {
		{ EXPECT_SYNC, NULL, 0 },
		{ SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ EXPECT, "\"guest-exec\"", 0 },
		{ SEND, "{\"return\": {\"pid\": 5}}\n", 0 },
		{ HANG_UP, NULL, 0 },
	};
	const char *argv[] = { "true", NULL };
	struct qga_exec_result r;
	struct qga_client *c;
	struct fake f;
	int64_t t0;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	t0 = fs_now_ms();
	assert_int_equal(qga_client_exec(c, argv, NULL, NULL, 0, 5000, &r, err, sizeof(err)), -EPIPE);
	assert_true(fs_now_ms() - t0 < 1000);
	assert_non_null(strstr(err, "closed"));
	qga_client_destroy(c);
	fake_finish(&f);
}

static void test_garbage_after_sync(void **state)
{
	static const struct step script[] = {
		{ EXPECT_SYNC, NULL, 0 },
		{ SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ EXPECT, "\"guest-ping\"", 0 },
		{ SEND, "this is not JSON\n", 0 },
		{ SLEEP_MS, NULL, 200 },
		{ HANG_UP, NULL, 0 },
	};
	struct qga_client *c;
	struct fake f;
	int64_t t0;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qga_client_connect(f.path, 2000, &c, err, sizeof(err)), 0);
	assert_int_equal(qga_client_call(c, "guest-ping", NULL, NULL, 5000, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "malformed JSON"));
	/* Broken stays broken, at once. */
	t0 = fs_now_ms();
	assert_int_equal(qga_client_call(c, "guest-ping", NULL, NULL, 5000, err, sizeof(err)), -EPROTO);
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
	static const struct step script[] = {
		{ EXPECT_SYNC, NULL, 0 },
		{ SEND, "\xff{\"return\": @SYNC}\n", 0 },
		{ EXPECT, "\"guest-get-time\"", 0 },
		{ SEND, "{\"return\": 11}\n", 0 },
		{ EXPECT, "\"guest-get-time\"", 0 },
		{ SEND, "{\"return\": 22}\n", 0 },
		{ EXPECT, "\"guest-ping\"", 0 },
		{ SLEEP_MS, NULL, 100 },
		{ HANG_UP, NULL, 0 },
	};
	struct async_rec a = { 0 }, b = { 0 }, p = { 0 };
	struct qga_client *c;
	struct fake f;
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
	assert_int_equal(qga_client_connect("/tmp/vitrine-no-such-qga.sock", 100, &c, err, sizeof(err)),
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
