/* gateway/e2b/e2b_api.c: E2B's door (see e2b_api.h): which requests are
 * E2B's, their state, and the control plane, mapped onto sessions: create
 * is a session create that answers once the guest and its agent are up;
 * timeout moves the session's deadline; pause and connect are a memory
 * pause and a resume; kill is a delete. Those that wait are parked on
 * their session (e2b_wait.h: woken by its changes, or a kill by its
 * ticket), not on the session's waiter slots. Errors are E2B's {"code",
 * "message"}. */
#include "gateway/e2b/e2b_api.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/e2b/e2b_list.h"
#include "gateway/e2b/e2b_network.h"
#include "gateway/e2b/e2b_req.h"
#include "gateway/e2b/e2b_wait.h"
#include "gateway/e2b/e2b_websockify.h"
#include "gateway/e2b/sandbox.h"
#include "gateway/egress/egress.h"
#include "gateway/egress/egress_rules.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/job.h"
#include "gateway/session/session.h"
#include "gateway/session/session_usage.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define E2B_ENVD_VERSION "0.5.7"
#define E2B_DEFAULT_IMAGE "desktop"

void e2b_error(struct http_req *r, int status, const char *message)
{
	http_reply_json(r, status,
			json_pack("{s:i, s:o}", "code", status, "message",
				  api_error_text(message)));
}

static bool custom_header(struct http_req *r, const char *name, char *out, int len)
{
	int n = lws_hdr_custom_copy(r->wsi, out, len, name, (int)strlen(name));

	if (n <= 0) {
		out[0] = '\0';
		return false;
	}
	return true;
}

struct e2b_call *e2b_call_of(const struct http_req *r)
{
	return r->route_state;
}

/* Takes r when its path and headers are E2B's, with the token from
 * X-API-KEY or X-Access-Token (the door's claim). */
static void claim(struct http_req *r)
{
	static const char *methods[] = {
		[M_GET] = "GET", [M_POST] = "POST",   [M_DELETE] = "DELETE",
		[M_PUT] = "PUT", [M_PATCH] = "PATCH", [M_OTHER] = "OTHER"
	};
	char id[E2B_ID_MAX], host[256] = "", key[160];
	struct e2b_route route = { 0 };
	struct e2b_call *c;
	bool envd = false, live = false;
	int port = 0;

	if (custom_header(r, "e2b-sandbox-id:", id, sizeof(id)))
		envd = true;
	else if (lws_hdr_copy(r->wsi, host, sizeof(host), WSI_TOKEN_HOST) > 0 &&
		 e2b_host_sandbox(host, &port, id, sizeof(id)) == 0 && port == E2B_ENVD_PORT)
		envd = true;
	else if (host[0] && e2b_host_sandbox(host, &port, id, sizeof(id)) == 0 &&
		 (!strcmp(r->path, "/vnc.html") || !strcmp(r->path, "/websockify"))) {
		/* the desktop SDK's stream URL: the rest of that host (the
		 * viewer's files, its stream socket) is the gateway's own */
		route.kind = r->path[1] == 'v' ? E2B_LIVE_VIEW : E2B_LIVE_SOCKET;
		live = true;
	}
	if (!live)
		route = e2b_route_parse(methods[r->method], r->path, envd);
	if (route.kind == E2B_NONE || !(c = api_door_take(r)))
		return;
	c->r = r;
	c->route = route;
	if (live) {
		c->live_port = port;
		snprintf(c->sandbox, sizeof(c->sandbox), "%s", id);
		r->token[0] = '\0'; /* the URL is the capability (and its password) */
		return;
	}
	if (envd)
		snprintf(c->sandbox, sizeof(c->sandbox), "%s", id);
	if (custom_header(r, envd ? "x-access-token:" : "x-api-key:", key, sizeof(key)))
		snprintf(r->token, sizeof(r->token), "%s", key);
	else if (envd)
		r->token[0] = '\0'; /* Authorization is envd's Basic user */
}

bool e2b_query(struct http_req *r, const char *name, char *buf, int len)
{
	if (!http_query(r, name, buf, len)) {
		buf[0] = '\0';
		return false;
	}
	return true;
}

unsigned e2b_rights(struct http_req *r, const struct sess *s)
{
	char h[AUTH_HASH_LEN + 1];
	const char *which = "";
	unsigned got;

	if (!r->token[0])
		return 0;
	auth_token_hash(r->token, h);
	got = sess_rights_of_hash(r->gw, s, h, &which);
	api_audit_who(r, h, which, false);
	return got;
}

