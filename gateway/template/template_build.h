/* gateway/template/template_build.h: templates made through the API
 * (POST /v1/templates): each build boots a guest and saves it
 * (vmm_template_create) as a job of the gateway's bulk queue, or, for one
 * from a running session, waits for the session's job to save its state (a
 * checkpoint, the session running on) and makes the template of it as such
 * a job (vmm_template_from_checkpoint); the gateway keeps the builds
 * under way and the ones that failed, so GET /v1/templates/NAME can tell
 * "building" and "failed" (with why) from a saved template. Loop thread
 * only, apart from the jobs' own work. */
#ifndef VITRINE_GATEWAY_TEMPLATE_BUILD_H
#define VITRINE_GATEWAY_TEMPLATE_BUILD_H

#include "gateway/core/gw.h"
#include "gateway/session/session_spec.h"

#include <jansson.h>

/* Starts building template name from req. Returns 0, or -errno with *e:
 * 409 when it exists or is being built, 404 for an unknown image, 400 for
 * bad parameters or limits, 503 over the memory budget. */
int template_build_start(struct gw *gw, const char *name, const struct session_request *req,
			 struct api_error *e);
/* Starts making template name from session s: its state is saved by a job
 * of the session's (sess_save_template), then the template is made of it.
 * Returns 0, or -errno with *e: 409 when the name is taken or the session
 * busy or not running, 503 over the memory budget. */
struct sess;
int template_build_from_session(struct gw *gw, const char *name, struct sess *s,
				struct api_error *e);
/* The session's job for template name has ended: with ckpt (its state,
 * which the build takes on success and removes once done), or failed with
 * err (ckpt NULL). Returns 0 when the build took ckpt (or noted err),
 * -ENOENT when no build waits for it (deleted, or the gateway is stopping:
 * ckpt stays the caller's), or -EAGAIN (the build failed; ckpt stays the
 * caller's). */
int template_build_saved(struct gw *gw, const char *name, const char *ckpt, const char *err);
/* True when a build under way makes a template from one restored from
 * name (its disk will be backed by name's): who says which, for a 409. */
bool template_build_uses(struct gw *gw, const char *name, char *who, size_t len);
/* {"name", "status": "building"|"failed", "error"?, "age_ms", "build": its
 * phases (progress.h, docs/api.md), "from_session"?, "parent"?} for a build
 * the gateway knows of (finished builds that succeeded are forgotten: the
 * template itself answers), or NULL. */
json_t *template_build_json(struct gw *gw, const char *name);
/* Appends every build still known to array a. */
void template_build_list(struct gw *gw, json_t *a);
/* Forgets a failed build of name (when its template is deleted). */
void template_build_forget(struct gw *gw, const char *name);
/* Cancels every build: those without a job go now, the others once their
 * job's done has come (the bulk queue's drain, gw_stop, waits for it). */
void template_build_stop_all(struct gw *gw);

#endif
