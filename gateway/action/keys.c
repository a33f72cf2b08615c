/* gateway/action/keys.c: see keys.h. The tables follow QEMU's QKeyCode names
 * (qapi/ui.json) and X keysym names (X11/keysymdef.h), US layout; other
 * layouts' characters come from their keymaps (vmm-qemu/keymap.h). */
#include "gateway/action/keys.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Printable ASCII 0x20..0x7e on a US layout: qcode and shift. */
static const struct {
	const char *qcode;
	bool shift;
} ascii_keys[0x7f - 0x20] = {
	[' ' - 0x20] = { "spc", false },
	['!' - 0x20] = { "1", true },
	['"' - 0x20] = { "apostrophe", true },
	['#' - 0x20] = { "3", true },
	['$' - 0x20] = { "4", true },
	['%' - 0x20] = { "5", true },
	['&' - 0x20] = { "7", true },
	['\'' - 0x20] = { "apostrophe", false },
	['(' - 0x20] = { "9", true },
	[')' - 0x20] = { "0", true },
	['*' - 0x20] = { "8", true },
	['+' - 0x20] = { "equal", true },
	[',' - 0x20] = { "comma", false },
	['-' - 0x20] = { "minus", false },
	['.' - 0x20] = { "dot", false },
	['/' - 0x20] = { "slash", false },
	['0' - 0x20] = { "0", false },
	['1' - 0x20] = { "1", false },
	['2' - 0x20] = { "2", false },
	['3' - 0x20] = { "3", false },
	['4' - 0x20] = { "4", false },
	['5' - 0x20] = { "5", false },
	['6' - 0x20] = { "6", false },
	['7' - 0x20] = { "7", false },
	['8' - 0x20] = { "8", false },
	['9' - 0x20] = { "9", false },
	[':' - 0x20] = { "semicolon", true },
	[';' - 0x20] = { "semicolon", false },
	['<' - 0x20] = { "comma", true },
	['=' - 0x20] = { "equal", false },
	['>' - 0x20] = { "dot", true },
	['?' - 0x20] = { "slash", true },
	['@' - 0x20] = { "2", true },
	['[' - 0x20] = { "bracket_left", false },
	['\\' - 0x20] = { "backslash", false },
	[']' - 0x20] = { "bracket_right", false },
	['^' - 0x20] = { "6", true },
	['_' - 0x20] = { "minus", true },
	['`' - 0x20] = { "grave_accent", false },
	['{' - 0x20] = { "bracket_left", true },
	['|' - 0x20] = { "backslash", true },
	['}' - 0x20] = { "bracket_right", true },
	['~' - 0x20] = { "grave_accent", true },
};

/* Letters a..z: qcodes are the letters themselves. */
static const char *const letter_qcodes[26] = { "a", "b", "c", "d", "e", "f", "g", "h", "i",
					       "j", "k", "l", "m", "n", "o", "p", "q", "r",
					       "s", "t", "u", "v", "w", "x", "y", "z" };

struct key_name {
	const char *name; /* lower case; compared case-insensitively */
	const char *qcode;
	bool shift;
};

