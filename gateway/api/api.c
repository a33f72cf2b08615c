/* gateway/api/api.c: see api.h. The API is documented in docs/api.md. */
#include "gateway/api/api.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/api/bodies.h"

#include "common/fsutil.h"
#include "gateway/action/batch.h"
#include "gateway/action/run.h"
#include "gateway/action/trajectory.h"
#include "gateway/session/session.h"
#include "gateway/stream/recorder.h"
#include "gateway/stream/stream_hub.h"

#include <dirent.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Answers 401/403 and returns false unless the token has need on session
 * s (NULL: an operator-only route). */
/* What r's token may do on s; with no session (an operator route), the
 * operator key's rights or those of whichever session's token it is, which
 * is known there but holds no "admin". The token is hashed once. */
static unsigned token_rights(struct http_req *r, const struct sess *s)
{
	char h[AUTH_HASH_LEN + 1];
	const char *which = "";
	struct stream_hub *hub;
	unsigned got;

	if (!r->token[0])
		return 0;
	auth_token_hash(r->token, h);
	got = sess_rights_of_hash(r->gw, s, h, &which);
	for (struct sess *o = sess_first(r->gw); !s && !got && o; o = sess_next(o))
		got = sess_rights_of_hash(r->gw, o, h, &which);
	/* A sharing link's token is good on the stream alone: here it gets
	 * nothing, but the audit log says what it was. */
	hub = !got && s ? stream_hub_find(s) : NULL;
	api_audit_who(r, h, which,
		      hub && share_scope_of_hash(&hub->shares, h, fs_now_ms()) != AUTH_NONE);
	return got;
}

bool api_authorise(struct http_req *r, const struct sess *s, unsigned need)
{
	unsigned got = token_rights(r, s);
	char msg[160];

	if ((got & need) == need)
		return true;
	/* A project's key on another project's session: as if there were none. */
	if (!got && s && api_project(r)) {
		http_reply_error(r, 404, "not_found", "no such session");
		return false;
	}
	if (!r->token[0])
		http_reply_error(r, 401, "unauthorized",
				 "send an API key or session token as Authorization: Bearer TOKEN");
	else if (!got)
		http_reply_error(r, 401, "unauthorized", "the token is not valid here");
	else {
		unsigned missing = need & ~got;

		snprintf(msg, sizeof(msg), "the token's scopes do not include \"%s\"%s",
			 auth_right_name(missing & -missing) ? auth_right_name(missing & -missing)
							     : "?",
			 missing & AUTH_R_ADMIN ? " (the operator key's alone)" : "");
		http_reply_error(r, 403, "forbidden", msg);
	}
	return false;
}

/* The token rights r's route needs (its row's, without routes.h's flags). */
static unsigned route_need(const struct http_req *r)
{
	return route_right(r->route.kind, r->method) & AUTH_RIGHTS_OPERATOR;
}

bool api_authorise_route(struct http_req *r)
{
	return api_authorise(r, NULL, route_need(r));
}

const char *api_project(struct http_req *r)
{
	return sess_project_of(r->gw, r->token);
}

/* The session of the route, answering 404 when there is none. Tokens of
 * other sessions are checked only after the lookup, so a probe with a wrong
 * token cannot tell existing ids from missing ones: both get 401 or 404. */
struct sess *api_route_session(struct http_req *r)
{
	struct sess *s = sess_find(r->gw, r->route.id);

	if (!s) {
		if (sess_rights(r->gw, NULL, r->token, NULL) & (AUTH_R_ADMIN | AUTH_R_MANAGE))
			http_reply_error(r, 404, "not_found", "no such session");
		else
			http_reply_error(r, 401, "unauthorized", "the token is not valid here");
		return NULL;
	}
	return api_authorise(r, s, route_need(r)) ? s : NULL;
}

