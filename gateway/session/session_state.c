/* gateway/session/session_state.c: the bottom of a session: its state and
 * its name, the listeners and what they are told (the tinywl wl_signal
 * model), the event log, the requests waiting on it, what other rooms keep
 * with it, and the small marks of activity (pointer, click, touch). Calls
 * nothing above it in session/. Loop thread. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/session/session_int.h"
#include "gateway/session/session_usage.h"

#include <errno.h>
#include <string.h>

const char *sess_state_name(enum sess_state st)
{
	switch (st) {
	case SESS_STARTING:
		return "starting";
	case SESS_READY:
		return "ready";
	case SESS_PAUSED:
		return "paused";
	case SESS_FAILED:
		return "failed";
	}
	return "unknown";
}

bool sess_busy(const struct sess *s)
{
	return s->state == SESS_STARTING || s->job;
}

void sess_wake(struct sess *s)
{
	for (int i = 0; i < SESS_MAX_WAITERS; i++)
		if (s->waiters[i])
			lws_callback_on_writable(s->waiters[i]);
	sess_emit(s, SESS_SIGNAL_WAKE, NULL);
}

void sess_listen(struct sess *s, struct sess_listener *l)
{
	l->next = s->listeners;
	s->listeners = l;
}

void sess_unlisten(struct sess *s, struct sess_listener *l)
{
	for (struct sess_listener **pp = &s->listeners; *pp; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			l->next = NULL;
			return;
		}
}

struct sess_listener *sess_find_listener(const struct sess *s, sess_notify_fn fn)
{
	for (struct sess_listener *l = s->listeners; l; l = l->next)
		if (l->notify == fn)
			return l;
	return NULL;
}

static bool listening(const struct sess *s, const struct sess_listener *l)
{
	for (const struct sess_listener *o = s->listeners; o; o = o->next)
		if (o == l)
			return true;
	return false;
}

/* Tells every listener; one that a notify removed (its own or another's)
 * is not told, one that a notify added is told next time. */
void sess_emit(struct sess *s, enum sess_signal sig, const void *data)
{
	struct sess_listener *snap[64], **all = snap;
	size_t n = 0, cap = sizeof(snap) / sizeof(snap[0]);

	for (struct sess_listener *l = s->listeners; l; l = l->next)
		n++;
	if (n > cap && !(all = malloc(n * sizeof(*all)))) {
		all = snap; /* out of memory: tell the first ones */
		n = cap;
	}
	n = 0;
	for (struct sess_listener *l = s->listeners; l && (all != snap || n < cap); l = l->next)
		all[n++] = l;
	for (size_t i = 0; i < n; i++)
		if (listening(s, all[i]))
			all[i]->notify(all[i], s, sig, data);
	if (all != snap)
		free(all);
}

void sess_event(struct sess *s, const char *type, json_t *data)
{
	int64_t seq = events_add(&s->events, type, data);
	json_t *kept = seq ? events_since(&s->events, seq - 1) : NULL;

	/* Live viewers get it too (docs/stream.md). */
	if (json_array_size(kept) == 1)
		sess_emit(s, SESS_SIGNAL_EVENT, json_array_get(kept, 0));
	json_decref(kept);
	sess_wake(s);
}

void sess_guest_stopping(struct sess *s, const char *why)
{
	sess_emit(s, SESS_SIGNAL_GUEST_STOPPING, why);
}

void sess_set_state(struct sess *s, enum sess_state st)
{
	if (s->state == st) {
		sess_save(s); /* the guest may have changed (a resume from disk) */
		return;
	}
	s->state = st;
	sess_usage_state(s);
	sess_save(s); /* recorded before anyone hears of it */
	sess_event(s, "state",
		   json_pack("{s:s, s:s*}", "status", sess_state_name(st), "paused",
			     st != SESS_PAUSED		   ? NULL
			     : s->pause == SESS_PAUSE_DISK ? "disk"
							   : "memory"));
}

int sess_ext_set(struct sess *s, const char *room, json_t *value)
{
	if (!value) {
		json_object_del(s->ext, room);
	} else if ((!s->ext && !(s->ext = json_object())) ||
		   json_object_set_new(s->ext, room, value) < 0) {
		return -ENOMEM;
	}
	sess_save(s);
	return 0;
}

const json_t *sess_ext_get(const struct sess *s, const char *room)
{
	return json_object_get(s->ext, room);
}

int sess_add_waiter(struct sess *s, struct lws *wsi, bool watch)
{
	int watching = 0, free_slot = -1;

	for (int i = 0; i < SESS_MAX_WAITERS; i++) {
		watching += s->waiters[i] && s->watching[i];
		if (!s->waiters[i] && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0 || (watch && watching >= SESS_MAX_WATCHERS))
		return -ENOSPC;
	s->waiters[free_slot] = wsi;
	s->watching[free_slot] = watch;
	return 0;
}

bool sess_can_wait(const struct sess *s)
{
	for (int i = 0; i < SESS_MAX_WAITERS; i++)
		if (!s->waiters[i])
			return true;
	return false;
}

void sess_remove_waiter(struct sess *s, struct lws *wsi)
{
	for (int i = 0; i < SESS_MAX_WAITERS; i++)
		if (s->waiters[i] == wsi) {
			s->waiters[i] = NULL;
			s->watching[i] = false;
		}
}

void sess_wake_waiters(struct sess *s)
{
	sess_wake(s);
}

void sess_touch(struct sess *s)
{
	s->active_ms = fs_now_ms();
}

void sess_set_pointer(struct sess *s, int x, int y)
{
	s->pointer_x = x;
	s->pointer_y = y;
}

void sess_note_click(struct sess *s)
{
	s->last_click_ms = fs_now_ms();
}
