/* gateway/api/api_audit.c: see api_audit.h; the schema is docs/audit.md. */
#include "gateway/api/api_audit.h"

#include "common/fsutil.h"
#include "gateway/api/ws_upgrade.h"
#include "gateway/core/audit.h"
#include "gateway/session/session.h"
#include "gateway/stream/recorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *api_audit_event(enum route_kind kind, enum route_method method)
{
	const char *event = method < M_OTHER ? route_table[kind].audit[method] : NULL;

	return event && event[0] ? event : NULL;
}

const char *api_method_name(enum route_method method)
{
	switch (method) {
	case M_GET:
		return "GET";
	case M_POST:
		return "POST";
	case M_DELETE:
		return "DELETE";
	case M_PUT:
		return "PUT";
	case M_PATCH:
		return "PATCH";
	default:
		return "OTHER";
	}
}

/* p's project, when it is a project's key (hash: its SHA-256). */
static void who_project(struct gw *gw, const char *hash, struct audit_principal *p)
{
	const char *project = hash && hash[0] ? sess_project_of_hash(gw, hash) : NULL;

	snprintf(p->project, sizeof(p->project), "%s", project ? project : "");
}

void api_audit_who(struct http_req *r, const char *hash, const char *which, bool share)
{
	audit_principal_set(&r->who, hash, which, share);
	who_project(r->gw, hash, &r->who);
}

void api_audit_set(struct http_req *r, const char *key, json_t *value)
{
	if (!r->audit_fields)
		r->audit_fields = json_object();
	if (r->audit_fields)
		json_object_set_new(r->audit_fields, key, value);
	else
		json_decref(value);
}

/* Whether the route's id is the session of its entries: a session's
 * routes; and, kept so that the log reads as it did, a template export's
 * (whose refusals have named the template there since the route came) and
 * a door's (the id of the native path, if any, that the door took over). */
static bool route_has_session(enum route_kind kind)
{
	return route_names_session(kind) || kind == R_TEMPLATE_EXPORT || kind == R_DOOR ||
	       kind == R_SESSION_PORT_HOST;
}

static const char *remote_of(struct lws *wsi, char *buf, size_t len)
{
	return audit_peer(wsi, buf, len);
}

/* A token that was not authorised (refused before the check named it):
 * whether it is the operator key or an API key, else "unknown". */
static void who_unchecked(struct gw *gw, const char *token, struct audit_principal *p)
{
	const struct api_key *k;
	char h[AUTH_HASH_LEN + 1];

	if (!token[0]) {
		memset(p, 0, sizeof(*p));
		return;
	}
	auth_token_hash(token, h);
	k = api_keys_match(&gw->api_keys, h);
	audit_principal_set(p, h,
			    auth_equal(h, gw->operator_hash) ? "operator"
			    : k				     ? k->id
							     : "",
			    false);
	who_project(gw, h, p);
}

static void access_line(struct http_req *r, const char *remote)
{
	json_t *j;
	char when[40], *line;
	const int64_t now_us = (int64_t)lws_now_usecs();

	if (!r->gw->access_log.path[0])
		return;
	fs_utc_time(fs_unix_ms(), when, sizeof(when));
	j = json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:f, s:s?}", "time", when, "method",
		      api_method_name(r->method), "route", route_kind_names[r->route.kind], "path",
		      r->path, "status", r->status, "bytes", (json_int_t)r->resp_len, "duration_ms",
		      (double)(now_us - (int64_t)r->t0_us) / 1000.0, "remote", remote);
	line = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
	json_decref(j);
	if (line)
		logfile_append(&r->gw->access_log, line, strlen(line));
	free(line);
}

/* An answered action or command goes on its session's recording, if it
 * records (the command's argv and exit code are its audit fields). */
