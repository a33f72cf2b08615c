/* display/stream_wire.c: see stream_wire.h. */
#include "display/stream_wire.h"

#include <errno.h>
#include <string.h>

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void stream_wire_put_frame(uint8_t *out, const struct stream_wire_frame *f)
{
	memset(out, 0, STREAM_WIRE_FRAME_HDR);
	out[0] = STREAM_WIRE_FRAME;
	out[1] = f->key ? STREAM_WIRE_FLAG_KEY : 0;
	put16(out + 2, (unsigned)f->rects);
	put32(out + 4, f->seq);
	put32(out + 8, (uint32_t)f->time_us);
	put32(out + 12, (uint32_t)(f->time_us >> 32));
	put16(out + 16, (unsigned)f->width);
	put16(out + 18, (unsigned)f->height);
}

void stream_wire_put_rect(uint8_t *out, const struct stream_wire_rect *r)
{
	memset(out, 0, STREAM_WIRE_RECT_HDR);
	put16(out, (unsigned)r->x);
	put16(out + 2, (unsigned)r->y);
	put16(out + 4, (unsigned)r->w);
	put16(out + 6, (unsigned)r->h);
	put32(out + 8, (uint32_t)r->len);
	out[12] = (uint8_t)r->encoding;
}

void stream_wire_put_cursor(uint8_t *out, int x, int y, bool visible)
{
	memset(out, 0, STREAM_WIRE_CURSOR_LEN);
	out[0] = STREAM_WIRE_CURSOR;
	out[1] = visible ? 1 : 0;
	put16(out + 4, (unsigned)(x < 0 ? 0 : x));
	put16(out + 6, (unsigned)(y < 0 ? 0 : y));
}

int stream_wire_type(const uint8_t *msg, size_t len)
{
	return len ? msg[0] : 0;
}

int stream_wire_parse_frame(const uint8_t *msg, size_t len, struct stream_wire_frame *f,
			    struct stream_wire_rect *rects, int max)
{
	size_t off = STREAM_WIRE_FRAME_HDR;

	if (len < STREAM_WIRE_FRAME_HDR || msg[0] != STREAM_WIRE_FRAME)
		return -EINVAL;
	f->key = msg[1] & STREAM_WIRE_FLAG_KEY;
	f->rects = (int)get16(msg + 2);
	f->seq = get32(msg + 4);
	f->time_us = (uint64_t)get32(msg + 8) | (uint64_t)get32(msg + 12) << 32;
	f->width = (int)get16(msg + 16);
	f->height = (int)get16(msg + 18);
	if (f->rects > max || f->width == 0 || f->height == 0)
		return -EINVAL;
	for (int i = 0; i < f->rects; i++) {
		struct stream_wire_rect *r = &rects[i];

		if (len - off < STREAM_WIRE_RECT_HDR)
			return -EINVAL;
		r->x = (int)get16(msg + off);
		r->y = (int)get16(msg + off + 2);
		r->w = (int)get16(msg + off + 4);
		r->h = (int)get16(msg + off + 6);
		r->len = get32(msg + off + 8);
		r->encoding = msg[off + 12];
		off += STREAM_WIRE_RECT_HDR;
		if (r->w == 0 || r->h == 0 || r->x + r->w > f->width || r->y + r->h > f->height ||
		    r->len > len - off)
			return -EINVAL;
		r->data = msg + off;
		off += r->len;
	}
	return off == len ? 0 : -EINVAL;
}

int stream_wire_parse_cursor(const uint8_t *msg, size_t len, int *x, int *y, bool *visible)
{
	if (len != STREAM_WIRE_CURSOR_LEN || msg[0] != STREAM_WIRE_CURSOR)
		return -EINVAL;
	*visible = msg[1] & 1;
	*x = (int)get16(msg + 4);
	*y = (int)get16(msg + 6);
	return 0;
}

void stream_wire_put_shape(uint8_t *out, int w, int h, int hot_x, int hot_y)
{
	memset(out, 0, STREAM_WIRE_SHAPE_HDR);
	out[0] = STREAM_WIRE_CURSOR_SHAPE;
	put16(out + 2, (unsigned)hot_x);
	put16(out + 4, (unsigned)hot_y);
	put16(out + 6, (unsigned)w);
	put16(out + 8, (unsigned)h);
}

int stream_wire_parse_shape(const uint8_t *msg, size_t len, int *w, int *h, int *hot_x, int *hot_y,
			    const uint8_t **rgba)
{
	if (len < STREAM_WIRE_SHAPE_HDR || msg[0] != STREAM_WIRE_CURSOR_SHAPE)
		return -EINVAL;
	*hot_x = (int)get16(msg + 2);
	*hot_y = (int)get16(msg + 4);
	*w = (int)get16(msg + 6);
	*h = (int)get16(msg + 8);
	if (*w < 1 || *h < 1 || *w > 256 || *h > 256 || *hot_x >= *w || *hot_y >= *h ||
	    len != STREAM_WIRE_SHAPE_HDR + (size_t)*w * *h * 4)
		return -EINVAL;
	*rgba = msg + STREAM_WIRE_SHAPE_HDR;
	return 0;
}
