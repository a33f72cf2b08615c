/* display/encode_cache.h: encode each frame once however many readers ask.
 * A small LRU of encoded images keyed on (frame seq, format, quality, size,
 * region). One cache per mirror (frame seqs are per mirror). Thread-safe:
 * a second reader asking for the same key while it is being encoded waits
 * for that encoding instead of starting another. */
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

/* The encoding of f with opts, from the cache or encoded now and cached.
 * Returns 0 with *out holding a new reference, or display_encode()'s error. */
int display_encode_cache_get(struct display_encode_cache *c, const struct display_frame *f,
			     const struct display_encode_opts *opts, struct display_image **out,
			     char *err, size_t errlen);

/* Hits and misses so far (for tests and metrics). */
void display_encode_cache_stats(struct display_encode_cache *c, uint64_t *hits, uint64_t *misses);

#endif
