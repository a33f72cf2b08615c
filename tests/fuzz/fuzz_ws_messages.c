/* tests/fuzz/fuzz_ws_messages.c: libFuzzer target for what clients send on
 * the control and streaming-exec WebSockets (gateway/api/ws_msg.c): the
 * control socket's token message (control_auth_parse) and each of its
 * actions (api_action_parse, gateway/api/bodies.c), and the exec stream's
 * first message, later text messages and binary messages
 * (exec_ws_msg_parse). The first byte picks the parser (and for tokens the
 * buffer's size, for actions the screen), the rest is the message.
 * Checked besides "no crash":
 *   - an accepted token is the body's "token", whole, and fits its buffer;
 *   - the first exec message starts a command exactly when exec_parse takes
 *     it, a binary one never; later binary messages are always stdin;
 *     later text is eof or a signal in 1..64 equal to the one given, or
 *     refused with the one reason;
 *   - an accepted action's (or each of a batch's, at most
 *     ACTIONS_MAX_BATCH) point is on the screen and its screenshot
 *     options in their ranges; a refused one is a 400 (or a 500 for
 *     memory) with {"error": {code, message}}, and an "id" it echoes is
 *     the action's;
 *   - nothing owned is left behind (ASan's leak check). */
#include "gateway/action/actions.h"
#include "gateway/action/batch.h"
#include "gateway/action/run.h"
#include "gateway/api/bodies.h"
#include "gateway/api/ws_msg.h"
#include "gateway/guest/exec.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void token(uint8_t pick, const char *b, size_t n, json_t *body)
{
	static const size_t sizes[] = { 160, 1, 8, 44 };
	char buf[160];
	size_t size = sizes[(pick >> 3) % 4];
	json_t *t = json_object_get(body, "token");

	if (control_auth_parse(b, n, buf, size) != 0)
		return;
	if (!json_is_string(t) || json_string_length(t) >= size ||
	    strcmp(buf, json_string_value(t)) || strlen(buf) != json_string_length(t))
		__builtin_trap();
}

static void exec_first(bool binary, const char *b, size_t n)
{
	struct exec_ws_msg m;
	struct api_error e;
	struct exec_job *alone = binary ? NULL : exec_parse(b, n, &e);
	int rc = exec_ws_msg_parse(false, binary, b, n, &m);

	if ((rc == 0) != (alone != NULL) || (rc == 0 && (m.kind != EXEC_WS_START || !m.job)) ||
	    (rc != 0 && (m.job || !m.why[0])))
		__builtin_trap();
	exec_free(alone);
	exec_free(m.job);
}

static void exec_later(bool binary, const char *b, size_t n, json_t *body)
{
	struct exec_ws_msg m;
	const char *type = json_string_value(json_object_get(body, "type"));
	json_t *sig = json_object_get(body, "signal");
	int rc = exec_ws_msg_parse(true, binary, b, n, &m);

	if (m.job)
		__builtin_trap();
	if (binary) {
		if (rc != 0 || m.kind != EXEC_WS_STDIN)
			__builtin_trap();
		return;
	}
	if (rc != 0) {
		if (strcmp(m.why, "messages are binary stdin, {\"type\":\"eof\"} or "
				  "{\"type\":\"signal\",\"signal\":N}") ||
		    (type && !strcmp(type, "eof")))
			__builtin_trap();
		return;
	}
	if (m.kind == EXEC_WS_EOF) {
		if (!type || strcmp(type, "eof"))
			__builtin_trap();
	} else if (m.kind != EXEC_WS_SIGNAL || !type || strcmp(type, "signal") || m.signal < 1 ||
		   m.signal > 64 || !json_is_integer(sig) || json_integer_value(sig) != m.signal) {
		__builtin_trap();
	}
}

static void action(uint8_t pick, const char *b, size_t n, json_t *body)
{
	static const int screens[][2] = { { 1280, 800 }, { 320, 200 }, { 3840, 2160 } };
	const int *wh = screens[(pick >> 3) % 3];
	struct shot_opts o;
	json_t *error = NULL, *err, *id;
	struct action_batch *ab;
	int status = 0;

	ab = api_action_parse(b, n, wh[0], wh[1], NULL, &o, &status, &error);
	if (ab) {
		if (ab->n < 1 || ab->n > ACTIONS_MAX_BATCH || (!ab->is_batch && ab->n != 1) ||
		    o.enc.quality < 0 || o.enc.quality > 100 || o.quiet_ms < 0 ||
		    o.quiet_ms > 10000 || o.timeout_ms < 0 || o.timeout_ms > 60000 || error)
			__builtin_trap();
		for (size_t i = 0; i < ab->n; i++) {
			const struct action *a = ab->actions[i];

			if (a->has_point && (a->point.x < 0 || a->point.x >= wh[0] ||
					     a->point.y < 0 || a->point.y >= wh[1]))
				__builtin_trap();
		}
		batch_destroy(ab);
		return;
	}
	err = json_object_get(error, "error");
	if (!error || (status != 400 && status != 500) ||
	    !json_is_string(json_object_get(err, "code")) ||
	    !json_string_length(json_object_get(err, "message")))
		__builtin_trap();
	id = json_object_get(error, "id");
	if (id && !json_equal(id, json_object_get(body, "id")))
		__builtin_trap();
	json_decref(error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data + 1;
	size_t n = size - 1;
	json_t *body;

	if (size < 1)
		return 0;
	body = json_loadb(b, n, JSON_DECODE_ANY, NULL);
	switch (data[0] % 6) {
	case 0:
		token(data[0], b, n, body);
		break;
	case 1:
		exec_first(false, b, n);
		break;
	case 2:
		exec_first(true, b, n);
		break;
	case 3:
		exec_later(false, b, n, body);
		break;
	case 4:
		exec_later(true, b, n, body);
		break;
	default:
		action(data[0], b, n, body);
		break;
	}
	json_decref(body);
	return 0;
}
