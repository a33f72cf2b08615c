/* tests/lib/ws_client.h: a minimal blocking WebSocket client (RFC 6455,
 * client masking, any message, PINGs answered) for tests of the gateway's
 * WebSockets. */
#ifndef VITRINE_TESTS_WS_CLIENT_H
#define VITRINE_TESTS_WS_CLIENT_H

#include <stddef.h>

/* Connects to ws://127.0.0.1:port/path with optional bearer token and Origin.
 * Returns the socket, or -1 when the upgrade was refused (status in *status
 * when not NULL). */
int ws_connect(int port, const char *path, const char *token, const char *origin, int *status);
/* The same with a Host header of its own (NULL: 127.0.0.1:port) and extra
 * header lines (each ending in CRLF; NULL: none). */
int ws_connect_with(int port, const char *host, const char *path, const char *extra, int *status);
#define WS_TEXT 1
#define WS_BINARY 2
#define WS_CLOSE 8

/* One frame received (a message, unless the sender fragmented it). */
struct ws_msg {
	int opcode; /* WS_TEXT, WS_BINARY or WS_CLOSE; 0: a continuation */
	int fin; /* the frame ends its message */
	unsigned char *data; /* owned, NUL-terminated */
	size_t len;
	int close_code; /* close: the code (1005 when none) */
};

/* Sends one (masked, final) frame with opcode. Returns 0 or -1. */
int ws_send(int fd, int opcode, const void *data, size_t len);
/* Receives the next data or close message within timeout_ms, answering
 * PINGs and skipping PONGs on the way. Returns 0 with *m filled (free it
 * with ws_msg_free), or -1 on timeout or a dropped connection. */
int ws_recv(int fd, int timeout_ms, struct ws_msg *m);
void ws_msg_free(struct ws_msg *m);
/* Receives a whole message (its frames joined, each within timeout_ms):
 * 0 with *m (the first frame's opcode, fin set), or -1. */
int ws_recv_message(int fd, int timeout_ms, struct ws_msg *m);
/* Sends one text message. Returns 0 or -1. */
int ws_send_text(int fd, const char *text);
/* Receives one message into a new NUL-terminated string (caller frees),
 * waiting at most timeout_ms; NULL on timeout, close or error. */
char *ws_recv_text(int fd, int timeout_ms);

#endif
