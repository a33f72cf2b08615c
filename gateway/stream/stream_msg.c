/* gateway/stream/stream_msg.c: see stream_msg.h. */
#include "gateway/stream/stream_msg.h"

#include "gateway/action/keys.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *code, *qcode;
} codes[] = {
	{ "Escape", "esc" },
	{ "Digit1", "1" },
	{ "Digit2", "2" },
	{ "Digit3", "3" },
	{ "Digit4", "4" },
	{ "Digit5", "5" },
	{ "Digit6", "6" },
	{ "Digit7", "7" },
	{ "Digit8", "8" },
	{ "Digit9", "9" },
	{ "Digit0", "0" },
	{ "Minus", "minus" },
	{ "Equal", "equal" },
	{ "Backspace", "backspace" },
	{ "Tab", "tab" },
	{ "BracketLeft", "bracket_left" },
	{ "BracketRight", "bracket_right" },
	{ "Enter", "ret" },
	{ "ControlLeft", "ctrl" },
	{ "ControlRight", "ctrl_r" },
	{ "Semicolon", "semicolon" },
	{ "Quote", "apostrophe" },
	{ "Backquote", "grave_accent" },
	{ "ShiftLeft", "shift" },
	{ "ShiftRight", "shift_r" },
	{ "Backslash", "backslash" },
	{ "IntlBackslash", "less" },
	{ "Comma", "comma" },
	{ "Period", "dot" },
	{ "Slash", "slash" },
	{ "AltLeft", "alt" },
	{ "AltRight", "alt_r" },
	{ "Space", "spc" },
	{ "CapsLock", "caps_lock" },
	{ "F1", "f1" },
	{ "F2", "f2" },
	{ "F3", "f3" },
	{ "F4", "f4" },
	{ "F5", "f5" },
	{ "F6", "f6" },
	{ "F7", "f7" },
	{ "F8", "f8" },
	{ "F9", "f9" },
	{ "F10", "f10" },
	{ "F11", "f11" },
	{ "F12", "f12" },
	{ "NumLock", "num_lock" },
	{ "ScrollLock", "scroll_lock" },
	{ "PrintScreen", "print" },
	{ "Pause", "pause" },
	{ "Insert", "insert" },
	{ "Delete", "delete" },
	{ "Home", "home" },
	{ "End", "end" },
	{ "PageUp", "pgup" },
	{ "PageDown", "pgdn" },
	{ "ArrowUp", "up" },
	{ "ArrowDown", "down" },
	{ "ArrowLeft", "left" },
	{ "ArrowRight", "right" },
	{ "MetaLeft", "meta_l" },
	{ "MetaRight", "meta_r" },
	{ "ContextMenu", "menu" },
	{ "Numpad0", "kp_0" },
	{ "Numpad1", "kp_1" },
	{ "Numpad2", "kp_2" },
	{ "Numpad3", "kp_3" },
	{ "Numpad4", "kp_4" },
	{ "Numpad5", "kp_5" },
	{ "Numpad6", "kp_6" },
	{ "Numpad7", "kp_7" },
	{ "Numpad8", "kp_8" },
	{ "Numpad9", "kp_9" },
	{ "NumpadDecimal", "kp_decimal" },
	{ "NumpadEnter", "kp_enter" },
	{ "NumpadAdd", "kp_add" },
	{ "NumpadSubtract", "kp_subtract" },
	{ "NumpadMultiply", "kp_multiply" },
	{ "NumpadDivide", "kp_divide" },
};

uint32_t stream_one_char(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t need;
	uint32_t c;

	if (!s || len == 0)
		return 0;
	need = u[0] < 0x80 ? 1 : u[0] >= 0xf0 ? 4 : u[0] >= 0xe0 ? 3 : u[0] >= 0xc0 ? 2 : 0;
	if (need != len)
		return 0;
	c = need == 1 ? u[0] : u[0] & (0x3fu >> (need - 1));
	for (size_t i = 1; i < need; i++)
		c = (c << 6) | (u[i] & 0x3f); /* jansson checked the UTF-8 */
	return c < 0x20 || c == 0x7f ? 0 : c;
}

const char *stream_code_to_qcode(const char *code)
{
	static const char *const letters[26] = { "a", "b", "c", "d", "e", "f", "g", "h", "i",
						 "j", "k", "l", "m", "n", "o", "p", "q", "r",
						 "s", "t", "u", "v", "w", "x", "y", "z" };

	if (!strncmp(code, "Key", 3) && code[3] >= 'A' && code[3] <= 'Z' && !code[4])
		return letters[code[3] - 'A'];
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(codes[i].code, code))
			return codes[i].qcode;
	return NULL;
}

