/* gateway/api/api_exec.c: POST /v1/sessions/{id}/exec: a command in the guest
 * (guest/exec.h); the request waits on its session until the command's
 * end wakes it (its completion: this request alone). */
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/guest/exec.h"
#include "gateway/session/session.h"

#include <stdio.h>

/* The command of r ended: r resumes (api_resume_wait, when writable). */
static void command_ended(struct exec_job *j, void *ud)
{
	struct http_req *r = ud;

	(void)j;
	lws_callback_on_writable(r->wsi);
}

/* Starts j (owned from now on) for r, which waits up to wait_s for it. */
static void launch(struct http_req *r, struct sess *s, struct exec_job *j, int wait_s)
{
	/* Admission first: a busy answer leaves no command running. */
	if (api_wait(r, s, wait_s) < 0) {
		exec_free(j);
		return;
	}
	if (exec_start(j, r->gw, sess_agent_of(s), command_ended, r) < 0) {
		exec_free(j);
		api_unpark(r, s);
		http_reply_error(r, 500, "internal", "cannot start the command");
		return;
	}
	r->exec = j;
	sess_touch(s);
}

/* The audit entry's argv and user (never the environment: it may hold
 * secrets of the caller's). */
static void audit_command(struct http_req *r, const struct exec_job *j)
{
	json_t *argv = json_array();

	for (const char *const *a = exec_argv(j); argv && a && *a; a++)
		json_array_append_new(argv, json_string(*a));
	api_audit_set(r, "argv", argv ? argv : json_null());
	api_audit_set(r, "user", json_string(exec_as_root(j) ? "root" : "desktop"));
}

void api_exec(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct api_error e;
	struct exec_job *j;

	if (!s)
		return;
	if (!api_exec_ready(r, s))
		return;
	if (!(j = exec_parse(r->body, r->body_len, &e))) {
		http_reply_api_error(r, &e);
		return;
	}
	audit_command(r, j);
	if (exec_as_root(j) && !api_authorise(r, s, AUTH_R_EXEC | AUTH_R_ROOT)) {
		exec_free(j);
		return;
	}
	launch(r, s, j, EXEC_MAX_TIMEOUT_S + 60);
	if (r->exec)
		sess_count_use(s, 0, 0, 1); /* it runs */
}

bool api_exec_ready(struct http_req *r, struct sess *s)
{
	if (sess_guest_free(s) && sess_agent_of(s))
		return true;
	http_reply_error(r, 409,
			 sess_state_of(s) == SESS_PAUSED ? "session_paused" : "session_not_ready",
			 "the session is not running: commands need a ready session");
	return false;
}

void api_exec_start(struct http_req *r, struct sess *s, const char *const *argv, const void *in,
		    size_t in_len, int timeout_s)
{
	struct exec_job *j = exec_new(argv, in, in_len, timeout_s);

	if (!j) {
		http_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	launch(r, s, j, timeout_s + 30);
}

void api_exec_audit_result(struct http_req *r)
{
	const struct agent_exec_result *res;
	const char *err;

	if (!r->exec || exec_result(r->exec, &res, &err) < 0)
		return;
	api_audit_set(r, "exit_code", json_integer(res->exit_code));
	if (res->timed_out)
		api_audit_set(r, "timed_out", json_true());
}

bool api_exec_finished(struct http_req *r, struct sess *s, bool timed_out)
{
	if (!r->exec || (!exec_done(r->exec) && !timed_out))
		return false;
	api_unpark(r, s);
	if (exec_done(r->exec))
		return true;
	http_reply_error(r, 504, "timeout", "the guest did not answer");
	return false;
}

void api_exec_resume(struct http_req *r, struct sess *s, bool timed_out)
{
	json_t *answer;
	int status;

	if (!api_exec_finished(r, s, timed_out))
		return;
	api_exec_audit_result(r);
	answer = exec_answer(r->exec, &status);
	exec_release(r->exec);
	r->exec = NULL;
	http_reply_json(r, status, answer);
}
