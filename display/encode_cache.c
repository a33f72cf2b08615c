/* display/encode_cache.c: see encode_cache.h. */
#include "display/encode_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct cache_key {
	uint64_t seq;
	int width, height; /* of the frame, so a reused seq of another size never matches */
	int format, quality, max_width, max_height;
	struct display_rect region;
};

struct cache_entry {
	struct cache_key key;
	struct display_image *img; /* owned reference; NULL: free slot */
	uint64_t used; /* LRU clock */
};

struct display_encode_cache {
	pthread_mutex_t lock; /* guards entries and counters; never held across an encoding */
	int capacity;
	struct cache_entry *entries; /* owned, capacity long */
	uint64_t clock, hits, misses;
};

struct display_encode_cache *display_encode_cache_create(int capacity)
{
	struct display_encode_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->capacity = capacity > 0 ? capacity : 8;
	c->entries = calloc((size_t)c->capacity, sizeof(*c->entries));
	if (!c->entries) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void display_encode_cache_destroy(struct display_encode_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->capacity; i++)
		display_image_unref(c->entries[i].img);
	pthread_mutex_destroy(&c->lock);
	free(c->entries);
	free(c);
}

static void make_key(struct cache_key *k, const struct display_frame *f,
		     const struct display_encode_opts *o)
{
	memset(k, 0, sizeof(*k));
	k->seq = f->seq;
	k->width = f->width;
	k->height = f->height;
	k->format = (int)o->format;
	k->quality = o->format == DISPLAY_FORMAT_JPEG ? (o->quality ? o->quality : 80) : 0;
	k->max_width = o->max_width > 0 ? o->max_width : 0;
	k->max_height = o->max_height > 0 ? o->max_height : 0;
	if (o->region.w > 0 && o->region.h > 0 &&
	    !(o->region.x == 0 && o->region.y == 0 && o->region.w == f->width &&
	      o->region.h == f->height))
		k->region = o->region;
}

static bool key_equal(const struct cache_key *a, const struct cache_key *b)
{
	return a->seq == b->seq && a->width == b->width && a->height == b->height &&
	       a->format == b->format && a->quality == b->quality && a->max_width == b->max_width &&
	       a->max_height == b->max_height && a->region.x == b->region.x &&
	       a->region.y == b->region.y && a->region.w == b->region.w &&
	       a->region.h == b->region.h;
}

/* The entry holding key, or NULL. Under the lock. */
static struct cache_entry *lookup_locked(struct display_encode_cache *c,
					 const struct cache_key *key)
{
	for (int i = 0; i < c->capacity; i++)
		if (c->entries[i].img && key_equal(&c->entries[i].key, key))
			return &c->entries[i];
	return NULL;
}

int display_encode_cache_find(struct display_encode_cache *c, const struct display_frame *f,
			      const struct display_encode_opts *opts, struct display_image **out)
{
	struct cache_entry *e;
	struct cache_key key;

	make_key(&key, f, opts);
	pthread_mutex_lock(&c->lock);
	e = lookup_locked(c, &key);
	if (e) {
		e->used = ++c->clock;
		c->hits++;
		*out = display_image_ref(e->img);
	} else {
		c->misses++;
		*out = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	return e ? 0 : -ENOENT;
}

struct display_image *display_encode_cache_put(struct display_encode_cache *c,
					       const struct display_frame *f,
					       const struct display_encode_opts *opts,
					       struct display_image *img)
{
	struct cache_entry *e, *victim = NULL;
	struct display_image *old = NULL, *ret;
	struct cache_key key;

	if (!img)
		return NULL;
	make_key(&key, f, opts);
	pthread_mutex_lock(&c->lock);
	e = lookup_locked(c, &key);
	if (!e) {
		for (int i = 0; i < c->capacity; i++) {
			struct cache_entry *v = &c->entries[i];

			if (!victim || !v->img || (victim->img && v->used < victim->used))
				victim = v;
		}
		e = victim;
		old = e->img;
		e->key = key;
		e->img = display_image_ref(img);
	}
	e->used = ++c->clock;
	ret = display_image_ref(e->img);
	pthread_mutex_unlock(&c->lock);
	display_image_unref(old); /* may free: outside the lock */
	return ret;
}

int display_encode_cache_get(struct display_encode_cache *c, const struct display_frame *f,
			     const struct display_encode_opts *opts, struct display_image **out,
			     char *err, size_t errlen)
{
	struct display_image *img;
	int rc;

	if (display_encode_cache_find(c, f, opts, out) == 0)
		return 0;
	rc = display_encode(f, opts, &img, err, errlen);
	if (rc < 0)
		return rc;
	*out = display_encode_cache_put(c, f, opts, img);
	display_image_unref(img);
	return 0;
}

void display_encode_cache_stats(struct display_encode_cache *c, uint64_t *hits, uint64_t *misses)
{
	pthread_mutex_lock(&c->lock);
	*hits = c->hits;
	*misses = c->misses;
	pthread_mutex_unlock(&c->lock);
}
