/* gateway/action/toolset_session.c: see toolset_session.h. */
#include "gateway/action/toolset_session.h"

#include "gateway/session/session.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

struct toolset_state {
	struct sess *s;
	struct sess_listener listener; /* sess::listeners: found by on_session */
	struct toolset_limits limits;
	bool fixed; /* frame holds the session's screenshot size */
	struct toolset_frame frame;
	uint32_t disabled; /* from the last tool entry given */
};

static void on_session(struct sess_listener *l, struct sess *s, enum sess_signal sig,
		       const void *data)
{
	struct toolset_state *st = lws_container_of(l, struct toolset_state, listener);

	(void)data;
	if (sig != SESS_SIGNAL_DESTROY)
		return;
	sess_unlisten(s, &st->listener);
	free(st);
}

/* s's state, made when it has none; NULL when out of memory. */
static struct toolset_state *of(struct sess *s)
{
	struct sess_listener *l = sess_find_listener(s, on_session);
	struct toolset_state *st;

	if (l)
		return lws_container_of(l, struct toolset_state, listener);
	if (!(st = calloc(1, sizeof(*st))))
		return NULL;
	st->s = s;
	st->limits = toolset_default_limits();
	st->listener.notify = on_session;
	sess_listen(s, &st->listener);
	return st;
}

int toolset_session_frame(struct sess *s, const struct toolset_turn *t, struct toolset_frame *frame,
			  uint32_t *disabled, struct api_error *e)
{
	struct toolset_state *st = of(s);

	if (!st)
		return api_error_set(e, 500, "internal", "out of memory");
	if (t->has_limits && st->fixed &&
	    (t->limits.long_edge != st->limits.long_edge ||
	     t->limits.visual_tokens != st->limits.visual_tokens)) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "this session's screenshots are fixed at %dx%d (max_long_edge %d, "
			 "max_visual_tokens %d): image_limits cannot change them",
			 st->frame.shot_w, st->frame.shot_h, st->limits.long_edge,
			 st->limits.visual_tokens);
		return api_error_set(e, 409, "capture_fixed", msg);
	}
	if (t->has_limits)
		st->limits = t->limits;
	if (t->has_entry)
		st->disabled = t->disabled;
	if (!st->fixed) {
		toolset_frame_init(&st->frame, sess_screen(s).width, sess_screen(s).height,
				   &st->limits);
		st->fixed = true;
	}
	*frame = st->frame;
	*disabled = st->disabled;
	return 0;
}