/* Multi-character names. Qcode names themselves are accepted too. */
static const struct key_name key_names[] = {
	/* modifiers */
	{ "shift", "shift", false },
	{ "shift_l", "shift", false },
	{ "lshift", "shift", false },
	{ "shift_r", "shift_r", false },
	{ "rshift", "shift_r", false },
	{ "ctrl", "ctrl", false },
	{ "control", "ctrl", false },
	{ "control_l", "ctrl", false },
	{ "ctrl_l", "ctrl", false },
	{ "lctrl", "ctrl", false },
	{ "control_r", "ctrl_r", false },
	{ "ctrl_r", "ctrl_r", false },
	{ "rctrl", "ctrl_r", false },
	{ "alt", "alt", false },
	{ "alt_l", "alt", false },
	{ "lalt", "alt", false },
	{ "option", "alt", false },
	{ "opt", "alt", false },
	{ "alt_r", "alt_r", false },
	{ "ralt", "alt_r", false },
	{ "altgr", "alt_r", false },
	{ "iso_level3_shift", "alt_r", false },
	{ "meta", "meta_l", false },
	{ "meta_l", "meta_l", false },
	{ "meta_r", "meta_r", false },
	{ "super", "meta_l", false },
	{ "super_l", "meta_l", false },
	{ "super_r", "meta_r", false },
	{ "hyper_l", "meta_l", false },
	{ "cmd", "meta_l", false },
	{ "command", "meta_l", false },
	{ "win", "meta_l", false },
	{ "windows", "meta_l", false },
	{ "os", "meta_l", false },
	{ "menu", "menu", false },
	{ "compose", "compose", false },
	{ "caps_lock", "caps_lock", false },
	{ "capslock", "caps_lock", false },
	{ "num_lock", "num_lock", false },
	{ "numlock", "num_lock", false },
	{ "scroll_lock", "scroll_lock", false },
	{ "scrolllock", "scroll_lock", false },
	/* editing and navigation */
	{ "return", "ret", false },
	{ "enter", "ret", false },
	{ "ret", "ret", false },
	{ "linefeed", "ret", false },
	{ "tab", "tab", false },
	{ "iso_left_tab", "tab", true },
	{ "escape", "esc", false },
	{ "esc", "esc", false },
	{ "backspace", "backspace", false },
	{ "back_space", "backspace", false },
	{ "delete", "delete", false },
	{ "del", "delete", false },
	{ "insert", "insert", false },
	{ "ins", "insert", false },
	{ "home", "home", false },
	{ "end", "end", false },
	{ "page_up", "pgup", false },
	{ "pageup", "pgup", false },
	{ "pgup", "pgup", false },
	{ "prior", "pgup", false },
	{ "page_down", "pgdn", false },
	{ "pagedown", "pgdn", false },
	{ "pgdn", "pgdn", false },
	{ "next", "pgdn", false },
	{ "up", "up", false },
	{ "arrowup", "up", false },
	{ "arrow_up", "up", false },
	{ "down", "down", false },
	{ "arrowdown", "down", false },
	{ "arrow_down", "down", false },
	{ "left", "left", false },
	{ "arrowleft", "left", false },
	{ "arrow_left", "left", false },
	{ "right", "right", false },
	{ "arrowright", "right", false },
	{ "arrow_right", "right", false },
	{ "space", "spc", false },
	{ "spc", "spc", false },
	{ "spacebar", "spc", false },
	{ "print", "print", false },
	{ "printscreen", "print", false },
	{ "print_screen", "print", false },
	{ "prtsc", "print", false },
	{ "sys_req", "sysrq", false },
	{ "sysrq", "sysrq", false },
	{ "pause", "pause", false },
	{ "break", "pause", false },
	{ "help", "help", false },
	{ "undo", "undo", false },
	{ "redo", "again", false },
	{ "find", "find", false },
	/* function keys */
	{ "f1", "f1", false },
	{ "f2", "f2", false },
	{ "f3", "f3", false },
	{ "f4", "f4", false },
	{ "f5", "f5", false },
	{ "f6", "f6", false },
	{ "f7", "f7", false },
	{ "f8", "f8", false },
	{ "f9", "f9", false },
	{ "f10", "f10", false },
	{ "f11", "f11", false },
	{ "f12", "f12", false },
	{ "f13", "f13", false },
	{ "f14", "f14", false },
	{ "f15", "f15", false },
	{ "f16", "f16", false },
	{ "f17", "f17", false },
	{ "f18", "f18", false },
	{ "f19", "f19", false },
	{ "f20", "f20", false },
	{ "f21", "f21", false },
	{ "f22", "f22", false },
	{ "f23", "f23", false },
	{ "f24", "f24", false },
	/* keypad */
	{ "kp_0", "kp_0", false },
	{ "kp_1", "kp_1", false },
	{ "kp_2", "kp_2", false },
	{ "kp_3", "kp_3", false },
	{ "kp_4", "kp_4", false },
	{ "kp_5", "kp_5", false },
	{ "kp_6", "kp_6", false },
	{ "kp_7", "kp_7", false },
	{ "kp_8", "kp_8", false },
	{ "kp_9", "kp_9", false },
	{ "kp_enter", "kp_enter", false },
	{ "kp_add", "kp_add", false },
	{ "kp_subtract", "kp_subtract", false },
	{ "kp_multiply", "kp_multiply", false },
	{ "kp_divide", "kp_divide", false },
	{ "kp_decimal", "kp_decimal", false },
	{ "kp_separator", "kp_comma", false },
	{ "kp_comma", "kp_comma", false },
	{ "kp_equal", "kp_equals", false },
	{ "kp_equals", "kp_equals", false },
	/* media and browser keys (XF86 keysyms) */
	{ "xf86audiomute", "audiomute", false },
	{ "xf86audioraisevolume", "volumeup", false },
	{ "xf86audiolowervolume", "volumedown", false },
	{ "xf86audioplay", "audioplay", false },
	{ "xf86audiostop", "audiostop", false },
	{ "xf86audionext", "audionext", false },
	{ "xf86audioprev", "audioprev", false },
	{ "xf86back", "ac_back", false },
	{ "xf86forward", "ac_forward", false },
	{ "xf86reload", "ac_refresh", false },
	{ "xf86homepage", "ac_home", false },
	{ "browserback", "ac_back", false },
	{ "browserforward", "ac_forward", false },
	{ "browserrefresh", "ac_refresh", false },
};