/* The audit event of r's E2B call (docs/audit.md's names), or NULL. */
static const char *audit_of(const struct http_req *r)
{
	const struct e2b_call *c = e2b_call_of(r);

	switch (c ? c->route.kind : E2B_NONE) {
	case E2B_CREATE:
		return "session_create";
	case E2B_KILL:
		return "session_delete";
	case E2B_PAUSE:
		return "session_pause";
	case E2B_CONNECT:
		return "session_resume";
	case E2B_ENVD_FILES:
		return r->method == M_POST ? "file_put" : "file_get";
	case E2B_ENVD_RPC:
		return !strcmp(c->route.rpc, "process.Process/Start") ? "command" : NULL;
	default:
		return NULL;
	}
}

bool e2b_operator_ok(struct http_req *r)
{
	const char *id = e2b_call_of(r)->route.id;

	if (id[0])
		snprintf(r->audit_session, sizeof(r->audit_session), "%s", id);
	/* the operator's keys, or a project's (E2B's team) on its own */
	if (e2b_rights(r, NULL) & (AUTH_R_ADMIN | AUTH_R_MANAGE))
		return true;
	e2b_error(r, 401, r->token[0] ? "Invalid API key" : "send the API key as X-API-KEY");
	return false;
}

/* The route's session, answering 404 when there is none (or it is
 * another project's). */
struct sess *e2b_route_sess(struct http_req *r)
{
	struct sess *s = sess_find(r->gw, e2b_call_of(r)->route.id);

	if (s && !sess_in_project(s, sess_project_of(r->gw, r->token)))
		s = NULL;
	if (!s)
		e2b_error(r, 404, "sandbox not found");
	return s;
}

/* When s started (unix ms): its sandbox's start, else (a session of the
 * native API) its creation. */
static int64_t started_ms(struct sess *s, struct e2b_sandbox *sb)
{
	json_t *entry;
	int64_t ms;

	if (sb)
		return sb->started_unix_ms;
	entry = sess_usage_entry(s, false);
	ms = entry ? json_integer_value(json_object_get(entry, "created_unix_ms")) : 0;
	json_decref(entry);
	return ms > 0 ? ms : fs_unix_ms();
}

/* The unix ms s ends at, 0 for never: whole seconds, so two answers of an
 * unchanged deadline say the same (the two clocks are read apart). */
static int64_t end_unix_ms(struct sess *s)
{
	const char *which;
	int64_t deadline = sess_deadline(s, &which);

	if (!deadline)
		return 0;
	return (fs_unix_ms() + (deadline - fs_now_ms()) + 500) / 1000 * 1000;
}

/* The template a sandbox names (create's templateID, else its session's). */
static const char *template_of(struct sess *s, struct e2b_sandbox *sb)
{
	return sb && sb->template_id[0] ? sb->template_id
	       : sess_template(s)[0]	? sess_template(s)
					: sess_image(s);
}

/* What E2B says of a sandbox: create's and connect's answer (with the
 * envd token) or a listed one. */
json_t *e2b_sandbox_json(struct sess *s, struct e2b_sandbox *sb, bool with_token)
{
	char started[96], end[96];
	int64_t end_ms = end_unix_ms(s);
	json_t *j;

	fs_utc_time(started_ms(s, sb), started, sizeof(started));
	fs_utc_time(end_ms ? end_ms : fs_unix_ms() + 365LL * 24 * 3600 * 1000, end, sizeof(end));
	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:O, s:s}", "templateID",
		      template_of(s, sb), "sandboxID", sess_id(s), "clientID", "vitrine",
		      "envdVersion", E2B_ENVD_VERSION, "startedAt", started, "endAt", end,
		      "cpuCount", sess_vcpus(s), "memoryMB", sess_memory_mib(s), "diskSizeMB", 0,
		      "metadata", sb ? sb->metadata : json_object(), "state",
		      sess_state_of(s) == SESS_PAUSED ? "paused" : "running");
	if (j && with_token) {
		const char *token = sb ? e2b_sandbox_envd_token(sb) : sess_control_token(s);

		if (token && token[0])
			json_object_set_new(j, "envdAccessToken", json_string(token));
	}
	/* getHost(port) names {port}-{id}.{domain}: the gateway's guest ports */
	if (j && sess_gw(s)->public_domain[0])
		json_object_set_new(j, "domain", json_string(sess_gw(s)->public_domain));
	if (j && !sb) /* json_object() above was a new reference */
		json_decref(json_object_get(j, "metadata"));
	return j;
}

