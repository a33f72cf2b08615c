/* gateway/api/api_int.h: helpers the REST handler files share (api.c for
 * sessions, screenshots and actions; api_ops.c for pause, resume, fork and
 * events; api_templates.c for templates). Loop thread only. */
#ifndef VITRINE_GATEWAY_API_INT_H
#define VITRINE_GATEWAY_API_INT_H

#include "common/bytebuf.h"
#include "gateway/api/http.h"
#include "gateway/core/auth.h"

#define API_DEFAULT_WAIT_S 300
/* How long past its settle timeout a screenshot may take (encoding). */
#define API_RUN_GRACE_S 60
/* How long an action's request is kept open (steps, typing, settling,
 * encoding: each bounded on its own). */
#define API_ACTION_HOLD_S 300

struct sess;

/* Answers 401/403 and returns false unless the token has every right in
 * need (AUTH_R_* bits) on session s (NULL: an operator-only route). */
bool api_authorise(struct http_req *r, const struct sess *s, unsigned need);
/* The session of the route, answering 404/401 when there is none, and
 * 401/403 unless the token has the rights the route's row says
 * (route_right) on it. */
struct sess *api_route_session(struct http_req *r);
/* The project r's credential is held to (a project key's), NULL for any
 * other credential (core/project_table.h). */
const char *api_project(struct http_req *r);
/* Whether r's credential sees template name (the operator's templates and
 * its project's), answering 404 as for a missing one when not. */
bool api_template_visible(struct http_req *r, const char *name);
/* Whether it may change or export it (the operator any, a project's key
 * its project's), answering 404 or 403 when not. */
bool api_template_own(struct http_req *r, const char *name);
/* For a route without a session: answers 401/403 and returns false
 * unless the token has the rights its row says. */
bool api_authorise_route(struct http_req *r);
/* Reads ?name=N (name ends in '='), def when absent; answers 400 and
 * returns -EINVAL outside [min, max]. */
int api_query_int(struct http_req *r, const char *name, int def, int min, int max, int *out);
/* Answers with the session's JSON (with its tokens when tokens). */
void api_reply_session(struct http_req *r, const struct sess *s, int status, bool tokens);
/* Keeps lws from closing r for seconds while its answer is being made. */
void api_hold(struct http_req *r, int seconds);
/* Parks r until session s changes (api_resume_wait decides when it is
 * done) or timeout_s passes. 0, or -EBUSY when answered 503. */
int api_wait(struct http_req *r, struct sess *s, int timeout_s);
/* The same for a request that only watches (a long poll): those may take
 * at most SESS_MAX_WATCHERS of the places. */
int api_watch(struct http_req *r, struct sess *s, int timeout_s);
/* Answers 503 and returns false unless an operation could wait on s: asked
 * before anything starts, so that a busy answer leaves nothing running. */
bool api_can_wait(struct http_req *r, struct sess *s);

/* Stops waiting: r leaves s's waiters (s may be NULL: gone). */
void api_unpark(struct http_req *r, struct sess *s);

/* The routes' own state (struct route_def's state_size, got with
 * http_route_state), each named by the rows that use it. */
struct run;
struct tpl_import;
struct move_op;
/* screenshot, thumbnail */
struct api_shot_state {
	struct run *run; /* owned: the screenshot under way */
	int screen_w, screen_h; /* of the session, for the headers */
};
/* actions */
struct api_act_state {
	struct run *run; /* owned: the action under way */
	bool resumed; /* ?auto_resume=1 has been acted on */
};
/* events: answer once there is an event past after; recording.webm: the
 * export (its generation) the request waits for */
struct api_after_state {
	int64_t after;
};
/* pause, resume: the operation is started (else it waits for the
 * session's job to end first); pause's mode */
