/* common/chunked.h: HTTP/1.1's chunked transfer coding, decoded as bytes
 * arrive: lws 4.1 hands a server a chunked request body as it came, with
 * its framing, and never says where it ends (E2B's SDKs send their bodies
 * chunked). Pure: unit-tested (tests/unit/test_e2b.c) and fuzzed
 * (tests/fuzz/fuzz_e2b.c). Chunk extensions and trailers are skipped. */
#ifndef VITRINE_COMMON_CHUNKED_H
#define VITRINE_COMMON_CHUNKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct chunked {
	int state; /* zeroed: at the first chunk's size */
	uint64_t left; /* of the chunk's data */
	int digits;
	bool line_empty; /* trailers: the line so far is empty */
};

/* Decodes len bytes of in into out (which has room for len bytes; may be
 * in itself). Returns the bytes written, or -EPROTO for malformed framing
 * (a size of more than 15 hex digits, a missing CRLF, bytes after the
 * end), and the state stays broken. chunked_done tells whether the last
 * chunk and the trailers have come. */
long chunked_decode(struct chunked *c, const void *in, size_t len, void *out);
bool chunked_done(const struct chunked *c);

#endif
