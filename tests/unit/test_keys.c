/* tests/unit/test_keys.c: key names, chords, xdotool key sequences and
 * characters -> QEMU qcodes (gateway/keys.c). */
#include "gateway/action/keys.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* The chord as "q1,q2,..." for comparisons that print both sides. */
static void chord_str(const struct keys_chord *c, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < c->len; i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", i ? "," : "", c->qcodes[i]);
	}
}

static void expect_chord(const char *in, const char *want)
{
	struct keys_chord c;
	char err[128] = "", got[256];
	int r = keys_parse_chord(in, strlen(in), &c, err, sizeof(err));

	if (r != 0)
		fail_msg("\"%s\": %d %s", in, r, err);
	chord_str(&c, got, sizeof(got));
	if (strcmp(got, want) != 0)
		fail_msg("\"%s\" -> %s, want %s", in, got, want);
}

static void expect_chord_error(const char *in, int want, const char *in_msg)
{
	struct keys_chord c;
	char err[128] = "";
	int r = keys_parse_chord(in, strlen(in), &c, err, sizeof(err));

	if (r != want)
		fail_msg("\"%s\" -> %d, want %d (%s)", in, r, want, err);
	if (in_msg && !strstr(err, in_msg))
		fail_msg("\"%s\": message \"%s\" lacks \"%s\"", in, err, in_msg);
}

