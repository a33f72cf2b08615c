/* gateway/action/plan.h: a validated action (actions.h) -> the ordered steps that
 * perform it.
 *
 * Steps are QMP input-send-event arguments (built with vmm-qemu/input.h),
 * pacing delays, and the things input events cannot do (type text that no
 * key expresses, take a screenshot, report the cursor, zoom, wait). Keeping
 * this pure means the exact event sequences (modifier order, click timing,
 * drag interpolation) are unit-tested without a guest; the session code only
 * walks the list. No I/O happens here.
 *
 * Timing (all well under X's 400 ms double-click time):
 *   PLAN_CLICK_GAP_MS    release -> next press within a double/triple click
 *   PLAN_DRAG_HOLD_MS    after pressing and before releasing in a drag, so
 *                        toolkits see a press, then motion, then a release
 *   PLAN_MODIFIER_MS     after the modifiers held around a pointer action go
 *                        down and before they go up: keyboard and pointer
 *                        are two devices to the guest, and X must see the
 *                        modifier down before the button and up after it;
 *                        before that pause, PLAN_X_SYNC waits (at most
 *                        PLAN_X_SYNC_MS) until X has taken the modifiers:
 *                        a pause alone is not enough when the host is so
 *                        busy that the guest does not run X for longer
 *   PLAN_DRAG_STEP_MS    between the intermediate moves of a drag, each at
 *                        most PLAN_DRAG_STEP_PX long (longer when the path
 *                        would need more than PLAN_DRAG_MAX_MOVES moves; each
 *                        path segment rounds up, so at most one more per
 *                        segment)
 *   PLAN_DND_START_MS    after a left-button drag's first move past the
 *                        page's drag threshold (PLAN_DND_THRESHOLD_PX
 *                        from the press along x or y): the browser starts its native drag
 *                        session (dragstart, then Chromium grabs the
 *                        pointer and runs XDND) and must do so before the
 *                        rest of the moves, or it never sees them
 *   PLAN_DND_SETTLE_MS   over the end point, before and after a nudge one
 *                        pixel aside and back: Chromium drops only once
 *                        the target has answered a position (dragover);
 *                        a release before that cancels the drag
 *
 * A drag cannot know whether it drags a draggable=true element (a native
 * drag session) or moves something by pointer events, so every left-button
 * drag that passes the threshold takes these steps: press, hold, moves up
 * to the first past the threshold, PLAN_DND_START_MS, the rest of the path,
 * PLAN_DND_SETTLE_MS, the nudge, PLAN_DND_SETTLE_MS, release. Other drags
 * (other buttons, or within the threshold: no browser starts a native drag
 * for them) end with PLAN_DRAG_HOLD_MS before the release, as they did.
 */
#ifndef VITRINE_GATEWAY_PLAN_H
#define VITRINE_GATEWAY_PLAN_H

#include "gateway/action/actions.h"

#include <jansson.h>
#include <stddef.h>

#define PLAN_CLICK_GAP_MS 60
#define PLAN_DRAG_HOLD_MS 50
#define PLAN_MODIFIER_MS 100
#define PLAN_DRAG_STEP_MS 10
#define PLAN_DRAG_STEP_PX 20
#define PLAN_DRAG_MAX_MOVES 500
#define PLAN_DND_THRESHOLD_PX 4
#define PLAN_DND_START_MS 500
#define PLAN_DND_SETTLE_MS 400
#define PLAN_X_SYNC_MS 2000
#define PLAN_INPUT_QUEUE 64 /* QEMU's virtio-input queue, in events */
#define PLAN_GUEST_SYNC_MS 5000

enum plan_step_kind {
	PLAN_INPUT, /* event: send as QMP input-send-event arguments */
	PLAN_DELAY, /* ms: pause before the next step (pacing input) */
	PLAN_TYPE_TEXT, /* text: the whole text of a type action that has a
			 * character keys cannot express; deliver it all by
			 * another path (the guest agent) or none of it */
	PLAN_SCREENSHOT, /* take a screenshot */
	PLAN_CURSOR_POSITION, /* report the pointer position */
	PLAN_ZOOM, /* region: a screenshot of that part of the screen at full size */
	PLAN_WAIT, /* ms: let the guest work (an agent's wait), then carry on */
	PLAN_X_SYNC, /* x_mask, ms: wait (at most ms) until the guest's X holds
		      * these modifiers (X's state bits: Shift 1, Control 4, Mod1
		      * 8, Mod4 64): the barrier between the modifiers held
		      * around pointer input and the pointer input itself
		      * (vitrine-agent xwait, agent_xwait.c says why); a guest
		      * without X carries on at once */
	PLAN_GUEST_SYNC, /* ms: wait (at most ms) until the guest's agent has
			  * answered a ping: the guest ran since the input before
			  * it was sent, and took it from its input queue.
			  * QEMU drops input the guest has no room for
			  * (virtio-input's queue: PLAN_INPUT_QUEUE events, two
			  * per key press or release), so a long `type` is sent in
			  * pieces that fit, one such wait between them */
};

struct plan_step {
	enum plan_step_kind kind;
	json_t *event; /* PLAN_INPUT: owned by the plan */
	int ms; /* PLAN_DELAY, PLAN_WAIT, PLAN_X_SYNC */
	unsigned x_mask; /* PLAN_X_SYNC */
	char *text; /* PLAN_TYPE_TEXT: owned by the plan, NUL-terminated UTF-8 */
	struct action_rect region; /* PLAN_ZOOM: screen pixels */
};

struct plan {
	struct plan_step *steps; /* owned, len used of cap */
	size_t len, cap;
};

/* Builds the steps for a on a screen_w x screen_h screen (the size the
 * action was parsed against). Returns a new plan (free with plan_destroy),
 * or NULL when out of memory or when a screen size is not positive. */
struct plan *plan_build(const struct action *a, int screen_w, int screen_h);

/* Frees a plan and everything its steps own. Accepts NULL. */
void plan_destroy(struct plan *p);

/* What the first `sent` steps of p left held down, as input events that
 * let go of it: buttons first, then keys in the reverse order they went
 * down ({"events": [...]}, a new reference; NULL when nothing is held or
 * out of memory). A run cut short sends it, so that no key or button stays
 * down in the guest. Pure. */
#define PLAN_MAX_HELD 32
json_t *plan_release_held(const struct plan *p, size_t sent);

/* A short name of a step kind for logs ("input", "delay", "type_text", ...).
 * Never NULL. */
const char *plan_step_kind_name(enum plan_step_kind kind);

#endif
