/* display/stream_encode.h: turning "the viewer has frame A, the screen is
 * now frame B" into one stream frame message (display/stream_wire.h): the
 * tiles that differ between A and B, merged into rectangles and JPEG-encoded,
 * or the whole of B when that is cheaper (no A, another size, most of the
 * screen changed). The gateway encodes each (A, B, quality) once and sends
 * the same bytes to every viewer that has A. No threads, no I/O; an encoder
 * is used by one thread at a time (display/encode_pool.h gives each worker
 * its own), and the frames are only read. */
#ifndef VITRINE_DISPLAY_STREAM_ENCODE_H
#define VITRINE_DISPLAY_STREAM_ENCODE_H

#include "display/frame.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Side of the square tiles compared between frames. */
#define STREAM_TILE 64
/* More changed rects than this, or more than STREAM_KEY_PERCENT of the
 * screen changed: send the whole frame instead. */
#define STREAM_MAX_RECTS 48
#define STREAM_KEY_PERCENT 55

/* An encoded message, shared by reference among viewers. buf holds
 * `headroom` spare bytes (libwebsockets' LWS_PRE) before the len bytes of
 * the message. */
struct display_stream_msg {
	uint8_t *buf; /* owned */
	size_t headroom, len;
	bool key;
	int rects;
	atomic_int refs;
};

struct display_stream_encoder;

/* Returns a new encoder (it keeps a TurboJPEG handle and scratch space), or
 * NULL when out of memory. */
struct display_stream_encoder *display_stream_encoder_create(void);
/* Accepts NULL. */
void display_stream_encoder_destroy(struct display_stream_encoder *e);

/* Encodes the change from base (NULL: the viewer has nothing) to f at JPEG
 * quality 1..100, stamped time_us. Pixels identical to base give a frame
 * with no rects. Returns 0 with *out holding one reference, or -ENOMEM /
 * -EIO (the JPEG encoder failed) with a sentence in err. */
int display_stream_encode(struct display_stream_encoder *e, const struct display_frame *base,
			  const struct display_frame *f, int quality, uint64_t time_us,
			  size_t headroom, struct display_stream_msg **out, char *err,
			  size_t errlen);

/* The rects where a and b (same size) differ, tile-aligned and merged,
 * at most max; returns their count, or max + 1 when there are more. Pure. */
int display_stream_diff(const struct display_frame *a, const struct display_frame *b,
			struct display_rect *rects, int max);

struct display_stream_msg *display_stream_msg_ref(struct display_stream_msg *m);
/* Drops a reference; the last frees the message. Accepts NULL. */
void display_stream_msg_unref(struct display_stream_msg *m);

#endif
