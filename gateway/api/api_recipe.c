/* gateway/api/api_recipe.c: see api_recipe.h. */
#include "gateway/api/api_recipe.h"

#include "gateway/api/api_int.h"
#include "gateway/api/bodies.h"
#include "gateway/template/recipe_build.h"
#include "vmm-qemu/snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int api_recipe_body_parse(const char *body, size_t len, char *name, size_t name_len,
			  json_t **recipe, struct api_error *e)
{
	json_t *j = api_body_object(body, len, e), *n, *rec;
	int rc = 1;

	*recipe = NULL;
	if (!j)
		return -EINVAL;
	n = json_object_get(j, "name");
	rec = json_object_get(j, "recipe");
	if (!rec) {
		rc = 0;
	} else if (json_object_size(j) != (n ? 2u : 1u)) {
		rc = api_error_set(e, 400, "invalid_argument",
				   "a template from a recipe takes only 'name' and 'recipe'");
	} else if (!json_is_string(n) || strlen(json_string_value(n)) != json_string_length(n) ||
		   !vmm_template_name_ok(json_string_value(n)) ||
		   json_string_length(n) >= name_len) {
		rc = api_error_set(e, 400, "invalid_argument",
				   "name must be 1-55 of a-z, 0-9, '_', '-'");
	} else if (!json_is_object(rec)) {
		rc = api_error_set(e, 400, "invalid_argument", "recipe must be a JSON object");
	} else {
		snprintf(name, name_len, "%s", json_string_value(n));
		*recipe = json_incref(rec);
	}
	json_decref(j);
	return rc;
}

void api_recipe_create(struct http_req *r, const char *name, json_t *recipe)
{
	struct api_error e;
	struct vmm_template t;
	char err[1024];
	json_t *j;
	int rc = recipe_build_start(r->gw, name, recipe, api_project(r), &e);

	if (rc < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	if (rc == 0) {
		j = recipe_build_json(r->gw, name);
		http_reply_json(r, 202,
				j ? j
				  : json_pack("{s:s, s:s}", "name", name, "status", "building"));
		return;
	}
	rc = vmm_template_load(name, &t, err, sizeof(err));
	j = rc == 0 ? api_template_json(name, &t, NULL) : NULL;
	if (!j) {
		http_reply_error(r, 500, "internal", rc < 0 ? err : "out of memory");
		return;
	}
	json_object_set_new(j, "up_to_date", json_true());
	{
		char hash[80];

		if (recipe_template_hash(name, hash, sizeof(hash)) == 0)
			json_object_set_new(j, "recipe_hash", json_string(hash));
	}
	http_reply_json(r, 200, j);
}
