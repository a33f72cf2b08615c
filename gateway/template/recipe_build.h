/* gateway/template/recipe_build.h: templates built from a recipe (recipe.h,
 * docs/templates.md). A build is a session started from the recipe's base
 * with its size and egress rules, the recipe's steps run in it one after
 * another as commands through the guest agent (guest/exec.h, each an agent
 * channel, watched: its output shows while it runs), the session saved as
 * a template the way POST /v1/templates {"from_session"} saves one
 * (template_build.h), then the session deleted. The template is
 * made under a staging name and renamed over NAME at the end, with the
 * recipe's hash in its template.json ("recipe_hash"): the same recipe on
 * the same base again is up to date and answers at once. A failed step
 * fails the build with that step's output and exit code and leaves no
 * session, guest or template behind.
 *
 * Every build has one owner, gw::recipes, and one place that frees it
 * (reap, once it ended and was forgotten or succeeded). Loop thread only;
 * the slow parts run in the guest (commands, whose ends the loop reaps), on
 * the session's jobs, the template build's job and a job of the build's
 * own for the last file moves (the gateway's bulk queue). */
#ifndef VITRINE_GATEWAY_RECIPE_BUILD_H
#define VITRINE_GATEWAY_RECIPE_BUILD_H

#include "gateway/core/api_error.h"
#include "gateway/core/gw.h"

#include <jansson.h>
#include <stdbool.h>

/* Starts building template name from recipe (the JSON object of the
 * body's "recipe", parsed by recipe_parse). Returns 0 (building: 202), 1
 * when template name was built from this very recipe on this very base
 * (up to date: nothing runs), or -errno with *e: 400 for a bad recipe or
 * name, 404 for an unknown base, 409 when the name is taken by a template
 * not made from a recipe, being built, in use, or the base is stale; 429 or
 * 503 as for a session. The build's session is project's (NULL or "": the
 * operator's), held to its quotas and seeing its templates. */
int recipe_build_start(struct gw *gw, const char *name, json_t *recipe, const char *project,
		       struct api_error *e);
/* {"name", "status": "building"|"failed", "error"?, "age_ms", "recipe_hash",
 * "session"?, "build": {"phase", "phase_ms", "elapsed_ms"}, "steps": [{"name",
 * "kind", "status", "ms"?, "exit_code"?, "stdout"?, "stderr"?, "stdout_bytes"?,
 * "stderr_bytes"?}], "save"?} for a recipe build the gateway knows of (a
 * successful one is forgotten: the template answers for itself), or NULL.
 * The running step's output is the one so far (its exec job's, copied). */
json_t *recipe_build_json(struct gw *gw, const char *name);
/* Appends every recipe build still known to array a. */
void recipe_build_list(struct gw *gw, json_t *a);
/* True while a recipe build of name runs. */
bool recipe_build_running(struct gw *gw, const char *name);
/* Forgets a failed build of name. */
void recipe_build_forget(struct gw *gw, const char *name);
/* Stops every build (shutdown): their sessions are destroyed with the
 * others; a finishing build goes once its job's done has come (the bulk
 * queue's drain, gw_stop, waits for it). */
void recipe_build_stop_all(struct gw *gw);
/* The recipe hash recorded in template name's template.json into out
 * (SHA256_HEX_LEN + 1 bytes): 0, -ENOENT when there is no such template,
 * -ENODATA when it was not made from a recipe. Reads one small file. */
int recipe_template_hash(const char *name, char *out, size_t len);

#endif
