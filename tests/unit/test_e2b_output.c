/* tests/unit/test_e2b_output.c: gateway/e2b/proc_output.c, the output
 * an E2B process keeps: small pieces of one stream join one chunk (and
 * cost about their bytes), pieces switching streams each cost their
 * chunk's header and slack, counted; the bound holds in accounted bytes
 * with the oldest chunks dropped; cursor reads copy at most what they
 * are given, in order, merged per stream, from anywhere (bisection over
 * many chunks); a cursor older than what is kept is refused; a piece
 * larger than the bound stays alone. */
#include "gateway/e2b/proc_output.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define LIMIT (64u * 1024)

static void test_small_pieces_join(void **state)
{
	struct e2b_out o = { 0 };
	unsigned char data[8192];
	struct e2b_out_piece pc[4];
	uint64_t cur = 0;

	(void)state;
	for (int i = 0; i < 5000; i++)
		assert_int_equal(e2b_out_add(&o, LIMIT, false, (char[]){ (char)('a' + i % 26) }, 1),
				 0);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.end, 5000);
	/* the chunk grows by doubling: at most twice its bytes, plus its header */
	assert_true(o.bytes <= 2 * 5000 + sizeof(struct e2b_out_chunk) + E2B_OUT_MALLOC_SLACK +
				       16 * sizeof(void *));
	assert_int_equal(e2b_out_read(&o, &cur, data, sizeof(data), pc, 4), 1);
	assert_int_equal(cur, 5000);
	assert_int_equal(pc[0].len, 5000);
	assert_false(pc[0].err);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(data[i], 'a' + i % 26);
	/* nothing new */
	assert_int_equal(e2b_out_read(&o, &cur, data, sizeof(data), pc, 4), 0);
	e2b_out_free(&o);
	assert_int_equal(o.bytes, 0);
	assert_null(o.ring);
}

static void test_chunks_cap_and_switches(void **state)
{
	struct e2b_out o = { 0 };
	static unsigned char big[3 * E2B_OUT_CHUNK_MAX];

	(void)state;
	/* one stream: chunks no bigger than E2B_OUT_CHUNK_MAX */
	for (size_t i = 0; i < sizeof(big); i += 128)
		e2b_out_add(&o, 1u << 20, true, big + i, 128);
	assert_int_equal(o.n, 3);
	e2b_out_free(&o);
	/* a switch of stream starts a chunk: each 1-byte piece pays for one */
	for (int i = 0; i < 100; i++)
		e2b_out_add(&o, 1u << 20, i & 1, "x", 1);
	assert_int_equal(o.n, 100);
	assert_true(o.bytes >= 100 * (sizeof(struct e2b_out_chunk) + 1 + E2B_OUT_MALLOC_SLACK));
	e2b_out_free(&o);
}

static void test_bound_drops_oldest(void **state)
{
	struct e2b_out o = { 0 };
	unsigned char data[64];
	struct e2b_out_piece pc[64];
	uint64_t cur = 0, kept;

	(void)state;
	/* alternating 1-byte pieces: the worst case for overhead */
	for (int i = 0; i < 100000; i++) {
		char c = (char)(i & 0x7f);

		e2b_out_add(&o, LIMIT, i & 1, &c, 1);
		assert_true(o.bytes <= LIMIT);
	}
	kept = o.end - o.start;
	assert_int_equal(o.end, 100000);
	assert_true(kept > 0);
	assert_true(kept * (sizeof(struct e2b_out_chunk) + 1 + E2B_OUT_MALLOC_SLACK) <= LIMIT);
	/* the cursor of a reader that never read is gone */
	assert_int_equal(e2b_out_read(&o, &cur, data, sizeof(data), pc, 64), -ESPIPE);
	assert_int_equal(cur, 0);
	/* from where it is kept: in order, one piece per switch */
	cur = o.start + 10;
	assert_int_equal(e2b_out_read(&o, &cur, data, sizeof(data), pc, 5), 5);
	assert_int_equal(cur, o.start + 15);
	for (int i = 0; i < 5; i++) {
		uint64_t at = o.start + 10 + (uint64_t)i;

		assert_int_equal(pc[i].len, 1);
		assert_int_equal(pc[i].off, (size_t)i);
		assert_int_equal(pc[i].err, (bool)(at & 1));
		assert_int_equal(data[i], at & 0x7f);
	}
	/* bytes bound the read too */
	assert_int_equal(e2b_out_read(&o, &cur, data, 3, pc, 64), 3);
	assert_int_equal(cur, o.start + 18);
	/* the end: the rest, then nothing */
	cur = o.end - 2;
	assert_int_equal(e2b_out_read(&o, &cur, data, sizeof(data), pc, 64), 2);
	assert_int_equal(cur, o.end);
	assert_int_equal(e2b_out_read(&o, &cur, data, sizeof(data), pc, 64), 0);
	e2b_out_free(&o);
}

static void test_read_from_the_middle_of_a_chunk(void **state)
{
	struct e2b_out o = { 0 };
	unsigned char data[10];
	struct e2b_out_piece pc[4];
	uint64_t cur = 3;

	(void)state;
	e2b_out_add(&o, LIMIT, false, "hello ", 6);
	e2b_out_add(&o, LIMIT, false, "world", 5);
	e2b_out_add(&o, LIMIT, true, "!!", 2);
	assert_int_equal(o.n, 2);
	assert_int_equal(e2b_out_read(&o, &cur, data, 10, pc, 4), 2);
	assert_memory_equal(data, "lo world!!", 10);
	assert_int_equal(pc[0].len, 8);
	assert_false(pc[0].err);
	assert_int_equal(pc[1].off, 8);
	assert_int_equal(pc[1].len, 2);
	assert_true(pc[1].err);
	assert_int_equal(cur, 13);
	/* one piece allowed: the read stops at the switch */
	cur = 0;
	assert_int_equal(e2b_out_read(&o, &cur, data, 10, pc, 1), 1);
	assert_int_equal(cur, 10);
	assert_int_equal(e2b_out_read(&o, &cur, data, 10, pc, 1), 1);
	assert_int_equal(cur, 11);
	assert_int_equal(pc[0].len, 1);
	e2b_out_free(&o);
}

static void test_a_piece_past_the_bound_stays(void **state)
{
	struct e2b_out o = { 0 };
	unsigned char *big = calloc(1, 2 * LIMIT), data[16];
	struct e2b_out_piece pc[2];
	uint64_t cur;

	(void)state;
	assert_non_null(big);
	e2b_out_add(&o, LIMIT, false, "abc", 3);
	e2b_out_add(&o, LIMIT, true, big, 2 * LIMIT);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.start, 3);
	assert_int_equal(o.end, 3 + 2 * LIMIT);
	cur = 0;
	assert_int_equal(e2b_out_read(&o, &cur, data, sizeof(data), pc, 2), -ESPIPE);
	cur = 3;
	assert_int_equal(e2b_out_read(&o, &cur, data, sizeof(data), pc, 2), 1);
	assert_int_equal(cur, 3 + sizeof(data));
	/* the next piece pushes it out */
	e2b_out_add(&o, LIMIT, false, "z", 1);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.start, 3 + 2 * LIMIT);
	assert_int_equal(e2b_out_read(&o, &cur, data, sizeof(data), pc, 2), -ESPIPE);
	e2b_out_free(&o);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_pieces_join),
		cmocka_unit_test(test_chunks_cap_and_switches),
		cmocka_unit_test(test_bound_drops_oldest),
		cmocka_unit_test(test_read_from_the_middle_of_a_chunk),
		cmocka_unit_test(test_a_piece_past_the_bound_stays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