/* ---- waiting for a session (create, connect, pause, kill) ---- */

bool e2b_agent_up(struct sess *s)
{
	struct agent_link *l = sess_agent_of(s) ? sess_agent_get(sess_agent_of(s), 0) : NULL;

	agent_link_release(l);
	return l != NULL;
}

/* Looks at the session waited on (create, connect, pause) or the kill's
 * ticket: answers, or (not late) waits on. */
static bool look(struct e2b_wait *w, bool late)
{
	struct e2b_call *c = lws_container_of(w, struct e2b_call, wait);
	struct http_req *r = c->r;
	struct sess *s = sess_find(r->gw, c->wait_id);

	if (c->route.kind == E2B_KILL) {
		if (!job_ticket_done(c->ticket) && !late)
			return false;
		job_ticket_release(c->ticket);
		c->ticket = NULL;
		http_reply_bytes(r, 204, "application/json", "", 0);
		return true;
	}
	if (!s) {
		e2b_error(r, 410, "the sandbox was killed meanwhile");
		return true;
	}
	if (sess_state_of(s) == SESS_FAILED) {
		e2b_error(r, 500, sess_error(s)[0] ? sess_error(s) : "the sandbox failed");
		return true;
	}
	if (c->route.kind == E2B_PAUSE) {
		if (sess_busy(s) && !late)
			return false;
		if (sess_state_of(s) != SESS_PAUSED)
			e2b_error(r, 500, sess_error(s)[0] ? sess_error(s) : "not paused");
		else
			http_reply_bytes(r, 204, "application/json", "", 0);
		return true;
	}
	if ((sess_busy(s) || sess_state_of(s) != SESS_READY || !e2b_agent_up(s)) && !late)
		return false;
	if (sess_state_of(s) != SESS_READY) {
		e2b_error(r, 504, "the sandbox did not start in time");
		return true;
	}
	/* E2B's timeout counts from when the sandbox runs, not from the
	 * boot; a connect that named none gives a resumed sandbox whose
	 * deadline was spent its own again. */
	{
		struct e2b_sandbox *sb = e2b_sandbox_of(s);
		const char *which;

		if (c->was_running) {
			http_reply_json(r, 200, e2b_sandbox_json(s, sb, true));
			return true;
		}
		if (sb && (c->route.kind == E2B_CREATE || !sess_deadline(s, &which)))
			sess_set_timeout(s, sb->timeout_s);
		http_reply_json(r, 201, e2b_sandbox_json(s, sb, true));
	}
	return true;
}

/* Parks r on s (NULL for a kill: on its ticket) for up to wait_ms. */
static void wait_up_to(struct http_req *r, struct sess *s, int wait_ms)
{
	struct e2b_call *c = e2b_call_of(r);

	snprintf(c->wait_id, sizeof(c->wait_id), "%s", s ? sess_id(s) : "");
	api_hold(r, wait_ms / 1000 + 10);
	e2b_wait_start(&c->wait, r->gw->ctx, s, c->ticket, wait_ms, look);
}

static void wait_for(struct http_req *r, struct sess *s)
{
	wait_up_to(r, s, E2B_WAIT_MS);
}

/* ---- the calls ---- */

/* E2B's network options in body (a create's, or PUT .../network's whose
 * top level is the network) as egress rules: 0 with *rules (NULL: none
 * said), or an answered 400. */
static int network_rules(struct http_req *r, const json_t *network, const json_t *internet,
			 struct egress_rules **rules)
{
	json_t *egress = NULL;
	char err[320];
	int rc;

	*rules = NULL;
	rc = e2b_network_egress(network, internet, &egress, err, sizeof(err));
	if (rc == 0 && egress) {
		rc = egress_rules_parse(egress, rules, err, sizeof(err));
		api_audit_set(r, "egress", egress);
	}
	if (rc < 0)
		e2b_error(r, rc == -EINVAL ? 400 : 500, rc == -EINVAL ? err : "out of memory");
	return rc;
}

/* sess_create for name as a template, then as an image. "desktop",
 * "base", none and unknown names (or not of [a-z0-9_-]) get the desktop: the operator's
 * --e2b-default-template when named, else the desktop image. */
