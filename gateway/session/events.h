/* gateway/session/events.h: a session's recent events (state changes, expiry
 * warnings, ...), numbered, kept in a small ring so that a client that
 * polls GET /v1/sessions/{id}/events?after=SEQ sees each one once and an
 * absent client costs nothing. Loop thread only. */
#ifndef VITRINE_GATEWAY_EVENTS_H
#define VITRINE_GATEWAY_EVENTS_H

#include <jansson.h>
#include <stdint.h>

#define EVENTS_KEPT 128

struct event_log {
	json_t *ring[EVENTS_KEPT]; /* owned; ring[seq % EVENTS_KEPT] */
	int64_t next_seq; /* the seq the next event gets; the first is 1 */
};

/* Appends {"seq", "type", "at_ms" (Unix ms), ...fields of data} (data is
 * stolen, may be NULL), dropping the oldest beyond EVENTS_KEPT. Returns the
 * new seq, or 0 when out of memory (the event is lost). */
int64_t events_add(struct event_log *l, const char *type, json_t *data);
/* A new array of the kept events with seq > after (oldest first). */
json_t *events_since(const struct event_log *l, int64_t after);
/* The highest seq so far (0: none). */
int64_t events_last(const struct event_log *l);
/* Frees every kept event. */
void events_clear(struct event_log *l);

#endif
