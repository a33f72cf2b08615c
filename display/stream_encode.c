/* display/stream_encode.c: see stream_encode.h. */
#include "display/stream_encode.h"

#include "display/stream_wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

struct display_stream_encoder {
	tjhandle tj; /* owned */
	unsigned char *jpeg; /* owned (tjAlloc): reused output space */
	unsigned long jpeg_cap;
};

struct display_stream_encoder *display_stream_encoder_create(void)
{
	struct display_stream_encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->tj = tjInitCompress();
	if (!e->tj) {
		free(e);
		return NULL;
	}
	return e;
}

void display_stream_encoder_destroy(struct display_stream_encoder *e)
{
	if (!e)
		return;
	tjDestroy(e->tj);
	tjFree(e->jpeg);
	free(e);
}

struct display_stream_msg *display_stream_msg_ref(struct display_stream_msg *m)
{
	if (m)
		atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
	return m;
}

void display_stream_msg_unref(struct display_stream_msg *m)
{
	if (!m || atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(m->buf);
	free(m);
}

/* Whether tile (tx, ty) differs between a and b. */
static bool tile_differs(const struct display_frame *a, const struct display_frame *b, int tx,
			 int ty)
{
	int x0 = tx * STREAM_TILE, y0 = ty * STREAM_TILE;
	int w = a->width - x0 < STREAM_TILE ? a->width - x0 : STREAM_TILE;
	int h = a->height - y0 < STREAM_TILE ? a->height - y0 : STREAM_TILE;

	for (int y = y0; y < y0 + h; y++)
		if (memcmp(a->pixels + (size_t)y * a->stride + (size_t)x0 * 4,
			   b->pixels + (size_t)y * b->stride + (size_t)x0 * 4, (size_t)w * 4))
			return true;
	return false;
}

int display_stream_diff(const struct display_frame *a, const struct display_frame *b,
			struct display_rect *rects, int max)
{
	int ntx = (a->width + STREAM_TILE - 1) / STREAM_TILE;
	int nty = (a->height + STREAM_TILE - 1) / STREAM_TILE;
	int n = 0;

	for (int ty = 0; ty < nty; ty++) {
		int y = ty * STREAM_TILE,
		    h = a->height - y < STREAM_TILE ? a->height - y : STREAM_TILE;
		int band_start = n;

		for (int tx = 0; tx < ntx;) {
			int run;

			if (!tile_differs(a, b, tx, ty)) {
				tx++;
				continue;
			}
			for (run = 1; tx + run < ntx && tile_differs(a, b, tx + run, ty); run++)
				;
			{
				struct display_rect r = { tx * STREAM_TILE, y, run * STREAM_TILE,
							  h };
				bool merged = false;

				if (r.x + r.w > a->width)
					r.w = a->width - r.x;
				/* Extend a rect of the band above with the same columns. */
				for (int i = 0; i < band_start; i++)
					if (rects[i].x == r.x && rects[i].w == r.w &&
					    rects[i].y + rects[i].h == y) {
						rects[i].h += h;
						merged = true;
						break;
					}
				if (!merged) {
					if (n == max)
						return max + 1;
					rects[n++] = r;
				}
			}
			tx += run;
		}
	}
	return n;
}

/* Appends len bytes of space to the message; returns where, or NULL. */
static uint8_t *grow(struct display_stream_msg *m, size_t *cap, size_t len)
{
	if (m->headroom + m->len + len > *cap) {
		size_t nc = (*cap ? *cap : 4096) * 2;
		uint8_t *nb;

		while (nc < m->headroom + m->len + len)
			nc *= 2;
		nb = realloc(m->buf, nc);
		if (!nb)
			return NULL;
		m->buf = nb;
		*cap = nc;
	}
	m->len += len;
	return m->buf + m->headroom + m->len - len;
}

static int add_rect(struct display_stream_encoder *e, struct display_stream_msg *m, size_t *cap,
		    const struct display_frame *f, struct display_rect r, int quality, char *err,
		    size_t errlen)
{
	unsigned long size = e->jpeg_cap;
	struct stream_wire_rect wr = { r.x, r.y, r.w, r.h, STREAM_WIRE_ENC_JPEG, NULL, 0 };
	uint8_t *p;

	if (tjCompress2(e->tj, f->pixels + (size_t)r.y * f->stride + (size_t)r.x * 4, r.w,
			f->stride, r.h, TJPF_RGBX, &e->jpeg, &size, TJSAMP_420, quality,
			TJFLAG_FASTDCT) < 0) {
		snprintf(err, errlen, "JPEG encoding of %dx%d+%d+%d failed: %s", r.w, r.h, r.x, r.y,
			 tjGetErrorStr2(e->tj));
		return -EIO;
	}
	if (size > e->jpeg_cap)
		e->jpeg_cap = size;
	wr.len = size;
	p = grow(m, cap, STREAM_WIRE_RECT_HDR + size);
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	stream_wire_put_rect(p, &wr);
	memcpy(p + STREAM_WIRE_RECT_HDR, e->jpeg, size);
	return 0;
}

int display_stream_encode(struct display_stream_encoder *e, const struct display_frame *base,
			  const struct display_frame *f, int quality, uint64_t time_us,
			  size_t headroom, struct display_stream_msg **out, char *err,
			  size_t errlen)
{
	struct display_rect rects[STREAM_MAX_RECTS];
	struct stream_wire_frame hdr = {
		.seq = (uint32_t)f->seq, .time_us = time_us, .width = f->width, .height = f->height
	};
	struct display_stream_msg *m = calloc(1, sizeof(*m));
	size_t cap = 0;
	int n = 0, rc;
	uint8_t *p;

	*out = NULL;
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	atomic_init(&m->refs, 1);
	m->headroom = headroom;
	hdr.key = !base || base->width != f->width || base->height != f->height;
	if (!hdr.key) {
		int64_t area = 0;

		n = display_stream_diff(base, f, rects, STREAM_MAX_RECTS);
		for (int i = 0; i < n && n <= STREAM_MAX_RECTS; i++)
			area += (int64_t)rects[i].w * rects[i].h;
		if (n > STREAM_MAX_RECTS ||
		    area * 100 > (int64_t)f->width * f->height * STREAM_KEY_PERCENT)
			hdr.key = true;
	}
	if (hdr.key) {
		n = 1;
		rects[0] = (struct display_rect){ 0, 0, f->width, f->height };
	}
	hdr.rects = n;
	if (!(p = grow(m, &cap, STREAM_WIRE_FRAME_HDR))) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	stream_wire_put_frame(p, &hdr);
	for (int i = 0; i < n; i++) {
		rc = add_rect(e, m, &cap, f, rects[i], quality, err, errlen);
		if (rc < 0)
			goto fail;
	}
	m->key = hdr.key;
	m->rects = n;
	*out = m;
	return 0;
fail:
	display_stream_msg_unref(m);
	return rc;
}
