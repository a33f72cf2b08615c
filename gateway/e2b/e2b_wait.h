/* gateway/e2b/e2b_wait.h: an E2B request parked until something it waits
 * for may have happened: its session changed (the session's wake signal:
 * its state, its job's end, its agent link up or down), the session went,
 * or a job ticket is done (a kill's guests are gone). Nothing polls: each
 * of those schedules a look at once, and one timer holds the deadline. A
 * look runs from a loop timer, never inside the signal that woke it, so it
 * may answer the request and change the session freely. Loop thread. */
#ifndef VITRINE_GATEWAY_E2B_WAIT_H
#define VITRINE_GATEWAY_E2B_WAIT_H

#include "gateway/session/session.h"

#include <libwebsockets.h>
#include <stdbool.h>
#include <stdint.h>

struct e2b_wait;
struct job_ticket;

/* Looks again: answers (and returns true: the wait is over) or returns
 * false to wait on. late: the deadline has passed, and it must answer. */
typedef bool (*e2b_look_fn)(struct e2b_wait *w, bool late);

/* Embedded in what waits (container_of in the look); zeroed before the
 * first start. */
struct e2b_wait {
	struct sess_listener listener; /* on s, while parked on it */
	struct sess *s; /* listened to, or NULL */
	struct job_ticket *ticket; /* watched (the waiter holds it), or NULL */
	struct lws_context *ctx;
	int64_t until_ms; /* the deadline, monotonic */
	e2b_look_fn look;
	lws_sorted_usec_list_t sul; /* the next look: now after a wake-up, else the deadline */
};

/* Parks w on s (and, when ticket is not NULL, on it being done) for up
 * to wait_ms, looking first right away (from the timer, not from here). */
void e2b_wait_start(struct e2b_wait *w, struct lws_context *ctx, struct sess *s,
		    struct job_ticket *ticket, int wait_ms, e2b_look_fn look);
/* Ends the wait: no look comes after. Idempotent; a look that answers
 * need not call it (the wait ends when it returns true). */
void e2b_wait_end(struct e2b_wait *w);

#endif
