/* tests/unit/test_agent_frame.c: the host's pure machine over vitrine-agent's
 * bytes (vmm-qemu/agent_frame.c): frames cut from any split of the stream,
 * garbage and bad headers skipped and counted, at most one partial frame
 * held; per channel, the order of frames a guest may send, DATA held to the
 * credit we gave (the CDP allowance for one whole message included), our
 * own credit never above the window however much the guest returns. */
#include "vmm-qemu/agent_frame.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Appends one frame to buf at *n. */
static void frame(unsigned char *buf, size_t *n, uint32_t chan, uint8_t type, uint8_t flags,
		  const void *p, size_t len)
{
	agent_header_put(buf + *n, chan, type, flags, (uint32_t)len);
	if (len)
		memcpy(buf + *n + AGENT_HEADER, p, len);
	*n += AGENT_HEADER + len;
}

static void test_rx_any_split(void **state)
{
	static unsigned char stream[4096];
	size_t n = 0;

	(void)state;
	memcpy(stream, "VVgarbageVTA", 12); /* a false start, then a cut-off magic */
	n = 12;
	frame(stream, &n, 2, AGENT_OPENED, 0, "pid=1", 5);
	/* a header with a bad type and one too long: skipped */
	frame(stream, &n, 2, 99, 0, NULL, 0);
	agent_header_put(stream + n, 2, AGENT_DATA, 0, AGENT_MAX_PAYLOAD + 1);
	n += AGENT_HEADER;
	frame(stream, &n, 2, AGENT_DATA, 1, "hello", 5);
	frame(stream, &n, 3, AGENT_EOF, 0, NULL, 0);
	for (size_t step = 1; step <= n; step++) {
		struct agent_rx rx = { 0 };
		struct agent_header h;
		const unsigned char *p;
		int got = 0;

		for (size_t off = 0; off < n; off += step) {
			size_t k = n - off < step ? n - off : step;

			assert_int_equal(agent_rx_feed(&rx, stream + off, k), 0);
			while (agent_rx_next(&rx, &h, &p)) {
				switch (got++) {
				case 0:
					assert_int_equal(h.type, AGENT_OPENED);
					assert_memory_equal(p, "pid=1", 5);
					break;
				case 1:
					assert_int_equal(h.type, AGENT_DATA);
					assert_int_equal(h.flags, 1);
					assert_int_equal(h.len, 5);
					assert_memory_equal(p, "hello", 5);
					break;
				case 2:
					assert_int_equal(h.type, AGENT_EOF);
					assert_int_equal(h.chan, 3);
					break;
				default:
					fail_msg("a frame too many at step %zu", step);
				}
			}
			/* never more than one partial frame and the last feed */
			assert_true(agent_rx_held(&rx) <= AGENT_HEADER + AGENT_MAX_PAYLOAD + step);
		}
		if (got != 3)
			fail_msg("step %zu: %d frames", step, got);
		assert_true(rx.dropped > 12);
		assert_int_equal(rx.frames, 3);
		agent_rx_free(&rx);
	}
}

static void test_rx_garbage_only(void **state)
{
	struct agent_rx rx = { 0 };
	unsigned char junk[100000];
	struct agent_header h;
	const unsigned char *p;

	(void)state;
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 7 + 3);
	for (int round = 0; round < 20; round++) {
		assert_int_equal(agent_rx_feed(&rx, junk, sizeof(junk)), 0);
		assert_int_equal(agent_rx_next(&rx, &h, &p), 0);
		assert_true(agent_rx_held(&rx) < AGENT_HEADER); /* junk is dropped, not kept */
	}
	assert_true(rx.dropped > 19 * sizeof(junk));
	agent_rx_free(&rx);
}

static enum agent_verdict rx(struct agent_chan_state *s, uint8_t type, uint8_t flags, const void *p,
			     uint32_t len, const char **why)
{
	struct agent_header h = { .len = len, .chan = 2, .type = type, .flags = flags };

	return agent_chan_rx(s, &h, p, why);
}

