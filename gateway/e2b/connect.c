/* gateway/e2b/connect.c: see connect.h. */
#include "gateway/e2b/connect.h"

#include "gateway/core/api_error.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

static const struct {
	const char *name;
	int http;
} codes[] = {
	[CONNECT_OK] = { "ok", 200 },
	[CONNECT_CANCELED] = { "canceled", 499 },
	[CONNECT_UNKNOWN] = { "unknown", 500 },
	[CONNECT_INVALID_ARGUMENT] = { "invalid_argument", 400 },
	[CONNECT_DEADLINE_EXCEEDED] = { "deadline_exceeded", 504 },
	[CONNECT_NOT_FOUND] = { "not_found", 404 },
	[CONNECT_ALREADY_EXISTS] = { "already_exists", 409 },
	[CONNECT_PERMISSION_DENIED] = { "permission_denied", 403 },
	[CONNECT_RESOURCE_EXHAUSTED] = { "resource_exhausted", 429 },
	[CONNECT_FAILED_PRECONDITION] = { "failed_precondition", 400 },
	[CONNECT_ABORTED] = { "aborted", 409 },
	[CONNECT_OUT_OF_RANGE] = { "out_of_range", 400 },
	[CONNECT_UNIMPLEMENTED] = { "unimplemented", 501 },
	[CONNECT_INTERNAL] = { "internal", 500 },
	[CONNECT_UNAVAILABLE] = { "unavailable", 503 },
	[CONNECT_DATA_LOSS] = { "data_loss", 500 },
	[CONNECT_UNAUTHENTICATED] = { "unauthenticated", 401 },
};

int connect_frame_parse(const void *buf, size_t len, size_t max, uint8_t *flags,
			const uint8_t **msg, size_t *msg_len)
{
	const uint8_t *b = buf;
	uint32_t n;

	if (len < CONNECT_HEADER)
		return 0;
	n = (uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 | b[4];
	if (b[0] & CONNECT_FLAG_COMPRESSED)
		return -EPROTO;
	if (n > max || n > CONNECT_MAX_MESSAGE)
		return -E2BIG;
	if (len - CONNECT_HEADER < n)
		return 0;
	*flags = b[0];
	*msg = b + CONNECT_HEADER;
	*msg_len = n;
	return (int)(CONNECT_HEADER + n);
}

void connect_frame_header(uint8_t out[CONNECT_HEADER], uint8_t flags, uint32_t len)
{
	out[0] = flags;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
}

const char *connect_code_name(enum connect_code c)
{
	return (unsigned)c < sizeof(codes) / sizeof(codes[0]) ? codes[c].name : "unknown";
}

int connect_code_http(enum connect_code c)
{
	return (unsigned)c < sizeof(codes) / sizeof(codes[0]) ? codes[c].http : 500;
}

static json_t *error_obj(enum connect_code c, const char *message)
{
	return json_pack("{s:s, s:o}", "code", connect_code_name(c), "message",
			 api_error_text(message ? message : ""));
}

char *connect_error_json(enum connect_code c, const char *message)
{
	json_t *j = error_obj(c, message);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return s;
}

char *connect_end_json(enum connect_code c, const char *message)
{
	json_t *j = c == CONNECT_OK ? json_object()
				    : json_pack("{s:o}", "error", error_obj(c, message));
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return s;
}
