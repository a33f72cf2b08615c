/* gateway/egress/egress_log.h: a session's egress log: one entry per connection
 * the guest asked its proxy for, allowed or denied, kept in a ring of the
 * newest entries and served by the API (GET /v1/sessions/{id}/egress/log)
 * so that a client sees what the guest tried to reach. Connection threads
 * add and update entries while the API thread reads: one mutex. */
#ifndef VITRINE_GATEWAY_EGRESS_LOG_H
#define VITRINE_GATEWAY_EGRESS_LOG_H

#include "gateway/egress/egress_addr.h"

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EGRESS_LOG_DEFAULT_CAPACITY 1000

/* Why a connection was allowed or refused, or how it ended. */
enum egress_reason {
	EGRESS_REASON_ALLOWED,
	EGRESS_REASON_NOT_IN_ALLOWLIST,
	EGRESS_REASON_NO_NETWORK, /* the session's rules allow nothing */
	EGRESS_REASON_PRIVATE_ADDRESS,
	EGRESS_REASON_LOOPBACK_ADDRESS,
	EGRESS_REASON_LINK_LOCAL_ADDRESS,
	EGRESS_REASON_SPECIAL_ADDRESS,
	EGRESS_REASON_GATEWAY_PORT, /* the gateway's own listening port */
	EGRESS_REASON_RESOLVE_FAILED,
	EGRESS_REASON_CONNECT_FAILED,
	EGRESS_REASON_BAD_REQUEST,
	EGRESS_REASON_TIMEOUT,
	EGRESS_REASON_TOO_MANY_CONNECTIONS, /* the session's cap or the gateway's */
	EGRESS_REASON_PENDING_FULL, /* sent too much before the upstream connected */
};
#define EGRESS_REASON_COUNT (EGRESS_REASON_PENDING_FULL + 1)

struct egress_log_entry {
	uint64_t seq; /* 1, 2, ...; assigned by egress_log_add, ignored as input */
	int64_t start_ms; /* unix ms */
	char host[256]; /* as the guest asked for it */
	int port;
	char address[EGRESS_ADDR_TEXT_MAX]; /* resolved, "" when none */
	bool allowed; /* verdict */
	enum egress_reason reason;
	uint64_t bytes_up; /* guest to the outside */
	uint64_t bytes_down;
	int64_t duration_ms;
	bool ended;
};

struct egress_log;

/* "allowed", "not_in_allowlist", ..., "pending_full". Never NULL. */
const char *egress_reason_name(enum egress_reason r);

/* The reason that refuses an address of class c (EGRESS_REASON_ALLOWED for
 * a public one). */
enum egress_reason egress_reason_for_addr(enum egress_addr_class c);

/* A log keeping the newest capacity entries (capacity >= 1). NULL when
 * capacity is 0 or out of memory. */
struct egress_log *egress_log_create(size_t capacity);

/* Frees l. Accepts NULL. No other thread may use l any more. */
void egress_log_destroy(struct egress_log *l);

/* Appends a copy of *e (its seq ignored), dropping the oldest entry when
 * full. Returns the new entry's seq. This function can't fail. */
uint64_t egress_log_add(struct egress_log *l, const struct egress_log_entry *e);

/* Replaces entry seq by a copy of *e (its seq ignored; e.g. when the
 * connection ends, with its byte counts). Returns 0, or -ENOENT when seq
 * was never added or already fell out of the ring. */
int egress_log_update(struct egress_log *l, uint64_t seq, const struct egress_log_entry *e);

/* {"entries": [...], "next": N, "dropped": D}: at most limit entries with
 * seq > after, oldest first; next is the after for the following call (the
 * last seq returned, else after clamped to the newest seq); dropped counts
 * the entries after `after` that fell out of the ring before this call.
 * An entry: {"seq", "start_ms", "host", "port", "address", "verdict":
 * "allowed"|"denied", "reason", "bytes_up", "bytes_down", "duration_ms",
 * "ended"}. NULL only when out of memory. */
json_t *egress_log_json(struct egress_log *l, uint64_t after, size_t limit);

#endif
