/* tests/fuzz/fuzz_keys.c: libFuzzer target for key names and chords
 * (gateway/action/keys.c) on raw text, the xdotool syntax agents send
 * ("ctrl+a Delete", chords apart by white space), without the JSON around it that fuzz_actions adds.
 * Checked besides "no crash":
 *   - a parsed sequence has 1..max chords, each of 1..KEYS_MAX_CHORD known
 *     qcodes without repeats; more than max chords is -E2BIG;
 *   - each chord of the text parses alone to the same keys;
 *   - every qcode is a QEMU qcode's shape ([a-z0-9_]+);
 *   - every printable ASCII byte of the text types (keys_char_to_qcodes);
 *   - on a German keymap (vmm-qemu/keymap.h) the same text parses to valid
 *     chords too, and any code point it types is a valid qcode. */
#include "gateway/action/keys.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX 8

static void check_qcode(const char *q)
{
	if (!q || !*q || strspn(q, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(q))
		__builtin_trap();
}

static void check_chord(const struct keys_chord *c)
{
	if (c->len < 1 || c->len > KEYS_MAX_CHORD)
		__builtin_trap();
	for (size_t i = 0; i < c->len; i++) {
		check_qcode(c->qcodes[i]);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(c->qcodes[i], c->qcodes[k]))
				__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keys_chord seq[MAX], one, merged;
	char *s = malloc(size + 1), err[256];
	size_t n = 0, pos = 0;
	bool shift;
	const char *qcode;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	for (size_t i = 0; i < size; i++) {
		if (data[i] >= 0x20 && data[i] < 0x7f &&
		    keys_char_to_qcodes(data[i], &qcode, &shift) != 0)
			__builtin_trap();
		else if (data[i] >= 0x20 && data[i] < 0x7f)
			check_qcode(qcode);
	}
	if ((qcode = keys_lookup(s, strlen(s), &shift)))
		check_qcode(qcode);
	if (keys_parse_sequence(s, seq, MAX, &n, err, sizeof(err)) == 0) {
		if (n < 1 || n > MAX)
			__builtin_trap();
		for (size_t i = 0; i < n; i++) {
			size_t len;

			check_chord(&seq[i]);
			while (isspace((unsigned char)s[pos]))
				pos++;
			len = strcspn(s + pos, " \t\n\v\f\r");
			if (keys_parse_chord(s + pos, len, &one, err, sizeof(err)) != 0 ||
			    one.len != seq[i].len)
				__builtin_trap();
			for (size_t k = 0; k < one.len; k++)
				if (strcmp(one.qcodes[k], seq[i].qcodes[k]))
					__builtin_trap();
			pos += len;
			merged = seq[0];
			if (keys_chord_merge(&merged, &seq[i]) == 0)
				check_chord(&merged);
		}
	}
	{
		static const struct vmm_keymap *de;
		struct vmm_keystroke st;

		if (!de && !(de = vmm_keymap_get("de", err, sizeof(err))))
			__builtin_trap();
		if (keys_parse_sequence_in(de, s, seq, MAX, &n, err, sizeof(err)) == 0)
			for (size_t i = 0; i < n; i++)
				check_chord(&seq[i]);
		for (size_t i = 0; i + 4 <= size; i += 4) {
			uint32_t cp;

			memcpy(&cp, data + i, 4);
			if (keys_char_stroke(de, cp % 0x110000, &st) == 0)
				check_qcode(st.qcode);
		}
	}
	free(s);
	return 0;
}
