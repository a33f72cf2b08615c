/* common/base64.c: see base64.h. */
#include "common/base64.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
	size_t groups = n / 3 + (n % 3 != 0);

	if (groups > (SIZE_MAX - 1) / 4)
		return 0;
	return groups * 4;
}

char *base64_encode(const void *data, size_t len, size_t *out_len)
{
	const unsigned char *in = data;
	size_t n = base64_encoded_len(len), o = 0, i;
	char *out;

	if (n == 0 && len != 0)
		return NULL;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	for (i = 0; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = alphabet[v & 63];
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;

		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;

		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = '=';
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}

/* The 6-bit value of c, or -1. */
static int sextet(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int base64_decode(const char *in, size_t len, void *out, size_t cap, size_t *out_len)
{
	unsigned char *o = out;
	size_t pad = 0, n = 0, i;
	uint32_t acc = 0;
	int bits = 0;

	/* Padding only at the end, at most two, and only to complete a group. */
	while (pad < len && pad < 2 && in[len - 1 - pad] == '=')
		pad++;
	if (pad && len % 4 != 0)
		return -EINVAL;
	len -= pad;
	if (len % 4 == 1)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		int v = sextet(in[i]);

		if (v < 0)
			return -EINVAL;
		acc = (acc << 6 | (uint32_t)v) & 0xFFFFFF;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n < cap)
				o[n] = (unsigned char)(acc >> bits);
			n++;
		}
	}
	*out_len = n;
	return 0;
}
