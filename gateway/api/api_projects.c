/* gateway/api/api_projects.c: the routes of projects, the gateway's tenants
 * (core/project_table.h; docs/api.md "Projects"): GET|POST /v1/projects
 * (admin) list and make them, GET /v1/projects/{name} shows one with what
 * it holds (also to its own keys), PATCH changes its quota or root right,
 * DELETE removes an empty one with its keys. Every change is on disk before
 * it is answered, and rolled back when it cannot be written. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/core/project_table.h"
#include "gateway/session/session.h"
#include "gateway/session/session_quota.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* p as the API shows it, with what it holds now and its keys' count. */
static json_t *project_full_json(struct gw *gw, const struct project *p)
{
	struct project_tally t;
	json_t *j = project_json(p);
	int keys = 0;

	sess_project_tally(gw, p->name, true, &t);
	for (int i = 0; i < gw->api_keys.n; i++)
		keys += !strcmp(gw->api_keys.k[i].project, p->name);
	if (j) {
		json_object_set_new(j, "usage", project_tally_json(&t));
		json_object_set_new(j, "keys", json_integer(keys));
	}
	return j;
}

/* The first template named "NAME_...", into who; false for none. */
static bool has_templates(const char *name, char *who, size_t len)
{
	size_t n = strlen(name);
	struct dirent *e;
	DIR *d = opendir(vmm_templates_dir());
	bool found = false;

	while (d && !found && (e = readdir(d)))
		if (!strncmp(e->d_name, name, n) && e->d_name[n] == '_') {
			snprintf(who, len, "%s", e->d_name);
			found = true;
		}
	if (d)
		closedir(d);
	return found;
}

/* Writes the table; on failure answers 500 and returns false (the caller
 * rolls back). */
static bool saved(struct http_req *r, const char *what)
{
	char err[PATH_MAX + 64];

	if (projects_save(&r->gw->projects, err, sizeof(err)) == 0)
		return true;
	log_error("projects", "%s", err);
	http_reply_error(r, 500, "internal", what);
	return false;
}

static void list(struct http_req *r)
{
	json_t *a = json_array();

	for (int i = 0; a && i < r->gw->projects.n; i++)
		json_array_append_new(a, project_full_json(r->gw, &r->gw->projects.p[i]));
	http_reply_json(r, 200, json_pack("{s:o}", "projects", a ? a : json_array()));
}

static void create(struct http_req *r)
{
	struct projects *t = &r->gw->projects;
	char err[256], tpl[300];
	struct project p;
	int rc;

	if (project_body_parse(r->body, r->body_len, true, &p, err, sizeof(err)) < 0) {
		http_reply_error(r, 400, "invalid_argument", err);
		return;
	}
	if (projects_find(t, p.name)) {
		http_reply_error(r, 409, "project_exists", "a project has that name already");
		return;
	}
	/* Templates are a project's by their names' prefix: one made before
	 * the project would change hands. */
	if (has_templates(p.name, tpl, sizeof(tpl))) {
		snprintf(err, sizeof(err),
			 "template %.64s would belong to the project (a project's templates are "
			 "named NAME_...): rename or delete it first",
			 tpl);
		http_reply_error(r, 409, "project_name_taken", err);
		return;
	}
	p.created_unix_ms = fs_unix_ms();
	if ((rc = projects_add(t, &p)) < 0) {
		http_reply_error(r, 409, "too_many_projects",
				 "there are too many projects already");
		return;
	}
	if (!saved(r, "the project could not be saved")) {
		projects_remove(t, p.name);
		return;
	}
	/* keys left by a project of this name whose removal was not recorded */
	if (api_keys_remove_project(&r->gw->api_keys, p.name) > 0 &&
	    api_keys_save(&r->gw->api_keys, err, sizeof(err)) < 0)
		log_error("projects", "%s", err);
	log_info("projects", "%s made", p.name);
	api_audit_set(r, "project", json_string(p.name));
	http_reply_json(r, 201, project_full_json(r->gw, &p));
}

static void update(struct http_req *r, struct project *p)
{
	struct project before = *p;
	char err[256];

	if (project_body_parse(r->body, r->body_len, false, p, err, sizeof(err)) < 0) {
		http_reply_error(r, 400, "invalid_argument", err);
		return;
	}
	if (!saved(r, "the change could not be saved")) {
		*p = before;
		return;
	}
	api_audit_set(r, "project", json_string(p->name));
	http_reply_json(r, 200, project_full_json(r->gw, p));
}

static void delete (struct http_req *r, struct project *p)
{
	struct projects *t = &r->gw->projects;
	struct project gone = *p;
	char err[PATH_MAX + 64], tpl[300];
	int keys;

	for (struct sess *s = sess_first(r->gw); s; s = sess_next(s))
		if (!strcmp(sess_project(s), p->name)) {
			snprintf(err, sizeof(err), "session %s is the project's: delete it first",
				 sess_id(s));
			http_reply_error(r, 409, "project_not_empty", err);
			return;
		}
	if (has_templates(p->name, tpl, sizeof(tpl))) {
		snprintf(err, sizeof(err), "template %.64s is the project's: delete it first", tpl);
		http_reply_error(r, 409, "project_not_empty", err);
		return;
	}
	projects_remove(t, gone.name);
	if (!saved(r, "the removal could not be saved")) {
		projects_add(t, &gone);
		return;
	}
	/* Its keys hold nothing once it is gone; taking them out is tidying. */
	keys = api_keys_remove_project(&r->gw->api_keys, gone.name);
	if (keys > 0 && api_keys_save(&r->gw->api_keys, err, sizeof(err)) < 0)
		log_error("projects", "%s", err);
	log_info("projects", "%s removed with %d keys", gone.name, keys);
	api_audit_set(r, "project", json_string(gone.name));
	http_reply_json(r, 200,
			json_pack("{s:s, s:b, s:i}", "name", gone.name, "deleted", 1,
				  "keys_revoked", keys));
}

void api_projects(struct http_req *r)
{
	const char *own;
	struct project *p;

	if (!api_authorise_route(r))
		return;
	if (r->route.kind == R_PROJECTS) {
		if (r->method == M_POST)
			create(r);
		else
			list(r);
		return;
	}
	own = api_project(r);
	p = projects_find(&r->gw->projects, r->route.id);
	if (!p || (own && strcmp(own, p->name))) {
		http_reply_error(r, 404, "unknown_project", "no such project");
		return;
	}
	if (r->method == M_PATCH)
		update(r, p);
	else if (r->method == M_DELETE)
		delete (r, p);
	else
		http_reply_json(r, 200, project_full_json(r->gw, p));
}
