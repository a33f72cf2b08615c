/* gateway/cli/gw_start.h: `vitrine serve` once its command line is read:
 * gw_start makes the daemon from its configuration in one straight
 * sequence, gw_serve runs the loop until SIGTERM or SIGINT and then does
 * with the sessions what --on-stop says, and gw_stop undoes gw_start. The
 * one teardown: a start that fails part way goes through gw_stop too.
 * All three run on the thread that becomes the lws service thread. */
#ifndef VITRINE_GATEWAY_GW_START_H
#define VITRINE_GATEWAY_GW_START_H

#include "gateway/cli/serve_config.h"
#include "gateway/core/gw.h"

#include <stddef.h>

/* Fills *gw from cfg, the environment and the host; opens the state dir,
 * the key, the listening sockets and the encoder threads; takes SIGTERM
 * and SIGINT; prints the "listening" line. Returns 0, or -1 with why in
 * err (a sentence for "vitrine serve: %s") after gw_stop(gw). */
int gw_start(struct gw *gw, const struct serve_config *cfg, char *err, size_t errlen);

/* Adopts the guests an earlier gateway left, starts --demo's session,
 * serves until a stop signal, then ends the recipe builds, the sessions
 * (--on-stop) and the template builds. Returns the exit status: 0, or 1
 * when the demo session could not start (said on stderr). */
int gw_serve(struct gw *gw, const struct serve_config *cfg);

/* Waits for the threads sessions started, then ends what gw_start made,
 * in the reverse order. Safe on a gw that gw_start left part way. */
void gw_stop(struct gw *gw);

#endif