void api_refuse_early(struct http_req *r)
{
	const struct route_def *d = &route_table[r->route.kind];
	struct sess *s = NULL;

	if (d->right & ROUTE_NO_TOKEN) /* answered after the body, without a token */
		return;
	if (d->refuse_early) {
		d->refuse_early(r);
		return;
	}
	if (route_names_session(r->route.kind))
		s = sess_find(r->gw, r->route.id);
	if (token_rights(r, s)) {
		if (d->begin)
			d->begin(r);
		return;
	}
	r->close_after = true;
	if (!r->token[0])
		http_reply_error(r, 401, "unauthorized",
				 "send an API key or session token as Authorization: Bearer TOKEN");
	else if (s && api_project(r)) /* another project's session */
		http_reply_error(r, 404, "not_found", "no such session");
	else
		http_reply_error(r, 401, "unauthorized", "the token is not valid here");
}

int api_query_int(struct http_req *r, const char *name, int def, int min, int max, int *out)
{
	char buf[32], msg[128];
	const char *v = http_query(r, name, buf, sizeof(buf));
	char *end;
	long n;

	*out = def;
	if (!v)
		return 0;
	n = strtol(v, &end, 10);
	if (end == v || *end || n < min || n > max) {
		snprintf(msg, sizeof(msg), "%.*s must be an integer in %d..%d",
			 (int)strlen(name) - 1, name, min, max);
		http_reply_error(r, 400, "invalid_argument", msg);
		return -EINVAL;
	}
	*out = (int)n;
	return 0;
}

void api_reply_session(struct http_req *r, const struct sess *s, int status, bool tokens)
{
	json_t *j = api_session_json(s, tokens);

	if (!j)
		http_reply_error(r, 500, "internal", "out of memory");
	else
		http_reply_json(r, status, j);
}

static void on_wait_timeout(lws_sorted_usec_list_t *sul)
{
	struct http_req *r = lws_container_of(sul, struct http_req, sul_wait);

	lws_callback_on_writable(r->wsi);
}

void api_hold(struct http_req *r, int seconds)
{
	/* lws would close a request with no traffic after its keep-alive
	 * timeout (5 s). */
	lws_set_timeout(r->wsi, PENDING_TIMEOUT_USER_OK, seconds);
}

bool api_can_wait(struct http_req *r, struct sess *s)
{
	if (sess_can_wait(s))
		return true;
	http_reply_error(r, 503, "busy", "too many requests wait on this session");
	return false;
}

static int park(struct http_req *r, struct sess *s, int timeout_s, bool watch)
{
	if (sess_add_waiter(s, r->wsi, watch) < 0) {
		http_reply_error(r, 503, "busy",
				 watch ? "too many requests watch this session"
				       : "too many requests wait on this session");
		return -EBUSY;
	}
	snprintf(r->wait_id, sizeof(r->wait_id), "%s", sess_id(s));
	r->wait_until_ms = fs_now_ms() + (int64_t)timeout_s * 1000;
	api_hold(r, timeout_s + 10);
	lws_sul_schedule(r->gw->ctx, 0, &r->sul_wait, on_wait_timeout,
			 (lws_usec_t)timeout_s * LWS_US_PER_SEC);
	return 0;
}

int api_wait(struct http_req *r, struct sess *s, int timeout_s)
{
	return park(r, s, timeout_s, false);
}

int api_watch(struct http_req *r, struct sess *s, int timeout_s)
{
	return park(r, s, timeout_s, true);
}

void api_unpark(struct http_req *r, struct sess *s)
{
	if (s)
		sess_remove_waiter(s, r->wsi);
	r->wait_id[0] = '\0';
	lws_sul_cancel(&r->sul_wait);
}

void api_resume_wait(struct http_req *r)
{
	const struct route_def *d = &route_table[r->route.kind];
	struct sess *s = sess_find(r->gw, r->wait_id);
	bool timed_out = fs_now_ms() >= r->wait_until_ms;

	if (!s) {
		api_unpark(r, NULL);
		http_reply_error(r, 410, "gone", "the session was deleted meanwhile");
		return;
	}
	if (d->resume)
		d->resume(r, s, timed_out);
	else
		api_session_woken(r, s, timed_out);
}

/* Answers once s is not busy, with status and its tokens or not. */
static void session_woken(struct http_req *r, struct sess *s, bool timed_out, int status,
			  bool tokens)
{
	if (sess_busy(s) && !timed_out)
		return;
	api_unpark(r, s);
	api_reply_session(r, s, status, tokens);
}

