/* gateway/api/http.h: the plain HTTP lws protocol (api/protocols.c): per-request state, and
 * how handlers answer (JSON with a status, or an API error), now or later. */
#ifndef VITRINE_GATEWAY_HTTP_H
#define VITRINE_GATEWAY_HTTP_H

#include "common/chunked.h"
#include "gateway/api/routes.h"
#include "gateway/core/audit.h"
#include "gateway/core/gw.h"
#include "gateway/session/session_spec.h"

#include <jansson.h>
#include <libwebsockets.h>
#include <stdbool.h>

#define HTTP_MAX_BODY (1u << 20)
/* A body made as it goes out (http_reply_stream) goes in chunks of this. */
#define HTTP_STREAM_CHUNK (64u << 10)

/* Copies up to cap bytes of a made body from off into buf; returns how
 * many (cap but at the end). */
typedef size_t (*http_read_fn)(void *ud, uint64_t off, unsigned char *buf, size_t cap);

/* Per-request data, sized in lws_protocols; lws zeroes it. */
struct http_req {
	struct lws *wsi;
	struct gw *gw;
	enum route_method method;
	struct route route;
	lws_usec_t t0_us; /* when it came (its duration in the metrics) */
	char token[160]; /* bearer token, "" when none */
	char path[256]; /* without the query string (which may hold secrets): the access log */
	/* Called once the answer's headers are out (http_begin's answered). */
	void (*answered)(struct http_req *r);
	/* The audit entry this request makes when answered (api_audit.c). */
	struct audit_principal who; /* what r->token is, once authorised */
	json_t *audit_fields; /* owned: an object the handlers add to, or NULL */
	char audit_session[SESS_ID_MAX]; /* a session the request made ("": the route's) */
	char *body; /* owned */
	size_t body_len;
	bool body_too_big;
	bool chunked; /* Transfer-Encoding: chunked: the body is decoded as it comes */
	struct chunked chunks;
	bool body_ready; /* a chunked body came whole: handled on the next writable */
	/* The response, once decided. */
	bool have_response, headers_sent;
	bool close_after; /* the connection closes once this answer is out (a body was left unread) */
	int status;
	const char *content_type;
	unsigned char *resp; /* owned, LWS_PRE bytes of headroom before the body */
	size_t resp_len;
	/* A body made as it goes out (http_reply_stream): resp is its chunk buffer. */
	http_read_fn src_read;
	void (*src_free)(void *ud);
	void *src; /* owned: freed by src_free */
	uint64_t src_len, src_off;
	struct {
		char name[32]; /* with the trailing ':' lws wants */
		char value[192]; /* room for a Location with a token */
	} hdrs[6]; /* extra response headers */
	int n_hdrs;
	/* owned: a command under way (exec.h: api_exec_start, for the native
	 * routes and a door's alike) */
	struct exec_job *exec;
	/* A request waiting for a session's state to change (?wait=ready). */
	char wait_id[SESS_ID_MAX];
	int64_t wait_until_ms;
	lws_sorted_usec_list_t sul_wait;
	/* A body taken as it comes instead of kept in body (a template
	 * import: api_template_move.c); no size limit. Returns 0, or -1 to
	 * close the connection. */
	int (*body_sink)(struct http_req *r, const void *p, size_t n);
	/* owned: the route's own state (http_route_state), released by its
	 * row's state_release and freed when the request goes */
	void *route_state;
	/* A streamed answer (http_reply_until_close): writes the next part of the
	 * body on each writable after the headers; 0, or -1 to close. */
	int (*stream_write)(struct http_req *r);
	/* A body handed over as it comes (http_reply_pull): its source, the
	 * Content-Length (-1: the body ends with the connection) and how much
	 * went out. */
	long (*pull)(struct http_req *r, unsigned char *buf, size_t cap);
	int64_t pull_len;
	uint64_t pull_off;
	/* A request waiting for something other than its session (a file
	 * coming from a guest): called on each writable until it is
	 * answered. */
	void (*waiting)(struct http_req *r);
	/* An answer the route writes whole itself, headers included (a
	 * guest's port: gateway/ports/port_proxy.c): called on each writable
	 * instead of the above, whatever have_response says, until it is
	 * NULL again; 0, or -1 to close. It calls http_answered once its
	 * headers are out. */
	int (*own_write)(struct http_req *r);
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
/* Sets the response to len bytes that read (ud) makes chunk by chunk as
 * they go out, with Content-Length len; ud is owned from now on, and
 * freed with free_ud once the answer is out or the request goes. */
void http_reply_stream(struct http_req *r, int status, const char *content_type, uint64_t len,
		       http_read_fn read, void (*free_ud)(void *ud), void *ud);
/* Answers with headers now and a body that stream_write writes part by
 * part (no Content-Length: the connection closes after it). */
void http_reply_until_close(struct http_req *r, int status, const char *content_type,
			    int (*stream_write)(struct http_req *r));
/* What a pull source returns at the end of a body of no Content-Length. */
#define HTTP_PULL_END (-2L)
/* Answers with headers now and a body that pull hands over as it has it:
 * on each writable after the headers pull copies up to cap bytes into buf
 * and returns how many, 0 when it has none now (its source makes the
 * connection writable again when it has), HTTP_PULL_END when the body of
 * no length (len -1) is whole, -1 to close (a body of length len that
 * ended short is cut, so the client sees it was). */
void http_reply_pull(struct http_req *r, int status, const char *content_type, int64_t len,
		     long (*pull)(struct http_req *r, unsigned char *buf, size_t cap));
/* The state of r's route (its row's state_size bytes, or what its
 * state_size_of says, zeroed), made on first use and kept until the
 * request goes; NULL when out of memory (then r is answered 500). */
void *http_route_state(struct http_req *r);
/* Adds a response header (before the reply is sent). Ignored past 6. */
void http_add_header(struct http_req *r, const char *name, const char *value);

/* The value of the request's query parameter name (with its '=', as
 * "wait="), decoded by lws, into buf (len bytes): buf, or NULL when it is
 * absent or its value does not fit. Every parameter is looked at, in
 * order: lws_get_urlarg_by_name stops at the first one that does not fit
 * buf, which hid the parameters after a long one. */
const char *http_query(struct http_req *r, const char *name, char *buf, int len);

/* The request's life, driven by api/protocols.c from lws's callbacks:
 * http_begin on LWS_CALLBACK_HTTP (true when the request is complete now;
 * false when a body follows through http_add_body, -1 when out of memory,
 * and http_body_ok at its end, which answers 413 for one over its route's
 * limit), with answered called once the answer's headers are out (the
 * audit entry and the access log: api_audit.c; the request's module does
 * not call up into them); http_write on HTTP_WRITEABLE (0, or -1 to
 * close), http_release when lws drops the request (accepts a zeroed or
 * NULL r; releases the route's state). */
/* For an own_write answer: its headers with status are out (the
 * metrics, then answered). */
void http_answered(struct http_req *r, int status);

bool http_begin(struct http_req *r, struct lws *wsi, const char *path,
		void (*answered)(struct http_req *r));
int http_add_body(struct http_req *r, const void *in, size_t len);
/* True once a chunked body has come whole (lws does not say so: an
 * HTTP_BODY callback must ask). A malformed one is answered 400 here. */
bool http_body_complete(struct http_req *r);
bool http_body_ok(struct http_req *r);
int http_write(struct http_req *r);
void http_release(struct http_req *r);

#endif
