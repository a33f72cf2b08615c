/* tests/unit/test_base64.c: the base64 codec (common/base64.c): RFC 4648
 * vectors, round trips of every length and byte, bounded decoding, and
 * malformed input. */
#include "common/base64.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *vectors[][2] = {
	{ "", "" },
	{ "f", "Zg==" },
	{ "fo", "Zm8=" },
	{ "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" },
	{ "fooba", "Zm9vYmE=" },
	{ "foobar", "Zm9vYmFy" },
};

static void test_rfc4648_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		size_t len = 99, n = 99;
		char *enc = base64_encode(vectors[i][0], strlen(vectors[i][0]), &len);
		char dec[16];

		assert_non_null(enc);
		assert_string_equal(enc, vectors[i][1]);
		assert_int_equal(len, strlen(vectors[i][1]));
		assert_int_equal(base64_encoded_len(strlen(vectors[i][0])), len);
		free(enc);
		assert_int_equal(base64_decode(vectors[i][1], strlen(vectors[i][1]), dec,
					       sizeof(dec), &n),
				 0);
		assert_int_equal(n, strlen(vectors[i][0]));
		assert_memory_equal(dec, vectors[i][0], n);
	}
}

static void test_round_trip_all_bytes(void **state)
{
	unsigned char in[300], out[300];

	(void)state;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	for (size_t len = 0; len <= sizeof(in); len++) {
		size_t elen, n;
		char *enc = base64_encode(in, len, &elen);

		assert_non_null(enc);
		assert_int_equal(elen % 4, 0);
		assert_int_equal(base64_decode(enc, elen, out, sizeof(out), &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(out, in, len);
		free(enc);
	}
}

static void test_unpadded_accepted(void **state)
{
	char out[8];
	size_t n;

	(void)state;
	assert_int_equal(base64_decode("Zg", 2, out, sizeof(out), &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 'f');
	assert_int_equal(base64_decode("Zm9vYmE", 7, out, sizeof(out), &n), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(out, "fooba", 5);
}

static void test_bounded_decode(void **state)
{
	char out[4] = "XXXX";
	size_t n;

	(void)state;
	/* "foobar" into 3 bytes: 3 written, full length reported. */
	assert_int_equal(base64_decode("Zm9vYmFy", 8, out, 3, &n), 0);
	assert_int_equal(n, 6);
	assert_memory_equal(out, "fooX", 4);
	/* Measuring only. */
	assert_int_equal(base64_decode("Zm9vYmFy", 8, NULL, 0, &n), 0);
	assert_int_equal(n, 6);
}

static void test_malformed(void **state)
{
	const char *bad[] = { "Z",	"Zm9vY", "Zg=",	 "Z===", "====", "Zg==Zg==",   "Zm 9v",
			      "Zm9v\n", "Zm-v",	 "Zm_v", "=Zm9", "Zm=v", "\xc3\xa9Zm9" };
	char out[16];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (base64_decode(bad[i], strlen(bad[i]), out, sizeof(out), &n) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
}

static void test_utf8_text(void **state)
{
	const char *text = "Grüße, 世界 ✓ — test";
	size_t elen, n;
	char *enc = base64_encode(text, strlen(text), &elen);
	char out[64];

	(void)state;
	assert_non_null(enc);
	assert_string_equal(enc, "R3LDvMOfZSwg5LiW55WMIOKckyDigJQgdGVzdA==");
	assert_int_equal(base64_decode(enc, elen, out, sizeof(out), &n), 0);
	assert_int_equal(n, strlen(text));
	assert_memory_equal(out, text, n);
	free(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4648_vectors),
		cmocka_unit_test(test_round_trip_all_bytes),
		cmocka_unit_test(test_unpadded_accepted),
		cmocka_unit_test(test_bounded_decode),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_utf8_text),
	};

	return cmocka_run_group_tests_name("base64", tests, NULL, NULL);
}