size_t stream_type_piece(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		const char *q;
		bool shift;

		if ((unsigned char)text[i] >= 0x80 ||
		    keys_char_to_qcodes((unsigned char)text[i], &q, &shift) < 0)
			return len;
	}
	return len < STREAM_TYPE_PIECE ? len : STREAM_TYPE_PIECE;
}

__attribute__((format(printf, 4, 5))) static int fail(char *reason, size_t n, int code,
						      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, n, fmt, ap);
	va_end(ap);
	return code;
}

/* Reads an optional integer field into *out, in [min, max]. Returns 0, or
 * STREAM_CLOSE_POLICY. */
static int int_field(json_t *j, const char *name, int min, int max, bool required, int *out,
		     char *reason, size_t rn)
{
	json_t *v = json_object_get(j, name);

	if (!v)
		return required ? fail(reason, rn, STREAM_CLOSE_POLICY, "missing field %s", name)
				: 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return fail(reason, rn, STREAM_CLOSE_POLICY, "%s is not an integer in range", name);
	*out = (int)json_integer_value(v);
	return 0;
}

static int name_field(json_t *j, struct stream_msg *m, char *reason, size_t rn)
{
	json_t *v = json_object_get(j, "name");
	const char *s;

	if (!v)
		return 0;
	s = json_string_value(v);
	if (!s || strlen(s) > STREAM_NAME_MAX)
		return fail(reason, rn, STREAM_CLOSE_POLICY,
			    "%s must be a string of at most 32 bytes", "name");
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return fail(reason, rn, STREAM_CLOSE_POLICY, "%s has control characters",
				    "name");
	snprintf(m->name, sizeof(m->name), "%s", s);
	return 0;
}

/* Every key of j must be in allowed (NULL-terminated). */
static int only_fields(json_t *j, const char *const *allowed, char *reason, size_t rn)
{
	const char *k;
	json_t *v;

	json_object_foreach(j, k, v)
	{
		bool ok = false;

		for (int i = 0; allowed[i]; i++)
			ok |= !strcmp(allowed[i], k);
		if (!ok)
			return fail(reason, rn, STREAM_CLOSE_POLICY, "unknown field %.60s", k);
	}
	return 0;
}