static void test_window_exec(void **state)
{
	static unsigned char big[AGENT_MAX_PAYLOAD];
	struct agent_chan_state s;
	const char *why;

	(void)state;
	agent_chan_state_init(&s, AGENT_CHAN_EXEC, AGENT_VERSION_NUM);
	assert_int_equal(rx(&s, AGENT_OPENED, 0, "pid=5", 5, &why), AGENT_DELIVER);
	for (int i = 0; i < AGENT_WINDOW / AGENT_MAX_PAYLOAD; i++)
		assert_int_equal(rx(&s, AGENT_DATA, i & 1, big, sizeof(big), &why), AGENT_DELIVER);
	assert_int_equal(s.rx_room, 0);
	assert_int_equal(rx(&s, AGENT_DATA, 0, big, 1, &why), AGENT_OVERRUN);
	assert_non_null(strstr(why, "window"));
	/* what we return may be used again, never more than the window */
	agent_chan_returned(&s, 10);
	assert_int_equal(rx(&s, AGENT_DATA, 0, big, 10, &why), AGENT_DELIVER);
	assert_int_equal(rx(&s, AGENT_DATA, 0, big, 1, &why), AGENT_OVERRUN);
	agent_chan_returned(&s, 5u * AGENT_WINDOW);
	assert_int_equal(s.rx_room, AGENT_WINDOW);
	assert_int_equal(s.bytes_in, AGENT_WINDOW + 10);
}

static void test_window_cdp_v1_slack(void **state)
{
	static unsigned char big[AGENT_MAX_PAYLOAD];
	struct agent_chan_state s;
	const char *why;
	uint64_t sent = 0;

	(void)state;
	/* a version 1 agent sent whole DevTools messages past the window */
	agent_chan_state_init(&s, AGENT_CHAN_CDP, 1);
	assert_int_equal(rx(&s, AGENT_OPENED, 0, "", 0, &why), AGENT_DELIVER);
	while (sent + sizeof(big) <= AGENT_WINDOW + (uint64_t)AGENT_CDP_V1_SLACK) {
		assert_int_equal(rx(&s, AGENT_DATA, AGENT_FLAG_MORE, big, sizeof(big), &why),
				 AGENT_DELIVER);
		sent += sizeof(big);
	}
	assert_int_equal(rx(&s, AGENT_DATA, 0, big, sizeof(big), &why), AGENT_OVERRUN);
	/* the same channel of a version 2 agent (or one that names no known
	 * version), and a version 1 TCP channel, get no such allowance */
	for (int k = 0; k < 3; k++) {
		agent_chan_state_init(&s, k == 2 ? AGENT_CHAN_TCP : AGENT_CHAN_CDP,
				      k == 0   ? AGENT_VERSION_NUM
				      : k == 1 ? 0
					       : 1);
		assert_int_equal(rx(&s, AGENT_OPENED, 0, "", 0, &why), AGENT_DELIVER);
		for (int i = 0; i < AGENT_WINDOW / AGENT_MAX_PAYLOAD; i++)
			assert_int_equal(rx(&s, AGENT_DATA, k == 2 ? 0 : AGENT_FLAG_MORE, big,
					    sizeof(big), &why),
					 AGENT_DELIVER);
		assert_int_equal(rx(&s, AGENT_DATA, 0, big, 1, &why), AGENT_OVERRUN);
	}
}

