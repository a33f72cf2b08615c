/* tests/unit/test_ws_rx.c: WebSocket message reassembly (common/ws_rx.h):
 * pieces and fragments, the size bound and what follows it, empty
 * messages, a new message cutting one short, handing the buffer over. */
#include "common/ws_rx.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_one_piece(void **state)
{
	struct ws_rx m;

	(void)state;
	ws_rx_init(&m, 64);
	assert_int_equal(ws_rx_append(&m, "{\"a\":1}", 7, true, true, false), WS_RX_COMPLETE);
	assert_int_equal(m.len, 7);
	assert_string_equal((char *)m.buf, "{\"a\":1}");
	assert_false(m.binary);
	ws_rx_free(&m);
	assert_null(m.buf);
	ws_rx_free(NULL);
}

static void test_fragments_and_pieces(void **state)
{
	static const uint8_t bin[] = { 0, 1, 2, 0, 3 };
	struct ws_rx m;

	(void)state;
	ws_rx_init(&m, 64);
	/* A binary message in three pieces: only the first says first, only the last final. */
	assert_int_equal(ws_rx_append(&m, bin, 2, true, false, true), WS_RX_PARTIAL);
	assert_int_equal(ws_rx_append(&m, bin + 2, 2, false, false, true), WS_RX_PARTIAL);
	assert_int_equal(ws_rx_append(&m, bin + 4, 1, false, true, true), WS_RX_COMPLETE);
	assert_int_equal(m.len, 5);
	assert_memory_equal(m.buf, bin, 5);
	assert_true(m.binary);
	/* The next message starts afresh, text this time. */
	assert_int_equal(ws_rx_append(&m, "ab", 2, true, false, false), WS_RX_PARTIAL);
	assert_int_equal(ws_rx_append(&m, "cd", 2, false, true, false), WS_RX_COMPLETE);
	assert_string_equal((char *)m.buf, "abcd");
	assert_false(m.binary);
	ws_rx_free(&m);
}

static void test_large_message_grows(void **state)
{
	size_t n = 300 * 1024, piece = 1000;
	uint8_t *want = malloc(n);
	struct ws_rx m;
	int rc = WS_RX_PARTIAL;

	(void)state;
	assert_non_null(want);
	for (size_t i = 0; i < n; i++)
		want[i] = (uint8_t)(i * 7 + i / 251);
	ws_rx_init(&m, n);
	for (size_t off = 0; off < n; off += piece) {
		size_t k = n - off < piece ? n - off : piece;

		rc = ws_rx_append(&m, want + off, k, off == 0, off + k == n, true);
		assert_int_equal(rc, off + k == n ? WS_RX_COMPLETE : WS_RX_PARTIAL);
	}
	assert_int_equal(m.len, n);
	assert_memory_equal(m.buf, want, n);
	assert_true(m.cap <= n + 1); /* never grown past the bound */
	ws_rx_free(&m);
	free(want);
}

static void test_bound(void **state)
{
	char big[40];
	struct ws_rx m;

	(void)state;
	memset(big, 'x', sizeof(big));
	ws_rx_init(&m, 16);
	/* Exactly max is fine. */
	assert_int_equal(ws_rx_append(&m, big, 16, true, true, false), WS_RX_COMPLETE);
	assert_int_equal(m.len, 16);
	/* One more: the error comes once, on the piece that goes over... */
	assert_int_equal(ws_rx_append(&m, big, 10, true, false, false), WS_RX_PARTIAL);
	assert_int_equal(ws_rx_append(&m, big, 7, false, false, false), -EMSGSIZE);
	assert_int_equal(m.len, 0);
	/* ...the rest of that message is skipped... */
	assert_int_equal(ws_rx_append(&m, big, 30, false, false, false), WS_RX_PARTIAL);
	assert_int_equal(ws_rx_append(&m, big, 1, false, true, false), WS_RX_PARTIAL);
	/* ...and the next message arrives whole. */
	assert_int_equal(ws_rx_append(&m, "ok", 2, true, true, false), WS_RX_COMPLETE);
	assert_string_equal((char *)m.buf, "ok");
	/* Over the bound in its one and only piece. */
	assert_int_equal(ws_rx_append(&m, big, 17, true, true, false), -EMSGSIZE);
	assert_int_equal(ws_rx_append(&m, "next", 4, true, true, false), WS_RX_COMPLETE);
	assert_string_equal((char *)m.buf, "next");
	/* Over the bound on the final piece. */
	assert_int_equal(ws_rx_append(&m, big, 16, true, false, false), WS_RX_PARTIAL);
	assert_int_equal(ws_rx_append(&m, big, 1, false, true, false), -EMSGSIZE);
	assert_int_equal(ws_rx_append(&m, "z", 1, true, true, false), WS_RX_COMPLETE);
	assert_string_equal((char *)m.buf, "z");
	ws_rx_free(&m);
	/* max 0 allows empty messages only. */
	ws_rx_init(&m, 0);
	assert_int_equal(ws_rx_append(&m, NULL, 0, true, true, false), WS_RX_COMPLETE);
	assert_int_equal(ws_rx_append(&m, "a", 1, true, true, false), -EMSGSIZE);
	ws_rx_free(&m);
}

