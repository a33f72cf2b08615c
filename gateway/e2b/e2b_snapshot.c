/* gateway/e2b/e2b_snapshot.c: E2B's snapshots as Vitrine templates made
 * from a sandbox (template/template_build.h's template_build_from_session:
 * the sandbox's disk and memory saved while it stands still a moment, then
 * it runs on). POST /sandboxes/{id}/snapshots {name?} answers 201
 * {snapshotID, names} once the template is made (Sandbox.create(snapshotID)
 * restores it); GET /snapshots?sandboxID=&name=&limit=&nextToken= lists
 * the templates made from a session that the key sees, by name; DELETE
 * /templates/{id} deletes one (api_template_delete's rules). A snapshot's
 * name is the one given (a template's [a-z0-9_-], a project key's with
 * its "PROJECT_" before it) or "snap-" and the sandbox id and time. Loop
 * thread.
 * A create waits for its template by looking at the build every 500 ms (a
 * build tells no one when it ends); the look is the call's own timer,
 * cancelled with the call (e2b_api.h declares the calls). */
#include "common/fsutil.h"
#include "gateway/api/api_int.h"
#include "gateway/core/project_table.h"
#include "gateway/e2b/e2b_api.h"
#include "gateway/template/template_build.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOK_MS 500
#define WAIT_SNAPSHOT_MS (15 * 60 * 1000)

struct e2b_snapshot {
	lws_sorted_usec_list_t sul; /* the next look at the build */
	struct http_req *r;
	char name[VMM_TEMPLATE_NAME_MAX + 1];
	int64_t until_ms;
};

static void answer(struct http_req *r, const char *name)
{
	http_reply_json(r, 201, json_pack("{s:s, s:[s]}", "snapshotID", name, "names", name));
}

static void on_look(lws_sorted_usec_list_t *sul)
{
	struct e2b_snapshot *sn = lws_container_of(sul, struct e2b_snapshot, sul);
	struct http_req *r = sn->r;
	json_t *build = template_build_json(r->gw, sn->name);
	const char *status = build ? json_string_value(json_object_get(build, "status")) : NULL;
	struct vmm_template t;
	char err[512];

	if (status && !strcmp(status, "building") && fs_now_ms() < sn->until_ms) {
		json_decref(build);
		lws_sul_schedule(r->gw->ctx, 0, &sn->sul, on_look, LOOK_MS * LWS_US_PER_MS);
		return;
	}
	if (status && !strcmp(status, "failed")) {
		const char *why = json_string_value(json_object_get(build, "error"));

		snprintf(err, sizeof(err), "the snapshot was not made: %s", why ? why : "failed");
		e2b_error(r, 500, err);
	} else if (status) {
		e2b_error(r, 504, "the snapshot was not made in time");
	} else if (vmm_template_load(sn->name, &t, err, sizeof(err)) == 0) {
		answer(r, sn->name);
	} else {
		e2b_error(r, 500, "the snapshot was not made");
	}
	json_decref(build);
}

/* The snapshot's name: the body's (its project's prefix added for a
 * project key), else snap-ID-TIME. 0, or an answered 400. */
static int name_of(struct http_req *r, struct sess *s, char *name, size_t len)
{
	const char *project = sess_project_of(r->gw, r->token);
	json_t *body = r->body_len ? json_loadb(r->body, r->body_len, 0, NULL) : json_object();
	const json_t *v = json_object_get(body, "name");
	char prefix[64] = "";
	unsigned long long ms = (unsigned long long)fs_unix_ms();
	char t36[16];
	int i = (int)sizeof(t36) - 1;

	if (!json_is_object(body) || (v && !json_is_null(v) && !json_is_string(v))) {
		json_decref(body);
		e2b_error(r, 400, "the body is not {\"name\": string}");
		return -EINVAL;
	}
	if (project)
		snprintf(prefix, sizeof(prefix), "%s_", project);
	t36[i] = '\0';
	do
		t36[--i] = "0123456789abcdefghijklmnopqrstuvwxyz"[ms % 36];
	while ((ms /= 36) && i > 0);
	if (json_is_string(v) && json_string_length(v))
		snprintf(name, len, "%s%s",
			 project && !strncmp(json_string_value(v), prefix, strlen(prefix)) ? ""
											   : prefix,
			 json_string_value(v));
	else
		snprintf(name, len, "%ssnap-%.24s-%s", prefix, sess_id(s), t36 + i);
	json_decref(body);
	if (!vmm_template_name_ok(name)) {
		e2b_error(r, 400,
			  "a snapshot's name is a template's: [a-z0-9_-], at most 63 characters");
		return -EINVAL;
	}
	return 0;
}

