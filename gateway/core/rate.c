/* gateway/core/rate.c: see rate.h. A bucket is the time it is full again
 * (full_at): a request adds interval to it (from now, if it is full), and
 * is refused when that would put it more than burst intervals ahead. */
#include "gateway/core/rate.h"

#include <stdio.h>
#include <string.h>

static int find(const struct rate_table *rt, const char *key)
{
	for (int i = 0; i < RATE_TABLE_MAX; i++)
		if (rt->t[i].key[0] && !strncmp(rt->t[i].key, key, RATE_KEY_MAX - 1))
			return i;
	return -1;
}

/* How long until one more request fits in a bucket full at full_at_ms. */
static int64_t wait_of(int64_t full_at_ms, const struct rate_limit *lim, int64_t now_ms)
{
	int64_t from = full_at_ms > now_ms ? full_at_ms : now_ms;
	int64_t over = from + lim->interval_ms - now_ms - (int64_t)lim->burst * lim->interval_ms;

	return over > 0 ? over : 0;
}

bool rate_would_allow(const struct rate_table *rt, const char *key, const struct rate_limit *lim,
		      int64_t now_ms, int64_t *retry_ms)
{
	int i = find(rt, key);
	int64_t wait = i < 0 ? 0 : wait_of(rt->t[i].full_at_ms, lim, now_ms);

	if (retry_ms)
		*retry_ms = wait;
	return wait == 0;
}

bool rate_allow(struct rate_table *rt, const char *key, const struct rate_limit *lim,
		int64_t now_ms, int64_t *retry_ms)
{
	int i = find(rt, key);

	if (!rate_would_allow(rt, key, lim, now_ms, retry_ms))
		return false;
	if (i < 0) { /* a free slot, else the one nearest to full */
		for (int j = 0; j < RATE_TABLE_MAX && i < 0; j++)
			if (!rt->t[j].key[0])
				i = j;
		if (i < 0) {
			i = 0;
			for (int j = 1; j < RATE_TABLE_MAX; j++)
				if (rt->t[j].full_at_ms < rt->t[i].full_at_ms)
					i = j;
		}
		snprintf(rt->t[i].key, RATE_KEY_MAX, "%s", key);
		rt->t[i].full_at_ms = now_ms;
	}
	if (rt->t[i].full_at_ms < now_ms)
		rt->t[i].full_at_ms = now_ms;
	rt->t[i].full_at_ms += lim->interval_ms;
	return true;
}
