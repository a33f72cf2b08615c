/* tests/unit/test_utf8.c: the UTF-8 checker and scrubber (common/utf8.c)
 * that keep error messages quoting a client valid JSON strings: every
 * boundary of RFC 3629's table, overlongs, surrogates, cut sequences. */
#include "common/utf8.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define S(x) x, sizeof(x) - 1

static void test_valid(void **state)
{
	(void)state;
	assert_true(utf8_valid(S("")));
	assert_true(utf8_valid(S("plain ascii ~\x7f")));
	assert_true(utf8_valid(S("\xc2\x80 \xdf\xbf"))); /* U+0080, U+07FF */
	assert_true(utf8_valid(S("\xe0\xa0\x80 \xed\x9f\xbf"))); /* U+0800, U+D7FF */
	assert_true(utf8_valid(S("\xee\x80\x80 \xef\xbf\xbf"))); /* U+E000, U+FFFF */
	assert_true(utf8_valid(S("\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf"))); /* U+10000, U+10FFFF */
	assert_true(utf8_valid(S("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80")));
}

static void test_invalid(void **state)
{
	static const char *bad[] = {
		"\x80", /* a lone continuation */
		"\xc0\xaf", /* overlong '/' */
		"\xc1\xbf", /* overlong */
		"\xe0\x9f\xbf", /* overlong below U+0800 */
		"\xed\xa0\x80", /* the surrogate U+D800 */
		"\xed\xbf\xbf", /* U+DFFF */
		"\xf0\x8f\xbf\xbf", /* overlong below U+10000 */
		"\xf4\x90\x80\x80", /* U+110000 */
		"\xf5\x80\x80\x80",
		"\xff",
		"\xfe",
		"\xc3", /* cut short */
		"\xe4\xb8", /* cut short */
		"\xf0\x9f\x98", /* cut short */
		"\xc3\x41", /* a continuation missing */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(utf8_valid(bad[i], strlen(bad[i])));
	assert_false(utf8_valid(S("a\0b"))); /* NUL is refused too */
}

static void test_scrub(void **state)
{
	char a[] = "ok caf\xc3\xa9",
	     b[] = "x\xff"
		   "y\xc3",
	     c[] = "\xed\xa0\x80!",
	     d[] = "\xe4\xb8\xad\xe4\xb8"; /* a whole character, then a cut one */

	(void)state;
	assert_int_equal(utf8_scrub(a), 0);
	assert_string_equal(a, "ok caf\xc3\xa9");
	assert_int_equal(utf8_scrub(b), 2);
	assert_string_equal(b, "x?y?");
	assert_int_equal(utf8_scrub(c), 3);
	assert_string_equal(c, "???"
			       "!");
	assert_int_equal(utf8_scrub(d), 2);
	assert_string_equal(d, "\xe4\xb8\xad??");
	assert_true(utf8_valid(d, strlen(d)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_scrub),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
