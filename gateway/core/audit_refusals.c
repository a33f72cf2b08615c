/* gateway/core/audit_refusals.c: see audit_refusals.h. */
#include "gateway/core/audit_refusals.h"

#include <stdio.h>
#include <string.h>

void audit_refusals_init(struct audit_refusals *t, int window_s)
{
	memset(t, 0, sizeof(*t));
	t->window_ms = (int64_t)(window_s > 0 ? window_s : AUDIT_REFUSALS_DEFAULT_WINDOW_S) * 1000;
}

static bool ended(const struct audit_refusals *t, const struct audit_refusal_window *w,
		  int64_t now_ms)
{
	return w->opened_ms && now_ms >= w->opened_ms + t->window_ms;
}

static bool count(struct audit_refusal_window *w, int64_t now_ms)
{
	if (w->written < AUDIT_REFUSALS_BURST) {
		w->written++;
		return true;
	}
	if (!w->counted++)
		w->first_counted_ms = now_ms;
	w->last_counted_ms = now_ms;
	return false;
}

static void open_window(struct audit_refusal_window *w, const char *remote, int64_t now_ms)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->remote, sizeof(w->remote), "%s", remote);
	w->opened_ms = now_ms ? now_ms : 1;
}

bool audit_refusals_note(struct audit_refusals *t, const char *remote, int64_t now_ms)
{
	struct audit_refusal_window *w, *free_slot = NULL;

	if (!remote)
		remote = "";
	for (int i = 0; i < AUDIT_REFUSALS_MAX; i++) {
		w = &t->win[i];
		if (w->opened_ms && !strcmp(w->remote, remote)) {
			/* A window that ended with nothing counted has no summary
			 * to wait for: it starts over. (One with a count is closed
			 * by audit_refusals_close first: the timer is due.) */
			if (ended(t, w, now_ms) && !w->counted)
				open_window(w, remote, now_ms);
			return count(w, now_ms);
		}
		if (!free_slot && (!w->opened_ms || (ended(t, w, now_ms) && !w->counted)))
			free_slot = w;
	}
	if (free_slot) {
		open_window(free_slot, remote, now_ms);
		return count(free_slot, now_ms);
	}
	/* No room: counted with the others, none written in full. */
	w = &t->others;
	if (!w->opened_ms)
		open_window(w, "", now_ms);
	w->written = AUDIT_REFUSALS_BURST;
	return count(w, now_ms);
}

static bool take(const struct audit_refusals *t, struct audit_refusal_window *w, bool others,
		 struct audit_refusal_summary *out)
{
	bool has = w->counted > 0;

	if (has) {
		memset(out, 0, sizeof(*out));
		snprintf(out->remote, sizeof(out->remote), "%s", w->remote);
		out->others = others;
		out->counted = w->counted;
		out->first_ms = w->first_counted_ms;
		out->last_ms = w->last_counted_ms;
		out->window_ms = t->window_ms;
	}
	memset(w, 0, sizeof(*w));
	return has;
}

int audit_refusals_close(struct audit_refusals *t, int64_t now_ms, bool all,
			 struct audit_refusal_summary *out, int max)
{
	int n = 0;

	for (int i = 0; i <= AUDIT_REFUSALS_MAX && n < max; i++) {
		bool others = i == AUDIT_REFUSALS_MAX;
		struct audit_refusal_window *w = others ? &t->others : &t->win[i];

		if (w->opened_ms && (all || ended(t, w, now_ms)) && take(t, w, others, &out[n]))
			n++;
	}
	return n;
}

int64_t audit_refusals_next_due(const struct audit_refusals *t)
{
	int64_t due = 0;

	for (int i = 0; i <= AUDIT_REFUSALS_MAX; i++) {
		const struct audit_refusal_window *w = i < AUDIT_REFUSALS_MAX ? &t->win[i]
									      : &t->others;
		int64_t end = w->opened_ms + t->window_ms;

		if (w->counted && (!due || end < due))
			due = end;
	}
	return due;
}
