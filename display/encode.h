/* display/encode.h: turning a frame (or part of it) into the bytes an agent
 * or viewer receives: JPEG through TurboJPEG, PNG through libpng, optionally
 * scaled down (box filter) or up (bilinear) to fit a target size with the
 * aspect ratio kept. Pure functions over frames; no threads, no state. */
#ifndef VITRINE_DISPLAY_ENCODE_H
#define VITRINE_DISPLAY_ENCODE_H

#include "display/frame.h"

#include <stddef.h>
#include <stdint.h>

enum display_format {
	DISPLAY_FORMAT_JPEG,
	DISPLAY_FORMAT_PNG,
};

struct display_encode_opts {
	enum display_format format;
	int quality; /* JPEG 1..100 (0: 80); ignored for PNG */
	/* Fit inside max_width x max_height keeping the aspect ratio; 0 leaves
	 * that side free, both 0 keeps the source size. */
	int max_width, max_height;
	struct display_rect region; /* w or h 0: the whole frame */
};

/* An encoded picture. Refcounted so one encoding can go to many readers. */
struct display_image {
	uint8_t *data; /* owned */
	size_t len;
	int width, height; /* of the encoded picture */
	double scale; /* encoded width / source region width (1.0: unscaled) */
	enum display_format format;
	atomic_int refs;
};

/* Output size for a src_w x src_h source fitted into max_w x max_h (0 = no
 * limit on that side; both 0 = the source size), aspect ratio kept, the
 * binding side exact, never below 1x1; may scale up, but never past
 * DISPLAY_MAX_SIDE a side or DISPLAY_MAX_PIXELS in all (frame.h): a bigger
 * fit is shrunk, aspect ratio kept, to the largest size within them.
 * *scale is out_w / src_w. Can't fail. */
void display_scale_fit(int src_w, int src_h, int max_w, int max_h, int *out_w, int *out_h,
		       double *scale);

/* Resamples RGBX src (sw x sh, sstride bytes a row) into dst (dw x dh,
 * dstride): an area average when shrinking, bilinear when growing. Returns 0
 * or -EINVAL on bad sizes. */
int display_scale_rgbx(const uint8_t *src, int sw, int sh, int sstride, uint8_t *dst, int dw,
		       int dh, int dstride);

/* Encodes f as opts says, at the size display_scale_fit gives (so never
 * over the display limits, whatever max_width/max_height ask: the image's
 * width, height and scale say what was made). Returns 0 with *out holding
 * one reference (free with display_image_unref), or -EINVAL (bad region,
 * quality or format), -ENOMEM or -EIO (encoder failure) with a sentence in
 * err. Any thread; f is only read. */
int display_encode(const struct display_frame *f, const struct display_encode_opts *opts,
		   struct display_image **out, char *err, size_t errlen);

struct display_image *display_image_ref(struct display_image *img);
/* Drops a reference; the last frees the image. Accepts NULL. */
void display_image_unref(struct display_image *img);

#endif
