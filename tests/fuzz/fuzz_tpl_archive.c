/* tests/fuzz/fuzz_tpl_archive.c: libFuzzer target for the reader of a
 * template's export file (vmm-qemu/tpl_archive.c), which takes whatever a
 * client uploads to POST /v1/templates/import. The first byte picks the
 * size of the pieces the rest is fed in (1..64, or all at once). Checks:
 * the result and the reason are the same as for the whole input in one
 * piece; a member's bytes are handed on only between its begin and end,
 * never past the size its header gave, only for known members; an
 * accepted archive has template.json first, ram and state, and each
 * member's bytes hash (independently, sha256()) to the line SHA256SUMS
 * has for it. */
#include "common/sha256.h"
#include "vmm-qemu/tpl_archive.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	unsigned char *bytes[TPL_FILE_COUNT]; /* owned */
	uint64_t size[TPL_FILE_COUNT], len[TPL_FILE_COUNT];
	int open; /* the member begun and not ended, or -1 */
	int order[16], n;
	size_t input; /* the input's length: no member can bring more bytes */
};

static int on_begin(void *ud, enum tpl_file f, uint64_t size, char *err, size_t errlen)
{
	struct seen *s = ud;

	(void)err, (void)errlen;
	if (s->open != -1 || (int)f >= TPL_FILE_COUNT || s->bytes[f])
		__builtin_trap();
	s->bytes[f] = malloc(size < s->input ? (size ? size : 1) : s->input + 1);
	if (!s->bytes[f])
		abort();
	s->size[f] = size;
	s->open = f;
	if (s->n < 16)
		s->order[s->n++] = f;
	return 0;
}

static int on_data(void *ud, enum tpl_file f, const void *p, size_t n, char *err, size_t errlen)
{
	struct seen *s = ud;

	(void)err, (void)errlen;
	if ((int)f != s->open || n == 0 || s->len[f] + n > s->size[f] || s->len[f] + n > s->input)
		__builtin_trap();
	memcpy(s->bytes[f] + s->len[f], p, n);
	s->len[f] += n;
	return 0;
}

static int on_end(void *ud, enum tpl_file f, char *err, size_t errlen)
{
	struct seen *s = ud;

	(void)err, (void)errlen;
	if ((int)f != s->open || s->len[f] != s->size[f])
		__builtin_trap();
	s->open = -1;
	return 0;
}

static const struct tpl_unpack_ops ops = { on_begin, on_data, on_end };

static void check_accepted(const struct seen *s)
{
	const char *sums = (const char *)s->bytes[TPL_FILE_SUMS];
	size_t at = 0;

	if (s->n < 4 || s->order[0] != TPL_FILE_META || s->order[s->n - 1] != TPL_FILE_SUMS ||
	    !s->bytes[TPL_FILE_RAM] || !s->bytes[TPL_FILE_STATE])
		__builtin_trap();
	for (int f = 0; f < TPL_FILE_SUMS; f++) {
		char hex[SHA256_HEX_LEN + 1];
		size_t name_len = strlen(tpl_file_names[f]);

		if (!s->bytes[f])
			continue;
		sha256_hex(s->bytes[f], s->len[f], hex);
		if (at + SHA256_HEX_LEN + 2 + name_len + 1 > s->len[TPL_FILE_SUMS] ||
		    memcmp(sums + at, hex, SHA256_HEX_LEN) ||
		    memcmp(sums + at + SHA256_HEX_LEN, "  ", 2) ||
		    memcmp(sums + at + SHA256_HEX_LEN + 2, tpl_file_names[f], name_len) ||
		    sums[at + SHA256_HEX_LEN + 2 + name_len] != '\n')
			__builtin_trap();
		at += SHA256_HEX_LEN + 2 + name_len + 1;
	}
	if (at != s->len[TPL_FILE_SUMS])
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tpl_unpack u, whole;
	struct seen s = { .open = -1, .input = size };
	size_t step;
	int rc = 0, rc_whole;

	if (size < 1)
		return 0;
	step = data[0] % 65 ? data[0] % 65 : size;
	data++, size--;
	tpl_unpack_init(&whole, NULL, NULL);
	rc_whole = tpl_unpack_feed(&whole, data, size);
	if (rc_whole == 0)
		rc_whole = tpl_unpack_finish(&whole);
	tpl_unpack_init(&u, &ops, &s);
	for (size_t at = 0; at < size && rc == 0; at += step)
		rc = tpl_unpack_feed(&u, data + at, size - at < step ? size - at : step);
	if (rc == 0)
		rc = tpl_unpack_finish(&u);
	if (rc != rc_whole || strcmp(u.err, whole.err))
		__builtin_trap();
	if (rc == 0)
		check_accepted(&s);
	for (int f = 0; f < TPL_FILE_COUNT; f++)
		free(s.bytes[f]);
	return 0;
}
