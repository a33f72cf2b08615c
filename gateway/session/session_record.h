/* gateway/session/session_record.h: what a session's record on disk says
 * (docs/durability.md has the schema): enough to serve the session again
 * after the gateway restarted, under its id and tokens (their hashes),
 * with its lifetimes as absolute deadlines, its egress rules, its events'
 * sequence and the identity of the guest process that runs it. Loop
 * thread only. */
#ifndef VITRINE_GATEWAY_SESSION_RECORD_H
#define VITRINE_GATEWAY_SESSION_RECORD_H

#include "gateway/session/session.h"

#include <jansson.h>

#define SESS_RECORD_VERSION 1

/* The record of s (a new object; NULL when out of memory). */
json_t *sess_record(const struct sess *s);

/* A session (not linked, no guest) from record rec of id: its fields
 * filled, its state, pause, checkpoint and guest identity as recorded (the
 * caller adopts the guest). Returns it, or NULL with why set (an unknown
 * version, a field missing or of the wrong type, a bad request). */
struct sess *sess_from_record(struct gw *gw, const char *id, const json_t *rec, char *why,
			      size_t whylen);

/* The state names of records: "starting", "running", "paused_memory",
 * "paused_disk", "failed". */
const char *sess_record_state(const struct sess *s);

#endif
