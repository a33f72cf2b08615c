/* gateway/api/http.h: the plain HTTP lws protocol (api/protocols.c): per-request state, and
 * how handlers answer (JSON with a status, or an API error), now or later. */
#ifndef VITRINE_GATEWAY_HTTP_H
#define VITRINE_GATEWAY_HTTP_H

#include "gateway/api/routes.h"
#include "gateway/core/audit.h"
#include "gateway/core/gw.h"
#include "gateway/session/session_spec.h"

#include <jansson.h>
#include <libwebsockets.h>
#include <stdbool.h>

#define HTTP_MAX_BODY (1u << 20)

/* Per-request data, sized in lws_protocols; lws zeroes it. */
struct http_req {
	struct lws *wsi;
	struct gw *gw;
	enum route_method method;
	struct route route;
	lws_usec_t t0_us; /* when it came (its duration in the metrics) */
	char token[160]; /* bearer token, "" when none */
	char path[256]; /* without the query string (which may hold secrets): the access log */
	/* The audit entry this request makes when answered (api_audit.c). */
	struct audit_principal who; /* what r->token is, once authorised */
	json_t *audit_fields; /* owned: an object the handlers add to, or NULL */
	char audit_session[SESS_ID_MAX]; /* a session the request made ("": the route's) */
	char *body; /* owned */
	size_t body_len;
	bool body_too_big;
	/* The response, once decided. */
	bool have_response, headers_sent;
	bool close_after; /* the connection closes once this answer is out (a body was left unread) */
	int status;
	const char *content_type;
	unsigned char *resp; /* owned, LWS_PRE bytes of headroom before the body */
	size_t resp_len;
	struct {
		char name[32]; /* with the trailing ':' lws wants */
		char value[64];
	} hdrs[6]; /* extra response headers */
	int n_hdrs;
	struct run *run; /* owned: an action or screenshot under way */
	struct exec_job *exec; /* owned: a command under way (exec.h) */
	char files_path[1200]; /* the guest path of a files request (the url of an open) */
	size_t clip_len; /* the text a clipboard PUT sets */
	int screen_w, screen_h; /* of the session, for screenshot headers */
	/* A request waiting for a session's state to change (?wait=ready). */
	char wait_id[SESS_ID_MAX];
	int64_t wait_after; /* events: answer once there is one past this seq */
	bool resumed; /* an action's ?auto_resume=1 has been acted on */
	int64_t wait_until_ms;
	lws_sorted_usec_list_t sul_wait;
	struct job_ticket *ticket; /* held: a DELETE waits for its guest to be gone */
	lws_sorted_usec_list_t sul_ticket;
};

/* Sets the response to body (stolen) with status. This function can't fail:
 * when out of memory the response becomes a bare 500. */
void http_reply_json(struct http_req *r, int status, json_t *body);
/* Sets the response to {"error": {"code", "message"}}. */
void http_reply_error(struct http_req *r, int status, const char *code, const char *message);
void http_reply_api_error(struct http_req *r, const struct api_error *e);
/* Sets the response to len bytes of data (copied) with content_type. */
void http_reply_bytes(struct http_req *r, int status, const char *content_type, const void *data,
		      size_t len);
/* Adds a response header (before the reply is sent). Ignored past 6. */
void http_add_header(struct http_req *r, const char *name, const char *value);

/* The request's life, driven by api/protocols.c from lws's callbacks:
 * http_begin on LWS_CALLBACK_HTTP (true when the request is complete now;
 * false when a body follows through http_add_body, -1 when out of memory,
 * and http_body_ok at its end, which answers 413 for one over the limit),
 * http_write on HTTP_WRITEABLE (0, or -1 to close), http_release when lws
 * drops the request (accepts a zeroed or NULL r). */
bool http_begin(struct http_req *r, struct lws *wsi, const char *path);
int http_add_body(struct http_req *r, const void *in, size_t len);
bool http_body_ok(struct http_req *r);
int http_write(struct http_req *r);
void http_release(struct http_req *r);

#endif
