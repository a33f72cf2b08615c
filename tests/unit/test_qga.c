/* tests/unit/test_qga.c: the pure guest-agent machine (vmm-qemu/qga.c)
 * against scripted agent bytes: the guest-sync-delimited handshake, stale
 * bytes left by an earlier client, one command at a time with replies in
 * order, error replies, partial and malformed input, resync after a
 * timeout, and the guest-exec argument and status helpers. */
#include "vmm-qemu/qga.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SYNC_ID 4242424242424242LL
#define SYNC_REQ                                                                                   \
	"\xff{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":4242424242424242}}\n"
#define SYNC_REPLY "\xff{\"return\": 4242424242424242}\n"

struct rec {
	int replies, errors;
	char log[1024]; /* "name=ret" or "name!class: desc", one per line */
};

struct tag {
	struct rec *r;
	const char *name;
};

static void on_reply(void *ud, const json_t *ret, const struct qga_error *err)
{
	struct tag *t = ud;
	size_t used = strlen(t->r->log);

	if (err) {
		t->r->errors++;
		snprintf(t->r->log + used, sizeof(t->r->log) - used, "%s!%s: %s\n", t->name,
			 err->cls, err->desc);
	} else {
		char *s = json_dumps(ret, JSON_COMPACT | JSON_ENCODE_ANY);

		t->r->replies++;
		snprintf(t->r->log + used, sizeof(t->r->log) - used, "%s=%s\n", t->name, s);
		free(s);
	}
}

/* Takes everything queued for writing as one string (caller frees). */
static char *drain(struct qga *g)
{
	const char *data;
	size_t len, total = 0;
	char *out = calloc(1, 1);

	while (qga_next_output(g, &data, &len)) {
		out = realloc(out, total + len + 1);
		memcpy(out + total, data, len);
		total += len;
		out[total] = '\0';
		qga_output_done(g, len);
	}
	return out;
}

static void assert_drain(struct qga *g, const char *want)
{
	char *got = drain(g);

	assert_string_equal(got, want);
	free(got);
}

static int feed(struct qga *g, const char *s)
{
	char err[256] = "";

	return qga_feed(g, s, strlen(s), err, sizeof(err));
}

/* A session in sync, with nothing queued. */
static struct qga *synced(void)
{
	struct qga *g = qga_create(SYNC_ID);

	assert_non_null(g);
	assert_drain(g, SYNC_REQ);
	assert_int_equal(feed(g, SYNC_REPLY), 0);
	assert_true(qga_synced(g));
	return g;
}

static void test_sync_handshake(void **state)
{
	struct qga *g = qga_create(SYNC_ID);

	(void)state;
	assert_false(qga_synced(g));
	/* The request starts with the sentinel that flushes the agent's parser. */
	assert_drain(g, SYNC_REQ);
	assert_false(qga_synced(g));
	/* Without the sentinel the right number is not our reply. */
	assert_int_equal(feed(g, "{\"return\": 4242424242424242}\n"), 0);
	assert_false(qga_synced(g));
	assert_int_equal(feed(g, SYNC_REPLY), 0);
	assert_true(qga_synced(g));
	assert_drain(g, "");
	assert_null(qga_broken(g));
	qga_destroy(g);
}

static void test_stale_bytes_before_sync(void **state)
{
	struct rec r = { 0 };
	struct tag t = { &r, "info" };
	struct qga *g = qga_create(SYNC_ID);

	(void)state;
	/* Queued before the sync: held back until the agent is in sync. */
	assert_true(qga_command(g, "guest-info", NULL, on_reply, &t) > 0);
	assert_drain(g, SYNC_REQ);
	/* What an earlier client left: replies, a half line, the error the
	 * agent gives for our sentinel, another client's delimited sync, a
	 * sentinel in the middle of a line, a long stale line, garbage. */
	assert_int_equal(feed(g, "{\"return\": {}}\n{\"return\": {\"pid\": 7}}\n{\"ret"), 0);
	assert_int_equal(
		feed(g,
		     "{\"error\": {\"class\": \"GenericError\", \"desc\": \"JSON parse error\"}}\n"),
		0);
	assert_int_equal(feed(g, "\xff{\"return\": 17}\n"), 0);
	assert_int_equal(feed(g, "\xff{\"return\": {\"exited\":\xff{\"return\": 18}\n"), 0);
	{
		char big[1024];

		memset(big, 'x', sizeof(big) - 2);
		big[0] = '\xff';
		big[sizeof(big) - 2] = '\n';
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(feed(g, big), 0);
	}
	assert_int_equal(feed(g, "\xff not json\n"), 0);
	assert_false(qga_synced(g));
	assert_drain(g, "");
	assert_int_equal(r.replies + r.errors, 0);
	/* Our reply, then the command goes out. */
	assert_int_equal(feed(g, SYNC_REPLY), 0);
	assert_true(qga_synced(g));
	assert_drain(g, "{\"execute\":\"guest-info\"}\n");
	assert_int_equal(feed(g, "{\"return\": {\"version\": \"7.2.15\"}}\n"), 0);
	assert_string_equal(r.log, "info={\"version\":\"7.2.15\"}\n");
	qga_destroy(g);
}