void e2b_snapshot_create(struct http_req *r)
{
	struct e2b_call *c = e2b_call_of(r);
	struct e2b_snapshot *sn;
	struct api_error e = { 0 };
	struct sess *s;
	char name[VMM_TEMPLATE_NAME_MAX + 1];

	if (!e2b_operator_ok(r) || !(s = e2b_route_sess(r)) ||
	    name_of(r, s, name, sizeof(name)) < 0)
		return;
	if (!(sn = calloc(1, sizeof(*sn)))) {
		e2b_error(r, 500, "out of memory");
		return;
	}
	if (template_build_from_session(r->gw, name, s, &e) < 0) {
		free(sn);
		e2b_error(r, e.status ? e.status : 500, e.message);
		return;
	}
	sn->r = r;
	snprintf(sn->name, sizeof(sn->name), "%s", name);
	sn->until_ms = fs_now_ms() + WAIT_SNAPSHOT_MS;
	c->snapshot = sn;
	api_hold(r, WAIT_SNAPSHOT_MS / 1000 + 10);
	lws_sul_schedule(r->gw->ctx, 0, &sn->sul, on_look, LOOK_MS * LWS_US_PER_MS);
}

void e2b_snapshot_release(struct e2b_call *c)
{
	if (!c->snapshot)
		return;
	lws_sul_cancel(&c->snapshot->sul);
	free(c->snapshot);
	c->snapshot = NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void e2b_snapshot_list(struct http_req *r)
{
	char sandbox[64], name[VMM_TEMPLATE_NAME_MAX + 2], after[VMM_TEMPLATE_NAME_MAX + 2],
		buf[16];
	const char *project;
	char **names = NULL;
	size_t n = 0, cap = 0, shown = 0;
	int limit = 100;
	json_t *arr;
	DIR *d;
	struct dirent *de;

	if (!e2b_operator_ok(r))
		return;
	e2b_query(r, "sandboxID=", sandbox, sizeof(sandbox));
	e2b_query(r, "name=", name, sizeof(name));
	e2b_query(r, "nextToken=", after, sizeof(after));
	if (e2b_query(r, "limit=", buf, sizeof(buf)) &&
	    ((limit = atoi(buf)) < 1 || limit > 100 || strspn(buf, "0123456789") != strlen(buf))) {
		e2b_error(r, 400, "limit: a number from 1 to 100");
		return;
	}
	project = sess_project_of(r->gw, r->token);
	d = opendir(vmm_templates_dir());
	while (d && (de = readdir(d))) {
		struct vmm_template t;
		char err[512];

		if (de->d_name[0] == '.' ||
		    !project_sees_template(&r->gw->projects, project, de->d_name) ||
		    (name[0] && strcmp(name, de->d_name)) ||
		    (after[0] && strcmp(de->d_name, after) <= 0) ||
		    vmm_template_load(de->d_name, &t, err, sizeof(err)) < 0 || !t.from_session[0] ||
		    (sandbox[0] && strcmp(sandbox, t.from_session)))
			continue;
		if (n == cap) {
			char **grown = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*names));

			if (!grown)
				break;
			names = grown;
		}
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	arr = json_array();
	for (; arr && shown < n && (int)shown < limit; shown++)
		json_array_append_new(arr, json_pack("{s:s, s:[s]}", "snapshotID", names[shown],
						     "names", names[shown]));
	if (shown < n && shown > 0)
		http_add_header(r, "x-next-token", names[shown - 1]);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	http_reply_json(r, 200, arr);
}

void e2b_snapshot_delete(struct http_req *r)
{
	const char *name = e2b_call_of(r)->route.id;
	const char *project;
	const struct project *owner;
	struct api_error e = { 0 };

	if (!e2b_operator_ok(r))
		return;
	project = sess_project_of(r->gw, r->token);
	owner = project_of_template(&r->gw->projects, name);
	if (!vmm_template_name_ok(name) || (project && (!owner || strcmp(owner->name, project)))) {
		e2b_error(r, 404, "snapshot not found"); /* another's is as missing */
		return;
	}
	if (api_template_delete(r->gw, name, &e) < 0) {
		e2b_error(r, e.status ? e.status : 500, e.message);
		return;
	}
	http_reply_bytes(r, 204, "application/json", "", 0);
}