void api_session_woken(struct http_req *r, struct sess *s, bool timed_out)
{
	session_woken(r, s, timed_out, 200, false);
}

void api_created_woken(struct http_req *r, struct sess *s, bool timed_out)
{
	session_woken(r, s, timed_out, 201, true);
}

/* Reads ?wait=: *wait is true for "ready"; anything else is answered 400. */
static int wait_arg(struct http_req *r, bool *wait)
{
	char buf[32];
	const char *v = http_query(r, "wait=", buf, sizeof(buf));

	*wait = v != NULL;
	if (v && strcmp(v, "ready")) {
		http_reply_error(r, 400, "invalid_argument", "wait must be 'ready'");
		return -EINVAL;
	}
	return 0;
}

void api_create_session(struct http_req *r)
{
	struct session_request req;
	struct api_error e;
	struct sess *s;
	bool wait;
	int wait_s, rc;

	if (!api_authorise_route(r) || wait_arg(r, &wait) < 0 ||
	    api_query_int(r, "timeout_s=", API_DEFAULT_WAIT_S, 1, 3600, &wait_s) < 0)
		return;
	if (session_request_parse(r->body ? r->body : "", r->body_len, &req, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	snprintf(req.project, sizeof(req.project), "%s", api_project(r) ? api_project(r) : "");
	rc = sess_create(r->gw, &req, &s, &e);
	session_request_free(&req);
	if (rc < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	/* Recorded from the start: the first frame comes with the screen. */
	if (req.record && rec_start(s, &e) < 0) {
		sess_destroy(s, NULL);
		http_reply_api_error(r, &e);
		return;
	}
	if (req.record)
		api_audit_set(r, "record", json_true());
	snprintf(r->audit_session, sizeof(r->audit_session), "%s", sess_id(s));
	if (sess_template(s)[0])
		api_audit_set(r, "template", json_string(sess_template(s)));
	else
		api_audit_set(r, "image", json_string(sess_image(s)));
	if (wait && sess_busy(s)) {
		api_watch(r, s, wait_s);
		return;
	}
	api_reply_session(r, s, 201, true);
}

void api_list_sessions(struct http_req *r)
{
	json_t *arr = json_array();
	const char *project;
	char only[PROJECT_NAME_MAX + 2];

	if (!api_authorise_route(r)) {
		json_decref(arr);
		return;
	}
	/* a project's key sees its own; the operator may ask for one project
	 * (?project=, "" for the operator's own sessions) */
	project = api_project(r);
	if (!project && http_query(r, "project=", only, sizeof(only)))
		project = only;
	for (struct sess *s = sess_first(r->gw); s; s = sess_next(s))
		if (sess_in_project(s, project))
			json_array_append_new(arr, api_session_json(s, false));
	http_reply_json(r, 200, json_pack("{s:o}", "sessions", arr));
}

void api_get_session(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	bool wait;
	int wait_s;

	if (!s || wait_arg(r, &wait) < 0 ||
	    api_query_int(r, "timeout_s=", API_DEFAULT_WAIT_S, 1, 3600, &wait_s) < 0)
		return;
	if (wait && sess_busy(s)) {
		api_watch(r, s, wait_s);
		return;
	}
	api_reply_session(r, s, 200, false);
}

/* A DELETE answers once the guest is gone (it quits on a job thread: its
 * ticket's watch says when), or after this long anyway. */
#define DELETE_WAIT_MS 15000

static void delete_answer(struct api_delete_state *st)
{
	struct http_req *r = st->r;

	lws_sul_cancel(&st->sul);
	job_ticket_unwatch(st->ticket);
	job_ticket_release(st->ticket);
	st->ticket = NULL;
	http_reply_json(r, 200, json_pack("{s:s, s:b}", "id", r->route.id, "deleted", 1));
}

static void delete_done(void *ud)
{
	delete_answer(ud);
}

static void delete_deadline(lws_sorted_usec_list_t *sul)
{
	delete_answer(lws_container_of(sul, struct api_delete_state, sul));
}

void api_delete_state_release(void *state)
{
	struct api_delete_state *st = state;

	lws_sul_cancel(&st->sul);
	job_ticket_unwatch(st->ticket);
	job_ticket_release(st->ticket);
}

void api_delete_session(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct api_delete_state *st;

	if (!s || !(st = http_route_state(r)))
		return;
	st->r = r;
	st->ticket = job_ticket_new();
	sess_destroy(s, st->ticket);
	if (!job_ticket_watch(st->ticket, r->gw->ctx, delete_done, st)) {
		delete_answer(st);
		return;
	}
	api_hold(r, DELETE_WAIT_MS / 1000 + 5);
	lws_sul_schedule(r->gw->ctx, 0, &st->sul, delete_deadline,
			 (lws_usec_t)DELETE_WAIT_MS * LWS_US_PER_MS);
}

/* The run of a screenshot request ended: the image, with its geometry. */
static void screenshot_done(void *ud, struct run_outcome *out)
{
	struct http_req *r = ud;
	struct api_shot_state *st = r->route_state;
	struct sess *s;
	char v[64];

	st->run = NULL;
	if (out->failed) {
		http_reply_api_error(r, &out->err);
		return;
	}
	snprintf(v, sizeof(v), "%d", out->image->width);
	http_add_header(r, "x-vitrine-width", v);
	snprintf(v, sizeof(v), "%d", out->image->height);
	http_add_header(r, "x-vitrine-height", v);
	snprintf(v, sizeof(v), "%.6f", out->image->scale);
	http_add_header(r, "x-vitrine-scale", v);
	/* The session's size as of the frame shown (the guest may have changed
	 * its resolution since the request came). */
	if ((s = sess_find(r->gw, r->route.id))) {
		sess_follow_screen(s);
		st->screen_w = sess_screen(s).width;
		st->screen_h = sess_screen(s).height;
	}
	snprintf(v, sizeof(v), "%dx%d", st->screen_w, st->screen_h);
	http_add_header(r, "x-vitrine-screen", v);
	/* what the agent saw after its last step (a viewer's thumbnail is not) */
	if (s && r->route.kind != R_SESSION_THUMBNAIL)
		trajectory_screenshot(s, out->image);
	http_reply_bytes(r, 200,
			 out->image->format == DISPLAY_FORMAT_PNG ? "image/png" : "image/jpeg",
			 out->image->data, out->image->len);
	display_image_unref(out->image);
}

/* GET .../screenshot, or with preview GET .../thumbnail: a small picture of
 * the latest frame for a viewer's session list (320x200 fitted, JPEG q60,
 * no round trip to QEMU, at most 640 a side) that is not the agent's use
 * of the session (struct shot_opts' preview). */
static void screenshot(struct http_req *r, bool preview)
{
	struct sess *s = api_route_session(r);
	struct api_shot_state *st;
	int max_side = preview ? 640 : 16384;
	struct shot_opts o;
	struct api_error e;
	json_t *j;
	char buf[32];
	const char *format;
	int quality, width, height, fresh;

	if (!s)
		return;
	shot_opts_default(&o);
	o.quiet_ms = 0;
	format = http_query(r, "format=", buf, sizeof(buf));
	if (api_query_int(r, "quality=", preview ? 60 : 80, 1, 100, &quality) < 0 ||
	    api_query_int(r, "width=", preview ? 320 : 0, 1, max_side, &width) < 0 ||
	    api_query_int(r, "height=", preview ? 200 : 0, 1, max_side, &height) < 0 ||
	    api_query_int(r, "fresh=", preview ? 0 : 1, 0, 1, &fresh) < 0)
		return;
	o.preview = preview;
	j = json_pack("{s:s, s:i}", "format", format ? format : "jpeg", "quality", quality);
	if (width)
		json_object_set_new(j, "width", json_integer(width));
	if (height)
		json_object_set_new(j, "height", json_integer(height));
	o.fresh = fresh;
	if (shot_opts_parse(j, &o, &e) < 0) {
		json_decref(j);
		http_reply_api_error(r, &e);
		return;
	}
	json_decref(j);
	if (!(st = http_route_state(r)))
		return;
	st->screen_w = sess_screen(s).width;
	st->screen_h = sess_screen(s).height;
	st->run = run_start(s, NULL, &o, screenshot_done, r, &e);
	if (!st->run)
		http_reply_api_error(r, &e);
	else /* settling, then encoding on the pool, may take seconds */
		api_hold(r, o.timeout_ms / 1000 + API_RUN_GRACE_S);
}

void api_screenshot(struct http_req *r)
{
	screenshot(r, false);
}

void api_thumbnail(struct http_req *r)
{
	screenshot(r, true);
}

void api_shot_state_release(void *state)
{
	struct api_shot_state *st = state;

	run_cancel(st->run);
}

static void act_done(void *ud, struct run_outcome *out)
{
	struct http_req *r = ud;
	struct api_act_state *st = r->route_state;

	st->run = NULL;
	if (out->failed && out->reply) /* a batch: which action failed, what ran */
		http_reply_json(r, out->err.status, out->reply);
	else if (out->failed)
		http_reply_api_error(r, &out->err);
	else
		http_reply_json(r, 200, out->reply);
	display_image_unref(out->image);
}

struct run *api_start_action(struct sess *s, const char *text, size_t len,
			     enum traj_channel channel, run_done_fn done, void *ud, int *status,
			     json_t **error)
{
	struct traj_step *st = trajectory_begin(s, text, len, channel);
	struct shot_opts o;
	struct api_error e;
	struct action_batch *a;
	struct run *run;

	/* Live view: while a person drives the guest, agents wait their turn. */
	if (stream_controller(s)) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "a person (%s) holds control of this session in the live view",
			 stream_controller(s));
		*status = 409;
		*error = api_error_json("controlled_by_viewer", msg);
		trajectory_refused(s, st, *status, *error);
		return NULL;
	}
	sess_follow_screen(s); /* coordinates on the screen the agent last saw */
	if (!(a = api_action_parse(text, len, sess_screen(s).width, sess_screen(s).height,
				   sess_keymap(s), &o, status, error))) {
		trajectory_refused(s, st, *status, *error);
		return NULL;
	}
	if (!a->is_batch)
		traj_step_parsed(st, a->actions[0]);
	run = run_start(s, a, &o, done, ud, &e);
	if (!run) {
		*status = e.status;
		*error = api_error_json(e.code, e.message);
		trajectory_refused(s, st, *status, *error);
	} else {
		run_record(run, st);
	}
	return run;
}

void api_act(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct api_act_state *st;
	json_t *error = NULL;
	struct api_error e;
	int status, auto_resume;

	if (!s || api_query_int(r, "auto_resume=", 0, 0, 1, &auto_resume) < 0 ||
	    !(st = http_route_state(r)))
		return;
	if (auto_resume && !api_can_wait(r, s))
		return;
	if (auto_resume && !st->resumed && sess_state_of(s) == SESS_PAUSED && !sess_busy_with(s)) {
		st->resumed = true; /* once: a resume that fails answers below */
		if (sess_resume(s, &e) < 0) {
			http_reply_api_error(r, &e);
			return;
		}
	}
	if (auto_resume && sess_busy_with(s)) {
		api_wait(r, s, API_DEFAULT_WAIT_S);
		return;
	}
	st->run = api_start_action(s, r->body, r->body_len, TRAJ_HTTP, act_done, r, &status,
				   &error);
	if (!st->run)
		http_reply_json(r, status, error);
	else /* the action's steps, settling and encoding may take a while */
		api_hold(r, API_ACTION_HOLD_S);
}

void api_act_woken(struct http_req *r, struct sess *s, bool timed_out)
{
	/* An action that resumed its session runs once that is done. */
	if (sess_busy(s) && !timed_out)
		return;
	api_unpark(r, s);
	api_act(r);
}

void api_act_state_release(void *state)
{
	struct api_act_state *st = state;

	run_cancel(st->run);
}

void api_handle(struct http_req *r)
{
	route_table[r->route.kind].handle(r);
}