struct api_op_state {
	bool started;
	int how; /* enum sess_pause */
};
/* clipboard */
struct api_clip_state {
	size_t len; /* the text a PUT sets */
};
/* files: the guest path, the transfer (owned), a directory's lines */
struct file_xfer;
struct api_files_state {
	struct http_req *r;
	char path[1200];
	struct file_xfer *x;
	bool rx_stopped; /* its client is not read (the guest's side is blocked) */
	bool body_done; /* a PUT's body came whole */
	bool listing_on;
	struct bytebuf listing;
	lws_sorted_usec_list_t sul_hold; /* api_hold once lws set its own body timeout */
};
/* open: the URL */
struct api_path_state {
	char path[1200];
};
/* a session's DELETE: it waits for the guest to be gone */
struct api_delete_state {
	struct http_req *r;
	struct job_ticket *ticket; /* held, and watched until it is done */
	lws_sorted_usec_list_t sul; /* the deadline */
};
/* a template's export and import (api_template_move.c) */
struct move_req {
	struct http_req *r;
	struct tpl_import *im; /* owned: the import while its body comes */
	struct move_op *op; /* its job on the bulk queue, or NULL (the op's done clears it) */
};
/* Release what a state holds (its memory is the request's to free). */
void api_shot_state_release(void *state);
void api_act_state_release(void *state);
void api_move_req_release(void *state);
void api_delete_state_release(void *state);

/* api.c: the sessions, screenshots and actions; and the usual wakings of
 * a parked request: once the session is not busy, its JSON (200), or
 * with its tokens (201: a create, a fork's child). */
void api_list_sessions(struct http_req *r);
void api_create_session(struct http_req *r);
void api_get_session(struct http_req *r);
void api_delete_session(struct http_req *r);
void api_screenshot(struct http_req *r);
void api_thumbnail(struct http_req *r);
void api_act(struct http_req *r);
void api_act_woken(struct http_req *r, struct sess *s, bool timed_out);
void api_session_woken(struct http_req *r, struct sess *s, bool timed_out);
void api_created_woken(struct http_req *r, struct sess *s, bool timed_out);

/* api_ops.c */
void api_pause(struct http_req *r);
void api_resume(struct http_req *r);
void api_fork(struct http_req *r);
void api_events(struct http_req *r);
/* A parked pause or resume was woken (or timed out): answers once its
 * job is done; an events long poll once there is a new event. */
void api_op_woken(struct http_req *r, struct sess *s, bool timed_out);
void api_events_woken(struct http_req *r, struct sess *s, bool timed_out);

/* api_templates.c: a saved template's JSON (status "ready", or "stale"
 * with why), as GET /v1/templates/NAME answers it. */
struct vmm_template;
json_t *api_template_json(const char *name, const struct vmm_template *t, const char *stale);

/* api_exec.c */
void api_exec(struct http_req *r);
/* A parked exec request was woken: answers once its command ended. */
void api_exec_resume(struct http_req *r, struct sess *s, bool timed_out);

/* True when s can run commands now; else answers 409 and returns false. */
bool api_exec_ready(struct http_req *r, struct sess *s);
/* Runs argv as the desktop's user (exec_new) for r, which waits for it;
 * the route's *_resume answers. On failure r is answered. */
void api_exec_start(struct http_req *r, struct sess *s, const char *const *argv, const void *in,
		    size_t in_len, int timeout_s);

/* For a *_resume: true once r's command has ended (r unparked, the
 * caller answers); false while it runs, or when r waited too long (then
 * answered 504). */
bool api_exec_finished(struct http_req *r, struct sess *s, bool timed_out);
/* Adds r's ended command's exit code to its audit entry. */
void api_exec_audit_result(struct http_req *r);

/* api_guest.c: clipboard, open a URL, launch an app (commands), egress */
void api_clipboard(struct http_req *r);
void api_open(struct http_req *r);
void api_launch(struct http_req *r);
void api_guest_resume(struct http_req *r, struct sess *s, bool timed_out);
void api_egress(struct http_req *r);
void api_egress_log(struct http_req *r);

/* api_files.c */
void api_files(struct http_req *r);
/* A PUT's start before its body (the row's begin); its body limit
 * (--files-max-bytes); what its state holds let go of. */
void api_files_begin(struct http_req *r);
size_t api_files_body_max(const struct http_req *r);
void api_files_release(void *state);
/* The guest path for ?path=in: under /home/vitrine (relative paths start
 * there) or /tmp, no ".." part. Returns 0, or -1 when not allowed. Pure. */
int api_files_path(const char *in, char *out, size_t outlen);
/* A directory listing as the guest's find prints it ("d\t4096\t1796000000.123\tname"
 * lines; malformed ones are skipped) into {path, entries: [{name, type,
 * size, mtime}]}. Pure. NULL when out of memory or path is not UTF-8. */
json_t *api_files_listing(const char *path, const char *text, size_t len);

/* api_share.c: POST|DELETE /v1/sessions/{id}/share on s (r's token
 * already checked against the route's row: "act", and "share" too for a
 * DELETE). */
