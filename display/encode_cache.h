/* display/encode_cache.h: encode each frame once however many readers ask.
 * A small LRU of encoded images keyed on (frame seq and size, format,
 * quality, fitted size, region). One cache per mirror.
 *
 * Thread-safe, and its lock is never held across an encoding, so the event
 * loop can look up while worker threads encode (display/encode_pool.h):
 *
 *	loop:   display_encode_cache_find()  hit: use it; miss: submit a job
 *	worker: display_encode()             into the job (frame reference held)
 *	loop:   done: display_encode_cache_put(), use what it returns
 *
 * find and put only take the lock for a scan of `capacity` entries. Two
 * misses on the same key at the same time both encode; put keeps the first
 * image stored and hands it to both, so readers still share one. */
#ifndef VITRINE_DISPLAY_ENCODE_CACHE_H
#define VITRINE_DISPLAY_ENCODE_CACHE_H

#include "display/encode.h"

#include <stddef.h>
#include <stdint.h>

struct display_encode_cache;

/* Creates a cache holding up to capacity images (< 1: 8). Returns NULL when
 * out of memory. */
struct display_encode_cache *display_encode_cache_create(int capacity);

/* Frees the cache and drops its references (images handed out stay valid).
 * Accepts NULL. */
void display_encode_cache_destroy(struct display_encode_cache *c);

/* The cached encoding of f with opts: 0 with *out a new reference (a hit),
 * or -ENOENT with *out NULL (a miss). Never encodes, never waits for an
 * encoding: fit for the event loop. Any thread. */
int display_encode_cache_find(struct display_encode_cache *c, const struct display_frame *f,
			      const struct display_encode_opts *opts, struct display_image **out);

/* Stores img (the cache takes its own reference) as the encoding of f with
 * opts, in the least recently used slot. When the key is already there (an
 * encoding that raced this one), that image stays and img is not stored.
 * Returns a new reference to the image now cached for the key: give that
 * to readers. f is only used for its key (seq, size), never read. Any
 * thread. Can't fail. */
struct display_image *display_encode_cache_put(struct display_encode_cache *c,
					       const struct display_frame *f,
					       const struct display_encode_opts *opts,
					       struct display_image *img);

/* find, else display_encode() on the calling thread (outside the lock),
 * then put. Returns 0 with *out holding a new reference, or
 * display_encode()'s error. Blocks for as long as the encoding takes: for
 * workers, the CLI and tests, not the event loop. Any thread. */
int display_encode_cache_get(struct display_encode_cache *c, const struct display_frame *f,
			     const struct display_encode_opts *opts, struct display_image **out,
			     char *err, size_t errlen);

/* Hits and misses of find (and get) so far, for tests and metrics. Any thread. */
void display_encode_cache_stats(struct display_encode_cache *c, uint64_t *hits, uint64_t *misses);

#endif