static void test_version_parse(void **state)
{
	static const struct {
		const char *text;
		unsigned v;
	} cases[] = {
		{ AGENT_VERSION, AGENT_VERSION_NUM },
		{ "vitrine-agent 1", 1 },
		{ "vitrine-agent 12", 12 },
		{ "vitrine-agent 9999", 9999 },
		{ "vitrine-agent 10000", 0 },
		{ "vitrine-agent ", 0 },
		{ "vitrine-agent 01", 0 },
		{ "vitrine-agent 1 ", 0 },
		{ "vitrine-agent -1", 0 },
		{ "vitrine-agent 1x", 0 },
		{ "vitrine-agent1", 0 },
		{ "other 1", 0 },
		{ "", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (agent_version_parse((const unsigned char *)cases[i].text,
					strlen(cases[i].text)) != cases[i].v)
			fail_msg("'%s': not %u", cases[i].text, cases[i].v);
	assert_int_equal(agent_version_parse((const unsigned char *)"vitrine-agent 2\0", 16), 0);
}

static void test_order(void **state)
{
	struct agent_chan_state s;
	const char *why;

	(void)state;
	agent_chan_state_init(&s, AGENT_CHAN_EXEC, AGENT_VERSION_NUM);
	assert_int_equal(rx(&s, AGENT_DATA, 0, "x", 1, &why), AGENT_VIOLATION);
	assert_non_null(strstr(why, "before OPENED"));
	assert_int_equal(rx(&s, AGENT_EXIT, 0, "exit=0", 6, &why), AGENT_VIOLATION);
	assert_int_equal(rx(&s, AGENT_OPENED, 0, "", 0, &why), AGENT_DELIVER);
	assert_int_equal(rx(&s, AGENT_OPENED, 0, "", 0, &why), AGENT_VIOLATION);
	assert_int_equal(rx(&s, AGENT_DATA, 0, "", 0, &why), AGENT_IGNORE); /* empty */
	assert_int_equal(rx(&s, AGENT_EOF, 1, NULL, 0, &why), AGENT_DELIVER);
	assert_int_equal(rx(&s, AGENT_EOF, 1, NULL, 0, &why), AGENT_IGNORE);
	assert_int_equal(rx(&s, AGENT_DATA, 0, "out", 3, &why), AGENT_DELIVER);
	assert_int_equal(rx(&s, AGENT_DATA, 1, "err", 3, &why), AGENT_VIOLATION);
	assert_non_null(strstr(why, "after EOF"));
	for (uint8_t t = AGENT_EXEC; t <= AGENT_CDP; t++)
		assert_int_equal(rx(&s, t, 0, "", 0, &why), AGENT_VIOLATION);
	assert_int_equal(rx(&s, AGENT_SIGNAL, 0, "9", 1, &why), AGENT_VIOLATION);
	assert_int_equal(rx(&s, AGENT_PING, 0, "", 0, &why), AGENT_VIOLATION);
	assert_int_equal(rx(&s, AGENT_EXIT, 0, "exit=0", 6, &why), AGENT_DELIVER);
	assert_int_equal(rx(&s, AGENT_CLOSE, 0, "", 0, &why), AGENT_DELIVER);

	/* a guest-opened channel is open at once and has no command */
	agent_chan_state_init(&s, AGENT_CHAN_ACCEPTED, AGENT_VERSION_NUM);
	assert_int_equal(rx(&s, AGENT_DATA, 0, "GET", 3, &why), AGENT_DELIVER);
	assert_int_equal(rx(&s, AGENT_OPENED, 0, "", 0, &why), AGENT_VIOLATION);
	agent_chan_state_init(&s, AGENT_CHAN_ACCEPTED, AGENT_VERSION_NUM);
	assert_int_equal(rx(&s, AGENT_EXIT, 0, "exit=0", 6, &why), AGENT_VIOLATION);
	agent_chan_state_init(&s, AGENT_CHAN_ACCEPTED, AGENT_VERSION_NUM);
	assert_int_equal(rx(&s, AGENT_EOF, 1, NULL, 0, &why), AGENT_DELIVER); /* one stream */
	assert_int_equal(rx(&s, AGENT_DATA, 1, "x", 1, &why), AGENT_VIOLATION);
}

static void test_cdp_messages(void **state)
{
	struct agent_chan_state s;
	const char *why;

	(void)state;
	agent_chan_state_init(&s, AGENT_CHAN_CDP, AGENT_VERSION_NUM);
	assert_int_equal(rx(&s, AGENT_OPENED, 0, "", 0, &why), AGENT_DELIVER);
	assert_int_equal(rx(&s, AGENT_DATA, 0, "", 0, &why), AGENT_IGNORE); /* empty message */
	assert_int_equal(rx(&s, AGENT_DATA, AGENT_FLAG_MORE, "{", 1, &why), AGENT_DELIVER);
	assert_int_equal(rx(&s, AGENT_DATA, AGENT_FLAG_MORE, "", 0, &why), AGENT_IGNORE);
	assert_int_equal(rx(&s, AGENT_DATA, 0, "", 0, &why), AGENT_DELIVER); /* ends "{" */
	assert_int_equal(rx(&s, AGENT_DATA, 0, "", 0, &why), AGENT_IGNORE);
	assert_int_equal(rx(&s, AGENT_EOF, 0, NULL, 0, &why), AGENT_VIOLATION);
}

static void test_tx_credit(void **state)
{
	struct agent_chan_state s;
	unsigned char p[4];
	const char *why;

	(void)state;
	agent_chan_state_init(&s, AGENT_CHAN_TCP, AGENT_VERSION_NUM);
	agent_chan_sent(&s, 1000);
	assert_int_equal(s.tx_credit, AGENT_WINDOW - 1000);
	agent_put32(p, 0xffffffffu); /* a guest that grants itself the moon */
	assert_int_equal(rx(&s, AGENT_WINDOW_UPDATE, 0, p, 4, &why), AGENT_DELIVER);
	assert_int_equal(s.tx_credit, AGENT_WINDOW);
	assert_int_equal(rx(&s, AGENT_WINDOW_UPDATE, 0, p, 3, &why), AGENT_VIOLATION);
	assert_int_equal(s.bytes_out, 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rx_any_split),  cmocka_unit_test(test_rx_garbage_only),
		cmocka_unit_test(test_window_exec),   cmocka_unit_test(test_window_cdp_v1_slack),
		cmocka_unit_test(test_version_parse), cmocka_unit_test(test_order),
		cmocka_unit_test(test_cdp_messages),  cmocka_unit_test(test_tx_credit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