static int create_for(struct http_req *r, const struct e2b_create *c, struct egress_rules *rules,
		      struct sess **s, struct api_error *e)
{
	struct session_request req = { .egress = rules };
	const char *name = c->template_id, *tpl = r->gw->e2b_default_template;
	/* a name Vitrine could not have ("org/x:tag", "../x") is an unknown
	 * one, never handed to the loaders */
	bool deflt = !name[0] || !strcmp(name, "base") || !strcmp(name, E2B_DEFAULT_IMAGE) ||
		     strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(name);
	int rc = -ENOENT;

	req.timeout_s = c->timeout_s;
	req.expire_pause = c->auto_pause;
	snprintf(req.project, sizeof(req.project), "%s",
		 sess_project_of(r->gw, r->token) ? sess_project_of(r->gw, r->token) : "");
	for (int attempt = 0; attempt < 4; attempt++) {
		/* name as a template, name as an image, the default template,
		 * the default image */
		const char *n = attempt < 2 ? name : attempt == 2 ? tpl : E2B_DEFAULT_IMAGE;

		if (!n[0] || (attempt < 2 && deflt))
			continue;
		snprintf(req.image, sizeof(req.image), "%s", n);
		req.from_template = attempt == 0 || attempt == 2;
		rc = sess_create(r->gw, &req, s, e);
		if (rc == 0 || e->status != 404)
			return rc;
	}
	return rc;
}

static void create(struct http_req *r)
{
	struct e2b_create c;
	struct e2b_sandbox *sb;
	struct egress_rules *rules;
	struct api_error e = { 0 };
	struct sess *s;
	json_t *body;
	char err[160];
	int rc;

	if (!e2b_operator_ok(r))
		return;
	if (e2b_create_parse(r->body, r->body_len, &c, err, sizeof(err)) < 0) {
		e2b_error(r, 400, err);
		return;
	}
	/* network and allow_internet_access, which the create body's parser
	 * leaves: the body is an object (it parsed) */
	body = json_loadb(r->body, r->body_len, 0, NULL);
	rc = network_rules(r, json_object_get(body, "network"),
			   json_object_get(body, "allow_internet_access"), &rules);
	json_decref(body);
	if (rc < 0) {
		e2b_create_free(&c);
		return;
	}
	rc = create_for(r, &c, rules, &s, &e);
	egress_rules_destroy(rules); /* the session has its own copy */
	if (rc < 0) {
		e2b_create_free(&c);
		e2b_error(r, e.status ? e.status : 500, e.message);
		return;
	}
	snprintf(r->audit_session, sizeof(r->audit_session), "%s", sess_id(s));
	if (!(sb = e2b_sandbox_get(s))) {
		e2b_create_free(&c);
		sess_destroy(s, NULL);
		e2b_error(r, 500, "out of memory");
		return;
	}
	snprintf(sb->template_id, sizeof(sb->template_id), "%s",
		 c.template_id[0] ? c.template_id : "base");
	json_object_update(sb->metadata, c.metadata);
	json_object_update(sb->env_vars, c.env_vars);
	sb->auto_pause = c.auto_pause;
	sb->timeout_s = c.timeout_s;
	if (e2b_sandbox_save(sb) < 0)
		log_warn("e2b",
			 "%s: its metadata and envVars would not survive a restart (out of "
			 "memory)",
			 sess_id(s));
	/* the boot does not count (the clock starts once it runs) */
	sess_set_timeout(s, c.timeout_s + E2B_WAIT_MS / 1000);
	e2b_create_free(&c);
	wait_for(r, s);
}

/* Reads r's query into q, each argument as lws decoded it. 0, or
 * -EINVAL with err (an argument too long for the buffer included). */
static int list_query(struct http_req *r, struct e2b_list_query *q, char *err, size_t errlen)
{
	char arg[1200];
	int flen;

	e2b_list_query_init(q);
	for (int i = 0; (flen = lws_hdr_fragment_length(r->wsi, WSI_TOKEN_HTTP_URI_ARGS, i)) > 0;
	     i++) {
		if (flen >= (int)sizeof(arg) ||
		    lws_hdr_copy_fragment(r->wsi, arg, sizeof(arg), WSI_TOKEN_HTTP_URI_ARGS, i) <
			    0) {
			snprintf(err, errlen, "a query argument is too long");
			return -EINVAL;
		}
		if (e2b_list_query_arg(q, arg, err, errlen) < 0)
			return -EINVAL;
	}
	return 0;
}

