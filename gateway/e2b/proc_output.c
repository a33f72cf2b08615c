/* gateway/e2b/proc_output.c: see proc_output.h. The chunks sit in a ring
 * of pointers, so a reader finds its cursor's chunk by bisection however
 * many there are (a guest switching stdout and stderr at each byte makes
 * tens of thousands). */
#include "gateway/e2b/proc_output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t chunk_cost(size_t cap)
{
	return sizeof(struct e2b_out_chunk) + cap + E2B_OUT_MALLOC_SLACK;
}

static struct e2b_out_chunk **slot(const struct e2b_out *o, size_t i)
{
	return &o->ring[(o->first + i) & (o->ring_cap - 1)];
}

/* Room in the ring for one more chunk. 0 or -ENOMEM. */
static int ring_room(struct e2b_out *o)
{
	size_t cap = o->ring_cap ? o->ring_cap * 2 : 16;
	struct e2b_out_chunk **ring;

	if (o->n < o->ring_cap)
		return 0;
	if (!(ring = malloc(cap * sizeof(*ring))))
		return -ENOMEM;
	for (size_t i = 0; i < o->n; i++)
		ring[i] = *slot(o, i);
	free(o->ring);
	o->bytes += (cap - o->ring_cap) * sizeof(*ring);
	o->ring = ring;
	o->ring_cap = cap;
	o->first = 0;
	return 0;
}

static void drop_oldest(struct e2b_out *o)
{
	struct e2b_out_chunk *c = *slot(o, 0);

	o->bytes -= chunk_cost(c->cap);
	free(c);
	o->first = (o->first + 1) & (o->ring_cap - 1);
	o->n--;
	o->start = o->n ? (*slot(o, 0))->start : o->end;
}

/* Joins the n bytes at d to the newest chunk when it is of the same
 * stream and may grow to hold them. 0 when joined, else -1. */
static int join(struct e2b_out *o, bool err, const void *d, size_t n)
{
	struct e2b_out_chunk **tail = o->n ? slot(o, o->n - 1) : NULL, *c;
	size_t want;

	if (!tail || (*tail)->err != err || (*tail)->len + n > E2B_OUT_CHUNK_MAX)
		return -1;
	c = *tail;
	if (c->len + n > c->cap) {
		/* doubling, so that 1-byte pieces cost amortised O(1) */
		want = c->cap * 2 > E2B_OUT_CHUNK_MAX ? E2B_OUT_CHUNK_MAX : c->cap * 2;
		if (want < c->len + n)
			want = c->len + n;
		if (!(c = realloc(c, sizeof(*c) + want)))
			return -1; /* the old one stays; a new chunk may still fit */
		o->bytes += want - c->cap;
		c->cap = want;
		*tail = c;
	}
	memcpy(c->data + c->len, d, n);
	c->len += n;
	return 0;
}

int e2b_out_add(struct e2b_out *o, size_t limit, bool err, const void *d, size_t n)
{
	struct e2b_out_chunk *c;
	int rc = 0;

	if (!n)
		return 0;
	if (join(o, err, d, n) < 0) {
		if (ring_room(o) < 0 || !(c = malloc(sizeof(*c) + n))) {
			rc = -ENOMEM;
		} else {
			c->start = o->end;
			c->len = c->cap = n;
			c->err = err;
			memcpy(c->data, d, n);
			*slot(o, o->n++) = c;
			o->bytes += chunk_cost(n);
			if (o->n == 1)
				o->start = c->start;
		}
	}
	o->end += n;
	if (rc < 0 && !o->n)
		o->start = o->end;
	while (o->bytes > limit && o->n > 1)
		drop_oldest(o);
	return rc;
}

/* The index of the chunk holding offset at (start <= at < end). */
static size_t find(const struct e2b_out *o, uint64_t at)
{
	size_t lo = 0, hi = o->n - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;

		if ((*slot(o, mid))->start <= at)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int e2b_out_read(const struct e2b_out *o, uint64_t *cursor, unsigned char *data, size_t max,
		 struct e2b_out_piece *pieces, int max_pieces)
{
	uint64_t at = *cursor;
	size_t used = 0, i;
	int np = 0;

	if (at < o->start)
		return -ESPIPE;
	if (at >= o->end || !o->n)
		return 0;
	for (i = find(o, at); i < o->n && used < max; i++) {
		const struct e2b_out_chunk *c = *slot(o, i);
		size_t from, take;

		if (at < c->start) /* bytes dropped for want of memory: skipped */
			at = c->start;
		from = (size_t)(at - c->start);
		if (from >= c->len)
			continue;
		if (!np || pieces[np - 1].err != c->err) {
			if (np == max_pieces)
				break;
			pieces[np++] = (struct e2b_out_piece){ .err = c->err, .off = used };
		}
		take = c->len - from < max - used ? c->len - from : max - used;
		memcpy(data + used, c->data + from, take);
		pieces[np - 1].len += take;
		used += take;
		at += take;
		if (from + take < c->len)
			break;
	}
	/* past the last chunk: what follows it was dropped, if anything */
	*cursor = i == o->n ? o->end : at;
	return np;
}

void e2b_out_free(struct e2b_out *o)
{
	while (o->n)
		drop_oldest(o);
	free(o->ring);
	*o = (struct e2b_out){ 0 };
}
