/* display/stream_wire.h: the binary messages of the live stream
 * (WS /v1/sessions/{id}/stream), written by the gateway and read by the
 * viewers (vitrine-view, tests; web/stream.js reads the same layout). Pure
 * byte layout, no I/O: docs/stream.md is the prose version of this file.
 *
 * All integers little-endian.
 *
 * Frame (type 1): a 24-byte header, then `rects` rectangles, each a 16-byte
 * rect header followed by `len` bytes of JPEG:
 *   0  u8  type = 1
 *   1  u8  flags: bit 0 KEY (the rects cover the whole screen)
 *   2  u16 rects
 *   4  u32 seq (the mirror's frame sequence, low 32 bits)
 *   8  u64 time: microseconds since the Unix epoch when the gateway got the frame
 *  16  u16 screen width, 18 u16 screen height (a change means a resize; the
 *      first frame at a new size is a KEY frame)
 *  20  u32 reserved (0)
 * rect: u16 x, u16 y, u16 w, u16 h, u32 len, u8 encoding (1 = JPEG), 3 bytes 0.
 *
 * Cursor (type 2), 8 bytes: u8 type = 2, u8 flags (bit 0 visible), u16 0,
 * u16 x, u16 y: where the guest's pointer is (moved by an agent or a viewer).
 *
 * Cursor shape (type 3): a 12-byte header u8 type = 3, u8 0, u16 hot x,
 * u16 hot y, u16 w, u16 h, u16 0, then w * h * 4 bytes of RGBA (A 0 or
 * 255), rows top to bottom: draw it with its hot spot on the position. */
#ifndef VITRINE_DISPLAY_STREAM_WIRE_H
#define VITRINE_DISPLAY_STREAM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STREAM_WIRE_FRAME 1
#define STREAM_WIRE_CURSOR 2
#define STREAM_WIRE_CURSOR_SHAPE 3
#define STREAM_WIRE_SHAPE_HDR 12
#define STREAM_WIRE_FLAG_KEY 1
#define STREAM_WIRE_FRAME_HDR 24
#define STREAM_WIRE_RECT_HDR 16
#define STREAM_WIRE_CURSOR_LEN 8
#define STREAM_WIRE_ENC_JPEG 1

struct stream_wire_frame {
	bool key;
	int rects;
	uint32_t seq;
	uint64_t time_us;
	int width, height;
};

struct stream_wire_rect {
	int x, y, w, h;
	int encoding;
	const uint8_t *data; /* points into the message */
	size_t len;
};

/* Writes a frame header (STREAM_WIRE_FRAME_HDR bytes) to out. */
void stream_wire_put_frame(uint8_t *out, const struct stream_wire_frame *f);
/* Writes a rect header (STREAM_WIRE_RECT_HDR bytes) to out; r->data unused. */
void stream_wire_put_rect(uint8_t *out, const struct stream_wire_rect *r);
/* Writes a cursor message (STREAM_WIRE_CURSOR_LEN bytes) to out. */
void stream_wire_put_cursor(uint8_t *out, int x, int y, bool visible);

/* Writes a cursor shape header (STREAM_WIRE_SHAPE_HDR bytes); the RGBA follows. */
void stream_wire_put_shape(uint8_t *out, int w, int h, int hot_x, int hot_y);
/* Parses a cursor shape message; *rgba points into msg. Returns 0 or
 * -EINVAL (short, sizes 0 or over 256, hot spot outside, length wrong). */
int stream_wire_parse_shape(const uint8_t *msg, size_t len, int *w, int *h, int *hot_x, int *hot_y,
			    const uint8_t **rgba);

/* The type of a message (0 when it is too short to have one). */
int stream_wire_type(const uint8_t *msg, size_t len);
/* Parses a frame message: fills *f and up to max rects (pointing into msg).
 * Returns 0, or -EINVAL when the message is not a well-formed frame (short,
 * lengths past the end, rects outside the screen, trailing bytes, more than
 * max rects). */
int stream_wire_parse_frame(const uint8_t *msg, size_t len, struct stream_wire_frame *f,
			    struct stream_wire_rect *rects, int max);
/* Parses a cursor message. Returns 0 or -EINVAL. */
int stream_wire_parse_cursor(const uint8_t *msg, size_t len, int *x, int *y, bool *visible);

#endif
