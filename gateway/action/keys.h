/* gateway/action/keys.h: key names -> QEMU qcodes, and characters -> key strokes.
 *
 * Agents name keys the way xdotool and their vendors do ("Return",
 * "ctrl+shift+t", "Page_Up", "KP_Enter", "cmd+l", "!"), while QMP
 * input-send-event takes QEMU qcodes ("ret", "ctrl", "pgup", "kp_enter",
 * "meta_l", "1" with "shift"). This file is the one place that translates,
 * for a US keyboard layout (the guests' default) built in, and for any other
 * layout through its keymap (vmm-qemu/keymap.h: keysym -> key + shift/AltGr).
 * Pure: no I/O (a keymap is compiled before it gets here).
 *
 * With a keymap, names mean keysyms: "z" is the key that types z on that
 * layout (y's position on a German one), "at" or "@" is AltGr+q there, "é"
 * is a key of its own on a French one; keys that are no character (Return,
 * F5, ctrl, KP_Enter, ...) are the same on every layout, and a qcode name
 * that is no keysym ("dot", "grave_accent") stays the position it names.
 * Without one (NULL), the functions behave exactly as for US below.
 *
 * Names: X keysym names and the usual aliases, compared case-insensitively
 * (return/enter, ctrl/control, cmd/super/win/meta, option/alt, esc/escape,
 * del/delete, pageup/pgup/prior, arrowup/up, space, ...). A single character
 * is case-sensitive like an xdotool keysym: "a" is the a key, "A" is shift+a,
 * "!" is shift+1, "+" is shift+equal. One exception, because that is what
 * agents mean by it: a capital letter in a chord that holds another key
 * ("ctrl+A", "Ctrl+C") is the plain letter, with no implied shift. */
#ifndef VITRINE_GATEWAY_KEYS_H
#define VITRINE_GATEWAY_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm-qemu/keymap.h"

/* Most keys one chord may hold down at once, implied shifts included. */
#define KEYS_MAX_CHORD 8
/* Longest key name accepted (xdotool's longest useful keysym names fit). */
#define KEYS_MAX_NAME 32

/* Keys pressed together: pressed in order, released in reverse order. The
 * qcodes are static strings owned by this module. */
struct keys_chord {
	size_t len;
	const char *qcodes[KEYS_MAX_CHORD];
};

/* Looks up one key name of len bytes (not NUL-terminated). On success returns
 * the static qcode and sets *shift when the name stands for a shifted key
 * ("A", "!", "plus", "ISO_Left_Tab"). Returns NULL when the name is unknown. */
const char *keys_lookup(const char *name, size_t len, bool *shift);

/* Parses one chord: key names joined by '+' ("ctrl+shift+t", "shift+Tab",
 * "super+l", "ctrl+plus", "ctrl++", "+"). A shifted name adds "shift" right
 * before its key unless the chord already holds it; repeated keys count once.
 * Returns 0 and fills *out, or a negative errno with a message naming the key
 * in err: -ENOENT for an unknown key, -EINVAL for an empty name ("ctrl+",
 * ""), -E2BIG for more than KEYS_MAX_CHORD keys. */
int keys_parse_chord(const char *s, size_t len, struct keys_chord *out, char *err, size_t errlen);

/* Parses xdotool `key` syntax: chords separated by spaces ("ctrl+a Delete").
 * Fills out[0..*n) with at most max chords. Returns 0, or the errors of
 * keys_parse_chord, -EINVAL when s holds no chord, -E2BIG for more than max. */
int keys_parse_sequence(const char *s, struct keys_chord *out, size_t max, size_t *n, char *err,
			size_t errlen);

/* Appends the keys of add to chord (skipping keys it already holds).
 * Returns 0, or -E2BIG when the result would exceed KEYS_MAX_CHORD. */
int keys_chord_merge(struct keys_chord *chord, const struct keys_chord *add);

/* How to type one Unicode code point on a US layout: *qcode (static) and
 * whether shift must be held. Printable ASCII (0x20..0x7e), '\n' (ret) and
 * '\t' (tab) are expressible; for anything else returns -ENOENT, meaning the
 * character cannot be typed with key events and the caller must deliver it by
 * another path (guest agent, clipboard). Returns 0 on success. */
int keys_char_to_qcodes(uint32_t codepoint, const char **qcode, bool *shift);

/* keys_char_to_qcodes() through keymap km (NULL: US): how to type one
 * code point, into *out. Returns 0, or -ENOENT when no key of the layout
 * types it (a dead key's accent, a character of another script). */
int keys_char_stroke(const struct vmm_keymap *km, uint32_t codepoint, struct vmm_keystroke *out);

/* keys_lookup() on keymap km (NULL: US): one key name (or one UTF-8
 * character) of len bytes into *out. Returns 0, or -ENOENT. */
int keys_lookup_in(const struct vmm_keymap *km, const char *name, size_t len,
		   struct vmm_keystroke *out);

/* keys_parse_chord() and keys_parse_sequence() on keymap km (NULL: US); a
 * name that needs AltGr adds the layout's AltGr key as a shifted one adds
 * shift. Errors as theirs (an unknown key's message names the layout). */
int keys_parse_chord_in(const struct vmm_keymap *km, const char *s, size_t len,
			struct keys_chord *out, char *err, size_t errlen);
int keys_parse_sequence_in(const struct vmm_keymap *km, const char *s, struct keys_chord *out,
			   size_t max, size_t *n, char *err, size_t errlen);

#endif