static void test_empty_message(void **state)
{
	struct ws_rx m;

	(void)state;
	ws_rx_init(&m, 8);
	assert_int_equal(ws_rx_append(&m, NULL, 0, true, true, false), WS_RX_COMPLETE);
	assert_non_null(m.buf);
	assert_int_equal(m.len, 0);
	assert_string_equal((char *)m.buf, "");
	/* Empty pieces inside a message change nothing. */
	assert_int_equal(ws_rx_append(&m, "a", 1, true, false, false), WS_RX_PARTIAL);
	assert_int_equal(ws_rx_append(&m, NULL, 0, false, false, false), WS_RX_PARTIAL);
	assert_int_equal(ws_rx_append(&m, "b", 1, false, true, false), WS_RX_COMPLETE);
	assert_string_equal((char *)m.buf, "ab");
	ws_rx_free(&m);
}

static void test_first_restarts_and_reset(void **state)
{
	struct ws_rx m;

	(void)state;
	ws_rx_init(&m, 32);
	/* A piece that says first discards the unfinished message. */
	assert_int_equal(ws_rx_append(&m, "old", 3, true, false, true), WS_RX_PARTIAL);
	assert_int_equal(ws_rx_append(&m, "new", 3, true, true, false), WS_RX_COMPLETE);
	assert_string_equal((char *)m.buf, "new");
	assert_false(m.binary);
	/* reset forgets a message in progress, also one that was being dropped. */
	assert_int_equal(ws_rx_append(&m, "half", 4, true, false, false), WS_RX_PARTIAL);
	ws_rx_reset(&m);
	assert_int_equal(ws_rx_append(&m, "tail", 4, false, true, false), WS_RX_COMPLETE);
	assert_string_equal((char *)m.buf, "tail");
	ws_rx_free(&m);
}

static void test_take(void **state)
{
	struct ws_rx m;
	uint8_t *b;
	size_t n = 99;

	(void)state;
	ws_rx_init(&m, 32);
	assert_null(ws_rx_take(&m, &n));
	assert_int_equal(ws_rx_append(&m, "he", 2, true, false, false), WS_RX_PARTIAL);
	assert_null(ws_rx_take(&m, &n)); /* not whole yet */
	assert_int_equal(ws_rx_append(&m, "llo", 3, false, true, false), WS_RX_COMPLETE);
	b = ws_rx_take(&m, &n);
	assert_non_null(b);
	assert_int_equal(n, 5);
	assert_string_equal((char *)b, "hello");
	assert_null(m.buf);
	assert_null(ws_rx_take(&m, &n)); /* taken once */
	/* m receives on with a buffer of its own. */
	assert_int_equal(ws_rx_append(&m, "again", 5, true, true, false), WS_RX_COMPLETE);
	assert_string_equal((char *)m.buf, "again");
	assert_ptr_not_equal(m.buf, b);
	free(b);
	ws_rx_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_piece),
		cmocka_unit_test(test_fragments_and_pieces),
		cmocka_unit_test(test_large_message_grows),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_empty_message),
		cmocka_unit_test(test_first_restarts_and_reset),
		cmocka_unit_test(test_take),
	};

	return cmocka_run_group_tests_name("websocket message reassembly", tests, NULL, NULL);
}