void api_share(struct http_req *r, struct sess *s);
/* The body of that request (len bytes, may be empty: {}): {"scope":
 * "view"|"control", "ttl_s"?: 1..SHARE_MAX_TTL_S} into *want and *ttl_s
 * (SHARE_DEFAULT_TTL_S when absent). Pure. Returns 0, or -EINVAL with *e
 * filled (400). */
int api_share_parse(const char *body, size_t len, enum auth_scope *want, int *ttl_s,
		    struct api_error *e);
/* api_tokens.c: the routes under /v1/sessions/{id}/tokens (operator):
 * list and mint, revoke one, rotate the control or view token. */
void api_tokens(struct http_req *r);
void api_token_revoke(struct http_req *r);
void api_token_rotate(struct http_req *r);
/* api_guest.c: GET /v1/sessions/{id}/cdp/json/version, what CDP clients
 * look up first. */
void api_cdp_version(struct http_req *r);

/* api_trajectory.c: GET /v1/sessions/{id}/trajectory (docs/trajectory.md). */
void api_trajectory(struct http_req *r);

/* api_keys.c: GET|POST /v1/keys and DELETE /v1/keys/{id} (the operator key
 * alone). */
void api_keys(struct http_req *r);
/* Its POST body (len bytes, may be empty): {"name"?: TEXT} into name
 * ("" when none). Pure. Returns 0, or -EINVAL with *e filled (400). */
int api_keys_parse(const char *body, size_t len, char *name, size_t name_size, struct api_error *e);

/* api_projects.c: GET|POST /v1/projects, GET|PATCH|DELETE
 * /v1/projects/{name} (docs/api.md "Projects"). */
void api_projects(struct http_req *r);

/* api_usage.c: GET /v1/usage (the operator: every project's, or one; a
 * project's key: its own). */
void api_usage(struct http_req *r);
/* The entries of sessions (GET /v1/usage's) summed by project: [{"project"
 * (null: the operator's), "sessions", "usage": {field: sum}}]. Pure. */
json_t *api_usage_by_project(const json_t *sessions);
/* The rows of GET /v1/usage's CSV: a header, then one line per entry of
 * sessions (the JSON answer's array). Pure. NULL when out of memory. */
char *api_usage_csv(const json_t *sessions);

/* api_metrics.c: GET /metrics (operator). */
void api_metrics(struct http_req *r);

/* api_recording.c: the routes under /v1/sessions/{id}/recording. */
void api_recording_timeline(struct http_req *r);
void api_recording_start(struct http_req *r);
void api_recording_stop(struct http_req *r);
void api_recording_frame(struct http_req *r);
void api_recording_webm(struct http_req *r);
/* A parked request for the video was woken: answers once it is made. */
void api_recording_resume(struct http_req *r, struct sess *s, bool timed_out);

/* api_vnc.c: POST|DELETE /v1/sessions/{id}/vnc on s ("vnc" scope). */
void api_vnc(struct http_req *r, struct sess *s);

/* session_json.c: {id, status, image, width, height, vcpus, memory_mib,
 * age_ms, urls, ...} and, when with_tokens, {tokens: {control, view}}. */
json_t *api_session_json(const struct sess *s, bool with_tokens);

/* api_template_move.c: export and import. import_begin is called when
 * the import's headers are in (api_refuse_early), before its body. */
void api_template_export(struct http_req *r);
void api_template_import_begin(struct http_req *r);
void api_template_import(struct http_req *r);
/* api_template_gc.c */
void api_templates_gc(struct http_req *r);
/* Who keeps template name from being deleted (a session, a template on
 * it, a save under way), said into who; false for nobody (api_templates.c). */
bool api_template_user(struct gw *gw, const char *name, char *who, size_t len);
/* Deletes template name unless something uses it or builds it (409), it
 * is missing (404) or cannot go (400, 500): 0, or -errno with *e. Its
 * failed builds and warm pool are forgotten. For DELETE
 * /v1/templates/{name} and a door's own deletes; the caller checked who
 * may (api_templates.c). */
int api_template_delete(struct gw *gw, const char *name, struct api_error *e);
/* api_templates.c */
void api_list_templates(struct http_req *r);
void api_get_template(struct http_req *r);
void api_create_template(struct http_req *r);
void api_delete_template(struct http_req *r);
/* PATCH /v1/templates/{name} {"pool": N}: the template's warm pool. */
void api_patch_template(struct http_req *r);

#endif
