/* display/frame.h: one immutable picture of a guest's screen, shared by
 * reference between the mirror's worker thread and every reader (encoders,
 * viewers, the API), plus the damage bookkeeping that says what changed.
 *
 * Pixel layout: 32 bits per pixel, bytes in memory order R, G, B, X (X is
 * padding and undefined), rows top to bottom, `stride` bytes apart. This is
 * what libvncclient produces for rfbGetClient(8, 3, 4) on a little-endian
 * host (red shift 0, green 8, blue 16) and what TurboJPEG calls TJPF_RGBX. */
#ifndef VITRINE_DISPLAY_FRAME_H
#define VITRINE_DISPLAY_FRAME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The largest picture display/ handles: a guest screen the mirror accepts,
 * a frame, an encoder's output. A guest may ask VNC for up to 65535x65535
 * (16384x16384 is 1 GiB of RGBX, copied and encoded per frame); at most
 * DISPLAY_MAX_SIDE pixels a side and DISPLAY_MAX_PIXELS in all (64 MiB of
 * RGBX, e.g. 8192x2048 or 4096x4096) keeps one guest from costing the
 * gateway more than that. */
#define DISPLAY_MAX_SIDE 8192
#define DISPLAY_MAX_PIXELS (16 * 1024 * 1024)

/* True when width x height is within the limits above (and not empty). */
bool display_size_ok(int width, int height);

/* A rectangle in screen pixels; w or h 0 means empty. */
struct display_rect {
	int x, y, w, h;
};

/* Rects kept before damage collapses into its bounding box. */
#define DISPLAY_DAMAGE_MAX 8

/* What changed between two frames: up to DISPLAY_DAMAGE_MAX disjoint-ish
 * rects, or their bounding box once there were more. */
struct display_damage {
	int n;
	struct display_rect rects[DISPLAY_DAMAGE_MAX];
	struct display_rect bounds; /* union of rects; empty when n == 0 */
};

struct display_frame {
	int width, height;
	int stride; /* bytes per row, >= width * 4 */
	uint8_t *pixels; /* owned, stride * height bytes, R G B X */
	uint64_t seq; /* increasing per mirror, never repeated within the process */
	int64_t changed_ms; /* fs_now_ms() (common/fsutil.h) when this frame was published */
	struct display_damage damage; /* since the previous frame (whole screen on a resize) */
	atomic_int refs;
};

/* The guest's pointer shape as its display sends it (the pointer is not
 * part of the frames: QEMU shows a hardware cursor apart). Immutable once
 * published; refcounted like frames. */
struct display_cursor {
	int width, height; /* 1..256 */
	int hot_x, hot_y; /* the pixel that points */
	uint8_t *rgba; /* owned, width * height * 4, R G B A (A 0 or 255) */
	uint64_t serial; /* 1 for a mirror's first shape, +1 per new shape */
	atomic_int refs;
};

/* Allocates a transparent w x h cursor with one reference; NULL on a bad
 * size (over 256) or out of memory. */
struct display_cursor *display_cursor_create(int width, int height);
struct display_cursor *display_cursor_ref(struct display_cursor *c);
/* Drops a reference; the last frees it. Accepts NULL. Thread-safe. */
void display_cursor_unref(struct display_cursor *c);

/* Allocates a width x height frame with one reference, pixels zeroed, seq 0
 * and no damage. Returns NULL on a size display_size_ok refuses or out of
 * memory. */
struct display_frame *display_frame_create(int width, int height);

/* Adds a reference and returns f (NULL stays NULL). Thread-safe. */
struct display_frame *display_frame_ref(struct display_frame *f);

/* Drops a reference; the last one frees the frame. Accepts NULL. Thread-safe. */
void display_frame_unref(struct display_frame *f);

/* 0xRRGGBB at (x, y), or 0xFFFFFFFF outside the frame. */
uint32_t display_frame_pixel(const struct display_frame *f, int x, int y);

/* Empties d. */
void display_damage_clear(struct display_damage *d);

/* Adds r (clipped to width x height; empty after clipping is ignored).
 * Rects inside an existing one are dropped, rects that contain existing
 * ones replace them, vertically adjacent rects of the same columns merge,
 * and past DISPLAY_DAMAGE_MAX everything collapses into the bounding box.
 * Can't fail. */
void display_damage_add(struct display_damage *d, struct display_rect r, int width, int height);

/* True when the rects intersect. */
bool display_rect_intersects(struct display_rect a, struct display_rect b);

/* The smallest rect holding a and b (an empty one is ignored). */
struct display_rect display_rect_union(struct display_rect a, struct display_rect b);

#endif
