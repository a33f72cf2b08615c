/* gateway/action/trajectory.h: each session's trajectory (traj_log.h),
 * kept in memory for the session's life as the action room's own state
 * for it: a sess_listener found with sess_find_listener (no field in
 * struct sess), made on the first step and freed when the session is
 * destroyed. The bounds are the gateway's (serve --trajectory-max-steps,
 * --trajectory-max-bytes); max steps 0 keeps none.
 *
 * The API's edge records what agents send (api_start_action: begin,
 * parsed, refused, or the run takes the step and ends it) and the
 * screenshots they fetch; GET .../trajectory takes an archive. Loop
 * thread only. */
#ifndef VITRINE_GATEWAY_TRAJECTORY_H
#define VITRINE_GATEWAY_TRAJECTORY_H

#include "gateway/action/traj_log.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct sess;
struct gw;
struct run_outcome;

#define TRAJECTORY_DEFAULT_MAX_STEPS 1000
#define TRAJECTORY_DEFAULT_MAX_BYTES (64u << 20)

/* Whether the gateway keeps trajectories. */
bool trajectory_enabled(const struct gw *gw);

/* A step for an action of text (len bytes) that arrived on s now over
 * channel: NULL when trajectories are off or out of memory (every
 * function below accepts a NULL step). */
struct traj_step *trajectory_begin(struct sess *s, const char *text, size_t len,
				   enum traj_channel channel);
/* The step's action did not run: status and error (borrowed: the answer's
 * JSON) are its result. Takes st. */
void trajectory_refused(struct sess *s, struct traj_step *st, int status, const json_t *error);
/* The step's run ended with out (borrowed). Takes st. */
void trajectory_ended(struct sess *s, struct traj_step *st, const struct run_outcome *out);
/* The step's run was cancelled (its client went away) before it ended.
 * Takes st. */
void trajectory_cancelled(struct sess *s, struct traj_step *st);
/* The agent fetched image (borrowed) with GET .../screenshot. */
void trajectory_screenshot(struct sess *s, struct display_image *image);

/* An archive of the session's trajectory as it is now (traj_archive_free),
 * or NULL when out of memory. A session with no step yet has an empty one. */
struct traj_archive *trajectory_archive(struct sess *s);

#endif
