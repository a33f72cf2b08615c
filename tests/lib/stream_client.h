/* tests/lib/stream_client.h: a blocking client of the live stream
 * (WS /v1/sessions/{id}/stream) for tests and benchmarks: any WebSocket
 * message (text, binary, close with its code), PINGs answered, and a screen
 * that frame messages are applied to (JPEG rects decoded), so a test can
 * compare what a viewer sees with a screenshot. */
#ifndef VITRINE_TESTS_STREAM_CLIENT_H
#define VITRINE_TESTS_STREAM_CLIENT_H

#include "tests/lib/ppm.h"
#include "tests/lib/ws_client.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Messages go through tests/lib/ws_client.h (ws_recv answers PINGs). */

/* Sends a JSON text built with json_pack-like format. Returns 0 or -1. */
int sc_send_json(int fd, json_t *j);

/* What a viewer has seen. */
struct sc_screen {
	struct ppm img; /* width x height, RGB */
	uint32_t seq; /* of the last frame applied */
	int frames, keys, cursors;
	int cursor_x, cursor_y;
	int shapes, shape_w, shape_h; /* pointer shapes received, the last one's size */
	uint64_t last_time_us; /* time stamp of the last frame */
};

/* Applies a binary stream message (frame, cursor, pointer shape) to s.
 * Returns 1 for a frame, 2 for a cursor, 3 for a shape, or -1 when the
 * message is malformed or a rect does not decode. */
int sc_apply(struct sc_screen *s, const unsigned char *msg, size_t len);
void sc_screen_free(struct sc_screen *s);

/* Receives until a JSON text message of type `type` arrives (binary
 * messages are applied to s when s is not NULL). Returns it (decref it) or
 * NULL on timeout/close. */
json_t *sc_wait_json(int fd, const char *type, struct sc_screen *s, int timeout_ms);
/* Receives and applies frames until one with seq > after has been applied.
 * Returns 0 or -1 on timeout/close/error. */
int sc_wait_frame(int fd, struct sc_screen *s, uint32_t after, int timeout_ms);

#endif
