/* display/frame.c: refcounted frames and damage lists; see frame.h. */
#include "display/frame.h"

#include <stdlib.h>
#include <string.h>

bool display_size_ok(int width, int height)
{
	return width > 0 && height > 0 && width <= DISPLAY_MAX_SIDE && height <= DISPLAY_MAX_SIDE &&
	       (int64_t)width * height <= DISPLAY_MAX_PIXELS;
}

struct display_frame *display_frame_create(int width, int height)
{
	struct display_frame *f;

	if (!display_size_ok(width, height))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->width = width;
	f->height = height;
	f->stride = width * 4;
	f->pixels = calloc((size_t)f->stride, (size_t)height);
	if (!f->pixels) {
		free(f);
		return NULL;
	}
	atomic_init(&f->refs, 1);
	return f;
}

struct display_frame *display_frame_ref(struct display_frame *f)
{
	if (f)
		atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
	return f;
}

void display_frame_unref(struct display_frame *f)
{
	if (!f || atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(f->pixels);
	free(f);
}

struct display_cursor *display_cursor_create(int width, int height)
{
	struct display_cursor *c;

	if (width <= 0 || height <= 0 || width > 256 || height > 256)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->width = width;
	c->height = height;
	c->rgba = calloc((size_t)width * height, 4);
	if (!c->rgba) {
		free(c);
		return NULL;
	}
	atomic_init(&c->refs, 1);
	return c;
}

struct display_cursor *display_cursor_ref(struct display_cursor *c)
{
	if (c)
		atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	return c;
}

void display_cursor_unref(struct display_cursor *c)
{
	if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(c->rgba);
	free(c);
}

uint32_t display_frame_pixel(const struct display_frame *f, int x, int y)
{
	const uint8_t *p;

	if (!f || x < 0 || y < 0 || x >= f->width || y >= f->height)
		return 0xFFFFFFFFu;
	p = f->pixels + (size_t)y * (size_t)f->stride + (size_t)x * 4;
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

void display_damage_clear(struct display_damage *d)
{
	memset(d, 0, sizeof(*d));
}

bool display_rect_intersects(struct display_rect a, struct display_rect b)
{
	return a.w > 0 && a.h > 0 && b.w > 0 && b.h > 0 && a.x < b.x + b.w && b.x < a.x + a.w &&
	       a.y < b.y + b.h && b.y < a.y + a.h;
}

struct display_rect display_rect_union(struct display_rect a, struct display_rect b)
{
	struct display_rect u;
	int x1, y1;

	if (a.w <= 0 || a.h <= 0)
		return b;
	if (b.w <= 0 || b.h <= 0)
		return a;
	u.x = a.x < b.x ? a.x : b.x;
	u.y = a.y < b.y ? a.y : b.y;
	x1 = a.x + a.w > b.x + b.w ? a.x + a.w : b.x + b.w;
	y1 = a.y + a.h > b.y + b.h ? a.y + a.h : b.y + b.h;
	u.w = x1 - u.x;
	u.h = y1 - u.y;
	return u;
}

static bool rect_contains(struct display_rect outer, struct display_rect in)
{
	return in.x >= outer.x && in.y >= outer.y && in.x + in.w <= outer.x + outer.w &&
	       in.y + in.h <= outer.y + outer.h;
}

static void damage_remove(struct display_damage *d, int i)
{
	memmove(&d->rects[i], &d->rects[i + 1], (size_t)(d->n - i - 1) * sizeof(d->rects[0]));
	d->n--;
}

void display_damage_add(struct display_damage *d, struct display_rect r, int width, int height)
{
	if (r.x < 0) {
		r.w += r.x;
		r.x = 0;
	}
	if (r.y < 0) {
		r.h += r.y;
		r.y = 0;
	}
	if (r.x + r.w > width)
		r.w = width - r.x;
	if (r.y + r.h > height)
		r.h = height - r.y;
	if (r.w <= 0 || r.h <= 0)
		return;
	d->bounds = display_rect_union(d->bounds, r);
	/* Grow r until no existing rect can absorb it or be absorbed by it. */
	for (int i = 0; i < d->n;) {
		struct display_rect e = d->rects[i];

		if (rect_contains(e, r))
			return;
		if (rect_contains(r, e) ||
		    (e.x == r.x && e.w == r.w && e.y <= r.y + r.h && r.y <= e.y + e.h) ||
		    (e.y == r.y && e.h == r.h && e.x <= r.x + r.w && r.x <= e.x + e.w)) {
			r = display_rect_union(r, e);
			damage_remove(d, i);
			i = 0;
			continue;
		}
		i++;
	}
	if (d->n == DISPLAY_DAMAGE_MAX) {
		d->n = 1;
		d->rects[0] = d->bounds;
		return;
	}
	d->rects[d->n++] = r;
}
