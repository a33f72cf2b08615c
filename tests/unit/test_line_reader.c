/* tests/unit/test_line_reader.c: the bounded line assembly under QMP and
 * qemu-ga (vmm-qemu/line_reader.c): lines whole in one read and split
 * across reads, the bound checked before any copy (exactly max passes,
 * max + 1 fails, also when the line was half buffered), going on after an
 * oversized line, and the reset byte. */
#include "vmm-qemu/line_reader.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Feeds text and appends every line found to out, each as "[line]"; returns
 * the first error, or 0. */
static int feed(struct line_reader *r, size_t max, const char *text, char *out, size_t outlen)
{
	const char *bytes = text;
	size_t len = strlen(text);
	char err[128];

	for (;;) {
		const char *line;
		size_t n, used = strlen(out);
		int got = line_reader_next(r, max, &bytes, &len, &line, &n, err, sizeof(err));

		if (got <= 0) {
			assert_int_equal(len, got == 0 ? 0 : len);
			return got;
		}
		snprintf(out + used, outlen - used, "[%.*s]", (int)n, line);
	}
}

static void test_lines_whole_and_split(void **state)
{
	struct line_reader r;
	char out[256] = "";

	(void)state;
	line_reader_init(&r, -1);
	assert_int_equal(feed(&r, 64, "one\ntwo\nthr", out, sizeof(out)), 0);
	assert_string_equal(out, "[one][two]");
	assert_int_equal(feed(&r, 64, "ee", out, sizeof(out)), 0);
	assert_int_equal(feed(&r, 64, "\n\nfour\n", out, sizeof(out)), 0);
	assert_string_equal(out, "[one][two][three][][four]");
	line_reader_free(&r);
}

static void test_whole_line_is_not_copied(void **state)
{
	const char *text = "abc\n", *bytes = text, *line;
	struct line_reader r;
	size_t len = 4, n;

	(void)state;
	line_reader_init(&r, -1);
	assert_int_equal(line_reader_next(&r, 64, &bytes, &len, &line, &n, NULL, 0), 1);
	assert_ptr_equal(line, text);
	assert_int_equal(n, 3);
	assert_int_equal(len, 0);
	assert_null(r.buf.data);
	line_reader_free(&r);
}

static void test_bound(void **state)
{
	const char *bytes, *line;
	struct line_reader r;
	char out[256] = "", err[64];
	size_t len, n;

	(void)state;
	line_reader_init(&r, -1);
	/* Exactly max bytes, in one read and across two. */
	assert_int_equal(feed(&r, 4, "abcd\nab", out, sizeof(out)), 0);
	assert_int_equal(feed(&r, 4, "cd\n", out, sizeof(out)), 0);
	assert_string_equal(out, "[abcd][abcd]");
	/* One more fails before it is copied, also when half is buffered. */
	bytes = "abcde\nok\n";
	len = strlen(bytes);
	assert_int_equal(line_reader_next(&r, 4, &bytes, &len, &line, &n, err, sizeof(err)),
			 -EMSGSIZE);
	assert_string_equal(err, "line longer than 4 bytes");
	assert_string_equal(bytes, "ok\n"); /* the offending line was taken */
	assert_int_equal(line_reader_next(&r, 4, &bytes, &len, &line, &n, err, sizeof(err)), 1);
	assert_int_equal(n, 2);
	out[0] = '\0';
	assert_int_equal(feed(&r, 4, "abc", out, sizeof(out)), 0);
	assert_int_equal(feed(&r, 4, "de", out, sizeof(out)), -EMSGSIZE);
	assert_true(r.buf.cap <= 4096);
	/* The partial line went with the error: what follows is a new line. */
	assert_int_equal(feed(&r, 4, "xy\n", out, sizeof(out)), 0);
	assert_string_equal(out, "[xy]");
	line_reader_free(&r);
}

static void test_reset_byte(void **state)
{
	struct line_reader r;
	char out[256] = "";

	(void)state;
	line_reader_init(&r, 0xff);
	assert_int_equal(feed(&r, 64, "stale\xffgo", out, sizeof(out)), 0);
	assert_int_equal(feed(&r, 64, "od\nhalf", out, sizeof(out)), 0);
	assert_int_equal(feed(&r, 64,
			      " more\xff"
			      "fresh\n",
			      out, sizeof(out)),
			 0);
	assert_string_equal(out, "[good][fresh]");
	/* Bytes before a reset byte go before the bound is checked: a stale
	 * run longer than max is no error. */
	out[0] = '\0';
	assert_int_equal(feed(&r, 8,
			      "0123456789\xff"
			      "ok\n",
			      out, sizeof(out)),
			 0);
	assert_string_equal(out, "[ok]");
	line_reader_free(&r);
}

static void test_reset_keeps_last_line_readable(void **state)
{
	const char *bytes = "ab", *line;
	struct line_reader r;
	size_t len = 2, n;

	(void)state;
	line_reader_init(&r, -1);
	assert_int_equal(line_reader_next(&r, 64, &bytes, &len, &line, &n, NULL, 0), 0);
	bytes = "c\nd";
	len = 3;
	assert_int_equal(line_reader_next(&r, 64, &bytes, &len, &line, &n, NULL, 0), 1);
	line_reader_reset(&r); /* as a callback that resyncs does */
	assert_int_equal(n, 3);
	assert_memory_equal(line, "abc", 3);
	/* The reset dropped nothing that came after the line. */
	assert_int_equal(line_reader_next(&r, 64, &bytes, &len, &line, &n, NULL, 0), 0);
	bytes = "\n";
	len = 1;
	assert_int_equal(line_reader_next(&r, 64, &bytes, &len, &line, &n, NULL, 0), 1);
	assert_int_equal(n, 1);
	assert_memory_equal(line, "d", 1);
	line_reader_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_whole_and_split),
		cmocka_unit_test(test_whole_line_is_not_copied),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_reset_byte),
		cmocka_unit_test(test_reset_keeps_last_line_readable),
	};

	return cmocka_run_group_tests_name("line reader", tests, NULL, NULL);
}
