/* tests/fuzz/fuzz_base64.c: libFuzzer target for common/base64.c, which
 * decodes what guests and clients send (qemu-ga output, exec stdin_b64,
 * file contents). The input is decoded as text and encoded as bytes:
 *   - bytes encoded decode to the same bytes (a round trip);
 *   - text that decodes has the length its characters imply, decodes to the
 *     same bytes again after encoding, and its encoding is the text with
 *     its padding completed (up to the unused low bits of the last
 *     character, which decoding ignores);
 *   - a decode into a short buffer writes a prefix of the full decode and
 *     never past the buffer (ASan watches). */
#include "common/base64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sextet(char c)
{
	const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(a, c) : NULL;

	return p ? (int)(p - a) : -1;
}

static void round_trip(const uint8_t *data, size_t size)
{
	size_t elen, dlen;
	char *enc = base64_encode(data, size, &elen);
	uint8_t *dec = malloc(size + 1);

	if (!enc || !dec || elen != base64_encoded_len(size) || strlen(enc) != elen ||
	    base64_decode(enc, elen, dec, size, &dlen) != 0 || dlen != size ||
	    memcmp(dec, data, size))
		__builtin_trap();
	free(enc);
	free(dec);
}

static void decode_text(const char *text, size_t size)
{
	size_t full, cut, cap = size % 7, elen, again, chars = size;
	uint8_t *out = malloc(size + 1), *shortbuf = malloc(cap ? cap : 1), *out2;
	char *enc;

	if (!out || !shortbuf)
		__builtin_trap();
	if (base64_decode(text, size, out, size, &full) != 0) {
		if (base64_decode(text, size, NULL, 0, &full) == 0)
			__builtin_trap(); /* measuring must agree */
		goto done;
	}
	while (chars && text[chars - 1] == '=')
		chars--;
	if (full != chars * 3 / 4 || full > size)
		__builtin_trap();
	if (base64_decode(text, size, shortbuf, cap, &cut) != 0 || cut != full ||
	    memcmp(shortbuf, out, cap < full ? cap : full))
		__builtin_trap();
	enc = base64_encode(out, full, &elen);
	out2 = malloc(full + 1);
	if (!enc || !out2 || base64_decode(enc, elen, out2, full, &again) != 0 || again != full ||
	    memcmp(out2, out, full))
		__builtin_trap();
	/* Same characters but the last one's unused bits, then '=' only. */
	if (elen < chars || (chars && memcmp(enc, text, chars - 1)))
		__builtin_trap();
	if (chars) {
		int used = (int)(chars * 6 - full * 8); /* unused low bits: 0, 2 or 4 */

		if ((sextet(enc[chars - 1]) >> used) != (sextet(text[chars - 1]) >> used))
			__builtin_trap();
	}
	for (size_t i = chars; i < elen; i++)
		if (enc[i] != '=')
			__builtin_trap();
	free(enc);
	free(out2);
done:
	free(out);
	free(shortbuf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	round_trip(data, size);
	decode_text((const char *)data, size);
	return 0;
}
