/* gateway/api/api_templates.c: the template routes: list, inspect, create (a
 * build on a thread, or a running session saved: template_build.h), delete
 * (refused while a session or another template depends on the template). */
#include "gateway/api/api_int.h"
#include "gateway/api/api_recipe.h"
#include "gateway/api/bodies.h"
#include "gateway/session/session.h"
#include "gateway/template/recipe_build.h"
#include "gateway/template/template_build.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The disk space t's own files take (blocks allocated: its RAM file has
 * holes where the guest's memory was zero). A handful of stat calls. */
static long long template_bytes(const struct vmm_template *t)
{
	static const char *const files[] = { "ram",	  "state",	"disk.qcow2",
					     "page.html", "screen.ppm", "template.json" };
	long long sum = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX + 16];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", t->dir, files[i]);
		if (stat(path, &st) == 0)
			sum += (long long)st.st_blocks * 512;
	}
	return sum;
}

/* What t and the templates under its disk take: its own bytes and those
 * of each template its disk's backing chain goes through (the image's
 * rootfs not counted). A broken chain counts as far as it goes. */
static long long chain_bytes(const struct vmm_template *t)
{
	struct vmm_template cur = *t;
	long long sum = template_bytes(t);

	for (int i = 0; i < 64 && cur.backing[0]; i++) {
		char name[sizeof(cur.backing)], err[256];
		int rc;

		snprintf(name, sizeof(name), "%s", cur.backing);
		rc = vmm_template_load(name, &cur, err, sizeof(err));
		if (rc < 0 && rc != -ESTALE)
			break;
		sum += template_bytes(&cur);
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
			  (json_int_t)template_bytes(t));

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

void api_list_templates(struct http_req *r)
{
	json_t *arr = json_array();
	DIR *d;
	struct dirent *e;

	if (!api_authorise_route(r)) {
		json_decref(arr);
		return;
	}
	d = opendir(vmm_templates_dir());
	while (d && (e = readdir(d))) {
		struct vmm_template t;
		char err[512];

		int rc = e->d_name[0] == '.' ? -ENOENT
					     : vmm_template_load(e->d_name, &t, err, sizeof(err));

		if (rc == 0 || rc == -ESTALE)
			json_array_append_new(arr,
					      api_template_json(e->d_name, &t, rc ? err : NULL));
	}
	if (d)
		closedir(d);
	template_build_list(r->gw, arr);
	recipe_build_list(r->gw, arr);
	http_reply_json(r, 200, json_pack("{s:o}", "templates", arr));
}

void api_get_template(struct http_req *r)
{
	struct vmm_template t;
	char err[1024];
	int rc;

	json_t *build;

	if (!api_authorise_route(r))
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
		http_reply_json(r, 200, api_template_json(r->route.id, &t, rc ? err : NULL));
}

void api_delete_template(struct http_req *r)
{
	char err[1024];
	int rc;

	json_t *build;

	if (!api_authorise_route(r))
		return;
	if (api_template_user(r->gw, r->route.id, err, sizeof(err))) {
		http_reply_error(r, 409, "template_in_use", err);
		return;
	}
	build = template_build_json(r->gw, r->route.id);
	if (build && !strcmp(json_string_value(json_object_get(build, "status")), "building")) {
		json_decref(build);
		http_reply_error(r, 409, "template_building", "that template is being built");
		return;
	}
	json_decref(build);
	if (recipe_build_running(r->gw, r->route.id)) {
		http_reply_error(r, 409, "template_building", "that template is being built");
		return;
	}
	recipe_build_forget(r->gw, r->route.id);
	template_build_forget(r->gw, r->route.id);
	rc = vmm_template_remove(r->route.id, err, sizeof(err));
	if (rc == -ENOENT)
		http_reply_error(r, 404, "unknown_template", "no such template");
	else if (rc < 0)
		http_reply_error(r, rc == -EINVAL ? 400 : 500,
				 rc == -EINVAL ? "invalid_argument" : "internal", err);
	else
		http_reply_json(r, 200, json_pack("{s:s, s:b}", "name", r->route.id, "deleted", 1));
}

/* POST /v1/templates {"name", "from_session"}: 202 once the session's
 * save has started (it is busy "saving" meanwhile); the template is
 * "building" until it is made. */
static void create_from_session(struct http_req *r, const char *name, const char *id)
{
	struct sess *s = sess_find(r->gw, id);
	struct api_error e;
	json_t *j;

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
	if (rc != 0) {
		if (rc > 0)
			api_recipe_create(r, name, recipe);
		else
			http_reply_api_error(r, &e);
		json_decref(recipe);
		return;
	}
	rc = api_template_save_parse(r->body, r->body_len, name, sizeof(name), id, sizeof(id), &e);
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
