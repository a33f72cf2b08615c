/* tests/integration/test_qmp_client.c: the QMP socket client
 * (vmm-qemu/qmp_client.c) against a scripted fake monitor on a real unix
 * socket: greeting, negotiation, replies split across writes, events at any
 * time, SCM_RIGHTS fd passing, error replies, timeouts and a monitor that
 * hangs up. */
#include "vmm-qemu/qmp_client.h"

#include <errno.h>
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

enum step_kind { SEND, EXPECT, EXPECT_FD, SLEEP_MS, HANG_UP };

/* In SEND text, "@ID" stands for the id of the command last EXPECTed, and
 * "@PREV" for the one before it, so replies need not know the client's ids. */

struct step {
	enum step_kind kind;
	const char *text; /* SEND: bytes; EXPECT: substring of the next line */
	int ms;
};

struct fake {
	char path[108];
	int listen_fd;
	const struct step *script;
	pthread_t thread;
	char failure[256]; /* what the fake monitor saw go wrong */
	char fd_content[64]; /* read from a passed fd */
};

/* Reads one line (one command), taking any SCM_RIGHTS fd that comes with it. */
static int read_line(int fd, char *buf, size_t len, int *passed)
{
	size_t used = 0;

	*passed = -1;
	while (used + 1 < len) {
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = { .iov_base = buf + used, .iov_len = 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
				      .msg_controllen = sizeof(ctl.b) };
		ssize_t r = recvmsg(fd, &msg, 0);
		struct cmsghdr *cm;

		if (r <= 0)
			return -1;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_type == SCM_RIGHTS)
				memcpy(passed, CMSG_DATA(cm), sizeof(int));
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

	long id = 0, prev = 0;

	for (const struct step *s = f->script; c >= 0 && s->kind != HANG_UP; s++) {
		char line[4096], out[4096];
		const char *p;
		size_t o = 0;
		int passed;

		switch (s->kind) {
		case SEND:
			for (p = s->text; *p && o + 24 < sizeof(out); p++) {
				if (!strncmp(p, "@ID", 3)) {
					o += (size_t)snprintf(out + o, sizeof(out) - o, "%ld", id);
					p += 2;
				} else if (!strncmp(p, "@PREV", 5)) {
					o += (size_t)snprintf(out + o, sizeof(out) - o, "%ld", prev);
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
		case EXPECT:
		case EXPECT_FD:
			if (read_line(c, line, sizeof(line), &passed) < 0) {
				snprintf(f->failure, sizeof(f->failure), "EOF waiting for %s", s->text);
				goto out;
			}
			prev = id;
			if ((p = strstr(line, "\"id\":")))
				id = strtol(p + 5, NULL, 10);
			if (!strstr(line, s->text))
				snprintf(f->failure, sizeof(f->failure), "got %.100s, want %.100s", line, s->text);
			if (s->kind == EXPECT_FD) {
				ssize_t n = passed >= 0 ? read(passed, f->fd_content, sizeof(f->fd_content) - 1) : -1;

				if (n < 0)
					snprintf(f->failure, sizeof(f->failure), "no fd with %s", s->text);
				if (passed >= 0)
					close(passed);
			}
			break;
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
	snprintf(f->path, sizeof(f->path), "/tmp/vitrine-fake-qmp-%d.sock", (int)getpid());
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
		fail_msg("fake monitor: %s", f->failure);
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
	static const struct step script[] = {
		{ SEND, GREETING, 0 },
		{ EXPECT, "\"qmp_capabilities\"", 0 },
		{ SEND, "{\"return\": {}, \"id\": @ID}\r\n", 0 },
		{ EXPECT, "\"query-status\"", 0 },
		{ SEND, "{\"event\": \"RESUME\", \"timestamp\": {}}\r\n{\"return\": {\"sta", 0 },
		{ SLEEP_MS, NULL, 50 },
		{ SEND, "tus\": \"running\"}, \"id\": @ID}\r\n", 0 },
		{ EXPECT, "\"bogus\"", 0 },
		{ SEND, "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command bogus has not been found\"}, \"id\": @ID}\r\n", 0 },
		{ HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake f;
	json_t *ret = NULL;
	char err[512];

	(void)state;
	events_seen = 0;
	fake_start(&f, script);
	assert_int_equal(qmp_client_connect(f.path, 2000, on_event, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "query-status", NULL, -1, &ret, 5000, err, sizeof(err)), 0);
	assert_string_equal(json_string_value(json_object_get(ret, "status")), "running");
	json_decref(ret);
	assert_int_equal(events_seen, 1);
	assert_string_equal(last_event, "RESUME");
	assert_int_equal(qmp_client_call(c, "bogus", NULL, -1, NULL, 5000, err, sizeof(err)), -EREMOTEIO);
	assert_non_null(strstr(err, "CommandNotFound"));
	qmp_client_destroy(c);
	fake_finish(&f);
}

static void test_fd_passing(void **state)
{
	static const struct step script[] = {
		{ SEND, GREETING, 0 },
		{ EXPECT, "qmp_capabilities", 0 },
		{ SEND, "{\"return\": {}, \"id\": @ID}\n", 0 },
		{ EXPECT_FD, "\"getfd\"", 0 },
		{ SEND, "{\"return\": {}, \"id\": @ID}\n", 0 },
		{ HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake f;
	char err[512];
	int p[2];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "through the socket", 18), 18);
	close(p[1]);
	assert_int_equal(qmp_client_connect(f.path, 2000, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "getfd", json_pack("{s:s}", "fdname", "x"), p[0], NULL, 5000,
					 err, sizeof(err)),
			 0);
	close(p[0]);
	qmp_client_destroy(c);
	fake_finish(&f);
	assert_string_equal(f.fd_content, "through the socket");
}

static void test_timeout_then_late_reply_is_dropped(void **state)
{
	static const struct step script[] = {
		{ SEND, GREETING, 0 },
		{ EXPECT, "qmp_capabilities", 0 },
		{ SEND, "{\"return\": {}, \"id\": @ID}\n", 0 },
		{ EXPECT, "\"slow\"", 0 },
		{ SLEEP_MS, NULL, 300 },
		{ EXPECT, "\"fast\"", 0 },
		{ SEND, "{\"return\": {}, \"id\": @PREV}\n", 0 },
		{ SEND, "{\"return\": 42, \"id\": @ID}\n", 0 },
		{ HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake f;
	json_t *ret = NULL;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qmp_client_connect(f.path, 2000, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "slow", NULL, -1, NULL, 100, err, sizeof(err)), -ETIMEDOUT);
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
	static const struct step script[] = {
		{ SEND, GREETING, 0 },
		{ EXPECT, "qmp_capabilities", 0 },
		{ SEND, "{\"return\": {}, \"id\": @ID}\n", 0 },
		{ EXPECT, "\"quit\"", 0 },
		{ HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake f;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qmp_client_connect(f.path, 2000, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "quit", NULL, -1, NULL, 5000, err, sizeof(err)), -EPIPE);
	assert_non_null(strstr(err, "closed"));
	qmp_client_destroy(c);
	fake_finish(&f);
}

static void test_garbage_from_monitor(void **state)
{
	static const struct step script[] = {
		{ SEND, "this is not QMP\n", 0 },
		{ SLEEP_MS, NULL, 200 },
		{ HANG_UP, NULL, 0 },
	};
	struct qmp_client *c;
	struct fake f;
	char err[512];

	(void)state;
	fake_start(&f, script);
	assert_int_equal(qmp_client_connect(f.path, 2000, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(qmp_client_call(c, "query-status", NULL, -1, NULL, 5000, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "malformed JSON"));
	qmp_client_destroy(c);
	fake_finish(&f);
}

static void test_connect_nowhere_times_out(void **state)
{
	struct qmp_client *c = NULL;
	char err[512];

	(void)state;
	assert_int_equal(qmp_client_connect("/tmp/vitrine-no-such.sock", 100, NULL, NULL, &c, err, sizeof(err)),
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
