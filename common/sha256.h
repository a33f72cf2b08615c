/* common/sha256.h: SHA-256 (FIPS 180-4), so that the gateway can keep the
 * hashes of session tokens on disk instead of the tokens themselves,
 * without linking a crypto library for one function. Pure. */
#ifndef VITRINE_COMMON_SHA256_H
#define VITRINE_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32
#define SHA256_HEX_LEN 64

/* The digest of len bytes at data into out. This function can't fail. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);
/* The digest as lowercase hex, NUL-terminated (SHA256_HEX_LEN + 1 bytes). */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
