/* gateway/api/ws_msg.h: what clients send on the control and streaming-exec
 * WebSockets, parsed without lws or session state so it is unit-tested
 * and fuzzed (tests/fuzz/fuzz_ws_messages.c). The control socket's
 * actions are api_action_parse's (bodies.h); the live stream's messages
 * are stream_msg.c's. Pure: any thread. */
#ifndef VITRINE_GATEWAY_WS_MSG_H
#define VITRINE_GATEWAY_WS_MSG_H

#include <stdbool.h>
#include <stddef.h>

struct exec_job;

/* The first message of a control socket without an Authorization header:
 * {"token": "..."} (other fields are ignored). The token into token
 * (size bytes with its NUL): 0, or -EINVAL when msg is not such an object,
 * the token has a NUL in it or does not fit. The caller still checks what
 * the token may do. */
int control_auth_parse(const char *msg, size_t len, char *token, size_t size);

/* What a message from an exec-stream client asks for. */
enum exec_ws_kind {
	EXEC_WS_START, /* the first message: the command (job) */
	EXEC_WS_STDIN, /* a binary message: bytes for stdin (the message itself) */
	EXEC_WS_EOF, /* {"type": "eof"} */
	EXEC_WS_SIGNAL, /* {"type": "signal", "signal": 1..64} */
};

struct exec_ws_msg {
	enum exec_ws_kind kind;
	struct exec_job *job; /* EXEC_WS_START: owned by the caller (exec_free) */
	int signal; /* EXEC_WS_SIGNAL */
	char why[1024]; /* a refusal: the reason the socket closes with (1008) */
};

/* One whole message (len bytes, binary or text) from the client; started:
 * the command's first message came already. Returns 0 with *out filled,
 * or -EINVAL with out->why (the first message is refused as
 * exec_parse refuses a POST .../exec body). */
int exec_ws_msg_parse(bool started, bool binary, const void *msg, size_t len,
		      struct exec_ws_msg *out);

#endif
