/* gateway/api/ws_msg.c: see ws_msg.h. */
#include "gateway/api/ws_msg.h"

#include "gateway/guest/exec.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

int control_auth_parse(const char *msg, size_t len, char *token, size_t size)
{
	json_t *j = json_loadb(msg ? msg : "", len, 0, NULL);
	json_t *t = json_object_get(j, "token");
	size_t n = json_string_length(t);
	int rc = -EINVAL;

	if (json_is_string(t) && strlen(json_string_value(t)) == n && n < size) {
		memcpy(token, json_string_value(t), n + 1);
		rc = 0;
	}
	json_decref(j);
	return rc;
}

static int refuse(struct exec_ws_msg *out, const char *why)
{
	snprintf(out->why, sizeof(out->why), "%s", why);
	return -EINVAL;
}

int exec_ws_msg_parse(bool started, bool binary, const void *msg, size_t len,
		      struct exec_ws_msg *out)
{
	struct api_error e;
	const char *type;
	json_t *j, *sig;
	int rc = 0;

	out->job = NULL;
	out->signal = 0;
	out->why[0] = '\0';
	if (!started) {
		if (binary)
			return refuse(out, "the first message is the command (JSON text)");
		if (!(out->job = exec_parse(msg, len, &e)))
			return refuse(out, e.message);
		out->kind = EXEC_WS_START;
		return 0;
	}
	if (binary) {
		out->kind = EXEC_WS_STDIN;
		return 0;
	}
	j = json_loadb(msg ? msg : "", len, 0, NULL);
	type = json_string_value(json_object_get(j, "type"));
	sig = json_object_get(j, "signal");
	if (type && !strcmp(type, "eof")) {
		out->kind = EXEC_WS_EOF;
	} else if (type && !strcmp(type, "signal") && json_is_integer(sig) &&
		   json_integer_value(sig) > 0 && json_integer_value(sig) < 65) {
		out->kind = EXEC_WS_SIGNAL;
		out->signal = (int)json_integer_value(sig);
	} else {
		rc = refuse(out, "messages are binary stdin, {\"type\":\"eof\"} or "
				 "{\"type\":\"signal\",\"signal\":N}");
	}
	json_decref(j);
	return rc;
}
