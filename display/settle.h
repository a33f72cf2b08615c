/* display/settle.h: "has the screen settled?" as a pure state machine, so
 * the rule (quiet for quiet_ms, give up after timeout_ms) is tested without
 * a guest. The caller feeds it change times and the clock; the mirror's
 * blocking helper (display_mirror_wait_settled) drives it from real frames. */
#ifndef VITRINE_DISPLAY_SETTLE_H
#define VITRINE_DISPLAY_SETTLE_H

#include <stdbool.h>
#include <stdint.h>

struct display_settle_result {
	bool settled; /* quiet for quiet_ms before the timeout */
	int waited_ms; /* from start to the decision */
	int quiet_ms; /* how long the screen had been unchanged at the decision */
};

struct display_settle {
	int64_t start_ms, last_change_ms;
	int quiet_ms, timeout_ms;
	bool done;
	struct display_settle_result result; /* valid once done */
};

/* Starts a wait at now_ms. last_change_ms is the newest change known at
 * start (it may be long before now_ms, or INT64_MIN for "never"). quiet_ms
 * and timeout_ms below 0 count as 0. Can't fail. */
void display_settle_init(struct display_settle *s, int64_t now_ms, int64_t last_change_ms,
			 int quiet_ms, int timeout_ms);

/* Records a change seen at change_ms (older than the newest known is
 * ignored). No effect once decided. */
void display_settle_change(struct display_settle *s, int64_t change_ms);

/* Decides at now_ms. Returns 0 when decided (s->done, s->result), else the
 * milliseconds (> 0) until the decision could next change, assuming no new
 * change arrives. */
int display_settle_poll(struct display_settle *s, int64_t now_ms);

#endif
