/* tests/unit/test_qmp.c: the pure QMP machine (vmm-qemu/qmp.c) against
 * scripted monitor bytes: greeting, negotiation, ids, errors, events at any
 * time, partial and malformed input. */
#include "vmm-qemu/qmp.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define GREETING                                                                                   \
	"{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 2, \"major\": 7}}, \"capabilities\": [\"oob\"]}}\r\n"

struct rec {
	int replies, errors, events;
	char last_event[64];
	char last_ret[256];
	char last_err[640];
	int order[16];
	int n_order;
};

static void on_event(void *ud, const char *name, const json_t *data)
{
	struct rec *r = ud;

	(void)data;
	r->events++;
	snprintf(r->last_event, sizeof(r->last_event), "%s", name);
}

static void on_reply(void *ud, const json_t *ret, const struct qmp_error *err)
{
	struct rec *r = ud;

	if (err) {
		r->errors++;
		snprintf(r->last_err, sizeof(r->last_err), "%s: %s", err->cls, err->desc);
	} else {
		char *s = json_dumps(ret, JSON_COMPACT | JSON_ENCODE_ANY);

		r->replies++;
		snprintf(r->last_ret, sizeof(r->last_ret), "%s", s);
		free(s);
	}
}

/* Takes everything queued for writing as one string (caller frees). */
static char *drain(struct qmp *q, int *fd_seen)
{
	const char *data;
	size_t len, total = 0;
	char *out = calloc(1, 1);
	int fd;

	*fd_seen = -1;
	while (qmp_next_output(q, &data, &len, &fd)) {
		out = realloc(out, total + len + 1);
		memcpy(out + total, data, len);
		total += len;
		out[total] = '\0';
		if (fd >= 0)
			*fd_seen = fd;
		qmp_output_done(q, len);
	}
	return out;
}

static int feed(struct qmp *q, const char *s)
{
	char err[256];

	return qmp_feed(q, s, strlen(s), err, sizeof(err));
}

/* Greeting + capabilities: returns a ready session. */
static struct qmp *ready_session(struct rec *r)
{
	struct qmp *q = qmp_create(on_event, r);
	int fd;
	char *out;

	assert_non_null(q);
	assert_int_equal(feed(q, GREETING), 0);
	out = drain(q, &fd);
	assert_string_equal(out, "{\"execute\":\"qmp_capabilities\",\"id\":1}\n");
	free(out);
	assert_false(qmp_ready(q));
	assert_int_equal(feed(q, "{\"return\": {}, \"id\": 1}\r\n"), 0);
	assert_true(qmp_ready(q));
	return q;
}

static void test_negotiation_and_held_commands(void **state)
{
	struct rec r = { 0 };
	struct qmp *q = qmp_create(on_event, &r);
	int64_t id;
	char *out;
	int fd;

	(void)state;
	/* Queued before the greeting: held until capabilities are negotiated. */
	id = qmp_command(q, "query-status", NULL, -1, on_reply, &r);
	assert_int_equal(id, 1);
	out = drain(q, &fd);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(feed(q, GREETING), 0);
	out = drain(q, &fd);
	assert_string_equal(out, "{\"execute\":\"qmp_capabilities\",\"id\":2}\n");
	free(out);
	assert_int_equal(feed(q, "{\"return\": {}, \"id\": 2}\r\n"), 0);
	out = drain(q, &fd);
	assert_string_equal(out, "{\"execute\":\"query-status\",\"id\":1}\n");
	free(out);
	assert_int_equal(
		feed(q,
		     "{\"return\": {\"status\": \"running\", \"running\": true}, \"id\": 1}\r\n"),
		0);
	assert_int_equal(r.replies, 1);
	assert_string_equal(r.last_ret, "{\"status\":\"running\",\"running\":true}");
	assert_int_equal(qmp_pending(q), 0);
	qmp_destroy(q);
}