/* Punctuation by X keysym name, and by qcode name: keys of a US layout's
 * positions. On another layout the keysym names go through its keymap, and
 * the qcode names that are no keysym ("dot", "grave_accent") stay positions. */
static const struct key_name punct_names[] = {
	{ "minus", "minus", false },
	{ "equal", "equal", false },
	{ "bracketleft", "bracket_left", false },
	{ "bracket_left", "bracket_left", false },
	{ "bracketright", "bracket_right", false },
	{ "bracket_right", "bracket_right", false },
	{ "semicolon", "semicolon", false },
	{ "apostrophe", "apostrophe", false },
	{ "quoteright", "apostrophe", false },
	{ "grave", "grave_accent", false },
	{ "grave_accent", "grave_accent", false },
	{ "quoteleft", "grave_accent", false },
	{ "backslash", "backslash", false },
	{ "comma", "comma", false },
	{ "period", "dot", false },
	{ "dot", "dot", false },
	{ "slash", "slash", false },
	{ "plus", "equal", true },
	{ "underscore", "minus", true },
	{ "exclam", "1", true },
	{ "at", "2", true },
	{ "numbersign", "3", true },
	{ "dollar", "4", true },
	{ "percent", "5", true },
	{ "asciicircum", "6", true },
	{ "ampersand", "7", true },
	{ "asterisk", "8", true },
	{ "parenleft", "9", true },
	{ "parenright", "0", true },
	{ "braceleft", "bracket_left", true },
	{ "braceright", "bracket_right", true },
	{ "colon", "semicolon", true },
	{ "quotedbl", "apostrophe", true },
	{ "less", "comma", true },
	{ "greater", "dot", true },
	{ "question", "slash", true },
	{ "bar", "backslash", true },
	{ "asciitilde", "grave_accent", true },
};

int keys_char_to_qcodes(uint32_t codepoint, const char **qcode, bool *shift)
{
	if (codepoint == '\n' || codepoint == '\r') {
		*qcode = "ret";
		*shift = false;
		return 0;
	}
	if (codepoint == '\t') {
		*qcode = "tab";
		*shift = false;
		return 0;
	}
	if (codepoint >= 'a' && codepoint <= 'z') {
		*qcode = letter_qcodes[codepoint - 'a'];
		*shift = false;
		return 0;
	}
	if (codepoint >= 'A' && codepoint <= 'Z') {
		*qcode = letter_qcodes[codepoint - 'A'];
		*shift = true;
		return 0;
	}
	if (codepoint >= 0x20 && codepoint < 0x7f && ascii_keys[codepoint - 0x20].qcode) {
		*qcode = ascii_keys[codepoint - 0x20].qcode;
		*shift = ascii_keys[codepoint - 0x20].shift;
		return 0;
	}
	return -ENOENT;
}

