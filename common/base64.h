/* common/base64.h: standard base64 (RFC 4648, "+/" alphabet, '=' padding).
 * qemu-guest-agent carries process input and output, and file contents, as
 * base64 strings; neither jansson nor glibc offers a codec. */
#ifndef VITRINE_COMMON_BASE64_H
#define VITRINE_COMMON_BASE64_H

#include <stddef.h>

/* Length of the padded encoding of n bytes, without a terminating NUL, or 0
 * when n is so large that it would overflow a size_t. */
size_t base64_encoded_len(size_t n);

/* Encodes len bytes into a new NUL-terminated string (caller frees). On
 * success returns it and sets *out_len (may be NULL) to its length; returns
 * NULL when out of memory or len is too large. */
char *base64_encode(const void *data, size_t len, size_t *out_len);

/* Decodes len characters of in (padding optional; no whitespace or other
 * characters allowed) into out, writing at most cap bytes; *out_len gets the
 * full decoded length, which exceeds cap when the output was cut short.
 * out may be NULL when cap is 0 (to measure). Returns 0, or -EINVAL when in
 * is not base64 (nothing useful is left in out then). */
int base64_decode(const char *in, size_t len, void *out, size_t cap, size_t *out_len);

#endif