static void test_arguments_and_fd(void **state)
{
	struct rec r = { 0 };
	struct qmp *q = ready_session(&r);
	char *out;
	int fd;

	(void)state;
	assert_int_equal(qmp_command(q, "getfd", json_pack("{s:s}", "fdname", "vnc"), 7, on_reply,
				     &r),
			 2);
	out = drain(q, &fd);
	assert_string_equal(
		out, "{\"execute\":\"getfd\",\"id\":2,\"arguments\":{\"fdname\":\"vnc\"}}\n");
	assert_int_equal(fd, 7);
	free(out);
	qmp_destroy(q);
}

static void test_partial_reads_byte_by_byte(void **state)
{
	const char *script =
		"{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, \"event\": \"STOP\"}\r\n"
		"{\"return\": {\"x\": 1}, \"id\": 2}\r\n";
	struct rec r = { 0 };
	struct qmp *q = ready_session(&r);
	char err[128];

	(void)state;
	qmp_command(q, "stop", NULL, -1, on_reply, &r);
	for (size_t i = 0; script[i]; i++) {
		assert_int_equal(qmp_feed(q, script + i, 1, err, sizeof(err)), 0);
		if (i < 40)
			assert_int_equal(r.events, 0);
	}
	assert_int_equal(r.events, 1);
	assert_string_equal(r.last_event, "STOP");
	assert_int_equal(r.replies, 1);
	assert_string_equal(r.last_ret, "{\"x\":1}");
	qmp_destroy(q);
}

static void test_events_between_and_out_of_order_replies(void **state)
{
	struct rec r = { 0 };
	struct qmp *q = ready_session(&r);

	(void)state;
	assert_int_equal(qmp_command(q, "a", NULL, -1, on_reply, &r), 2);
	assert_int_equal(qmp_command(q, "b", NULL, -1, on_reply, &r), 3);
	assert_int_equal(
		feed(q,
		     "{\"event\": \"RESUME\", \"timestamp\": {}}\r\n"
		     "{\"return\": \"second\", \"id\": 3}\r\n"
		     "{\"event\": \"SHUTDOWN\", \"data\": {\"guest\": true}}\r\n"
		     "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"no a\"}, \"id\": 2}\r\n"),
		0);
	assert_int_equal(r.events, 2);
	assert_string_equal(r.last_event, "SHUTDOWN");
	assert_int_equal(r.replies, 1);
	assert_string_equal(r.last_ret, "\"second\"");
	assert_int_equal(r.errors, 1);
	assert_string_equal(r.last_err, "CommandNotFound: no a");
	assert_int_equal(qmp_pending(q), 0);
	qmp_destroy(q);
}

static void expect_broken(const char *greeting, const char *then, const char *reason)
{
	struct rec r = { 0 };
	struct qmp *q = qmp_create(on_event, &r);
	char err[256] = "";
	int rc;

	if (greeting)
		assert_int_equal(feed(q, greeting), 0);
	rc = qmp_feed(q, then, strlen(then), err, sizeof(err));
	assert_int_equal(rc, -EPROTO);
	if (!strstr(err, reason))
		fail_msg("error '%s' does not mention '%s'", err, reason);
	/* Once broken, always broken. */
	assert_int_equal(feed(q, "{\"return\": {}, \"id\": 1}\n"), -EPROTO);
	qmp_destroy(q);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_broken(NULL, "{\"return\": {}, \"id\": 1}\n", "greeting");
	expect_broken(NULL, "{not json\n", "malformed JSON");
	expect_broken(NULL, "[1,2]\n", "not a JSON object");
	expect_broken(GREETING, GREETING, "second QMP greeting");
	expect_broken(GREETING, "{\"return\": {}, \"id\": 99}\n", "never sent");
	expect_broken(GREETING, "{\"return\": {}}\n", "without an id");
	expect_broken(GREETING, "{\"error\": \"x\", \"id\": 1}\n", "without a class");
	expect_broken(GREETING, "{\"event\": 5}\n", "event name");
	expect_broken(GREETING, "{\"hello\": 1}\n", "neither");
	expect_broken(GREETING,
		      "{\"error\": {\"class\": \"GenericError\", \"desc\": \"no\"}, \"id\": 1}\n",
		      "capabilities refused");
}