static void test_sync_reply_and_reply_in_one_read(void **state)
{
	struct rec r = { 0 };
	struct tag t = { &r, "ping" };
	struct qga *g = qga_create(SYNC_ID);

	(void)state;
	assert_drain(g, SYNC_REQ);
	assert_int_equal(feed(g, "junk\n" SYNC_REPLY), 0);
	assert_true(qga_command(g, "guest-ping", NULL, on_reply, &t) > 0);
	assert_drain(g, "{\"execute\":\"guest-ping\"}\n");
	assert_int_equal(feed(g, "{\"return\": {}}\n"), 0);
	assert_string_equal(r.log, "ping={}\n");
	qga_destroy(g);
}

static void test_one_at_a_time_in_order(void **state)
{
	struct rec r = { 0 };
	struct tag a = { &r, "a" }, b = { &r, "b" }, c = { &r, "c" };
	struct qga *g = synced();

	(void)state;
	assert_true(qga_command(g, "guest-ping", NULL, on_reply, &a) > 0);
	assert_true(qga_command(g, "guest-get-time", NULL, on_reply, &b) > 0);
	assert_true(qga_command(g, "guest-exec-status", json_pack("{s:i}", "pid", 12), on_reply,
				&c) > 0);
	assert_int_equal(qga_pending(g), 3);
	/* Only the first goes out until it is answered. */
	assert_drain(g, "{\"execute\":\"guest-ping\"}\n");
	assert_drain(g, "");
	assert_int_equal(feed(g, "{\"return\": {}}\n"), 0);
	assert_drain(g, "{\"execute\":\"guest-get-time\"}\n");
	assert_int_equal(feed(g, "{\"return\": 1700000000000000000}\n"), 0);
	assert_drain(g, "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":12}}\n");
	assert_int_equal(qga_pending(g), 1);
	assert_int_equal(feed(g, "{\"return\": {\"exited\": false}}\n"), 0);
	assert_string_equal(r.log, "a={}\nb=1700000000000000000\nc={\"exited\":false}\n");
	assert_int_equal(qga_pending(g), 0);
	qga_destroy(g);
}

static void test_error_reply(void **state)
{
	struct rec r = { 0 };
	struct tag a = { &r, "exec" }, b = { &r, "next" };
	struct qga *g = synced();

	(void)state;
	qga_command(g, "guest-exec", json_pack("{s:s}", "path", "/nope"), on_reply, &a);
	qga_command(g, "guest-ping", NULL, on_reply, &b);
	free(drain(g));
	assert_int_equal(
		feed(g,
		     "{\"error\": {\"class\": \"GenericError\", \"desc\": \"Failed to execute child process \\u201c/nope\\u201d (No such file or directory)\"}}\n"),
		0);
	assert_int_equal(r.errors, 1);
	assert_drain(g, "{\"execute\":\"guest-ping\"}\n");
	assert_int_equal(feed(g, "{\"return\": {}}\n"), 0);
	assert_string_equal(
		r.log,
		"exec!GenericError: Failed to execute child process “/nope” (No such file or directory)\nnext={}\n");
	qga_destroy(g);
}

static void test_partial_reads(void **state)
{
	const char *in = SYNC_REPLY "{\"return\": {\"pid\": 4711}}\r\n";
	struct rec r = { 0 };
	struct tag t = { &r, "exec" };
	struct qga *g = qga_create(SYNC_ID);
	char err[128];

	(void)state;
	qga_command(g, "guest-exec", json_pack("{s:s}", "path", "echo"), on_reply, &t);
	/* Writes can be partial too. */
	{
		const char *data;
		size_t len;

		assert_true(qga_next_output(g, &data, &len));
		assert_int_equal(data[0], '\xff');
		qga_output_done(g, 10);
		assert_true(qga_next_output(g, &data, &len));
		assert_int_equal(len, strlen(SYNC_REQ) - 10);
		qga_output_done(g, len);
	}
	for (size_t i = 0; in[i]; i++) {
		assert_int_equal(qga_feed(g, in + i, 1, err, sizeof(err)), 0);
		if (in[i] == '\n' && !r.replies) {
			/* The sync is done: the command goes out. */
			char *s = drain(g);

			assert_string_equal(
				s,
				"{\"execute\":\"guest-exec\",\"arguments\":{\"path\":\"echo\"}}\n");
			free(s);
		}
	}
	assert_string_equal(r.log, "exec={\"pid\":4711}\n");
	qga_destroy(g);
}

