/* gateway/e2b/e2b_fork.c: see e2b_fork.h. The call's progress (struct
 * e2b_fork) is the call's own (e2b_call::fork), freed with it; it waits
 * on the source while it is busy, then on each fork in turn, through the
 * call's one e2b_wait (a look that moves on starts the next wait). */
#include "gateway/e2b/e2b_fork.h"

#include "common/log.h"
#include "gateway/api/api_int.h"
#include "gateway/e2b/e2b_api.h"
#include "gateway/e2b/e2b_req.h"
#include "gateway/e2b/sandbox.h"
#include "gateway/session/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct e2b_fork {
	int count, timeout_s;
	char source[SESS_ID_MAX];
	char child[SESS_ID_MAX]; /* the fork waited on, "" while none */
	json_t *results; /* owned: one entry per fork made or refused */
};

int e2b_fork_parse(const char *body, size_t len, int *timeout_s, int *count, char *err,
		   size_t errlen)
{
	json_t *root = len ? json_loadb(body, len, 0, NULL) : json_object(), *v;
	int rc = -EINVAL;

	*timeout_s = E2B_FORK_DEFAULT_TIMEOUT_S;
	*count = 1;
	if (!json_is_object(root)) {
		snprintf(err, errlen, "the body is not a JSON object");
		goto out;
	}
	if ((v = json_object_get(root, "timeout")) && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > E2B_MAX_TIMEOUT_S) {
			snprintf(err, errlen, "timeout must be whole seconds in 0..86400");
			goto out;
		}
		if (json_integer_value(v))
			*timeout_s = (int)json_integer_value(v);
	}
	if ((v = json_object_get(root, "count")) && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > E2B_FORK_MAX) {
			snprintf(err, errlen, "count must be a whole number from 1 to %d",
				 E2B_FORK_MAX);
			goto out;
		}
		*count = (int)json_integer_value(v);
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

static void result_error(struct e2b_fork *f, int status, const char *message)
{
	json_array_append_new(f->results, json_pack("{s:{s:i, s:o}}", "error", "code", status,
						    "message", api_error_text(message)));
}

/* A new fork's sandbox: the source's template name, metadata, envVars,
 * the fork's timeout (counted once it runs); not kept when out of memory
 * (the fork runs on as a plain session). */
static void adopt_child(struct e2b_fork *f, struct sess *src, struct sess *child)
{
	struct e2b_sandbox *from = e2b_sandbox_of(src), *sb = e2b_sandbox_get(child);

	if (!sb)
		return;
	if (from) {
		snprintf(sb->template_id, sizeof(sb->template_id), "%s", from->template_id);
		json_object_update(sb->metadata, from->metadata);
		json_object_update(sb->env_vars, from->env_vars);
		sb->auto_pause = from->auto_pause;
	}
	sb->timeout_s = f->timeout_s;
	if (e2b_sandbox_save(sb) < 0)
		log_warn("e2b", "%s: its metadata and envVars would not survive a restart",
			 sess_id(child));
	sess_set_timeout(child, f->timeout_s + E2B_WAIT_MS / 1000);
}

static bool look(struct e2b_wait *w, bool late);

/* Answers r with the results once every fork asked for has one. */
static bool answer_if_done(struct http_req *r, struct e2b_fork *f)
{
	if ((int)json_array_size(f->results) < f->count)
		return false;
	http_reply_json(r, 201, json_incref(f->results));
	return true;
}

/* Starts the next fork (or waits for the source to be free first).
 * Returns true once r is answered or a wait is under way. */
static bool next(struct http_req *r, struct e2b_fork *f, bool late)
{
	struct e2b_call *c = e2b_call_of(r);

	while (!answer_if_done(r, f)) {
		struct sess *src = sess_find(r->gw, f->source), *child;
		struct api_error e = { 0 };

		if (!src) {
			result_error(f, 404, "the sandbox forked went meanwhile");
			continue;
		}
		if (sess_busy(src) && !late) {
			e2b_wait_start(&c->wait, r->gw->ctx, src, NULL, E2B_WAIT_MS, look);
			return true;
		}
		if (sess_fork(src, &child, &e) < 0) {
			result_error(f, e.status ? e.status : 500,
				     e.message[0] ? e.message : "the fork did not start");
			continue;
		}
		adopt_child(f, src, child);
		snprintf(f->child, sizeof(f->child), "%s", sess_id(child));
		e2b_wait_start(&c->wait, r->gw->ctx, child, NULL, E2B_WAIT_MS, look);
		return true;
	}
	return true;
}

/* The fork waited on is up (or failed, or the wait is over); else, the
 * source is free again. Moves on to the next. */
static bool look(struct e2b_wait *w, bool late)
{
	struct e2b_call *c = lws_container_of(w, struct e2b_call, wait);
	struct http_req *r = c->r;
	struct e2b_fork *f = c->fork;
	bool was_child = f->child[0] != '\0';
	struct sess *child;

	if (was_child) {
		child = sess_find(r->gw, f->child);
		if (child && sess_state_of(child) != SESS_FAILED &&
		    (sess_busy(child) || sess_state_of(child) != SESS_READY ||
		     !e2b_agent_up(child)) &&
		    !late)
			return false;
		if (!child)
			result_error(f, 410, "the fork was killed meanwhile");
		else if (sess_state_of(child) == SESS_FAILED)
			result_error(f, 500,
				     sess_error(child)[0] ? sess_error(child) : "the fork failed");
		else if (sess_state_of(child) != SESS_READY)
			result_error(f, 504, "the fork did not start in time");
		else {
			struct e2b_sandbox *sb = e2b_sandbox_of(child);

			if (sb)
				sess_set_timeout(child, sb->timeout_s);
			json_array_append_new(f->results,
					      json_pack("{s:o}", "sandbox",
							e2b_sandbox_json(child, sb, true)));
		}
		f->child[0] = '\0';
	}
	/* a fork's wait is its own; the source's ends at its deadline */
	return next(r, f, was_child ? false : late);
}

void e2b_fork(struct http_req *r)
{
	struct e2b_call *c = e2b_call_of(r);
	struct e2b_fork *f;
	struct sess *s;
	char err[160];
	int timeout_s, count;

	if (!e2b_operator_ok(r))
		return;
	if (e2b_fork_parse(r->body, r->body_len, &timeout_s, &count, err, sizeof(err)) < 0) {
		e2b_error(r, 400, err);
		return;
	}
	if (!(s = e2b_route_sess(r)))
		return;
	if (sess_state_of(s) != SESS_READY && sess_state_of(s) != SESS_PAUSED) {
		e2b_error(r, 409, "the sandbox is not running");
		return;
	}
	if (!(f = calloc(1, sizeof(*f))) || !(f->results = json_array())) {
		free(f);
		e2b_error(r, 500, "out of memory");
		return;
	}
	f->count = count;
	f->timeout_s = timeout_s;
	snprintf(f->source, sizeof(f->source), "%s", sess_id(s));
	c->fork = f;
	api_hold(r, count * (E2B_WAIT_MS / 1000 + 10));
	next(r, f, false);
}

void e2b_fork_release(struct e2b_call *c)
{
	if (!c->fork)
		return;
	json_decref(c->fork->results);
	free(c->fork);
	c->fork = NULL;
}
