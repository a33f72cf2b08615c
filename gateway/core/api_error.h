/* gateway/core/api_error.h: the error every room hands back to the API's
 * edge: an HTTP status, a stable machine code and a sentence. Pure. */
#ifndef VITRINE_GATEWAY_API_ERROR_H
#define VITRINE_GATEWAY_API_ERROR_H

#include <jansson.h>

/* An API error: a stable machine code and a sentence naming the field. */
struct api_error {
	int status; /* HTTP status */
	char code[32];
	char message[1024];
};

/* Fills *e (message cut to fit, made valid UTF-8). Returns -EINVAL, for callers that
 * fail with it. This function can't fail. */
int api_error_set(struct api_error *e, int status, const char *code, const char *message);

/* The body every API error has: {"error": {"code", "message"}}, the
 * message made valid UTF-8 ('?' for each stray byte). NULL when out of
 * memory. */
json_t *api_error_json(const char *code, const char *message);

/* message as a JSON string, made valid UTF-8 the same way, for the error
 * bodies of other shapes (E2B's, Connect's, the streams'). NULL when out of
 * memory. */
json_t *api_error_text(const char *message);

#endif