static void test_malformed_breaks_stream(void **state)
{
	const char *bad[] = {
		"{nope\n",
		"[1, 2]\n",
		"{\"event\": \"X\"}\n",
		"{\"error\": {\"desc\": \"no class\"}}\n",
		"{\"return\": {}, \"return\": 1}\n",
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rec r = { 0 };
		struct tag t = { &r, "x" };
		struct qga *g = synced();

		qga_command(g, "guest-ping", NULL, on_reply, &t);
		free(drain(g));
		err[0] = '\0';
		assert_int_equal(qga_feed(g, bad[i], strlen(bad[i]), err, sizeof(err)), -EPROTO);
		assert_true(err[0] != '\0');
		assert_non_null(qga_broken(g));
		/* Broken stays broken, even for good input, and writes nothing. */
		assert_int_equal(feed(g, "{\"return\": {}}\n"), -EPROTO);
		assert_drain(g, "");
		assert_int_equal(r.replies, 0);
		qga_destroy(g);
		assert_int_equal(r.errors, 1); /* Disconnected */
	}
}

static void test_oversized_reply(void **state)
{
	struct rec r = { 0 };
	struct tag t = { &r, "x" };
	struct qga *g = synced();
	size_t n = QGA_MAX_LINE + 10;
	char *big = malloc(n), err[128];

	(void)state;
	qga_command(g, "guest-exec-status", NULL, on_reply, &t);
	free(drain(g));
	memset(big, ' ', n);
	/* Across two reads: the bound holds for a line that is half buffered. */
	assert_int_equal(qga_feed(g, big, n / 2, err, sizeof(err)), 0);
	assert_int_equal(qga_feed(g, big, n - n / 2, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "QGA_MAX_LINE"));
	assert_non_null(qga_broken(g));
	free(big);
	qga_destroy(g);
	assert_int_equal(r.errors, 1);
}

static void test_reply_to_no_command(void **state)
{
	struct qga *g = synced();
	char err[256] = "";

	(void)state;
	assert_int_equal(qga_feed(g, "{\"return\": {}}\n", 15, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "no command"));
	qga_destroy(g);
}

static void test_blank_lines_and_sentinel_after_sync(void **state)
{
	struct rec r = { 0 };
	struct tag t = { &r, "t" };
	struct qga *g = synced();

	(void)state;
	qga_command(g, "guest-get-time", NULL, on_reply, &t);
	free(drain(g));
	/* Blank lines are ignored; a sentinel flushes a partial line. */
	assert_int_equal(feed(g, "\n  \r\n{\"return\": {\"bro\xff{\"return\": 5}\n"), 0);
	assert_string_equal(r.log, "t=5\n");
	qga_destroy(g);
}

static void test_resync_after_timeout(void **state)
{
	struct rec r = { 0 };
	struct tag slow = { &r, "slow" }, next = { &r, "next" };
	struct qga *g = synced();

	(void)state;
	qga_command(g, "guest-exec-status", json_pack("{s:i}", "pid", 1), on_reply, &slow);
	qga_command(g, "guest-ping", NULL, on_reply, &next);
	assert_drain(g, "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":1}}\n");
	/* The caller gave up on it: the in-flight command is abandoned and a
	 * new sync goes out before the queued command. */
	qga_resync(g, 99);
	assert_false(qga_synced(g));
	assert_string_equal(
		r.log, "slow!Abandoned: no reply in time; the agent is being resynchronised\n");
	assert_drain(g, "\xff{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":99}}\n");
	/* The late reply, and a reply to the old sync id, are stale. */
	assert_int_equal(feed(g, "{\"return\": {\"exited\": true}}\n" SYNC_REPLY), 0);
	assert_false(qga_synced(g));
	assert_int_equal(feed(g, "\xff{\"return\": 99}\n"), 0);
	assert_true(qga_synced(g));
	assert_drain(g, "{\"execute\":\"guest-ping\"}\n");
	assert_int_equal(feed(g, "{\"return\": {}}\n"), 0);
	assert_int_equal(r.replies, 1);
	assert_int_equal(r.errors, 1);
	qga_destroy(g);
}

