/* tests/unit/test_bytebuf.c: common/bytebuf.c: appends across growth keep
 * every byte; printf-formatted text builds one C string across many
 * growths (from empty, after a raw append that filled the buffer exactly,
 * with pieces longer than the buffer), its length always strlen's. */
#include "common/bytebuf.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_append_grows(void **state)
{
	struct bytebuf b = { 0 };
	uint8_t bytes[1000];

	(void)state;
	for (int i = 0; i < 1000; i++)
		bytes[i] = (uint8_t)(i * 7);
	for (int i = 0; i < 50; i++)
		assert_int_equal(bytebuf_append(&b, bytes, sizeof(bytes)), 0);
	assert_int_equal(b.len, 50000);
	assert_true(b.cap >= b.len);
	for (int i = 0; i < 50; i++)
		assert_memory_equal(b.data + i * 1000, bytes, sizeof(bytes));
	assert_int_equal(bytebuf_append(&b, bytes, 0), 0);
	assert_int_equal(b.len, 50000);
	bytebuf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
}

static void test_printf_builds_a_string(void **state)
{
	struct bytebuf b = { 0 };
	char want[20000] = "", piece[64];
	char big[5000];

	(void)state;
	for (int i = 0; i < 1000; i++) {
		snprintf(piece, sizeof(piece), "%d,%s;", i, i % 3 ? "x" : "yy");
		strcat(want, piece);
		assert_int_equal(bytebuf_printf(&b, "%d,%s;", i, i % 3 ? "x" : "yy"), 0);
		assert_int_equal(b.len, strlen(want));
		assert_string_equal(b.data, want);
	}
	/* One piece longer than the whole buffer so far. */
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(bytebuf_printf(&b, "%s", big), 0);
	strcat(want, big);
	assert_string_equal(b.data, want);
	assert_int_equal(b.len, strlen(want));
	bytebuf_free(&b);

	/* After raw bytes that fill the buffer to the byte. */
	memset(big, 'a', 4096);
	assert_int_equal(bytebuf_append(&b, big, 4096), 0);
	assert_int_equal(b.len, b.cap);
	assert_int_equal(bytebuf_printf(&b, "%s", "tail"), 0);
	assert_int_equal(b.len, 4100);
	assert_memory_equal(b.data + 4096, "tail", 5);
	/* An empty text adds nothing and keeps the string terminated. */
	assert_int_equal(bytebuf_printf(&b, "%s", ""), 0);
	assert_int_equal(b.len, 4100);
	assert_int_equal(b.data[4100], '\0');
	bytebuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_grows),
		cmocka_unit_test(test_printf_builds_a_string),
	};

	return cmocka_run_group_tests_name("bytebuf", tests, NULL, NULL);
}
