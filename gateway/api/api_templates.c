/* gateway/api/api_templates.c: the template routes: list, inspect, create (a
 * build on a thread, or a running session saved: template_build.h), delete
 * (refused while a session or another template depends on the template),
 * and its warm pool's size (PATCH: session/pool.h). */
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/api/api_recipe.h"
#include "gateway/api/bodies.h"
#include "gateway/session/pool.h"
#include "gateway/session/session.h"
#include "gateway/session/session_quota.h"
#include "gateway/template/recipe_build.h"
#include "gateway/template/template_build.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* What t and the templates under its disk take: its own bytes and those
 * of each template its disk's backing chain goes through (the image's
 * rootfs not counted). A broken chain counts as far as it goes. */
static long long chain_bytes(const struct vmm_template *t)
{
	struct vmm_template cur = *t;
	long long sum = vmm_template_bytes(t->dir);

	for (int i = 0; i < 64 && cur.backing[0]; i++) {
		char name[sizeof(cur.backing)], err[256];
		int rc;

		snprintf(name, sizeof(name), "%s", cur.backing);
		rc = vmm_template_load(name, &cur, err, sizeof(err));
		if (rc < 0 && rc != -ESTALE)
			break;
		sum += vmm_template_bytes(cur.dir);
	}
	return sum;
}

/* A saved template: status "ready", or "stale" (with why) when its image
 * was rebuilt since; its lineage (snapshot.h) and size: size_bytes its
 * own files, chain_bytes with the templates its disk is backed by. */
json_t *api_template_json(const char *name, const struct vmm_template *t, const char *stale)
{
	json_t *j =
		json_pack("{s:s, s:s, s:s*, s:s, s:i, s:i, s:i, s:i, s:s, s:I, s:s*, s:s*, s:i, "
			  "s:s*, s:I}",
			  "name", name, "status", stale ? "stale" : "ready", "error", stale,
			  "image", t->image, "width", t->width, "height", t->height, "vcpus",
			  t->vcpus, "memory_mib", t->memory_mib, "url", t->url, "created_at",
			  (json_int_t)t->created_at, "parent", t->parent[0] ? t->parent : NULL,
			  "backing", t->backing[0] ? t->backing : NULL, "depth", t->depth,
			  "from_session", t->from_session[0] ? t->from_session : NULL, "size_bytes",
			  (json_int_t)vmm_template_bytes(t->dir));

	if (j)
		json_object_set_new(j, "chain_bytes", json_integer(chain_bytes(t)));
	return j;
}

/* Who keeps template name from being deleted, into who: a session
 * restored from it (or forked from one), a template whose disk it backs,
 * a save under way from a session restored from it. False for nobody. */