static void record_answer(struct http_req *r)
{
	struct sess *s;
	int64_t end_ms, t0_ms;
	json_t *code;

	if (!r->who.kind || r->status == 401 || r->status == 403 ||
	    (r->route.kind != R_SESSION_ACTIONS && r->route.kind != R_SESSION_EXEC))
		return;
	if (!(s = sess_find(r->gw, r->route.id)))
		return;
	end_ms = fs_now_ms();
	t0_ms = end_ms - (int64_t)(lws_now_usecs() - r->t0_us) / 1000;
	if (r->route.kind == R_SESSION_ACTIONS) {
		rec_note_action(s, r->body, r->body_len, r->status, t0_ms, end_ms, "http");
		return;
	}
	code = json_object_get(r->audit_fields, "exit_code");
	rec_note_command(s, json_object_get(r->audit_fields, "argv"),
			 code ? (int)json_integer_value(code) : -1, r->status, t0_ms, end_ms);
}

void api_audit_answered(struct http_req *r)
{
	const struct route_def *d = &route_table[r->route.kind];
	const char *event = d->audit_of ? d->audit_of(r)
					: api_audit_event(r->route.kind, r->method),
		   *session = NULL;
	char remote_buf[64];
	const char *remote = remote_of(r->wsi, remote_buf, sizeof(remote_buf));
	json_t *fields;

	record_answer(r); /* reads the command's fields, before they go */
	fields = r->audit_fields;
	r->audit_fields = NULL;
	if (r->audit_session[0])
		session = r->audit_session;
	else if (route_has_session(r->route.kind))
		session = r->route.id;
	if (r->status == 401 || r->status == 403) {
		json_decref(fields);
		if (!r->who.kind)
			who_unchecked(r->gw, r->token, &r->who);
		audit_log(r->gw, "auth_refused", session, &r->who, remote,
			  json_pack("{s:s, s:s, s:s, s:i}", "route",
				    route_kind_names[r->route.kind], "method",
				    api_method_name(r->method), "path", r->path, "status",
				    r->status));
	} else if (event && r->who.kind) {
		/* Only requests that were authorised: a 404 for a missing session
		 * or a 400 before the token was checked change nothing. */
		if (!fields)
			fields = json_object();
		json_object_set_new(fields, "status", json_integer(r->status));
		json_object_set_new(fields, "duration_ms",
				    json_integer((json_int_t)((lws_now_usecs() - r->t0_us) /
							      LWS_US_PER_MS)));
		if (r->route.kind == R_TEMPLATES_CREATE || r->route.kind == R_TEMPLATE_DELETE)
			if (r->route.id[0])
				json_object_set_new(fields, "template", json_string(r->route.id));
		audit_log(r->gw, event, session, &r->who, remote, fields);
	} else {
		json_decref(fields);
	}
	access_line(r, remote);
}

void api_audit_ws_refused(struct gw *gw, struct lws *wsi, enum route_kind kind, const char *sid,
			  const char *token, int status)
{
	struct audit_principal p;
	char remote_buf[64];
	const char *remote = remote_of(wsi, remote_buf, sizeof(remote_buf));
	struct sess *s = sid && sid[0] ? sess_find(gw, sid) : NULL;

	who_unchecked(gw, token ? token : "", &p);
	/* A session token that matched but lacked the right: its kind. */
	if (s && token && token[0]) {
		const char *which = "";
		char h[AUTH_HASH_LEN + 1];

		auth_token_hash(token, h);
		sess_rights_of_hash(gw, s, h, &which);
		if (which[0])
			audit_principal_set(&p, h, which, false);
	}
	audit_log(gw, "auth_refused", sid && sid[0] ? sid : NULL, &p, remote,
		  json_pack("{s:s, s:s, s:i, s:b}", "route", route_kind_names[kind], "method",
			    "GET", "status", status, "websocket", 1));
}

void api_audit_upgrade_refused(struct gw *gw, struct lws *wsi)
{
	struct route rt = ws_upgrade_route(wsi);
	char token[160] = "";

	if (ws_upgrade_bearer(wsi, token, sizeof(token)) < 0)
		token[0] = '\0';
	api_audit_ws_refused(gw, wsi, rt.kind, rt.id, token, 403);
	explicit_bzero(token, sizeof(token));
}