static const struct key_name *find_name(const struct key_name *table, size_t n, const char *name,
					size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(table[i].name) == len && strncasecmp(table[i].name, name, len) == 0)
			return &table[i];
	return NULL;
}

#define FIND(table, name, len) find_name(table, sizeof(table) / sizeof(table[0]), name, len)

/* The code point of s when it is exactly one UTF-8 character, else 0. */
static uint32_t one_char(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t need = u[0] < 0x80 ? 1 : u[0] >= 0xf0 ? 4 : u[0] >= 0xe0 ? 3 : u[0] >= 0xc0 ? 2 : 0;
	uint32_t c;

	if (len == 0 || need != len)
		return 0;
	if (need == 1)
		return u[0];
	c = u[0] & (0x3f >> (need - 1));
	for (size_t i = 1; i < need; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (u[i] & 0x3f);
	}
	return c;
}

int keys_char_stroke(const struct vmm_keymap *km, uint32_t codepoint, struct vmm_keystroke *out)
{
	uint32_t sym;

	memset(out, 0, sizeof(*out));
	if (!km)
		return keys_char_to_qcodes(codepoint, &out->qcode, &out->shift);
	if (codepoint == '\n' || codepoint == '\r' || codepoint == '\t')
		return keys_char_to_qcodes(codepoint, &out->qcode, &out->shift);
	if (codepoint < 0x20 || codepoint == 0x7f || !(sym = vmm_keysym_from_char(codepoint)))
		return -ENOENT;
	return vmm_keymap_lookup(km, sym, out);
}

int keys_lookup_in(const struct vmm_keymap *km, const char *name, size_t len,
		   struct vmm_keystroke *out)
{
	const struct key_name *k;
	uint32_t c, sym;

	memset(out, 0, sizeof(*out));
	if (len == 0 || len > KEYS_MAX_NAME)
		return -ENOENT;
	/* '\n' and '\t' are text, not key names. */
	if ((unsigned char)name[0] < 0x20)
		return -ENOENT;
	if ((c = one_char(name, len)))
		return keys_char_stroke(km, c, out);
	if ((k = FIND(key_names, name, len)) || (!km && (k = FIND(punct_names, name, len)))) {
		out->qcode = k->qcode;
		out->shift = k->shift;
		return 0;
	}
	if (!km)
		return -ENOENT;
	if ((sym = vmm_keysym_from_name(name, len)))
		return vmm_keymap_lookup(km, sym, out);
	/* A qcode name that is no keysym ("dot"): the key at that position. */
	if ((k = FIND(punct_names, name, len))) {
		out->qcode = k->qcode;
		out->shift = k->shift;
		return 0;
	}
	return -ENOENT;
}

const char *keys_lookup(const char *name, size_t len, bool *shift)
{
	struct vmm_keystroke st;

	if (keys_lookup_in(NULL, name, len, &st) < 0)
		return NULL;
	*shift = st.shift;
	return st.qcode;
}

static bool chord_has(const struct keys_chord *c, const char *qcode)
{
	for (size_t i = 0; i < c->len; i++)
		if (strcmp(c->qcodes[i], qcode) == 0)
			return true;
	return false;
}

static int chord_add(struct keys_chord *c, const char *qcode)
{
	if (chord_has(c, qcode))
		return 0;
	if (c->len >= KEYS_MAX_CHORD)
		return -E2BIG;
	c->qcodes[c->len++] = qcode;
	return 0;
}