static void test_resync_mid_write(void **state)
{
	struct qga *g = synced();
	const char *data;
	size_t len;

	(void)state;
	qga_command(g, "guest-ping", NULL, NULL, NULL);
	assert_true(qga_next_output(g, &data, &len));
	qga_output_done(g, 5); /* half a command reached the agent */
	qga_resync(g, 7);
	/* The sentinel in front of the new sync flushes that half. */
	assert_drain(g, "\xff{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":7}}\n");
	assert_int_equal(qga_pending(g), 0);
	qga_destroy(g);
}

static void test_forget(void **state)
{
	struct rec r = { 0 };
	struct tag a = { &r, "a" }, b = { &r, "b" }, c = { &r, "c" };
	struct qga *g = synced();
	int64_t ha, hb;

	(void)state;
	ha = qga_command(g, "guest-ping", NULL, on_reply, &a);
	hb = qga_command(g, "guest-info", NULL, on_reply, &b);
	qga_command(g, "guest-get-time", NULL, on_reply, &c);
	assert_true(ha > 0 && hb > ha);
	free(drain(g));
	qga_forget(g, ha); /* in flight: its reply is still due, and dropped */
	qga_forget(g, hb); /* queued: never sent */
	qga_forget(g, 12345);
	assert_int_equal(qga_pending(g), 2);
	assert_int_equal(feed(g, "{\"return\": {}}\n"), 0);
	assert_drain(g, "{\"execute\":\"guest-get-time\"}\n");
	assert_int_equal(feed(g, "{\"return\": 3}\n"), 0);
	assert_string_equal(r.log, "c=3\n");
	qga_destroy(g);
}

static void test_destroy_fails_pending(void **state)
{
	struct rec r = { 0 };
	struct tag a = { &r, "a" }, b = { &r, "b" };
	struct qga *g = qga_create(1);

	(void)state;
	qga_command(g, "guest-ping", NULL, on_reply, &a);
	qga_command(g, "guest-ping", NULL, on_reply, &b);
	qga_destroy(g);
	qga_destroy(NULL);
	assert_int_equal(r.errors, 2);
	assert_non_null(strstr(r.log, "a!Disconnected"));
	assert_non_null(strstr(r.log, "b!Disconnected"));
}

/* A callback that queues the next command. */
static void chain(void *ud, const json_t *ret, const struct qga_error *err)
{
	struct qga **gp = ud;

	(void)ret;
	(void)err;
	qga_command(*gp, "guest-info", NULL, NULL, NULL);
}

static void test_callback_queues_command(void **state)
{
	struct qga *g = synced();

	(void)state;
	qga_command(g, "guest-ping", NULL, chain, &g);
	free(drain(g));
	assert_int_equal(feed(g, "{\"return\": {}}\n"), 0);
	assert_drain(g, "{\"execute\":\"guest-info\"}\n");
	qga_destroy(g);
}

/* ---- guest-exec helpers ---- */

static void test_exec_args(void **state)
{
	const char *argv[] = { "vitrine-type", "Grüße ✓", "--", NULL };
	const char *env[] = { "DISPLAY=:0", NULL };
	char err[128], *s;
	json_t *a;

	(void)state;
	a = qga_exec_args(argv, env, "hi\n", 3, err, sizeof(err));
	assert_non_null(a);
	s = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(
		s, "{\"arg\":[\"Grüße ✓\",\"--\"],\"capture-output\":true,"
		   "\"env\":[\"DISPLAY=:0\"],\"input-data\":\"aGkK\",\"path\":\"vitrine-type\"}");
	free(s);
	json_decref(a);
	/* No env, no stdin: neither member. */
	a = qga_exec_args(argv, NULL, NULL, 0, err, sizeof(err));
	assert_null(json_object_get(a, "env"));
	assert_null(json_object_get(a, "input-data"));
	json_decref(a);
	/* Empty stdin is still stdin. */
	a = qga_exec_args(argv, NULL, "", 0, err, sizeof(err));
	assert_string_equal(json_string_value(json_object_get(a, "input-data")), "");
	json_decref(a);
	{
		const char *none[] = { NULL };
		const char *bad[] = { "echo", "\xff\xfe", NULL };

		assert_null(qga_exec_args(none, NULL, NULL, 0, err, sizeof(err)));
		assert_null(qga_exec_args(bad, NULL, NULL, 0, err, sizeof(err)));
		assert_non_null(strstr(err, "UTF-8"));
	}
}

