/* gateway/action/toolset_session.h: what a session keeps of Claude's computer
 * toolset (toolset.h) between turns: the image limits its turns set, the
 * screenshot size its first turn fixed (the model's coordinates stay in
 * that size for the whole session, as the toolset's contract asks), and the
 * members the last tool entry given turned off. Kept by the action room as
 * a listener of the session (session.h), freed when the session goes.
 * Loop thread only. */
#ifndef VITRINE_GATEWAY_TOOLSET_SESSION_H
#define VITRINE_GATEWAY_TOOLSET_SESSION_H

#include "gateway/action/toolset.h"
#include "gateway/core/api_error.h"

#include <stdint.h>

struct sess;

/* The frame turn t runs in on s, and the members refused (*disabled): t's
 * limits and entry are taken first; the first turn of a session fixes its
 * frame against the screen s has now. Returns 0, or -1 with *e: 409
 * capture_fixed when t gives limits that change a size already fixed, 500
 * when out of memory. */
int toolset_session_frame(struct sess *s, const struct toolset_turn *t, struct toolset_frame *frame,
			  uint32_t *disabled, struct api_error *e);

#endif