int keys_chord_merge(struct keys_chord *chord, const struct keys_chord *add)
{
	for (size_t i = 0; i < add->len; i++) {
		int r = chord_add(chord, add->qcodes[i]);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Prints at most 40 bytes of a user-given name into a message. */
static int name_width(size_t len)
{
	return len > 40 ? 40 : (int)len;
}

int keys_parse_chord_in(const struct vmm_keymap *km, const char *s, size_t len,
			struct keys_chord *out, char *err, size_t errlen)
{
	size_t pos = 0, n_tokens = 0;
	struct {
		const char *p;
		size_t len;
	} tokens[KEYS_MAX_CHORD + 1];

	memset(out, 0, sizeof(*out));
	if (len == 0) {
		snprintf(err, errlen, "empty key name");
		return -EINVAL;
	}
	/* A token runs to the next '+'; a '+' where a token should start is the
	 * plus key itself ("ctrl++", "+"). */
	while (pos < len) {
		size_t start = pos;

		if (s[pos] == '+') {
			pos++;
		} else {
			while (pos < len && s[pos] != '+')
				pos++;
		}
		if (n_tokens == KEYS_MAX_CHORD + 1) {
			snprintf(err, errlen, "more than %d keys in \"%.*s\"", KEYS_MAX_CHORD,
				 name_width(len), s);
			return -E2BIG;
		}
		tokens[n_tokens].p = s + start;
		tokens[n_tokens].len = pos - start;
		n_tokens++;
		if (pos < len) {
			if (s[pos] != '+')
				continue;
			pos++; /* the separator */
			if (pos == len) {
				snprintf(err, errlen, "empty key name at the end of \"%.*s\"",
					 name_width(len), s);
				return -EINVAL;
			}
		}
	}
	for (size_t i = 0; i < n_tokens; i++) {
		const char *name = tokens[i].p;
		size_t nlen = tokens[i].len;
		struct vmm_keystroke st = { 0 };
		int r;

		if (nlen == 1 && isupper((unsigned char)name[0]) && n_tokens > 1) {
			/* "ctrl+A" means ctrl+a (see keys.h). */
			char lower = (char)tolower((unsigned char)name[0]);

			r = keys_lookup_in(km, &lower, 1, &st);
		} else {
			r = keys_lookup_in(km, name, nlen, &st);
		}
		if (r < 0) {
			if (km)
				snprintf(err, errlen, "unknown key \"%.*s\" (not on the %s layout)",
					 name_width(nlen), name, vmm_keymap_name(km));
			else
				snprintf(err, errlen, "unknown key \"%.*s\"", name_width(nlen),
					 name);
			return -ENOENT;
		}
		r = st.shift ? chord_add(out, "shift") : 0;
		if (r == 0 && st.level3)
			r = chord_add(out, vmm_keymap_level3_qcode(km));
		if (r == 0)
			r = chord_add(out, st.qcode);
		if (r < 0) {
			snprintf(err, errlen, "more than %d keys in \"%.*s\"", KEYS_MAX_CHORD,
				 name_width(len), s);
			return r;
		}
	}
	return 0;
}

int keys_parse_chord(const char *s, size_t len, struct keys_chord *out, char *err, size_t errlen)
{
	return keys_parse_chord_in(NULL, s, len, out, err, errlen);
}

int keys_parse_sequence_in(const struct vmm_keymap *km, const char *s, struct keys_chord *out,
			   size_t max, size_t *n, char *err, size_t errlen)
{
	size_t pos = 0, len = strlen(s);

	*n = 0;
	while (pos < len) {
		size_t start;
		int r;

		while (pos < len && isspace((unsigned char)s[pos]))
			pos++;
		if (pos == len)
			break;
		start = pos;
		while (pos < len && !isspace((unsigned char)s[pos]))
			pos++;
		if (*n == max) {
			snprintf(err, errlen, "more than %zu key chords", max);
			return -E2BIG;
		}
		r = keys_parse_chord_in(km, s + start, pos - start, &out[*n], err, errlen);
		if (r < 0)
			return r;
		(*n)++;
	}
	if (*n == 0) {
		snprintf(err, errlen, "no key given");
		return -EINVAL;
	}
	return 0;
}

int keys_parse_sequence(const char *s, struct keys_chord *out, size_t max, size_t *n, char *err,
			size_t errlen)
{
	return keys_parse_sequence_in(NULL, s, out, max, n, err, errlen);
}