struct listed {
	struct sess *s;
	struct e2b_sandbox *sb;
	int64_t started_ms;
};

static const struct e2b_list_query *sort_query; /* loop thread: qsort's order */

static int listed_cmp(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;

	return e2b_list_cmp(sort_query, x->started_ms, sess_id(x->s), y->started_ms, sess_id(y->s));
}

/* GET /v2/sandboxes (E2B's filters, order and pages) and GET /sandboxes
 * (v1: the running ones, one list). */
static void list(struct http_req *r)
{
	struct e2b_list_query q;
	struct listed *all = NULL;
	char err[200], token[E2B_LIST_TOKEN_MAX];
	const char *project;
	json_t *arr;
	size_t n = 0, cap = 0, taken = 0;
	bool v2 = !strncmp(r->path, "/v2/", 4);

	if (!e2b_operator_ok(r))
		return;
	if (list_query(r, &q, err, sizeof(err)) < 0) {
		e2b_error(r, 400, err);
		return;
	}
	if (!v2) { /* v1 lists the running sandboxes, by metadata only */
		q.states = E2B_LIST_STATE_RUNNING;
		q.limit = INT_MAX;
	}
	project = sess_project_of(r->gw, r->token);
	for (struct sess *s = sess_first(r->gw); s; s = sess_next(s)) {
		struct e2b_sandbox *sb = e2b_sandbox_of(s);
		unsigned st = sess_state_of(s) == SESS_PAUSED ? E2B_LIST_STATE_PAUSED
							      : E2B_LIST_STATE_RUNNING;
		int64_t ms;

		if (!sess_in_project(s, project) || (q.states && !(q.states & st)) ||
		    (q.metadata[0] && !e2b_metadata_match(sb ? sb->metadata : NULL, q.metadata)) ||
		    (q.template_id[0] && strcmp(q.template_id, template_of(s, sb))))
			continue;
		ms = started_ms(s, sb);
		if ((q.started_after_ms && ms < q.started_after_ms) ||
		    !e2b_list_after_cursor(&q, ms, sess_id(s)))
			continue;
		if (n == cap) {
			struct listed *grown = realloc(all,
						       (cap = cap ? cap * 2 : 16) * sizeof(*all));

			if (!grown) {
				free(all);
				e2b_error(r, 500, "out of memory");
				return;
			}
			all = grown;
		}
		all[n++] = (struct listed){ .s = s, .sb = sb, .started_ms = ms };
	}
	sort_query = &q;
	if (n)
		qsort(all, n, sizeof(*all), listed_cmp);
	sort_query = NULL;
	arr = json_array();
	for (size_t i = 0; arr && i < n && (int)taken < q.limit; i++, taken++)
		json_array_append_new(arr, e2b_sandbox_json(all[i].s, all[i].sb, false));
	if (v2 && taken < n) {
		e2b_list_token(all[taken - 1].started_ms, sess_id(all[taken - 1].s), token,
			       sizeof(token));
		http_add_header(r, "x-next-token", token);
	}
	free(all);
	http_reply_json(r, 200, arr);
}

static void timeout(struct http_req *r)
{
	struct sess *s;
	char err[160];
	int t;

	if (!e2b_operator_ok(r) || !(s = e2b_route_sess(r)))
		return;
	if (e2b_timeout_parse(r->body, r->body_len, true, &t, err, sizeof(err)) < 0) {
		e2b_error(r, 400, err);
		return;
	}
	sess_set_timeout(s, t);
	http_reply_bytes(r, 204, "application/json", "", 0);
}

static void pause_sandbox(struct http_req *r)
{
	struct api_error e;
	struct sess *s;

	if (!e2b_operator_ok(r) || !(s = e2b_route_sess(r)))
		return;
	if (sess_state_of(s) == SESS_PAUSED) {
		e2b_error(r, 409, "the sandbox is already paused");
		return;
	}
	if (sess_pause(s, SESS_PAUSE_MEMORY, &e) < 0) {
		e2b_error(r, e.status == 409 ? 409 : e.status, e.message);
		return;
	}
	wait_for(r, s);
}

/* Whether a connect's timeout of t s would end s sooner than it ends now:
 * a running sandbox's end is only ever moved later by a connect (as
 * E2B's); a paused one's timeout counts from its resume. */
