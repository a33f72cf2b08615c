/* gateway/api/api_usage.c: GET /v1/usage?from=&to= (operator): every
 * session, live and ended (the usage log), whose life meets [from, to]
 * (Unix seconds; either may be left out), with its usage; JSON, or CSV
 * when the client asks for text/csv. */
#include "common/bytebuf.h"
#include "gateway/api/api_int.h"
#include "gateway/session/session.h"
#include "gateway/session/session_usage.h"
#include "gateway/session/usage_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The usage fields, in the CSV's column order. */
static const char *const fields[] = {
	"seconds_running",    "seconds_paused_memory", "seconds_paused_disk", "vcpu_seconds",
	"memory_gib_seconds", "qemu_cpu_seconds",      "screenshots",	      "actions",
	"commands",	      "egress_bytes_up",       "egress_bytes_down",   "disk_bytes",
};

/* A JSON number or integer as CSV text ("" when absent). */
static int put_value(struct bytebuf *b, const json_t *v)
{
	if (json_is_integer(v))
		return bytebuf_printf(b, ",%lld", (long long)json_integer_value(v));
	if (json_is_real(v))
		return bytebuf_printf(b, ",%.3f", json_real_value(v));
	return bytebuf_printf(b, ",");
}

char *api_usage_csv(const json_t *sessions)
{
	struct bytebuf b = { 0 };
	size_t i;
	const json_t *e;
	int rc;

	rc = bytebuf_printf(&b, "id,image,template,vcpus,memory_mib,created_unix_ms,ended_unix_ms");
	for (size_t f = 0; rc == 0 && f < sizeof(fields) / sizeof(fields[0]); f++)
		rc = bytebuf_printf(&b, ",%s", fields[f]);
	rc = rc ? rc : bytebuf_printf(&b, "\r\n");
	json_array_foreach(sessions, i, e)
	{
		const json_t *u = json_object_get(e, "usage");
		const char *tpl = json_string_value(json_object_get(e, "template"));

		/* ids, image and template names are [a-z0-9_.-]: no quoting needed */
		rc = rc ? rc
			: bytebuf_printf(&b, "%s,%s,%s",
					 json_string_value(json_object_get(e, "id")),
					 json_string_value(json_object_get(e, "image")),
					 tpl ? tpl : "");
		rc = rc ? rc : put_value(&b, json_object_get(e, "vcpus"));
		rc = rc ? rc : put_value(&b, json_object_get(e, "memory_mib"));
		rc = rc ? rc : put_value(&b, json_object_get(e, "created_unix_ms"));
		rc = rc ? rc : put_value(&b, json_object_get(e, "ended_unix_ms"));
		for (size_t f = 0; rc == 0 && f < sizeof(fields) / sizeof(fields[0]); f++)
			rc = put_value(&b, json_object_get(u, fields[f]));
		rc = rc ? rc : bytebuf_printf(&b, "\r\n");
	}
	if (rc) {
		bytebuf_free(&b);
		return NULL;
	}
	return b.data;
}

/* Drops the entries of list that are not project's (NULL: keeps all). */
static void only_project(json_t *list, const char *project)
{
	size_t i = json_array_size(list);

	while (project && i-- > 0) {
		const char *p = json_string_value(
			json_object_get(json_array_get(list, i), "project"));

		if (strcmp(p ? p : "", project))
			json_array_remove(list, i);
	}
}

json_t *api_usage_by_project(const json_t *list)
{
	json_t *groups = json_object(), *out = json_array(), *e, *g;
	const char *name;
	size_t i;

	json_array_foreach(list, i, e)
	{
		const char *p = json_string_value(json_object_get(e, "project"));
		const json_t *u = json_object_get(e, "usage");

		if (!(g = json_object_get(groups, p ? p : ""))) {
			g = json_pack("{s:s?, s:i, s:{}}", "project", p, "sessions", 0, "usage");
			json_object_set_new(groups, p ? p : "", g);
		}
		if (!g)
			continue;
		json_object_set_new(g, "sessions",
				    json_integer(
					    json_integer_value(json_object_get(g, "sessions")) +
					    1));
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
			const json_t *v = json_object_get(u, fields[f]);
			json_t *sum = json_object_get(json_object_get(g, "usage"), fields[f]);

			if (json_is_integer(v))
				json_object_set_new(json_object_get(g, "usage"), fields[f],
						    json_integer(json_integer_value(v) +
								 json_integer_value(sum)));
			else if (json_is_real(v))
				json_object_set_new(json_object_get(g, "usage"), fields[f],
						    json_real(json_real_value(v) +
							      json_number_value(sum)));
		}
	}
	json_object_foreach(groups, name, g) json_array_append(out, g);
	json_decref(groups);
	return out;
}

void api_usage(struct http_req *r)
{
	char accept[128] = "", only[PROJECT_NAME_MAX + 2];
	const char *project;
	int from_s, to_s;
	json_t *list;

	if (!api_authorise_route(r) || api_query_int(r, "from=", 0, 0, 2000000000, &from_s) < 0 ||
	    api_query_int(r, "to=", 0, 0, 2000000000, &to_s) < 0)
		return;
	if (from_s && to_s && to_s < from_s) {
		http_reply_error(r, 400, "invalid_argument", "to is before from");
		return;
	}
	if (!(list = json_array())) {
		http_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	usage_log_select(r->gw->usage_log, (int64_t)from_s * 1000, (int64_t)to_s * 1000, list);
	for (struct sess *s = sess_first(r->gw); s; s = sess_next(s)) {
		json_t *e = sess_usage_entry(s, false);

		if (e && usage_overlaps(json_integer_value(json_object_get(e, "created_unix_ms")),
					0, (int64_t)from_s * 1000, (int64_t)to_s * 1000))
			json_array_append(list, e);
		json_decref(e);
	}
	/* a project's key sees its own; the operator may ask for one
	 * (?project=, "" for its own sessions) */
	project = api_project(r);
	if (!project && http_query(r, "project=", only, sizeof(only)))
		project = only;
	only_project(list, project);
	lws_hdr_copy(r->wsi, accept, sizeof(accept), WSI_TOKEN_HTTP_ACCEPT);
	if (strstr(accept, "text/csv")) {
		char *csv = api_usage_csv(list);

		json_decref(list);
		if (!csv) {
			http_reply_error(r, 500, "internal", "out of memory");
			return;
		}
		http_reply_bytes(r, 200, "text/csv; charset=utf-8", csv, strlen(csv));
		free(csv);
		return;
	}
	http_reply_json(r, 200,
			json_pack("{s:o, s:o}", "projects", api_usage_by_project(list), "sessions",
				  list));
}