static int parse_fields(json_t *j, const char *type, int sw, int sh, struct stream_msg *m,
			char *reason, size_t rn)
{
	static const char *const f_auth[] = { "type", "token", "name", "quality", "max_fps", NULL };
	static const char *const f_settings[] = { "type", "quality", "max_fps", "name", NULL };
	static const char *const f_bare[] = { "type", NULL };
	static const char *const f_pointer[] = { "type", "x", "y", "buttons", NULL };
	static const char *const f_wheel[] = { "type", "x", "y", "dx", "dy", NULL };
	static const char *const f_key[] = { "type", "code", "key", "down", NULL };
	static const char *const f_text[] = { "type", "text", NULL };
	static const char *const f_ping[] = { "type", "t", NULL };
	static const char *const f_type[] = { "type", "text", NULL };
	int rc;

	if (!strcmp(type, "auth")) {
		const char *t = json_string_value(json_object_get(j, "token"));

		m->kind = SM_AUTH;
		if ((rc = only_fields(j, f_auth, reason, rn)))
			return rc;
		if (!t || !*t || strlen(t) >= sizeof(m->token))
			return fail(reason, rn, STREAM_CLOSE_POLICY, "%s: token must be a string",
				    "auth");
		snprintf(m->token, sizeof(m->token), "%s", t);
		if ((rc = int_field(j, "quality", 1, 100, false, &m->quality, reason, rn)) ||
		    (rc = int_field(j, "max_fps", 1, 60, false, &m->max_fps, reason, rn)))
			return rc;
		return name_field(j, m, reason, rn);
	}
	if (!strcmp(type, "settings")) {
		m->kind = SM_SETTINGS;
		if ((rc = only_fields(j, f_settings, reason, rn)) ||
		    (rc = int_field(j, "quality", 1, 100, false, &m->quality, reason, rn)) ||
		    (rc = int_field(j, "max_fps", 1, 60, false, &m->max_fps, reason, rn)))
			return rc;
		return name_field(j, m, reason, rn);
	}
	if (!strcmp(type, "take") || !strcmp(type, "release")) {
		m->kind = type[0] == 't' ? SM_TAKE : SM_RELEASE;
		return only_fields(j, f_bare, reason, rn);
	}
	if (!strcmp(type, "pointer")) {
		m->kind = SM_POINTER;
		if ((rc = only_fields(j, f_pointer, reason, rn)) ||
		    (rc = int_field(j, "x", 0, sw - 1, true, &m->x, reason, rn)) ||
		    (rc = int_field(j, "y", 0, sh - 1, true, &m->y, reason, rn)) ||
		    (rc = int_field(j, "buttons", 0, 31, false, &m->buttons, reason, rn)))
			return rc;
		return 0;
	}
	if (!strcmp(type, "wheel")) {
		m->kind = SM_WHEEL;
		if ((rc = only_fields(j, f_wheel, reason, rn)) ||
		    (rc = int_field(j, "x", 0, sw - 1, true, &m->x, reason, rn)) ||
		    (rc = int_field(j, "y", 0, sh - 1, true, &m->y, reason, rn)) ||
		    (rc = int_field(j, "dx", -10, 10, false, &m->dx, reason, rn)) ||
		    (rc = int_field(j, "dy", -10, 10, false, &m->dy, reason, rn)))
			return rc;
		return 0;
	}
	if (!strcmp(type, "key")) {
		const char *code = json_string_value(json_object_get(j, "code"));
		json_t *key = json_object_get(j, "key");
		json_t *down = json_object_get(j, "down");

		m->kind = SM_KEY;
		if ((rc = only_fields(j, f_key, reason, rn)))
			return rc;
		if ((!code && !key) || !json_is_boolean(down))
			return fail(reason, rn, STREAM_CLOSE_POLICY,
				    "%s needs code or key (strings) and down (bool)", "key");
		if (key && !(m->key_char = stream_one_char(json_string_value(key),
							   json_string_length(key))))
			return fail(reason, rn, STREAM_CLOSE_POLICY, "%s",
				    "key: one printable character");
		m->qcode = code ? stream_code_to_qcode(code) : NULL;
		if (code && !m->qcode && !m->key_char)
			return fail(reason, rn, STREAM_CLOSE_POLICY, "unknown key code %.40s",
				    code);
		m->down = json_is_true(down);
		return 0;
	}
	if (!strcmp(type, "text")) {
		json_t *t = json_object_get(j, "text");

		m->kind = SM_TEXT;
		if ((rc = only_fields(j, f_text, reason, rn)))
			return rc;
		if (!json_is_string(t) || json_string_length(t) == 0 ||
		    json_string_length(t) > STREAM_TEXT_MAX ||
		    strlen(json_string_value(t)) != json_string_length(t))
			return fail(reason, rn, STREAM_CLOSE_POLICY,
				    "text: a string of 1..%d bytes", STREAM_TEXT_MAX);
		memcpy(m->text, json_string_value(t), json_string_length(t) + 1);
		m->text_len = json_string_length(t);
		return 0;
	}
	if (!strcmp(type, "ping")) {
		json_t *t = json_object_get(j, "t");

		m->kind = SM_PING;
		if ((rc = only_fields(j, f_ping, reason, rn)))
			return rc;
		if (t && !json_is_number(t))
			return fail(reason, rn, STREAM_CLOSE_POLICY, "%s: t must be a number",
				    "ping");
		m->has_t = t != NULL;
		m->t = t ? json_number_value(t) : 0;
		return 0;
	}
	if (!strcmp(type, "type")) {
		json_t *t = json_object_get(j, "text");
		size_t n = json_string_length(t);

		m->kind = SM_TYPE;
		if ((rc = only_fields(j, f_type, reason, rn)))
			return rc;
		/* jansson has checked the UTF-8; a NUL would cut the text short. */
		if (!json_is_string(t) || n == 0 || memchr(json_string_value(t), '\0', n))
			return fail(reason, rn, STREAM_CLOSE_POLICY,
				    "%s: text must be a non-empty string without NUL", "type");
		memcpy(m->text, json_string_value(t), n);
		m->text[n] = '\0';
		m->text_len = n;
		return 0;
	}
	if (!strcmp(type, "clipboard")) {
		m->kind = SM_CLIPBOARD;
		return only_fields(j, f_bare, reason, rn);
	}
	return fail(reason, rn, STREAM_CLOSE_POLICY, "unknown message type %.40s", type);
}

int stream_msg_parse(const char *text, size_t len, int screen_w, int screen_h, struct stream_msg *m,
		     char *reason, size_t reasonlen)
{
	json_t *j;
	const char *type;
	int rc;

	memset(m, 0, sizeof(*m));
	if (len > STREAM_MSG_MAX)
		return fail(reason, reasonlen, STREAM_CLOSE_TOO_BIG, "%s",
			    "message over 4096 bytes");
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		return fail(reason, reasonlen, STREAM_CLOSE_INVALID, "%s", "not a JSON object");
	}
	type = json_string_value(json_object_get(j, "type"));
	if (!type)
		rc = fail(reason, reasonlen, STREAM_CLOSE_POLICY, "%s",
			  "missing string field type");
	else
		rc = parse_fields(j, type, screen_w, screen_h, m, reason, reasonlen);
	json_decref(j);
	return rc;
}