static bool shortens(struct sess *s, int t)
{
	const char *which;
	int64_t deadline = sess_deadline(s, &which);

	if (sess_state_of(s) == SESS_PAUSED)
		return false;
	return !deadline || deadline - fs_now_ms() >= (int64_t)t * 1000;
}

static void connect_sandbox(struct http_req *r)
{
	struct api_error e;
	struct sess *s;
	char err[160];
	int t;

	if (!e2b_operator_ok(r) || !(s = e2b_route_sess(r)))
		return;
	if (e2b_timeout_parse(r->body, r->body_len, false, &t, err, sizeof(err)) < 0) {
		e2b_error(r, 400, err);
		return;
	}
	if (t > 0 && !shortens(s, t)) {
		struct e2b_sandbox *sb = e2b_sandbox_get(s);

		sess_set_timeout(s, t);
		if (sb) {
			sb->timeout_s = t;
			e2b_sandbox_save(sb);
		}
	}
	/* A sandbox answers once its commands would run: one adopted by a
	 * gateway just started connects to its agent in the background. */
	if (sess_state_of(s) == SESS_READY && !sess_busy_with(s)) {
		if (e2b_agent_up(s)) {
			http_reply_json(r, 200, e2b_sandbox_json(s, e2b_sandbox_of(s), true));
			return;
		}
		/* no longer than an exec waits for the link */
		e2b_call_of(r)->was_running = true;
		wait_up_to(r, s, SESS_AGENT_WAIT_MS);
		return;
	}
	if (sess_state_of(s) == SESS_PAUSED && !sess_busy_with(s) && sess_resume(s, &e) < 0) {
		e2b_error(r, e.status, e.message);
		return;
	}
	wait_for(r, s);
}

/* GET /sandboxes/{id}/metrics?start=&end= (unix seconds). */
static void metrics(struct http_req *r)
{
	struct e2b_sandbox *sb;
	struct sess *s;
	char buf[32];
	long long range[2] = { 0, 0 };
	const char *names[2] = { "start=", "end=" };

	if (!e2b_operator_ok(r) || !(s = e2b_route_sess(r)))
		return;
	for (int i = 0; i < 2; i++) {
		char *end;

		if (!e2b_query(r, names[i], buf, sizeof(buf)))
			continue;
		errno = 0;
		range[i] = strtoll(buf, &end, 10);
		if (!buf[0] || *end || errno || range[i] < 0) {
			e2b_error(r, 400, i ? "end: not unix seconds" : "start: not unix seconds");
			return;
		}
	}
	if (!(sb = e2b_sandbox_get(s))) {
		e2b_error(r, 500, "out of memory");
		return;
	}
	http_reply_json(r, 200, e2b_sandbox_metrics_json(sb, range[0], range[1]));
}

/* PUT /sandboxes/{id}/network: the sandbox's egress rules replaced (as
 * PUT /v1/sessions/{id}/egress; omitted fields clear, as E2B's). */
static void network(struct http_req *r)
{
	struct egress_rules *rules;
	struct sess *s;
	json_t *body;
	char err[160];

	if (!e2b_operator_ok(r) || !(s = e2b_route_sess(r)))
		return;
	if (!(body = json_loadb(r->body, r->body_len, 0, NULL)) || !json_is_object(body)) {
		json_decref(body);
		e2b_error(r, 400, "the body is not a JSON object");
		return;
	}
	if (network_rules(r, body, json_object_get(body, "allow_internet_access"), &rules) < 0) {
		json_decref(body);
		return;
	}
	json_decref(body);
	if (!rules && egress_rules_parse(NULL, &rules, err, sizeof(err)) < 0) {
		e2b_error(r, 500, "out of memory");
		return;
	}
	egress_set_rules(sess_egress(s), rules);
	sess_save(s); /* the rules survive a restart */
	http_reply_bytes(r, 204, "application/json", "", 0);
}

static void kill_sandbox(struct http_req *r)
{
	struct e2b_call *c = e2b_call_of(r);
	struct sess *s;

	if (!e2b_operator_ok(r) || !(s = e2b_route_sess(r)))
		return;
	c->ticket = job_ticket_new();
	sess_destroy(s, c->ticket);
	wait_for(r, NULL);
}

/* Before a body is read: answers 401 (and closes after) unless r's key
 * or token is good for its call. */
