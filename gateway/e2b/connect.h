/* gateway/e2b/connect.h: Connect-RPC's wire pieces for E2B's envd (JSON
 * codec): the 5-byte envelope of streaming calls (a flag byte, a
 * big-endian length, the message), the end-of-stream message, and the
 * error codes with their HTTP statuses for unary calls. Pure: bytes in,
 * bytes out; unit-tested and fuzzed (tests/fuzz/fuzz_e2b.c). */
#ifndef VITRINE_GATEWAY_E2B_CONNECT_H
#define VITRINE_GATEWAY_E2B_CONNECT_H

#include <stddef.h>
#include <stdint.h>

#define CONNECT_FLAG_COMPRESSED 0x01u
#define CONNECT_FLAG_END 0x02u
#define CONNECT_HEADER 5
/* The largest message we take from a client (a Start request). */
#define CONNECT_MAX_MESSAGE (1u << 20)

enum connect_code {
	CONNECT_OK,
	CONNECT_CANCELED,
	CONNECT_UNKNOWN,
	CONNECT_INVALID_ARGUMENT,
	CONNECT_DEADLINE_EXCEEDED,
	CONNECT_NOT_FOUND,
	CONNECT_ALREADY_EXISTS,
	CONNECT_PERMISSION_DENIED,
	CONNECT_RESOURCE_EXHAUSTED,
	CONNECT_FAILED_PRECONDITION,
	CONNECT_ABORTED,
	CONNECT_OUT_OF_RANGE,
	CONNECT_UNIMPLEMENTED,
	CONNECT_INTERNAL,
	CONNECT_UNAVAILABLE,
	CONNECT_DATA_LOSS,
	CONNECT_UNAUTHENTICATED,
};

/* Reads one envelope from the len bytes at buf. Returns the bytes it
 * takes (> 0) with *flags and the message (*msg, *msg_len, pointing into
 * buf), 0 when more bytes are needed, -E2BIG when the message is longer
 * than max, -EPROTO for a compressed message (we offer no compression).
 * This function can't fail otherwise. */
int connect_frame_parse(const void *buf, size_t len, size_t max, uint8_t *flags,
			const uint8_t **msg, size_t *msg_len);
/* Writes the 5-byte header of a message of len bytes with flags to out. */
void connect_frame_header(uint8_t out[CONNECT_HEADER], uint8_t flags, uint32_t len);
/* The code's name on the wire ("invalid_argument", ...); "unknown" out of range. */
const char *connect_code_name(enum connect_code c);
/* The HTTP status of a unary call that failed with c (Connect's table). */
int connect_code_http(enum connect_code c);
/* The JSON of an error: {"code": name, "message": message}; of the
 * end-of-stream message: {} for CONNECT_OK, else {"error": that}. Caller
 * frees; NULL when out of memory. */
char *connect_error_json(enum connect_code c, const char *message);
char *connect_end_json(enum connect_code c, const char *message);

#endif