static void test_names(void **state)
{
	static const struct {
		const char *name, *qcode;
		bool shift;
	} cases[] = {
		{ "Return", "ret", false },
		{ "enter", "ret", false },
		{ "RETURN", "ret", false },
		{ "BackSpace", "backspace", false },
		{ "Page_Up", "pgup", false },
		{ "pageup", "pgup", false },
		{ "Prior", "pgup", false },
		{ "Page_Down", "pgdn", false },
		{ "Next", "pgdn", false },
		{ "KP_Enter", "kp_enter", false },
		{ "KP_0", "kp_0", false },
		{ "Control_L", "ctrl", false },
		{ "control", "ctrl", false },
		{ "Control_R", "ctrl_r", false },
		{ "Super_L", "meta_l", false },
		{ "cmd", "meta_l", false },
		{ "win", "meta_l", false },
		{ "meta", "meta_l", false },
		{ "option", "alt", false },
		{ "Alt_L", "alt", false },
		{ "esc", "esc", false },
		{ "Escape", "esc", false },
		{ "del", "delete", false },
		{ "Delete", "delete", false },
		{ "ArrowUp", "up", false },
		{ "Up", "up", false },
		{ "space", "spc", false },
		{ "Tab", "tab", false },
		{ "ISO_Left_Tab", "tab", true },
		{ "Home", "home", false },
		{ "End", "end", false },
		{ "Insert", "insert", false },
		{ "F1", "f1", false },
		{ "f12", "f12", false },
		{ "Print", "print", false },
		{ "Menu", "menu", false },
		{ "minus", "minus", false },
		{ "equal", "equal", false },
		{ "bracketleft", "bracket_left", false },
		{ "semicolon", "semicolon", false },
		{ "apostrophe", "apostrophe", false },
		{ "grave", "grave_accent", false },
		{ "backslash", "backslash", false },
		{ "comma", "comma", false },
		{ "period", "dot", false },
		{ "slash", "slash", false },
		{ "plus", "equal", true },
		{ "exclam", "1", true },
		{ "question", "slash", true },
		{ "a", "a", false },
		{ "A", "a", true },
		{ "1", "1", false },
		{ "!", "1", true },
		{ "+", "equal", true },
		{ "-", "minus", false },
		{ " ", "spc", false },
		{ "~", "grave_accent", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool shift = !cases[i].shift;
		const char *q = keys_lookup(cases[i].name, strlen(cases[i].name), &shift);

		if (!q || strcmp(q, cases[i].qcode) != 0 || shift != cases[i].shift)
			fail_msg("%s -> %s shift %d, want %s shift %d", cases[i].name,
				 q ? q : "(null)", shift, cases[i].qcode, cases[i].shift);
	}
	assert_null(keys_lookup("Foo", 3, &(bool){ false }));
	assert_null(keys_lookup("", 0, &(bool){ false }));
	assert_null(keys_lookup("\n", 1, &(bool){ false }));
	/* Names are matched whole, not as prefixes. */
	assert_null(keys_lookup("ctr", 3, &(bool){ false }));
	assert_null(keys_lookup("ctrlx", 5, &(bool){ false }));
}

static void test_chords(void **state)
{
	(void)state;
	expect_chord("ctrl+shift+t", "ctrl,shift,t");
	expect_chord("ctrl+a", "ctrl,a");
	expect_chord("shift+Tab", "shift,tab");
	expect_chord("super+l", "meta_l,l");
	expect_chord("ctrl+plus", "ctrl,shift,equal");
	expect_chord("ctrl++", "ctrl,shift,equal");
	expect_chord("ctrl+-", "ctrl,minus");
	expect_chord("ctrl+minus", "ctrl,minus");
	expect_chord("alt+F4", "alt,f4");
	expect_chord("alt+Tab", "alt,tab");
	expect_chord("ctrl+s", "ctrl,s");
	expect_chord("Return", "ret");
	expect_chord("KP_0", "kp_0");
	expect_chord("cmd+option+esc", "meta_l,alt,esc");
	expect_chord("Control_L+Alt_L+Delete", "ctrl,alt,delete");
	/* A capital letter alone is shift+letter; with a modifier, the letter. */
	expect_chord("A", "shift,a");
	expect_chord("ctrl+A", "ctrl,a");
	expect_chord("Ctrl+C", "ctrl,c");
	expect_chord("ctrl+shift+T", "ctrl,shift,t");
	expect_chord("shift+A", "shift,a");
	/* Shifted characters imply shift once. */
	expect_chord("!", "shift,1");
	expect_chord("+", "shift,equal");
	expect_chord("shift+!", "shift,1");
	expect_chord("ctrl+ctrl+a", "ctrl,a");

	expect_chord_error("ctrl+foo", -ENOENT, "unknown key \"foo\"");
	expect_chord_error("Hyperdrive", -ENOENT, "\"Hyperdrive\"");
	expect_chord_error("ctrl+", -EINVAL, "empty key name");
	expect_chord_error("", -EINVAL, "empty");
	expect_chord_error("a+b+c+d+e+f+g+h+i", -E2BIG, "more than 8 keys");
	expect_chord_error("ctrl+\xc3\xa9", -ENOENT, "unknown key");
}

static void test_sequences(void **state)
{
	struct keys_chord seq[4];
	size_t n;
	char err[128], got[64];

	(void)state;
	assert_int_equal(keys_parse_sequence("ctrl+a Delete", seq, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	chord_str(&seq[0], got, sizeof(got));
	assert_string_equal(got, "ctrl,a");
	chord_str(&seq[1], got, sizeof(got));
	assert_string_equal(got, "delete");

	assert_int_equal(keys_parse_sequence("  Return\t", seq, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(keys_parse_sequence("   ", seq, 4, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(keys_parse_sequence("a b c d e", seq, 4, &n, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "more than 4"));
	assert_int_equal(keys_parse_sequence("a bogus", seq, 4, &n, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "\"bogus\""));
}

static void test_merge(void **state)
{
	struct keys_chord a = { 0 }, b = { 0 };
	char err[64];

	(void)state;
	assert_int_equal(keys_parse_chord("ctrl+shift", 10, &a, err, sizeof(err)), 0);
	assert_int_equal(keys_parse_chord("shift+alt", 9, &b, err, sizeof(err)), 0);
	assert_int_equal(keys_chord_merge(&a, &b), 0);
	assert_int_equal(a.len, 3);
	assert_string_equal(a.qcodes[2], "alt");
	assert_int_equal(keys_parse_chord("a+b+c+d+e+f", 11, &b, err, sizeof(err)), 0);
	assert_int_equal(keys_chord_merge(&a, &b), -E2BIG);
}

static void test_chars(void **state)
{
	const char *q;
	bool shift;

	(void)state;
	/* Every printable ASCII character, tab and newline are expressible. */
	for (uint32_t c = 0x20; c < 0x7f; c++)
		if (keys_char_to_qcodes(c, &q, &shift) != 0)
			fail_msg("0x%x not expressible", c);
	assert_int_equal(keys_char_to_qcodes('\n', &q, &shift), 0);
	assert_string_equal(q, "ret");
	assert_int_equal(keys_char_to_qcodes('\t', &q, &shift), 0);
	assert_string_equal(q, "tab");

	assert_int_equal(keys_char_to_qcodes('a', &q, &shift), 0);
	assert_string_equal(q, "a");
	assert_false(shift);
	assert_int_equal(keys_char_to_qcodes('Q', &q, &shift), 0);
	assert_string_equal(q, "q");
	assert_true(shift);
	assert_int_equal(keys_char_to_qcodes('@', &q, &shift), 0);
	assert_string_equal(q, "2");
	assert_true(shift);
	assert_int_equal(keys_char_to_qcodes('"', &q, &shift), 0);
	assert_string_equal(q, "apostrophe");
	assert_true(shift);
	assert_int_equal(keys_char_to_qcodes('\'', &q, &shift), 0);
	assert_false(shift);
	assert_int_equal(keys_char_to_qcodes(' ', &q, &shift), 0);
	assert_string_equal(q, "spc");
	assert_int_equal(keys_char_to_qcodes('|', &q, &shift), 0);
	assert_string_equal(q, "backslash");
	assert_true(shift);

	/* Not expressible: control characters, DEL, anything beyond ASCII. */
	assert_int_equal(keys_char_to_qcodes(0x1b, &q, &shift), -ENOENT);
	assert_int_equal(keys_char_to_qcodes(0x00, &q, &shift), -ENOENT);
	assert_int_equal(keys_char_to_qcodes(0x7f, &q, &shift), -ENOENT);
	assert_int_equal(keys_char_to_qcodes(0xe9, &q, &shift), -ENOENT);
	assert_int_equal(keys_char_to_qcodes(0x20ac, &q, &shift), -ENOENT);
	assert_int_equal(keys_char_to_qcodes(0x1f600, &q, &shift), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),	  cmocka_unit_test(test_chords),
		cmocka_unit_test(test_sequences), cmocka_unit_test(test_merge),
		cmocka_unit_test(test_chars),
	};

	return cmocka_run_group_tests_name("keys", tests, NULL, NULL);
}