static void refuse_early(struct http_req *r)
{
	struct e2b_call *c = e2b_call_of(r);
	enum e2b_kind kind = c->route.kind;
	bool envd = kind >= E2B_ENVD_HEALTH;
	struct sess *s = envd ? sess_find(r->gw, c->sandbox) : NULL;

	if (kind == E2B_BAD_METHOD || kind == E2B_ENVD_NOT_FOUND || kind == E2B_ENVD_HEALTH ||
	    kind == E2B_LIVE_VIEW || kind == E2B_LIVE_SOCKET)
		return; /* answered after the body, without a token */
	if (envd ? s && (e2b_rights(r, s) & AUTH_R_EXEC)
		 : (e2b_rights(r, NULL) & (AUTH_R_ADMIN | AUTH_R_MANAGE))) {
		if (kind == E2B_ENVD_FILES)
			e2b_envd(r); /* an upload starts now: its body goes on as it comes */
		return;
	}
	r->close_after = true; /* the body is not read */
	if (envd)
		e2b_envd(r); /* its own refusal, in its call's form */
	else
		e2b_error(r, 401,
			  r->token[0] ? "Invalid API key" : "send the API key as X-API-KEY");
}

/* Answers r (its body, if any, is in). */
static void handle(struct http_req *r)
{
	switch (e2b_call_of(r)->route.kind) {
	case E2B_CREATE:
		create(r);
		break;
	case E2B_LIST:
		list(r);
		break;
	case E2B_GET: {
		struct sess *s;

		if (e2b_operator_ok(r) && (s = e2b_route_sess(r)))
			http_reply_json(r, 200, e2b_sandbox_json(s, e2b_sandbox_of(s), false));
		break;
	}
	case E2B_KILL:
		kill_sandbox(r);
		break;
	case E2B_TIMEOUT:
		timeout(r);
		break;
	case E2B_PAUSE:
		pause_sandbox(r);
		break;
	case E2B_CONNECT:
		connect_sandbox(r);
		break;
	case E2B_METRICS:
		metrics(r);
		break;
	case E2B_NETWORK:
		network(r);
		break;
	case E2B_FORK:
		e2b_fork(r);
		break;
	case E2B_SNAPSHOT_CREATE:
		e2b_snapshot_create(r);
		break;
	case E2B_SNAPSHOT_LIST:
		e2b_snapshot_list(r);
		break;
	case E2B_SNAPSHOT_DELETE:
		e2b_snapshot_delete(r);
		break;
	case E2B_BAD_METHOD:
		e2b_error(r, 405, "method not allowed");
		break;
	case E2B_LIVE_VIEW:
	case E2B_LIVE_SOCKET:
		e2b_live(r);
		break;
	default:
		e2b_envd(r);
		break;
	}
}

/* The largest body r may have: E2B_MAX_FILE_BODY for a file upload, else
 * HTTP_MAX_BODY. */
static size_t body_max_of(const struct http_req *r)
{
	const struct e2b_call *c = e2b_call_of(r);

	return c && c->route.kind == E2B_ENVD_FILES ? E2B_MAX_FILE_BODY : HTTP_MAX_BODY;
}

static void call_release(void *state)
{
	struct e2b_call *c = state;

	e2b_wait_end(&c->wait);
	job_ticket_release(c->ticket);
	c->ticket = NULL;
	e2b_fork_release(c);
	e2b_snapshot_release(c);
	e2b_envd_release(c);
}

/* On each wake-up of the loop: streams with news become writable, ended
 * processes are reaped. */
static void poke_all(struct gw *gw)
{
	e2b_envd_poke_all();
	e2b_sandbox_reap_all(gw);
}

/* envd's (49983) and the desktop SDK's stream (6080: its live view and
 * /websockify, and the gateway's web viewer on that host) */
static bool owns_port(int port)
{
	return port == E2B_ENVD_PORT || port == E2B_STREAM_PORT;
}

const struct api_door_ops e2b_door = {
	.name = "e2b",
	.claim = claim,
	.refuse_early = refuse_early,
	.body_max_of = body_max_of,
	.handle = handle,
	.resume = e2b_envd_resume, /* envd's commands wait on their session */
	.audit_of = audit_of,
	.state_size = sizeof(struct e2b_call),
	.state_release = call_release,
	.poke_all = poke_all,
	.ws_claim = e2b_websockify_is,
	.ws_confirm = e2b_websockify_confirm,
	.ws_callback = e2b_websockify_callback,
	.raw_callback = e2b_websockify_door_callback,
	.stream_origin = e2b_live_stream_origin,
	.owns_port = owns_port,
};
