/* gateway/action/run.h: carrying out an action, or a batch of them in order
 * (batch.h), on a session, on the lws loop:
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
struct action_batch;
struct traj_step;

struct shot_opts {
	struct display_encode_opts enc; /* format, quality, max size, region */
	int quiet_ms; /* screen unchanged this long counts as settled */
	int timeout_ms; /* give up settling after this long */
	bool fresh; /* make sure the frame is current (a round trip to QEMU) */
	/* A viewer's thumbnail, not the agent's use of the session: it neither
	 * keeps the session from its idle timeout nor counts in usage or metrics. */
	bool preview;
};

/* What a run ends with. reply is the JSON answer of an action (NULL for a
 * plain screenshot); image the screenshot, if one was taken. On failure,
 * failed is set and err says why (image NULL); reply is then NULL but for a
 * batch ({"actions": [...]}), whose answer also says the index that failed
 * and what the actions before it answered. */
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

/* Starts a run of batch (stolen; NULL for a plain screenshot) on s: its
 * actions in order, settling once after the last. A batch refused at
 * element n (batch->refused) runs the n before it, then fails with 400 and
 * the refusal. done is
 * called exactly once, later, from the loop, unless run_cancel() comes first.
 * Returns the run, or NULL with *e filled (e.g. the session is not ready). */
struct run *run_start(struct sess *s, struct action_batch *batch, const struct shot_opts *shot,
		      run_done_fn done, void *ud, struct api_error *e);
/* Hands the run the trajectory step of its action (trajectory.h): it ends
 * the step with its outcome, or as cancelled. Accepts a NULL step. */
void run_record(struct run *r, struct traj_step *st);
/* Abandons a run without calling done. Accepts NULL. */
void run_cancel(struct run *r);
/* Re-examines every run under way (a mirror published something). A run
 * whose session stops its guest or is destroyed ends with 410 gone (it
 * listens to its session). */
void run_poke_all(void);

#endif
