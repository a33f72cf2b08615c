/* tests/unit/test_sha256.c: SHA-256 (common/sha256.c) against the FIPS 180-2
 * examples and digests of every padding boundary (lengths around 56 and
 * 64 bytes and their doubles, from Python's hashlib), and the digest
 * taken piece by piece. */
#include "common/sha256.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void expect(const void *data, size_t len, const char *want)
{
	char hex[SHA256_HEX_LEN + 1];

	sha256_hex(data, len, hex);
	assert_string_equal(hex, want);
}

static void test_fips_examples(void **state)
{
	char *million = malloc(1000000);

	(void)state;
	expect("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	expect("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	expect("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
	       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	assert_non_null(million);
	memset(million, 'a', 1000000);
	expect(million, 1000000,
	       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

static void test_padding_boundaries(void **state)
{
	static const struct {
		size_t len;
		const char *hex;
	} v[] = {
		{ 55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b" },
		{ 56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27" },
		{ 63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055" },
		{ 64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241" },
		{ 65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e" },
		{ 119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e" },
		{ 120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5" },
		{ 127, "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84faa11d07" },
		{ 128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6" },
	};
	uint8_t buf[128];

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		expect(buf, v[i].len, v[i].hex);
}

/* Piece by piece (sha256_update) is the same digest as in one go, for
 * every split of a buffer across the block boundaries. */
static void test_pieces(void **state)
{
	uint8_t buf[300], one[SHA256_LEN], inc[SHA256_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 13 + 1);
	for (size_t len = 0; len <= sizeof(buf); len += 37) {
		sha256(buf, len, one);
		for (size_t step = 1; step <= 130; step += 7) {
			struct sha256_ctx c;

			sha256_init(&c);
			for (size_t at = 0; at < len; at += step)
				sha256_update(&c, buf + at, len - at < step ? len - at : step);
			sha256_final(&c, inc);
			assert_memory_equal(one, inc, SHA256_LEN);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fips_examples),
		cmocka_unit_test(test_padding_boundaries),
		cmocka_unit_test(test_pieces),
	};

	return cmocka_run_group_tests_name("sha256", tests, NULL, NULL);
}
