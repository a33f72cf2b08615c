/* tests/unit/test_keymap.c: keyboard layouts' tables (vmm-qemu/keymap.c,
 * compiled from the host's xkb data) and key names, chords and typed
 * characters on them (gateway/action/keys.c): the z/y swap and @ by AltGr
 * on German, a/q and é on French; names and their checks; the evdev ->
 * qcode table. */
#include "gateway/action/keys.h"
#include "vmm-qemu/evdev_qcode.h"
#include "vmm-qemu/keymap.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static const struct vmm_keymap *get(const char *name)
{
	char err[256] = "";
	const struct vmm_keymap *km = vmm_keymap_get(name, err, sizeof(err));

	if (!km)
		fail_msg("keymap %s: %s", name, err);
	return km;
}

/* The stroke as "shift+altgr+qcode" for comparisons that print both sides. */
static void expect_char(const struct vmm_keymap *km, uint32_t cp, const char *want)
{
	struct vmm_keystroke st;
	char got[64];

	if (keys_char_stroke(km, cp, &st) < 0) {
		if (strcmp(want, "-"))
			fail_msg("%s U+%04X: not typed, want %s", km ? vmm_keymap_name(km) : "us",
				 cp, want);
		return;
	}
	snprintf(got, sizeof(got), "%s%s%s", st.shift ? "shift+" : "", st.level3 ? "altgr+" : "",
		 st.qcode);
	if (strcmp(got, want))
		fail_msg("%s U+%04X -> %s, want %s", km ? vmm_keymap_name(km) : "us", cp, got,
			 want);
}

static void expect_chord(const struct vmm_keymap *km, const char *in, const char *want)
{
	struct keys_chord c;
	char err[160] = "", got[256] = "";
	int r = keys_parse_chord_in(km, in, strlen(in), &c, err, sizeof(err));

	if (r != 0)
		fail_msg("\"%s\": %d %s", in, r, err);
	for (size_t i = 0; i < c.len; i++) {
		size_t used = strlen(got);

		snprintf(got + used, sizeof(got) - used, "%s%s", i ? "," : "", c.qcodes[i]);
	}
	if (strcmp(got, want) != 0)
		fail_msg("\"%s\" -> %s, want %s", in, got, want);
}

static void test_german(void **state)
{
	const struct vmm_keymap *de = get("de");

	(void)state;
	expect_char(de, 'z', "y");
	expect_char(de, 'y', "z");
	expect_char(de, 'Z', "shift+y");
	expect_char(de, '@', "altgr+q");
	expect_char(de, 0x20ac, "altgr+e"); /* € */
	expect_char(de, 0xe4, "apostrophe"); /* ä */
	expect_char(de, 0xf6, "semicolon"); /* ö */
	expect_char(de, 0xfc, "bracket_left"); /* ü */
	expect_char(de, 0xdf, "minus"); /* ß */
	expect_char(de, 0xc4, "shift+apostrophe"); /* Ä */
	expect_char(de, '-', "slash");
	expect_char(de, '"', "shift+2");
	expect_char(de, '<', "less");
	expect_char(de, '\n', "ret");
	expect_char(de, 0x4e2d, "-"); /* 中: no key */
	assert_string_equal(vmm_keymap_level3_qcode(de), "alt_r");
	/* Key names are keysyms on the layout. */
	expect_chord(de, "z", "y");
	expect_chord(de, "at", "alt_r,q");
	expect_chord(de, "@", "alt_r,q");
	expect_chord(de, "ctrl+z", "ctrl,y");
	expect_chord(de, "ctrl+Z", "ctrl,y");
	expect_chord(de, "ctrl+shift+z", "ctrl,shift,y");
	expect_chord(de, "EuroSign", "alt_r,e");
	expect_chord(de, "adiaeresis", "apostrophe");
	expect_chord(de, "ä", "apostrophe");
	expect_chord(de, "minus", "slash");
	/* Keys that are no character stay what they are. */
	expect_chord(de, "Return", "ret");
	expect_chord(de, "ctrl+alt+Delete", "ctrl,alt,delete");
	expect_chord(de, "F5", "f5");
	expect_chord(de, "KP_Enter", "kp_enter");
	expect_chord(de, "altgr", "alt_r");
	/* The same cache entry comes back. */
	assert_ptr_equal(get("de"), de);
	assert_ptr_equal(vmm_keymap_cached("de"), de);
}

static void test_french(void **state)
{
	const struct vmm_keymap *fr = get("fr");
	struct keys_chord c;
	char err[160] = "";

	(void)state;
	expect_char(fr, 'a', "q");
	expect_char(fr, 'q', "a");
	expect_char(fr, 'z', "w");
	expect_char(fr, 'w', "z");
	expect_char(fr, 'm', "semicolon");
	expect_char(fr, '1', "shift+1");
	expect_char(fr, '&', "1");
	expect_char(fr, 0xe9, "2"); /* é */
	expect_char(fr, 0xe8, "7"); /* è */
	expect_char(fr, 0xe0, "0"); /* à */
	expect_char(fr, 0xe7, "9"); /* ç */
	expect_char(fr, 0xf9, "apostrophe"); /* ù */
	expect_char(fr, '@', "altgr+0");
	expect_char(fr, '!', "slash");
	expect_char(fr, 0x20ac, "altgr+e");
	expect_chord(fr, "a", "q");
	expect_chord(fr, "ctrl+a", "ctrl,q");
	expect_chord(fr, "eacute", "2");
	/* A keysym no key of the layout types. */
	assert_int_equal(keys_parse_chord_in(fr, "Cyrillic_a", 10, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "not on the fr layout"));
}

