/* gateway/api/api_ops.c: POST /v1/sessions/{id}/pause, /resume and /fork, and
 * GET /v1/sessions/{id}/events. Pause and resume answer once done (an
 * on-disk pause or resume takes a few seconds: the request waits), and
 * start once a job the session is busy with has ended (bounded); fork
 * answers at once with the new session ("starting"), or once it is ready
 * with ?wait=ready; events answer at once, or with ?wait_s=N once there
 * is one (long polling). */
#include "common/fsutil.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/api/bodies.h"
#include "gateway/session/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The body's pause mode (bodies.h), or -EINVAL with r answered. */
static int pause_mode(struct http_req *r, enum sess_pause *how)
{
	struct api_error e;

	if (api_pause_parse(r->body, r->body_len, how, &e) < 0) {
		http_reply_api_error(r, &e);
		return -EINVAL;
	}
	return 0;
}

/* An empty body or {} only, else -EINVAL with r answered. */
static int empty_body(struct http_req *r)
{
	struct api_error e;

	if (api_empty_body_parse(r->body, r->body_len, &e) < 0) {
		http_reply_api_error(r, &e);
		return -EINVAL;
	}
	return 0;
}

/* Answers a pause or resume that is done: the session, or why it failed. */
static void answer_op(struct http_req *r, struct sess *s)
{
	bool resume = r->route.kind == R_SESSION_RESUME;

	if (sess_state_of(s) == SESS_FAILED)
		http_reply_error(r, 500, resume ? "resume_failed" : "pause_failed", sess_error(s));
	else if (resume && sess_state_of(s) != SESS_READY)
		http_reply_error(r, 500, "resume_failed",
				 sess_error(s)[0] ? sess_error(s) : "not resumed");
	else if (!resume && sess_state_of(s) != SESS_PAUSED) /* the guest runs on */
		http_reply_error(r, sess_error_status(s),
				 sess_error_status(s) == 507 ? "insufficient_storage"
							     : "pause_failed",
				 sess_error(s)[0] ? sess_error(s) : "not paused");
	else
		api_reply_session(r, s, 200, false);
}

/* Starts the pause or resume r asks for (st says which mode): answers at
 * once, or waits for its job. */
static void start_op(struct http_req *r, struct sess *s, struct api_op_state *st)
{
	bool resume = r->route.kind == R_SESSION_RESUME;
	struct api_error e;

	st->started = true;
	if (!resume && sess_state_of(s) == SESS_PAUSED && !sess_busy_with(s) &&
	    (int)sess_paused_how(s) == st->how) {
		api_reply_session(r, s, 200, false); /* already: idempotent */
		return;
	}
	if ((resume ? sess_resume(s, &e) : sess_pause(s, (enum sess_pause)st->how, &e)) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	if (sess_busy_with(s))
		api_wait(r, s, API_DEFAULT_WAIT_S);
	else
		answer_op(r, s);
}

/* A session busy for a moment (adopting after a restart, a pause under
 * way) is waited for, up to OP_BUSY_WAIT_S, before the operation starts;
 * past that the operation is refused as busy (409). */
#define OP_BUSY_WAIT_S 60

static void pause_or_resume(struct http_req *r, struct sess *s, struct api_op_state *st)
{
	if (sess_busy_with(s))
		api_wait(r, s, OP_BUSY_WAIT_S);
	else
		start_op(r, s, st);
}

void api_pause(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct api_op_state *st;
	enum sess_pause how;

	if (!s || !(st = http_route_state(r)) || pause_mode(r, &how) < 0 || !api_can_wait(r, s))
		return;
	st->how = (int)how;
	api_audit_set(r, "mode", json_string(how == SESS_PAUSE_DISK ? "disk" : "memory"));
	pause_or_resume(r, s, st);
}

void api_resume(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct api_op_state *st;

	if (!s || !(st = http_route_state(r)) || empty_body(r) < 0 || !api_can_wait(r, s))
		return;
	pause_or_resume(r, s, st);
}

void api_fork(struct http_req *r)
{
	struct sess *s = api_route_session(r), *child;
	struct api_error e;
	char buf[16];
	const char *w;

	if (!s || empty_body(r) < 0)
		return;
	w = http_query(r, "wait=", buf, sizeof(buf));
	if (w && strcmp(w, "ready")) {
		http_reply_error(r, 400, "invalid_argument", "wait must be 'ready'");
		return;
	}
	if (sess_fork(s, &child, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	api_audit_set(r, "into", json_string(sess_id(child)));
	if (w)
		api_wait(r, child, API_DEFAULT_WAIT_S);
	else
		api_reply_session(r, child, 201, true);
}

static void answer_events(struct http_req *r, struct sess *s, int64_t after)
{
	json_t *events = events_since(sess_events(s), after);

	if (!events) {
		http_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	http_reply_json(r, 200,
			json_pack("{s:o, s:I}", "events", events, "last",
				  (json_int_t)events_last(sess_events(s))));
}

void api_events(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct api_after_state *st;
	int after, wait_s;

	if (!s || api_query_int(r, "after=", 0, 0, 2000000000, &after) < 0 ||
	    api_query_int(r, "wait_s=", 0, 0, 300, &wait_s) < 0)
		return;
	if (wait_s > 0 && events_last(sess_events(s)) <= after) {
		if (!(st = http_route_state(r)))
			return;
		st->after = after;
		api_watch(r, s, wait_s);
		return;
	}
	answer_events(r, s, after);
}

void api_op_woken(struct http_req *r, struct sess *s, bool timed_out)
{
	struct api_op_state *st = r->route_state;

	if (sess_busy_with(s) && !timed_out)
		return;
	api_unpark(r, s);
	if (!st->started)
		start_op(r, s, st); /* a job still running refuses it: busy */
	else if (sess_busy_with(s))
		http_reply_error(r, 504, "timeout", "still busy; ask GET for its state later");
	else
		answer_op(r, s);
}

void api_events_woken(struct http_req *r, struct sess *s, bool timed_out)
{
	struct api_after_state *st = r->route_state;

	if (events_last(sess_events(s)) <= st->after && !timed_out)
		return;
	api_unpark(r, s);
	answer_events(r, s, st->after);
}
