/* gateway/session/session_usage.h: a session's usage (usage.h) with what
 * lives elsewhere filled in (its egress bytes, its disk's allocated bytes),
 * as the API shows it and the usage log keeps it; and the loop's part of
 * the metering: the phase follows the state, QEMU's CPU time is read every
 * USAGE_CPU_READ_MS. Loop thread only. */
#ifndef VITRINE_GATEWAY_SESSION_USAGE_H
#define VITRINE_GATEWAY_SESSION_USAGE_H

#include "gateway/session/usage.h"

#include <jansson.h>

#include <stdbool.h>

#define USAGE_CPU_READ_MS 5000
#define USAGE_SAVE_MS (5 * 60 * 1000) /* the record, for the counts */

struct sess;

/* The state changed: the usage phase follows it. */
void sess_usage_state(struct sess *s);
/* A session made from its record (usage and since filled): its phase is
 * open again from when the record says it began (the guest ran on while
 * no gateway was there). */
void sess_usage_adopted(struct sess *s);
/* From the heartbeat: reads QEMU's CPU time when it is due. */
void sess_usage_tick(struct sess *s);
/* s's totals as of now (usage.h), QEMU's CPU time in hz ticks. */
void sess_usage_totals(const struct sess *s, long hz, struct usage_totals *out);
/* {"seconds_running", ...} as of now. */
json_t *sess_usage_json(const struct sess *s);
/* {"id", "image", "template"?, "vcpus", "memory_mib", "created_unix_ms",
 * "ended_unix_ms" (null while it lives), "usage"} for GET /v1/usage and
 * the usage log. */
json_t *sess_usage_entry(const struct sess *s, bool ended);
/* The session ends (destroyed, not left to the next gateway): its last
 * figures go to the gateway's usage log. */
void sess_usage_ended(struct sess *s);

#endif
