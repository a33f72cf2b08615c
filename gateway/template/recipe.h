/* gateway/template/recipe.h: a template's recipe (POST /v1/templates
 * {"name", "recipe"}, `vitrine template build -f FILE`; docs/templates.md):
 * the base to start from, the session's size and egress rules during the
 * build, and the steps to run in the guest (files copied in, commands), as
 * one small JSON object. Exists apart from the build that runs it
 * (recipe_build.h) so the untrusted text is read by a pure function that is
 * unit-tested and fuzzed: each step becomes the exec body (guest/exec.h) that
 * runs it, checked here by exec_parse, and the base and size become the
 * session's request, checked by session_request_parse.
 *
 * Pure; any thread. */
#ifndef VITRINE_GATEWAY_RECIPE_H
#define VITRINE_GATEWAY_RECIPE_H

#include "common/sha256.h"
#include "gateway/core/api_error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define RECIPE_MAX_STEPS 64
#define RECIPE_STEP_NAME_MAX 63
#define RECIPE_DEFAULT_MODE 0644
/* A template built from a recipe is staged under NAME RECIPE_STAGE_SUFFIX
 * (template names are at most 63 bytes), so its name is at most this. */
#define RECIPE_NAME_MAX 55
#define RECIPE_STAGE_SUFFIX "--next"

enum recipe_step_kind { RECIPE_STEP_COPY, RECIPE_STEP_RUN };

struct recipe_step {
	enum recipe_step_kind kind;
	char name[RECIPE_STEP_NAME_MAX + 1]; /* given, else "copy PATH" / "run" + index */
	json_t *exec; /* owned: the body exec_parse takes to run this step */
};

struct recipe {
	json_t *session; /* owned: the body session_request_parse takes (base, size, egress) */
	int n_steps;
	struct recipe_step steps[RECIPE_MAX_STEPS];
	char *canonical; /* owned: the recipe as compact JSON with sorted keys (hashed) */
};

/* Parses recipe (a JSON object; unknown fields are errors) into *out.
 * Returns 0, or -EINVAL with *e filled (400; a field's name in the
 * message), or -ENOMEM (500). A copy step's "src" (a host path) is the CLI's
 * to read: refused here. *out holds nothing on failure. */
int recipe_parse(json_t *recipe, struct recipe *out, struct api_error *e);
/* Frees what r owns; accepts a zeroed recipe. */
void recipe_free(struct recipe *r);
/* The recipe's hash over its canonical text and base_id (what the base is:
 * its image's build, its template's making), as hex. This function can't
 * fail. */
void recipe_hash(const struct recipe *r, const char *base_id, char out[SHA256_HEX_LEN + 1]);
/* The base's name, and whether it is a template (else an image). */
const char *recipe_base(const struct recipe *r, bool *is_template);

#endif
