/* gateway/action/run.h: carrying out one action on a session, on the lws loop:
 * the plan's input events go to QEMU over QMP, its delays are timers, and
 * when a screenshot is wanted the screen is watched through the mirror
 * until it has settled (fresh round trips past QEMU's idle back-off, so a
 * quiet screen is really quiet). Also serves plain screenshots (no action).
 * A run never blocks the loop. */
#ifndef VITRINE_GATEWAY_RUN_H
#define VITRINE_GATEWAY_RUN_H

#include "display/encode.h"
#include "gateway/action/actions.h"
#include "gateway/core/api_error.h"

#include <jansson.h>
#include <stdbool.h>

struct sess;
struct run;

struct shot_opts {
	struct display_encode_opts enc; /* format, quality, max size, region */
	int quiet_ms; /* screen unchanged this long counts as settled */
	int timeout_ms; /* give up settling after this long */
	bool fresh; /* make sure the frame is current (a round trip to QEMU) */
};

/* What a run ends with. reply is the JSON answer of an action (NULL for a
 * plain screenshot); image the screenshot, if one was taken. On failure,
 * failed is set and err says why (reply and image NULL). */
struct run_outcome {
	bool failed;
	struct api_error err;
	json_t *reply; /* owned by the callback (decref it) */
	struct display_image *image; /* a reference owned by the callback */
	bool settled;
	int waited_ms;
};

typedef void (*run_done_fn)(void *ud, struct run_outcome *out);

/* Defaults: JPEG q80 full size, quiet 300 ms, timeout 5 s, fresh. */
void shot_opts_default(struct shot_opts *o);
/* Reads {format, quality, width, height, quiet_ms, timeout_ms} (all
 * optional; unknown fields are errors) over o. Returns 0 or -EINVAL with *e. */
int shot_opts_parse(const json_t *j, struct shot_opts *o, struct api_error *e);

/* Starts a run of action (stolen; NULL for a plain screenshot) on s. done is
 * called exactly once, later, from the loop, unless run_cancel() comes first.
 * Returns the run, or NULL with *e filled (e.g. the session is not ready). */
struct run *run_start(struct sess *s, struct action *action, const struct shot_opts *shot,
		      run_done_fn done, void *ud, struct api_error *e);
/* Abandons a run without calling done. Accepts NULL. */
void run_cancel(struct run *r);
/* Waits up to timeout_ms for the threads that type through the guest agent
 * to end (they wake the lws context: it must outlive them). Returns true
 * when none is left. */
bool run_wait_threads(int timeout_ms);
/* Re-examines every run under way (a mirror published something). A run
 * whose session stops its guest or is destroyed ends with 410 gone (it
 * listens to its session). */
void run_poke_all(void);

#endif
