/* gateway/api/api_template_gc.c: POST /v1/templates/gc?older_than_s=N:
 * removes every template made more than N seconds ago that nothing uses
 * (no session runs or is paused from it, no other template's disk is
 * backed by it, no save or build is under way on it), and lists them.
 * Passes repeat until one removes nothing: a template whose only user was
 * removed goes in the same call. A handful of stat calls and unlinks per
 * template, as DELETE does, on the loop. */
#include "gateway/api/api_int.h"
#include "gateway/session/pool.h"
#include "gateway/template/template_build.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define GC_MAX_AGE_S (10 * 366 * 86400)

/* One pass: removes what it may, appending the names to removed.
 * Returns how many it removed. */
static int gc_pass(struct gw *gw, int64_t cutoff, json_t *removed)
{
	DIR *d = opendir(vmm_templates_dir());
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		struct vmm_template t;
		char err[1024];
		json_t *build;
		int rc = e->d_name[0] == '.' || !vmm_template_name_ok(e->d_name)
				 ? -ENOENT
				 : vmm_template_load(e->d_name, &t, err, sizeof(err));

		if ((rc < 0 && rc != -ESTALE) || t.created_at > cutoff)
			continue;
		/* a warm pool's template is in use too (its members are no one's
		 * sessions: api_template_user does not see them) */
		if (api_template_user(gw, e->d_name, err, sizeof(err)) ||
		    sess_pool_size(gw, e->d_name) > 0)
			continue;
		build = template_build_json(gw, e->d_name);
		if (build &&
		    !strcmp(json_string_value(json_object_get(build, "status")), "building")) {
			json_decref(build);
			continue;
		}
		json_decref(build);
		template_build_forget(gw, e->d_name); /* its record, as DELETE does */
		if (vmm_template_remove(e->d_name, err, sizeof(err)) == 0) {
			json_array_append_new(removed, json_string(e->d_name));
			n++;
		}
	}
	if (d)
		closedir(d);
	return n;
}

void api_templates_gc(struct http_req *r)
{
	char buf[64]; /* http_query's buffer holds the whole "name=value" */
	json_t *removed;
	int age;

	if (!api_authorise_route(r))
		return;
	if (!http_query(r, "older_than_s=", buf, sizeof(buf))) {
		http_reply_error(r, 400, "invalid_argument",
				 "?older_than_s= (seconds) is required");
		return;
	}
	if (api_query_int(r, "older_than_s=", 0, 0, GC_MAX_AGE_S, &age) < 0)
		return;
	if (!(removed = json_array())) {
		http_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	while (gc_pass(r->gw, (int64_t)time(NULL) - age, removed) > 0)
		;
	http_reply_json(r, 200, json_pack("{s:o, s:i}", "removed", removed, "older_than_s", age));
}
