/* common/sha256.h: SHA-256 (FIPS 180-4), so that the gateway can keep the
 * hashes of session tokens on disk instead of the tokens themselves,
 * without linking a crypto library for one function, and check a template's
 * export file as it streams by (sha256_init/update/final). Pure. */
#ifndef VITRINE_COMMON_SHA256_H
#define VITRINE_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32
#define SHA256_HEX_LEN 64

/* A digest taken piece by piece. */
struct sha256_ctx {
	uint32_t h[8];
	uint64_t len; /* bytes so far */
	uint8_t buf[64];
	size_t n_buf;
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
/* The digest of everything given since sha256_init; c is spent. */
void sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_LEN]);
/* d as lowercase hex, NUL-terminated. */
void sha256_hex_of(const uint8_t d[SHA256_LEN], char out[SHA256_HEX_LEN + 1]);

/* The digest of len bytes at data into out. This function can't fail. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);
/* The digest as lowercase hex, NUL-terminated (SHA256_HEX_LEN + 1 bytes). */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
