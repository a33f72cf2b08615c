/* gateway/session/template_build.h: templates made through the API
 * (POST /v1/templates): each build boots a guest and saves it
 * (vmm_template_create) on its own thread; the gateway keeps the builds
 * under way and the ones that failed, so GET /v1/templates/NAME can tell
 * "building" and "failed" (with why) from a saved template. Loop thread
 * only, apart from the build threads' own work. */
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
/* {"name", "status": "building"|"failed", "error"?, "age_ms"} for a build
 * the gateway knows of (finished builds that succeeded are forgotten: the
 * template itself answers), or NULL. */
json_t *template_build_json(struct gw *gw, const char *name);
/* Appends every build still known to array a. */
void template_build_list(struct gw *gw, json_t *a);
/* Forgets a failed build of name (when its template is deleted). */
void template_build_forget(struct gw *gw, const char *name);
/* Cancels every build and waits up to timeout_ms for their threads. */
void template_build_stop_all(struct gw *gw, int timeout_ms);

#endif
