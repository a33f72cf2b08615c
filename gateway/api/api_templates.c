/* gateway/api_templates.c: the template routes: list, inspect, create (a
 * build on a thread, template_build.h), delete (refused while a session
 * depends on the template). */
#include "gateway/api/api_int.h"
#include "gateway/session/session.h"
#include "gateway/session/template_build.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* A saved template: status "ready", or "stale" (with why) when its image
 * was rebuilt since. */
static json_t *template_json(const char *name, const struct vmm_template *t, const char *stale)
{
	return json_pack("{s:s, s:s, s:s*, s:s, s:i, s:i, s:i, s:i, s:s, s:I}", "name", name,
			 "status", stale ? "stale" : "ready", "error", stale, "image", t->image,
			 "width", t->width, "height", t->height, "vcpus", t->vcpus, "memory_mib",
			 t->memory_mib, "url", t->url, "created_at", (json_int_t)t->created_at);
}

void api_list_templates(struct http_req *r)
{
	json_t *arr = json_array();
	DIR *d;
	struct dirent *e;

	if (!api_authorise(r, NULL, AUTH_R_ADMIN)) {
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
			json_array_append_new(arr, template_json(e->d_name, &t, rc ? err : NULL));
	}
	if (d)
		closedir(d);
	template_build_list(r->gw, arr);
	http_reply_json(r, 200, json_pack("{s:o}", "templates", arr));
}

void api_get_template(struct http_req *r)
{
	struct vmm_template t;
	char err[1024];
	int rc;

	json_t *build;

	if (!api_authorise(r, NULL, AUTH_R_ADMIN))
		return;
	build = template_build_json(r->gw, r->route.id);
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
		http_reply_json(r, 200, template_json(r->route.id, &t, rc ? err : NULL));
}

void api_delete_template(struct http_req *r)
{
	char err[1024];
	int rc;

	json_t *build;

	if (!api_authorise(r, NULL, AUTH_R_ADMIN))
		return;
	for (struct sess *s = r->gw->sessions; s; s = s->next)
		if (!strcmp(s->template_name, r->route.id)) {
			snprintf(err, sizeof(err),
				 "session %s runs from this template: delete it first", s->id);
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

void api_create_template(struct http_req *r)
{
	struct session_request req;
	struct api_error e;
	char name[72];
	json_t *j;

	if (!api_authorise(r, NULL, AUTH_R_ADMIN))
		return;
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