bool api_template_user(struct gw *gw, const char *name, char *who, size_t len)
{
	bool found = false;
	DIR *d;
	struct dirent *e;

	for (struct sess *s = sess_first(gw); s; s = sess_next(s))
		if (!strcmp(sess_template(s), name)) {
			snprintf(who, len, "session %s runs from this template: delete it first",
				 sess_id(s));
			return true;
		}
	d = opendir(vmm_templates_dir());
	while (d && !found && (e = readdir(d))) {
		struct vmm_template t;
		char err[512];
		int rc = e->d_name[0] == '.' ? -ENOENT
					     : vmm_template_load(e->d_name, &t, err, sizeof(err));

		if ((rc == 0 || rc == -ESTALE) && !strcmp(t.backing, name)) {
			snprintf(who, len,
				 "template %s is made on this one (its disk's backing file): "
				 "delete it first",
				 e->d_name);
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found || template_build_uses(gw, name, who, len);
}

/* Whether a template called name is there, or being built. */
static bool template_exists(struct gw *gw, const char *name)
{
	char path[PATH_MAX];
	json_t *build = template_build_json(gw, name);
	struct stat st;

	if (!build)
		build = recipe_build_json(gw, name);
	json_decref(build);
	snprintf(path, sizeof(path), "%s/%s/template.json", vmm_templates_dir(), name);
	return build || stat(path, &st) == 0;
}

bool api_template_visible(struct http_req *r, const char *name)
{
	if (project_sees_template(&r->gw->projects, api_project(r), name))
		return true;
	http_reply_error(r, 404, "unknown_template", "no such template");
	return false;
}

bool api_template_own(struct http_req *r, const char *name)
{
	const char *own = api_project(r);
	const struct project *owner;
	char msg[160];

	if (!own)
		return true;
	owner = project_of_template(&r->gw->projects, name);
	if (owner && !strcmp(owner->name, own))
		return true;
	if (!api_template_visible(r, name))
		return false;
	if (!template_exists(r->gw, name)) {
		http_reply_error(r, 404, "unknown_template", "no such template");
		return false;
	}
	snprintf(msg, sizeof(msg),
		 "a project's key changes its own templates alone, named %.32s_...: this one is "
		 "the operator's",
		 own);
	http_reply_error(r, 403, "forbidden", msg);
	return false;
}

/* Whether r's credential may make a template called name: a project's
 * templates are named "PROJECT_..." (400 otherwise). */
static bool name_allowed(struct http_req *r, const char *name)
{
	const char *own = api_project(r);
	const struct project *owner = project_of_template(&r->gw->projects, name);
	char msg[160];

	if (!own || (owner && !strcmp(owner->name, own)))
		return true;
	snprintf(msg, sizeof(msg), "a project's templates are named %.32s_... (its name, '_')",
		 own);
	http_reply_error(r, 400, "invalid_argument", msg);
	return false;
}

void api_list_templates(struct http_req *r)
{
	const char *own;

	json_t *arr = json_array();
	DIR *d;
	struct dirent *e;

	if (!api_authorise_route(r)) {
		json_decref(arr);
		return;
	}
	own = api_project(r);
	d = opendir(vmm_templates_dir());
	while (d && (e = readdir(d))) {
		struct vmm_template t;
		char err[512];

		int rc = e->d_name[0] == '.' ||
					 !project_sees_template(&r->gw->projects, own, e->d_name)
				 ? -ENOENT
				 : vmm_template_load(e->d_name, &t, err, sizeof(err));

		if (rc == 0 || rc == -ESTALE)
			json_array_append_new(arr,
					      api_template_json(e->d_name, &t, rc ? err : NULL));
	}
	if (d)
		closedir(d);
	template_build_list(r->gw, arr);
	recipe_build_list(r->gw, arr);
	if (own) { /* the builds of others' templates out */
		size_t i = json_array_size(arr);

		while (i-- > 0)
			if (!project_sees_template(&r->gw->projects, own,
						   json_string_value(
							   json_object_get(json_array_get(arr, i),
									   "name"))))
				json_array_remove(arr, i);
	}
	http_reply_json(r, 200, json_pack("{s:o}", "templates", arr));
}

/* 200 with t's JSON and its warm pool (session/pool.h), if it has one. */
static void reply_template(struct http_req *r, const struct vmm_template *t, const char *stale)
{
	json_t *j = api_template_json(r->route.id, t, stale), *pool;

	if (j && (pool = sess_pool_json(r->gw, r->route.id)))
		json_object_set_new(j, "pool", pool);
	http_reply_json(r, 200, j);
}

void api_get_template(struct http_req *r)
{
	struct vmm_template t;
	char err[1024];
	int rc;

	json_t *build;

	if (!api_authorise_route(r) || !api_template_visible(r, r->route.id))
		return;
	build = template_build_json(r->gw, r->route.id);
	if (!build)
		build = recipe_build_json(r->gw, r->route.id);
	if (build) {
		http_reply_json(r, 200, build);
		return;
	}
	rc = vmm_template_load(r->route.id, &t, err, sizeof(err));
	if (rc == -ENOENT)
		http_reply_error(r, 404, "unknown_template", "no such template");
	else if (rc < 0 && rc != -ESTALE)
		http_reply_error(r, 500, "internal", err);
	else
		reply_template(r, &t, rc ? err : NULL);
}

void api_patch_template(struct http_req *r)
{
	struct vmm_template t;
	struct api_error e;
	char err[1024];
	int rc, n;

	if (!api_authorise_route(r) || !api_template_visible(r, r->route.id))
		return;
	if (api_template_patch_parse(r->body, r->body_len, POOL_SIZE_MAX, &n, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	rc = vmm_template_load(r->route.id, &t, err, sizeof(err));
	if (rc == -ENOENT) {
		http_reply_error(r, 404, "unknown_template", "no such template");
		return;
	}
	if (rc < 0) { /* a stale template's members could not be restored */
		http_reply_error(r, rc == -ESTALE ? 409 : 500,
				 rc == -ESTALE ? "template_stale" : "internal", err);
		return;
	}
	if (sess_pool_set(r->gw, r->route.id, n, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	api_audit_set(r, "pool", json_integer(n));
	reply_template(r, &t, NULL);
}

int api_template_delete(struct gw *gw, const char *name, struct api_error *e)
{
	char err[1024];
	int rc;

	json_t *build;

	if (api_template_user(gw, name, err, sizeof(err)))
		return api_error_set(e, 409, "template_in_use", err);
	build = template_build_json(gw, name);
	if (build && !strcmp(json_string_value(json_object_get(build, "status")), "building")) {
		json_decref(build);
		return api_error_set(e, 409, "template_building", "that template is being built");
	}
	json_decref(build);
	if (recipe_build_running(gw, name))
		return api_error_set(e, 409, "template_building", "that template is being built");
	recipe_build_forget(gw, name);
	template_build_forget(gw, name);
	sess_pool_forget(gw, name); /* its members restore from it */
	rc = vmm_template_remove(name, err, sizeof(err));
	if (rc == -ENOENT)
		return api_error_set(e, 404, "unknown_template", "no such template");
	if (rc < 0)
		return api_error_set(e, rc == -EINVAL ? 400 : 500,
				     rc == -EINVAL ? "invalid_argument" : "internal", err);
	return 0;
}

void api_delete_template(struct http_req *r)
{
	struct api_error e;

	if (!api_authorise_route(r) || !api_template_own(r, r->route.id))
		return;
	if (api_template_delete(r->gw, r->route.id, &e) < 0)
		http_reply_api_error(r, &e);
	else
		http_reply_json(r, 200, json_pack("{s:s, s:b}", "name", r->route.id, "deleted", 1));
}

/* A build writes a template: refused (429) when r's project is at its disk
 * quota. (A save from a session is held to it by sess_save_template.) */
static bool quota_allows(struct http_req *r)
{
	struct quota_ask ask = { .disk = true };
	struct api_error e;

	if (sess_check_quota(r->gw, api_project(r), &ask, &e) == 0)
		return true;
	http_reply_api_error(r, &e);
	return false;
}

/* POST /v1/templates {"name", "from_session"}: 202 once the session's
 * save has started (it is busy "saving" meanwhile); the template is
 * "building" until it is made. */
static void create_from_session(struct http_req *r, const char *name, const char *id)
{
	struct sess *s = sess_find(r->gw, id);
	struct api_error e;
	json_t *j;

	if (s && !sess_in_project(s, api_project(r)))
		s = NULL; /* another project's: as if there were none */
	if (!s) {
		http_reply_error(r, 404, "not_found", "no such session");
		return;
	}
	if (template_build_from_session(r->gw, name, s, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	j = template_build_json(r->gw, name);
	http_reply_json(r, 202,
			j ? j : json_pack("{s:s, s:s}", "name", name, "status", "building"));
}

void api_create_template(struct http_req *r)
{
	struct session_request req;
	struct api_error e;
	char name[72], id[SESS_ID_MAX];
	json_t *j, *recipe;
	int rc;

	if (!api_authorise_route(r))
		return;
	rc = api_recipe_body_parse(r->body, r->body_len, name, sizeof(name), &recipe, &e);
	if (rc > 0 && (!name_allowed(r, name) || !quota_allows(r))) {
		json_decref(recipe);
		return;
	}
	if (rc != 0) {
		if (rc > 0)
			api_recipe_create(r, name, recipe);
		else
			http_reply_api_error(r, &e);
		json_decref(recipe);
		return;
	}
	rc = api_template_save_parse(r->body, r->body_len, name, sizeof(name), id, sizeof(id), &e);
	if (rc > 0 && !name_allowed(r, name))
		return;
	if (rc != 0) {
		if (rc > 0)
			create_from_session(r, name, id);
		else
			http_reply_api_error(r, &e);
		return;
	}
	if (template_request_parse(r->body ? r->body : "", r->body_len, name, sizeof(name), &req,
				   &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	if (!name_allowed(r, name) || !quota_allows(r)) {
		session_request_free(&req);
		return;
	}
	if (template_build_start(r->gw, name, &req, &e) < 0) {
		session_request_free(&req);
		http_reply_api_error(r, &e);
		return;
	}
	session_request_free(&req);
	j = template_build_json(r->gw, name);
	http_reply_json(r, 202,
			j ? j : json_pack("{s:s, s:s}", "name", name, "status", "building"));
}
