/* gateway/e2b/desktop_held.c: see desktop_held.h. */
#include "gateway/e2b/desktop_held.h"

#include "display/encode.h"

#include <string.h>

static void let_go(struct desktop_held_file *f)
{
	display_image_unref(f->image);
	memset(f, 0, sizeof(*f));
}

static void expire(struct desktop_held *h, int64_t now_ms)
{
	for (int i = 0; i < DESKTOP_HELD_MAX; i++)
		if (h->f[i].path[0] && now_ms - h->f[i].written_ms >= DESKTOP_HELD_TTL_MS)
			let_go(&h->f[i]);
}

static struct desktop_held_file *find(struct desktop_held *h, const char *path, int64_t now_ms)
{
	expire(h, now_ms);
	for (int i = 0; i < DESKTOP_HELD_MAX; i++)
		if (h->f[i].path[0] && !strcmp(h->f[i].path, path))
			return &h->f[i];
	return NULL;
}

void desktop_held_put(struct desktop_held *h, const char *path, struct display_image *img,
		      int64_t now_ms)
{
	struct desktop_held_file *f = NULL;
	size_t len = strlen(path);

	if (!len || len > DESKTOP_MAX_PATH) {
		display_image_unref(img);
		return;
	}
	if (!(f = find(h, path, now_ms))) {
		f = &h->f[0];
		for (int i = 0; i < DESKTOP_HELD_MAX; i++) {
			if (!h->f[i].path[0]) {
				f = &h->f[i];
				break;
			}
			if (h->f[i].written_ms < f->written_ms)
				f = &h->f[i];
		}
	}
	let_go(f);
	memcpy(f->path, path, len + 1);
	f->image = img;
	f->written_ms = now_ms;
}

struct display_image *desktop_held_get(struct desktop_held *h, const char *path, int64_t now_ms)
{
	struct desktop_held_file *f = find(h, path, now_ms);

	return f ? f->image : NULL;
}

bool desktop_held_drop(struct desktop_held *h, const char *path, int64_t now_ms)
{
	struct desktop_held_file *f = find(h, path, now_ms);

	if (f)
		let_go(f);
	return f != NULL;
}

int desktop_held_count(struct desktop_held *h, int64_t now_ms)
{
	int n = 0;

	expire(h, now_ms);
	for (int i = 0; i < DESKTOP_HELD_MAX; i++)
		n += h->f[i].path[0] != '\0';
	return n;
}

void desktop_held_clear(struct desktop_held *h)
{
	for (int i = 0; i < DESKTOP_HELD_MAX; i++)
		if (h->f[i].path[0])
			let_go(&h->f[i]);
}
