/* gateway/core/api_error.c: see api_error.h. */
#include "gateway/core/api_error.h"

#include "common/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int api_error_set(struct api_error *e, int status, const char *code, const char *message)
{
	e->status = status;
	snprintf(e->code, sizeof(e->code), "%s", code);
	snprintf(e->message, sizeof(e->message), "%.*s", (int)sizeof(e->message) - 1, message);
	utf8_scrub(e->message); /* it may quote the client, or be cut mid-character */
	return -EINVAL;
}

json_t *api_error_text(const char *message)
{
	char *fixed;
	json_t *j;

	if (utf8_valid(message, strlen(message)))
		return json_string(message);
	if (!(fixed = strdup(message)))
		return NULL;
	utf8_scrub(fixed);
	j = json_string(fixed);
	free(fixed);
	return j;
}

json_t *api_error_json(const char *code, const char *message)
{
	return json_pack("{s:{s:s, s:o}}", "error", "code", code, "message",
			 api_error_text(message));
}