static void test_us_unchanged(void **state)
{
	(void)state;
	/* NULL is the built-in US table; a keymap compiled for "us" agrees. */
	expect_char(NULL, 'z', "z");
	expect_char(NULL, '@', "shift+2");
	expect_char(NULL, 0xe9, "-");
	expect_char(get("us"), 'z', "z");
	expect_char(get("us"), '@', "shift+2");
	expect_char(get("us"), '{', "shift+bracket_left");
	expect_chord(NULL, "at", "shift,2");
	expect_chord(NULL, "ctrl+A", "ctrl,a");
}

static void test_variant(void **state)
{
	const struct vmm_keymap *nd = get("de(nodeadkeys)");

	(void)state;
	/* nodeadkeys: ^ is a character of its own, not a dead key. */
	expect_char(nd, '^', "grave_accent");
	expect_char(get("de"), '^', "-");
	expect_char(nd, 'z', "y");
}

static void test_names(void **state)
{
	char canon[VMM_KEYMAP_MAX_NAME], layout[32], variant[32], err[256];

	(void)state;
	assert_int_equal(vmm_keymap_name_parse("de", canon, layout, variant, err, sizeof(err)), 0);
	assert_string_equal(canon, "de");
	assert_string_equal(variant, "");
	assert_int_equal(vmm_keymap_name_parse("de:nodeadkeys", canon, layout, variant, err,
					       sizeof(err)),
			 0);
	assert_string_equal(canon, "de(nodeadkeys)");
	assert_string_equal(layout, "de");
	assert_string_equal(variant, "nodeadkeys");
	assert_int_equal(vmm_keymap_name_parse("de(nodeadkeys)", canon, layout, variant, err,
					       sizeof(err)),
			 0);
	assert_string_equal(canon, "de(nodeadkeys)");
	const char *bad[] = {
		"",    "de(",	 "de()",   "de(x",
		"(x)", "de:",	 "de x",   "de;rm",
		"d/e", "de(a)b", "de:a:b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (vmm_keymap_name_parse(bad[i], canon, layout, variant, err, sizeof(err)) !=
		    -EINVAL)
			fail_msg("\"%s\" accepted", bad[i]);

	assert_int_equal(vmm_keymap_check("fr:azerty", canon, err, sizeof(err)), 0);
	assert_string_equal(canon, "fr(azerty)");
	assert_int_equal(vmm_keymap_check("us", canon, err, sizeof(err)), 0);
	assert_int_equal(vmm_keymap_check("jp", canon, err, sizeof(err)), 0);
	assert_int_equal(vmm_keymap_check("xx", canon, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no layout \"xx\""));
	/* A variant of another layout. */
	assert_int_equal(vmm_keymap_check("us(azerty)", canon, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "variant \"azerty\""));
}

static void test_lst(void **state)
{
	static const char lst[] = "! model\n  pc105           Generic 105-key PC\n"
				  "\n! layout\n  us              English (US)\n"
				  "  de              German\n\n! variant\n"
				  "  nodeadkeys      de: German (no dead keys)\n"
				  "  intl            us: English (US, intl.)\n"
				  "\n! option\n  grp             Switching\n";

	(void)state;
	assert_true(vmm_keymap_lst_has(lst, strlen(lst), "de", ""));
	assert_true(vmm_keymap_lst_has(lst, strlen(lst), "de", "nodeadkeys"));
	assert_true(vmm_keymap_lst_has(lst, strlen(lst), "us", "intl"));
	assert_false(vmm_keymap_lst_has(lst, strlen(lst), "de", "intl"));
	assert_false(vmm_keymap_lst_has(lst, strlen(lst), "pc105", ""));
	assert_false(vmm_keymap_lst_has(lst, strlen(lst), "grp", ""));
	assert_false(vmm_keymap_lst_has(lst, strlen(lst), "d", ""));
	assert_false(vmm_keymap_lst_has(lst, 20, "de", ""));
	assert_false(vmm_keymap_lst_has("", 0, "us", ""));
}

static void test_evdev(void **state)
{
	(void)state;
	assert_string_equal(vmm_evdev_qcode(16), "q");
	assert_string_equal(vmm_evdev_qcode(44), "z");
	assert_string_equal(vmm_evdev_qcode(86), "less");
	assert_string_equal(vmm_evdev_qcode(100), "alt_r");
	assert_null(vmm_evdev_qcode(0));
	assert_null(vmm_evdev_qcode(84));
	assert_null(vmm_evdev_qcode(100000));
}

static void test_keysyms(void **state)
{
	(void)state;
	assert_int_equal(vmm_keysym_from_char('a'), 0x61);
	assert_int_equal(vmm_keysym_from_char(0xe9), 0xe9);
	assert_int_equal(vmm_keysym_from_char(0x20ac), 0x20ac); /* EuroSign */
	assert_int_equal(vmm_keysym_from_char(0x4e2d), 0x1004e2d);
	assert_int_equal(vmm_keysym_from_name("at", 2), '@');
	assert_int_equal(vmm_keysym_from_name("AT", 2), '@');
	assert_int_equal(vmm_keysym_from_name("nosuchkey", 9), 0);
	assert_int_equal(vmm_keysym_from_name("a\0b", 3), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_german),	     cmocka_unit_test(test_french),
		cmocka_unit_test(test_us_unchanged), cmocka_unit_test(test_variant),
		cmocka_unit_test(test_names),	     cmocka_unit_test(test_lst),
		cmocka_unit_test(test_evdev),	     cmocka_unit_test(test_keysyms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
