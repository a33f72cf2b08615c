/* tests/unit/test_e2b_flood.c: a process's output flooded in 1-byte
 * pieces (what a guest's `yes | head`, or a hostile tenant, sends) keeps
 * the gateway's memory within the process's bound, counted in the heap
 * itself, not in the store's own figures; a stream that does not read is
 * never rendered more than one write's worth, and is told it fell behind
 * once the output it waits for is gone; a stream that keeps up gets every
 * byte in order; a process takes E2B_PROC_STREAMS streams, no more. The
 * process is made here as the link's thread would feed it (no guest). */
#include "common/base64.h"
#include "gateway/e2b/connect.h"
#include "gateway/e2b/sandbox.h"

#include <jansson.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* One write's worth (e2b_envd.c writes at most 64 KiB a callback). */
#define ONE_WRITE (64 * 1024)
#define SLACK (512 * 1024)

#if defined(__SANITIZE_ADDRESS__)
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t heap_in_use(void)
{
	return __sanitizer_get_current_allocated_bytes();
}
#else
static size_t heap_in_use(void)
{
	return mallinfo2().uordblks;
}
#endif

static struct e2b_proc *proc_new(void)
{
	struct e2b_proc *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	pthread_mutex_init(&p->mu, NULL);
	p->refs = 1;
	p->pid = 7;
	p->opened = true;
	return p;
}

/* The frames of out, decoded: the data events' bytes appended to got
 * (stdout as is, stderr as is: the test tells them apart by value), the
 * end-of-stream's error code name in end_code ("" for none or ok). */
static void decode(const struct bytebuf *out, struct bytebuf *got, char *end_code, size_t cap)
{
	size_t off = 0;

	while (off < out->len) {
		const uint8_t *msg;
		size_t len;
		uint8_t flags;
		int n = connect_frame_parse(out->data + off, out->len - off, out->len, &flags, &msg,
					    &len);
		json_t *j;

		assert_true(n > 0);
		j = json_loadb((const char *)msg, len, 0, NULL);
		assert_non_null(j);
		if (flags & CONNECT_FLAG_END) {
			const char *c = json_string_value(
				json_object_get(json_object_get(j, "error"), "code"));

			snprintf(end_code, cap, "%s", c ? c : "");
		} else {
			json_t *d = json_object_get(json_object_get(j, "event"), "data");
			const char *b64 = json_string_value(json_object_get(d, "stdout"));

			if (!b64)
				b64 = json_string_value(json_object_get(d, "stderr"));
			if (b64) {
				size_t n64 = strlen(b64), dlen;
				unsigned char *bytes = malloc(n64 + 1);

				assert_non_null(bytes);
				assert_int_equal(base64_decode(b64, n64, bytes, n64 + 1, &dlen), 0);
				assert_int_equal(bytebuf_append(got, bytes, dlen), 0);
				free(bytes);
			}
		}
		json_decref(j);
		off += (size_t)n;
	}
}

static void test_flood_stays_bounded(void **state)
{
	struct e2b_proc *p;
	struct bytebuf out = { 0 }, got = { 0 };
	uint64_t seq = 0;
	bool started = false, ended = false;
	char code[64] = "";
	size_t before, peak = 0;

	(void)state;
	malloc_trim(0);
	before = heap_in_use();
	p = proc_new();
	/* A Start stream that reads its start event, then nothing more. */
	assert_int_equal(e2b_proc_drain(p, &seq, &started, &ended, &out), 0);
	assert_true(started);
	out.len = 0;
	/* 1-byte pieces of one stream (merged), then of both in turn (each
	 * its own piece, its overhead counted). */
	for (size_t i = 0; i < 1u << 20; i++) {
		e2b_proc_output(p, false, "y", 1);
		if ((i & 0x3fff) == 0 && heap_in_use() - before > peak)
			peak = heap_in_use() - before;
	}
	for (size_t i = 0; i < 1u << 18; i++) {
		e2b_proc_output(p, i & 1, i & 1 ? "e" : "o", 1);
		if ((i & 0x3fff) == 0 && heap_in_use() - before > peak)
			peak = heap_in_use() - before;
	}
	print_message("heap: +%zu KiB at most while flooding (bound %u KiB)\n", peak >> 10,
		      E2B_PROC_OUTPUT >> 10);
	assert_true(peak <= E2B_PROC_OUTPUT + SLACK);
	/* Its next write: one write's worth at most, and the stream is told
	 * the output it waited for is gone. */
	assert_int_equal(e2b_proc_drain(p, &seq, &started, &ended, &out), 0);
	print_message("the reader that fell behind: %zu bytes rendered\n", out.len);
	assert_true(out.len <= ONE_WRITE);
	assert_true(heap_in_use() - before <= E2B_PROC_OUTPUT + SLACK + ONE_WRITE);
	decode(&out, &got, code, sizeof(code));
	assert_true(ended);
	assert_string_equal(code, "resource_exhausted");
	bytebuf_free(&out);
	bytebuf_free(&got);
	e2b_proc_release(p);
}

static void test_reader_keeping_up_gets_every_byte(void **state)
{
	struct e2b_proc *p = proc_new();
	struct bytebuf out = { 0 }, got = { 0 }, want = { 0 };
	uint64_t seq = 0;
	bool started = false, ended = false;
	char code[64] = "x";

	(void)state;
	for (size_t i = 0; i < 50000; i++) {
		char c = (char)('a' + i % 26);

		e2b_proc_output(p, (i / 7) & 1, &c, 1);
		assert_int_equal(bytebuf_append(&want, &c, 1), 0);
		if (i % 5000 == 4999) {
			/* a writable callback: drained until it renders nothing */
			do {
				out.len = 0;
				assert_int_equal(e2b_proc_drain(p, &seq, &started, &ended, &out),
						 0);
				assert_true(out.len <= ONE_WRITE);
				decode(&out, &got, code, sizeof(code));
			} while (out.len);
		}
	}
	pthread_mutex_lock(&p->mu);
	p->exited = p->closed = true;
	pthread_mutex_unlock(&p->mu);
	while (!ended) {
		out.len = 0;
		assert_int_equal(e2b_proc_drain(p, &seq, &started, &ended, &out), 0);
		assert_true(out.len <= ONE_WRITE);
		decode(&out, &got, code, sizeof(code));
	}
	assert_string_equal(code, "");
	assert_int_equal(got.len, want.len);
	assert_memory_equal(got.data, want.data, want.len);
	bytebuf_free(&out);
	bytebuf_free(&got);
	bytebuf_free(&want);
	e2b_proc_release(p);
}

static void test_streams_per_process_capped(void **state)
{
	struct e2b_proc *p = proc_new();

	(void)state;
	for (int i = 0; i < E2B_PROC_STREAMS; i++)
		assert_int_equal(e2b_proc_attach(p), 0);
	assert_int_equal(e2b_proc_attach(p), -EBUSY);
	e2b_proc_detach(p);
	assert_int_equal(e2b_proc_attach(p), 0);
	for (int i = 0; i < E2B_PROC_STREAMS; i++)
		e2b_proc_detach(p);
	assert_int_equal(p->refs, 1);
	e2b_proc_release(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flood_stays_bounded),
		cmocka_unit_test(test_reader_keeping_up_gets_every_byte),
		cmocka_unit_test(test_streams_per_process_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
