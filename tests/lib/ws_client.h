/* tests/lib/ws_client.h: a minimal blocking WebSocket client (RFC 6455,
 * text frames, client masking) for tests of the gateway's WebSockets. */
#ifndef VITRINE_TESTS_WS_CLIENT_H
#define VITRINE_TESTS_WS_CLIENT_H

#include <stddef.h>

/* Connects to ws://127.0.0.1:port/path with optional bearer token and Origin.
 * Returns the socket, or -1 when the upgrade was refused (status in *status
 * when not NULL). */
int ws_connect(int port, const char *path, const char *token, const char *origin, int *status);
/* Sends one text message. Returns 0 or -1. */
int ws_send_text(int fd, const char *text);
/* Receives one message into a new NUL-terminated string (caller frees),
 * waiting at most timeout_ms; NULL on timeout, close or error. */
char *ws_recv_text(int fd, int timeout_ms);

#endif
