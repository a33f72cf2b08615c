/* gateway/egress/egress_log.c: see egress_log.h. */
#include "gateway/egress/egress_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct egress_log {
	pthread_mutex_t mu; /* guards all below */
	size_t capacity;
	uint64_t last; /* seq of the newest entry, 0: none yet */
	struct egress_log_entry *ring; /* owned; entry seq at [(seq - 1) % capacity] */
};

const char *egress_reason_name(enum egress_reason r)
{
	switch (r) {
	case EGRESS_REASON_ALLOWED:
		return "allowed";
	case EGRESS_REASON_NOT_IN_ALLOWLIST:
		return "not_in_allowlist";
	case EGRESS_REASON_NO_NETWORK:
		return "no_network";
	case EGRESS_REASON_PRIVATE_ADDRESS:
		return "private_address";
	case EGRESS_REASON_LOOPBACK_ADDRESS:
		return "loopback_address";
	case EGRESS_REASON_LINK_LOCAL_ADDRESS:
		return "link_local_address";
	case EGRESS_REASON_SPECIAL_ADDRESS:
		return "special_address";
	case EGRESS_REASON_GATEWAY_PORT:
		return "gateway_port";
	case EGRESS_REASON_RESOLVE_FAILED:
		return "resolve_failed";
	case EGRESS_REASON_CONNECT_FAILED:
		return "connect_failed";
	case EGRESS_REASON_BAD_REQUEST:
		return "bad_request";
	case EGRESS_REASON_TIMEOUT:
		return "timeout";
	case EGRESS_REASON_TOO_MANY_CONNECTIONS:
		return "too_many_connections";
	case EGRESS_REASON_PENDING_FULL:
		return "pending_full";
	}
	return "unknown";
}

enum egress_reason egress_reason_for_addr(enum egress_addr_class c)
{
	switch (c) {
	case EGRESS_ADDR_PUBLIC:
		return EGRESS_REASON_ALLOWED;
	case EGRESS_ADDR_LOOPBACK:
		return EGRESS_REASON_LOOPBACK_ADDRESS;
	case EGRESS_ADDR_PRIVATE:
		return EGRESS_REASON_PRIVATE_ADDRESS;
	case EGRESS_ADDR_LINK_LOCAL:
		return EGRESS_REASON_LINK_LOCAL_ADDRESS;
	case EGRESS_ADDR_OTHER_SPECIAL:
		break;
	}
	return EGRESS_REASON_SPECIAL_ADDRESS;
}

struct egress_log *egress_log_create(size_t capacity)
{
	struct egress_log *l;

	if (capacity == 0 || capacity > SIZE_MAX / sizeof(l->ring[0]))
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->ring = calloc(capacity, sizeof(l->ring[0]));
	if (!l->ring) {
		free(l);
		return NULL;
	}
	l->capacity = capacity;
	pthread_mutex_init(&l->mu, NULL);
	return l;
}

void egress_log_destroy(struct egress_log *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->mu);
	free(l->ring);
	free(l);
}

/* The oldest seq still in the ring (last + 1 when empty). Lock held. */
static uint64_t oldest(const struct egress_log *l)
{
	return l->last < l->capacity ? 1 : l->last - l->capacity + 1;
}

static struct egress_log_entry *slot(struct egress_log *l, uint64_t seq)
{
	return &l->ring[(seq - 1) % l->capacity];
}

/* Copies *e into entry seq, strings terminated. Lock held. */
static void store(struct egress_log *l, uint64_t seq, const struct egress_log_entry *e)
{
	struct egress_log_entry *s = slot(l, seq);

	*s = *e;
	s->seq = seq;
	s->host[sizeof(s->host) - 1] = '\0';
	s->address[sizeof(s->address) - 1] = '\0';
}

uint64_t egress_log_add(struct egress_log *l, const struct egress_log_entry *e)
{
	uint64_t seq;

	pthread_mutex_lock(&l->mu);
	seq = ++l->last;
	store(l, seq, e);
	pthread_mutex_unlock(&l->mu);
	return seq;
}

int egress_log_update(struct egress_log *l, uint64_t seq, const struct egress_log_entry *e)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&l->mu);
	if (seq >= 1 && seq <= l->last && seq >= oldest(l)) {
		store(l, seq, e);
		rc = 0;
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* src with anything but printable ASCII as '?': the host is the guest's
 * choice and JSON strings must be UTF-8. */
static void printable(char *dst, const char *src, size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[i] = '\0';
}

static json_t *entry_json(const struct egress_log_entry *e)
{
	char host[sizeof(e->host)], address[sizeof(e->address)];

	printable(host, e->host, sizeof(host));
	printable(address, e->address, sizeof(address));
	return json_pack("{s:I, s:I, s:s, s:i, s:s, s:s, s:s, s:I, s:I, s:I, s:b}", "seq",
			 (json_int_t)e->seq, "start_ms", (json_int_t)e->start_ms, "host", host,
			 "port", e->port, "address", address, "verdict",
			 e->allowed ? "allowed" : "denied", "reason", egress_reason_name(e->reason),
			 "bytes_up", (json_int_t)e->bytes_up, "bytes_down",
			 (json_int_t)e->bytes_down, "duration_ms", (json_int_t)e->duration_ms,
			 "ended", e->ended);
}

json_t *egress_log_json(struct egress_log *l, uint64_t after, size_t limit)
{
	json_t *entries = json_array(), *root = NULL;
	uint64_t first, next, dropped = 0;
	size_t n = 0;

	if (!entries)
		return NULL;
	pthread_mutex_lock(&l->mu);
	next = after < l->last ? after : l->last;
	first = l->last + 1; /* nothing after a seq not given yet */
	if (after < l->last) {
		first = after + 1 > oldest(l) ? after + 1 : oldest(l);
		dropped = first - after - 1;
	}
	for (uint64_t seq = first; seq <= l->last && n < limit; seq++, n++) {
		if (json_array_append_new(entries, entry_json(slot(l, seq))) < 0)
			goto out;
		next = seq;
	}
	root = json_pack("{s:O, s:I, s:I}", "entries", entries, "next", (json_int_t)next, "dropped",
			 (json_int_t)dropped);
out:
	pthread_mutex_unlock(&l->mu);
	json_decref(entries);
	return root;
}
