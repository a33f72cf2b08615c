/* gateway/e2b/e2b_msg.c: see e2b_msg.h. */
#include "gateway/e2b/e2b_msg.h"

#include "common/base64.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int append(struct bytebuf *out, uint8_t flags, const char *text)
{
	uint8_t h[CONNECT_HEADER];
	size_t n = strlen(text);

	connect_frame_header(h, flags, (uint32_t)n);
	if (bytebuf_append(out, h, sizeof(h)) < 0 || bytebuf_append(out, text, n) < 0)
		return -ENOMEM;
	return 0;
}

int e2b_msg_frame(struct bytebuf *out, uint8_t flags, json_t *j)
{
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	int rc = text ? append(out, flags, text) : -ENOMEM;

	json_decref(j);
	free(text);
	return rc;
}

static json_t *event(const char *kind, json_t *body)
{
	return json_pack("{s:{s:o}}", "event", kind, body);
}

json_t *e2b_msg_start(uint32_t pid)
{
	return event("start", json_pack("{s:I}", "pid", (json_int_t)pid));
}

json_t *e2b_msg_data(bool err, const void *data, size_t len)
{
	char *b = base64_encode(data, len, NULL);
	json_t *j = b ? event("data", json_pack("{s:s}", err ? "stderr" : "stdout", b)) : NULL;

	free(b);
	return j;
}

json_t *e2b_msg_pty(const void *data, size_t len)
{
	char *b = base64_encode(data, len, NULL);
	json_t *j = b ? event("data", json_pack("{s:s}", "pty", b)) : NULL;

	free(b);
	return j;
}

json_t *e2b_msg_end(int exit_code, int exit_signal, const char *error)
{
	char status[64];
	json_t *end;

	if (exit_signal)
		snprintf(status, sizeof(status), "signal: %s",
			 exit_signal == 9    ? "killed"
			 : exit_signal == 15 ? "terminated"
					     : "signal");
	else
		snprintf(status, sizeof(status), "exit status %d", exit_code);
	end = json_pack("{s:i, s:b, s:s}", "exitCode", exit_signal ? -1 : exit_code, "exited",
			!exit_signal, "status", status);
	if (end && error && *error)
		json_object_set_new(end, "error", json_string(error));
	return end ? event("end", end) : NULL;
}

json_t *e2b_msg_keepalive(void)
{
	return event("keepalive", json_object());
}

int e2b_msg_end_stream(struct bytebuf *out, enum connect_code c, const char *message)
{
	char *text = connect_end_json(c, message);
	int rc = text ? append(out, CONNECT_FLAG_END, text) : -ENOMEM;

	free(text);
	return rc;
}
