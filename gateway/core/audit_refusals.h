/* gateway/core/audit_refusals.h: refused authentications aggregated per
 * client address, so that a flood of bad tokens cannot flush the audit log
 * (docs/audit.md "Refused authentications"). Per address, a window opens
 * at its first refusal: the first AUDIT_REFUSALS_BURST refusals in it are
 * written in full, the rest are only counted, and when the window closes
 * the count is written as one summary line. A flood of any size writes
 * AUDIT_REFUSALS_BURST + 1 lines per window and address. The table holds
 * AUDIT_REFUSALS_MAX addresses; refusals from others while it is full are
 * counted together (one more summary, remote null). Pure: the caller says
 * the time, writes the lines and arms the timer (core/audit.c). */
#ifndef VITRINE_GATEWAY_AUDIT_REFUSALS_H
#define VITRINE_GATEWAY_AUDIT_REFUSALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUDIT_REFUSALS_BURST 8 /* written in full per window and address */
#define AUDIT_REFUSALS_MAX 64 /* addresses with a window open */
#define AUDIT_REFUSALS_DEFAULT_WINDOW_S 60

struct audit_refusal_window {
	char remote[64]; /* "" : a refusal whose address lws could not tell */
	int64_t opened_ms; /* the window's first refusal; 0: the slot is free */
	int written; /* refusals written in full in this window */
	int64_t counted; /* refusals past the burst: only counted */
	int64_t first_counted_ms, last_counted_ms;
};

struct audit_refusals {
	int64_t window_ms; /* <= 0: AUDIT_REFUSALS_DEFAULT_WINDOW_S */
	struct audit_refusal_window win[AUDIT_REFUSALS_MAX];
	struct audit_refusal_window others; /* addresses the full table had no slot for */
};

/* What a closed window leaves to write: counted refusals of remote (NULL:
 * the addresses the table had no room for) between first_ms and last_ms. */
struct audit_refusal_summary {
	char remote[64];
	bool others;
	int64_t counted, first_ms, last_ms, window_ms;
};

/* An empty table whose windows last window_s seconds (<= 0: the default). */
void audit_refusals_init(struct audit_refusals *t, int window_s);
/* Notes one refusal from remote (NULL or "": unknown) at now_ms. True: the
 * caller writes it in full; false: it was only counted (a summary comes
 * when its window closes). Closed windows of remote are reopened. */
bool audit_refusals_note(struct audit_refusals *t, const char *remote, int64_t now_ms);
/* Closes the windows that ended by now_ms (every one, with all true) and
 * puts up to max summaries of those with counted refusals in out. Returns
 * how many; call again while it returns max. */
int audit_refusals_close(struct audit_refusals *t, int64_t now_ms, bool all,
			 struct audit_refusal_summary *out, int max);
/* When the next window with counted refusals ends (ms, the clock of
 * now_ms), or 0 when none has any: when a summary is due. */
int64_t audit_refusals_next_due(const struct audit_refusals *t);

#endif