static void test_truncated_then_destroy_fails_pending(void **state)
{
	struct rec r = { 0 };
	struct qmp *q = ready_session(&r);

	(void)state;
	qmp_command(q, "query-status", NULL, -1, on_reply, &r);
	/* Half a reply, then the monitor goes away. */
	assert_int_equal(feed(q, "{\"return\": {\"status\": \"runn"), 0);
	assert_int_equal(r.replies, 0);
	qmp_destroy(q);
	assert_int_equal(r.errors, 1);
	assert_string_equal(r.last_err, "Disconnected: the monitor connection closed");
}

static void test_oversized_line(void **state)
{
	struct rec r = { 0 };
	struct qmp *q = ready_session(&r);
	size_t n = QMP_MAX_LINE + 10;
	char *big = malloc(n), err[128];

	(void)state;
	memset(big, ' ', n);
	assert_int_equal(qmp_feed(q, big, n, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "QMP_MAX_LINE"));
	free(big);
	qmp_destroy(q);
}

static void test_forget(void **state)
{
	struct rec r = { 0 };
	struct qmp *q = ready_session(&r);
	int64_t id = qmp_command(q, "x", NULL, -1, on_reply, &r);

	(void)state;
	qmp_forget(q, (uint64_t)id);
	assert_int_equal(feed(q, "{\"return\": {}, \"id\": 2}\n"), 0);
	assert_int_equal(r.replies, 0);
	assert_int_equal(qmp_pending(q), 0);
	qmp_destroy(q);
}

/* A callback that queues a follow-up command while the machine dispatches. */
static void chain(void *ud, const json_t *ret, const struct qmp_error *err)
{
	struct qmp *q = ud;

	(void)ret;
	(void)err;
	qmp_command(q, "cont", NULL, -1, NULL, NULL);
}

static void test_reentrant_command_from_callback(void **state)
{
	struct rec r = { 0 };
	struct qmp *q = ready_session(&r);
	char *out;
	int fd;

	(void)state;
	qmp_command(q, "stop", NULL, -1, chain, q);
	free(drain(q, &fd));
	assert_int_equal(feed(q, "{\"return\": {}, \"id\": 2}\n"), 0);
	out = drain(q, &fd);
	assert_string_equal(out, "{\"execute\":\"cont\",\"id\":3}\n");
	free(out);
	qmp_destroy(q);
}

static void test_parse_message_kinds(void **state)
{
	struct qmp_msg m;
	char err[128];
	const char *ev = "{\"event\":\"GUEST_PANICKED\",\"data\":{\"action\":\"pause\"}}";

	(void)state;
	assert_int_equal(qmp_parse_message(ev, strlen(ev), &m, err, sizeof(err)), 0);
	assert_int_equal(m.kind, QMP_MSG_EVENT);
	assert_string_equal(m.event, "GUEST_PANICKED");
	assert_string_equal(json_string_value(json_object_get(m.data, "action")), "pause");
	json_decref(m.root);
	/* A non-positive or non-integer id counts as absent. */
	assert_int_equal(qmp_parse_message("{\"return\":1,\"id\":\"x\"}", 21, &m, err, sizeof(err)),
			 0);
	assert_false(m.has_id);
	json_decref(m.root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_negotiation_and_held_commands),
		cmocka_unit_test(test_arguments_and_fd),
		cmocka_unit_test(test_partial_reads_byte_by_byte),
		cmocka_unit_test(test_events_between_and_out_of_order_replies),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_truncated_then_destroy_fails_pending),
		cmocka_unit_test(test_oversized_line),
		cmocka_unit_test(test_forget),
		cmocka_unit_test(test_reentrant_command_from_callback),
		cmocka_unit_test(test_parse_message_kinds),
	};

	return cmocka_run_group_tests_name("qmp", tests, NULL, NULL);
}
