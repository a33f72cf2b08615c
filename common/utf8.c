/* common/utf8.c: see utf8.h. */
#include "common/utf8.h"

#include <string.h>

/* The length of the well-formed sequence at s (at most n bytes), or 0. */
static size_t seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned lo = 0x80, hi = 0xbf; /* the range of the second byte */

	if (c >= 0x01 && c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* past U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0, k; i < n; i += k)
		if (!(k = seq_len(p + i, n - i)))
			return false;
	return true;
}

size_t utf8_scrub(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t n = strlen(s), bad = 0;

	for (size_t i = 0, k; i < n; i += k) {
		if (!(k = seq_len(p + i, n - i))) {
			p[i] = '?';
			k = 1;
			bad++;
		}
	}
	return bad;
}
