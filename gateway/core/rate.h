/* gateway/core/rate.h: rate limits for what an unauthenticated request
 * may ask for (the E2B live view's links, e2b/e2b_live.c): a token bucket
 * per key (a session id, a client's address) in a table of fixed size, so
 * that no flood of new keys grows memory. Each bucket holds burst requests
 * and gains one every interval_ms (kept as the time it is full again, a
 * single number). A full table makes room by dropping the key nearest to
 * full (a full one is as good as absent): a flood of new keys can make the
 * limit forget an old one, never refuse a new one. Pure: the caller passes
 * the clock; one thread. */
#ifndef VITRINE_GATEWAY_RATE_H
#define VITRINE_GATEWAY_RATE_H

#include <stdbool.h>
#include <stdint.h>

#define RATE_TABLE_MAX 256
#define RATE_KEY_MAX 72

struct rate_limit {
	int burst; /* >= 1 */
	int interval_ms; /* >= 1 */
};

struct rate_table {
	struct {
		char key[RATE_KEY_MAX]; /* "" when the slot is free */
		int64_t full_at_ms; /* the bucket is full again then */
	} t[RATE_TABLE_MAX];
};

/* Whether key may make one more request at now_ms under lim; when it may
 * not, nothing is counted and *retry_ms (if not NULL) is how long until it
 * may. A key longer than RATE_KEY_MAX - 1 counts by its first bytes. */
bool rate_allow(struct rate_table *rt, const char *key, const struct rate_limit *lim,
		int64_t now_ms, int64_t *retry_ms);
/* Whether key may at now_ms, without counting it (*retry_ms as above). */
bool rate_would_allow(const struct rate_table *rt, const char *key, const struct rate_limit *lim,
		      int64_t now_ms, int64_t *retry_ms);

#endif
