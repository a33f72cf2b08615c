/* gateway/api/api_recipe.h: POST /v1/templates {"name", "recipe"}: a
 * template built from a recipe (template/recipe_build.h, docs/templates.md).
 * Its own file so the templates' routes (api_templates.c) only hand the
 * body over. The body's parser is pure (fuzzed: tests/fuzz/fuzz_recipe.c);
 * the handler runs on the loop. */
#ifndef VITRINE_GATEWAY_API_RECIPE_H
#define VITRINE_GATEWAY_API_RECIPE_H

#include "gateway/api/http.h"
#include "gateway/core/api_error.h"

#include <jansson.h>
#include <stddef.h>

/* Whether body is {"name", "recipe"}: 1 with name (name_len > 63) and
 * *recipe (a new reference: the caller's to drop; not yet checked, that is
 * recipe_parse's), 0 when it has no "recipe" (another kind of template), or
 * -EINVAL with *e filled (400) for a recipe body that is not exactly those
 * two fields or whose name is not a template's. Pure. */
int api_recipe_body_parse(const char *body, size_t len, char *name, size_t name_len,
			  json_t **recipe, struct api_error *e);

/* Answers POST /v1/templates for a recipe body: 202 and the build's JSON
 * while it builds, 200 and the template's JSON with "up_to_date": true when
 * the recipe and its base did not change, or the error. */
void api_recipe_create(struct http_req *r, const char *name, json_t *recipe);

#endif
