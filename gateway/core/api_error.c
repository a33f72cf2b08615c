/* gateway/core/api_error.c: see api_error.h. */
#include "gateway/core/api_error.h"

#include <errno.h>
#include <stdio.h>

int api_error_set(struct api_error *e, int status, const char *code, const char *message)
{
	e->status = status;
	snprintf(e->code, sizeof(e->code), "%s", code);
	snprintf(e->message, sizeof(e->message), "%.*s", (int)sizeof(e->message) - 1, message);
	return -EINVAL;
}

json_t *api_error_json(const char *code, const char *message)
{
	return json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", message);
}