static void test_exec_pid(void **state)
{
	json_t *ok = json_pack("{s:i}", "pid", 812), *bad = json_pack("{s:s}", "pid", "x");
	int64_t pid = 0;
	char err[128];

	(void)state;
	assert_int_equal(qga_exec_parse_pid(ok, &pid, err, sizeof(err)), 0);
	assert_int_equal(pid, 812);
	assert_int_equal(qga_exec_parse_pid(bad, &pid, err, sizeof(err)), -EPROTO);
	assert_int_equal(qga_exec_parse_pid(NULL, &pid, err, sizeof(err)), -EPROTO);
	json_decref(ok);
	json_decref(bad);
}

static int parse(const char *text, size_t max, struct qga_exec_result *r)
{
	json_t *v = json_loads(text, 0, NULL);
	char err[128];
	int rc;

	assert_non_null(v);
	rc = qga_exec_parse_status(v, max, r, err, sizeof(err));
	json_decref(v);
	return rc;
}

static void test_exec_status(void **state)
{
	struct qga_exec_result r = { .pid = 33 };

	(void)state;
	assert_int_equal(parse("{\"exited\": false}", 1024, &r), 0);
	assert_false(r.exited);
	assert_int_equal(r.pid, 33);
	assert_null(r.out);
	/* Exited with output on both streams (stdout "hi\n", stderr "oops"). */
	assert_int_equal(
		parse("{\"exitcode\": 3, \"out-data\": \"aGkK\", \"err-data\": \"b29wcw==\", \"exited\": true}",
		      1024, &r),
		0);
	assert_true(r.exited);
	assert_int_equal(r.pid, 33);
	assert_int_equal(r.exit_code, 3);
	assert_int_equal(r.signal, 0);
	assert_int_equal(r.out_len, 3);
	assert_string_equal(r.out, "hi\n");
	assert_int_equal(r.err_len, 4);
	assert_string_equal(r.err, "oops");
	assert_false(r.out_truncated || r.err_truncated);
	/* No output members: empty strings. Killed by a signal. */
	assert_int_equal(parse("{\"exited\": true, \"signal\": 9}", 1024, &r), 0);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.signal, 9);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	/* Cut at max_output; the agent's own truncation flag is kept. */
	assert_int_equal(
		parse("{\"exited\": true, \"exitcode\": 0, \"out-data\": \"Zm9vYmFy\", \"err-truncated\": true}",
		      4, &r),
		0);
	assert_int_equal(r.out_len, 4);
	assert_string_equal(r.out, "foob");
	assert_true(r.out_truncated);
	assert_true(r.err_truncated);
	/* Binary output keeps its NULs. */
	assert_int_equal(parse("{\"exited\": true, \"exitcode\": 0, \"out-data\": \"AGEA\"}", 16,
			       &r),
			 0);
	assert_int_equal(r.out_len, 3);
	assert_memory_equal(r.out, "\0a\0", 3);
	qga_exec_result_free(&r);
	qga_exec_result_free(NULL);
}

static void test_exec_status_malformed(void **state)
{
	const char *bad[] = {
		"{}",
		"{\"exited\": 1}",
		"{\"exited\": true, \"exitcode\": \"0\"}",
		"{\"exited\": true, \"exitcode\": 0, \"out-data\": 5}",
		"{\"exited\": true, \"exitcode\": 0, \"out-data\": \"not base64!\"}",
		"{\"exited\": true, \"exitcode\": 0, \"err-data\": \"Zg=\"}",
		"[]",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct qga_exec_result r = { .pid = 5 };

		if (parse(bad[i], 1024, &r) != -EPROTO)
			fail_msg("accepted %s", bad[i]);
		assert_null(r.out);
		assert_null(r.err);
		assert_int_equal(r.pid, 5);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_handshake),
		cmocka_unit_test(test_stale_bytes_before_sync),
		cmocka_unit_test(test_sync_reply_and_reply_in_one_read),
		cmocka_unit_test(test_one_at_a_time_in_order),
		cmocka_unit_test(test_error_reply),
		cmocka_unit_test(test_partial_reads),
		cmocka_unit_test(test_malformed_breaks_stream),
		cmocka_unit_test(test_oversized_reply),
		cmocka_unit_test(test_reply_to_no_command),
		cmocka_unit_test(test_blank_lines_and_sentinel_after_sync),
		cmocka_unit_test(test_resync_after_timeout),
		cmocka_unit_test(test_resync_mid_write),
		cmocka_unit_test(test_forget),
		cmocka_unit_test(test_destroy_fails_pending),
		cmocka_unit_test(test_callback_queues_command),
		cmocka_unit_test(test_exec_args),
		cmocka_unit_test(test_exec_pid),
		cmocka_unit_test(test_exec_status),
		cmocka_unit_test(test_exec_status_malformed),
	};

	return cmocka_run_group_tests_name("qga machine", tests, NULL, NULL);
}
