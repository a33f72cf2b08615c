/* gateway/api/api.h: the REST handlers: authorise, validate, act, answer. */
#ifndef VITRINE_GATEWAY_API_H
#define VITRINE_GATEWAY_API_H

#include "gateway/action/run.h"
#include "gateway/action/traj_log.h"
#include "gateway/api/http.h"

/* Handles the request in r (route, token and body are set); answers through
 * http_reply_*, now or, for ?wait=ready, once the session's state changes. */
void api_handle(struct http_req *r);
/* Before the body of a POST or PUT is read: answers 401 (and closes the
 * connection after it, leaving the body unread) when r's token has no
 * right at all where it is going, so that nobody without a credential
 * makes the gateway buffer a body. */
void api_refuse_early(struct http_req *r);
/* Called when a waiting request is woken: answers if there is news. */
void api_resume_wait(struct http_req *r);
/* Answers r with the metrics scrape, without looking at its token: for
 * the --metrics-listen door, where the address is the credential. It
 * names no session (no per-session series: a session id is a capability's
 * half, and the door is for anyone who reaches it). */
void api_metrics_reply(struct http_req *r);

struct sess;
/* Parses text (one JSON action, any dialect) that came over channel and
 * starts it on s; done gets the outcome later. On refusal returns NULL
 * with *status and *error (an {"error": ...} object, owned by the caller)
 * set. Either way the action is a step of the session's trajectory
 * (action/trajectory.h). Shared by the REST route and the WebSocket
 * control channel. */
struct run *api_start_action(struct sess *s, const char *text, size_t len,
			     enum traj_channel channel, run_done_fn done, void *ud, int *status,
			     json_t **error);

#endif
