/* gateway/api/api_ports.c: see api_ports.h. A connection is held twice
 * (port_chan.h): by its request (until lws lets go of it:
 * api_ports_state_release) and by its agent channel (until the channel's
 * closed callback). The link's thread only queues the guest's bytes and
 * wakes the loop, which writes them and returns their credit. */
#include "gateway/api/api_ports.h"
#include "gateway/api/api_ports_ws.h"

#include "common/bytebuf.h"
#include "common/log.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/api/door.h"
#include "gateway/api/port_chan.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/ports/port_link.h"
#include "gateway/ports/port_parse.h"
#include "gateway/session/session.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* What one writable sends the client of the guest's bytes. */
#define WRITE_CHUNK (64 * 1024)
/* The longest request target and header value sent on. */
#define TARGET_MAX 8192
#define VALUE_MAX 4096
#define ARGS_MAX 64
/* How long a request may go without the guest's server or the client
 * moving (lws would close it after a few seconds otherwise): the wait for
 * the answer, and each write of it (a client that reads nothing). */
#define IDLE_S 120

struct port_conn {
	struct port_chan pc; /* the guest's side; held by the request + the channel */
	struct port_conn *next; /* all (loop thread only) */
	struct http_req *r; /* NULL once the request is gone (loop) */
	char sess_id[SESS_ID_MAX];
	/* the request (loop) */
	bool chunked_body; /* sent on in chunks (the client's were decoded) */
	bool rx_stopped; /* the client is not read while the channel's queue is full */
	bool body_done;
	bool is_head; /* a HEAD: the answer has no body */
	/* the answer (loop) */
	struct bytebuf head; /* the guest's answer head while it comes */
	bool head_sent, framed, must_close;
	int64_t body_left; /* Content-Length still to send; -1: not counted */
	unsigned char *out; /* LWS_PRE + WRITE_CHUNK */
};

static struct port_conn *all; /* loop thread */
/* The key of the links (port_link.h), made on first use: links die with
 * the process. */
static uint8_t link_secret[PORT_LINK_SECRET];
static bool link_secret_made;

static const uint8_t *secret(void)
{
	if (!link_secret_made &&
	    getrandom(link_secret, sizeof(link_secret), 0) == (ssize_t)sizeof(link_secret))
		link_secret_made = true;
	return link_secret_made ? link_secret : NULL;
}

#define LINK_TTL_S 3600

/* The last hold of the connection went (port_chan_release). */
static void conn_free(struct port_chan *pc)
{
	struct port_conn *c = lws_container_of(pc, struct port_conn, pc);

	bytebuf_free(&c->head);
	free(c->out);
	free(c);
}

/* ---- the request towards the guest (loop) ---- */

/* The headers passed on to the guest as they came (lws keeps the ones it
 * knows; of the others, these). Authorization, Cookie and Host are
 * decided apart. */
static const enum lws_token_indexes pass_tokens[] = {
	WSI_TOKEN_ORIGIN,
	WSI_TOKEN_HTTP_ACCEPT,
	WSI_TOKEN_HTTP_AC_REQUEST_HEADERS,
	WSI_TOKEN_HTTP_IF_MODIFIED_SINCE,
	WSI_TOKEN_HTTP_IF_NONE_MATCH,
	WSI_TOKEN_HTTP_ACCEPT_ENCODING,
	WSI_TOKEN_HTTP_ACCEPT_LANGUAGE,
	WSI_TOKEN_HTTP_PRAGMA,
	WSI_TOKEN_HTTP_CACHE_CONTROL,
	WSI_TOKEN_HTTP_CONTENT_LENGTH,
	WSI_TOKEN_HTTP_CONTENT_TYPE,
	WSI_TOKEN_HTTP_DATE,
	WSI_TOKEN_HTTP_RANGE,
	WSI_TOKEN_HTTP_REFERER,
	WSI_TOKEN_HTTP_ACCEPT_CHARSET,
	WSI_TOKEN_HTTP_CONTENT_DISPOSITION,
	WSI_TOKEN_HTTP_CONTENT_ENCODING,
	WSI_TOKEN_HTTP_CONTENT_LANGUAGE,
	WSI_TOKEN_HTTP_FROM,
	WSI_TOKEN_HTTP_IF_MATCH,
	WSI_TOKEN_HTTP_IF_RANGE,
	WSI_TOKEN_HTTP_IF_UNMODIFIED_SINCE,
	WSI_TOKEN_HTTP_USER_AGENT,
	WSI_TOKEN_HTTP_VIA,
	WSI_TOKEN_X_AUTH_TOKEN,
};
static const char *const pass_custom[] = {
	"x-requested-with:", "x-csrf-token:",
	"x-xsrf-token:",     "access-control-request-method:",
	"accept-patch:",     "dnt:",
	"x-api-key:",	     "sec-fetch-mode:",
	"sec-fetch-site:",   "sec-fetch-dest:",
};

static const char *method_name(struct lws *wsi, enum lws_token_indexes *tok)
{
	static const struct {
		enum lws_token_indexes tok;
		const char *name;
	} m[] = {
		{ WSI_TOKEN_GET_URI, "GET" },	  { WSI_TOKEN_POST_URI, "POST" },
		{ WSI_TOKEN_PUT_URI, "PUT" },	  { WSI_TOKEN_DELETE_URI, "DELETE" },
		{ WSI_TOKEN_PATCH_URI, "PATCH" }, { WSI_TOKEN_OPTIONS_URI, "OPTIONS" },
		{ WSI_TOKEN_HEAD_URI, "HEAD" },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (lws_hdr_total_length(wsi, m[i].tok) > 0) {
			*tok = m[i].tok;
			return m[i].name;
		}
	return NULL;
}

/* Appends "name: value\r\n" when the request has the header tok. */
static int pass_header(struct lws *wsi, struct bytebuf *b, enum lws_token_indexes tok, char *v)
{
	const char *name = (const char *)lws_token_to_string(tok);

	if (!name || lws_hdr_total_length(wsi, tok) <= 0)
		return 0;
	if (lws_hdr_copy(wsi, v, VALUE_MAX, tok) < 0)
		return -1;
	return bytebuf_printf(b, "%.*s %s\r\n", (int)strlen(name), name, v);
}

/* The path the guest gets: all of it by host name; by path, what follows
 * /v1/sessions/{id}/ports/{port}. */
static const char *guest_path(bool by_host, const char *uri)
{
	const char *p;

	if (by_host)
		return uri;
	p = strstr(uri, "/ports/");
	if (!p)
		return "/";
	p += 7;
	p += strspn(p, "0123456789");
	return *p ? p : "/";
}

int api_ports_target(struct lws *wsi, enum lws_token_indexes tok, bool by_host, char *target,
		     size_t cap)
{
	char *uri = malloc(TARGET_MAX), *argbuf = malloc(TARGET_MAX);
	const char *args[ARGS_MAX];
	size_t nargs = 0, used = 0;
	int len, rc = -ENOMEM;

	if (!uri || !argbuf)
		goto out;
	rc = -ENAMETOOLONG;
	if (lws_hdr_copy(wsi, uri, TARGET_MAX, tok) < 0)
		goto out;
	for (int i = 0; (len = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i)) > 0; i++) {
		if (nargs == ARGS_MAX || used + (size_t)len + 1 > TARGET_MAX ||
		    lws_hdr_copy_fragment(wsi, argbuf + used, (int)(TARGET_MAX - used),
					  WSI_TOKEN_HTTP_URI_ARGS, i) < 0)
			goto out;
		args[nargs++] = argbuf + used;
		used += (size_t)len + 1;
	}
	if (port_target(target, cap, guest_path(by_host, uri), args, nargs) < 0)
		goto out;
	rc = 0;
out:
	free(uri);
	free(argbuf);
	return rc;
}

/* The request head for the guest into b. 0, -ENAMETOOLONG (too long: 414), or
 * -ENOMEM. */
static int request_head(struct http_req *r, bool forward_auth, bool *chunked, struct bytebuf *b)
{
	enum lws_token_indexes tok;
	const char *method = method_name(r->wsi, &tok);
	char *target = malloc(TARGET_MAX), *v = malloc(VALUE_MAX), peer[64];
	int rc = -ENOMEM;

	if (!target || !v)
		goto out;
	if (!method) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	if ((rc = api_ports_target(r->wsi, tok, r->route.kind == R_SESSION_PORT_HOST, target,
				   TARGET_MAX)) < 0)
		goto out;
	rc = -ENOMEM;
	if (bytebuf_printf(b, "%s %s HTTP/1.1\r\n", method, target) < 0)
		goto out;
	if (lws_hdr_copy(r->wsi, v, VALUE_MAX, WSI_TOKEN_HOST) > 0 &&
	    bytebuf_printf(b, "host: %s\r\nx-forwarded-host: %s\r\n", v, v) < 0)
		goto out;
	for (size_t i = 0; i < sizeof(pass_tokens) / sizeof(pass_tokens[0]); i++)
		if (pass_header(r->wsi, b, pass_tokens[i], v) < 0)
			goto out;
	if (forward_auth && pass_header(r->wsi, b, WSI_TOKEN_HTTP_AUTHORIZATION, v) < 0)
		goto out;
	if (lws_hdr_copy(r->wsi, v, VALUE_MAX, WSI_TOKEN_HTTP_COOKIE) > 0) {
		char *kept = malloc(VALUE_MAX); /* without the gateway's own */

		if (!kept)
			goto out;
		if (port_link_cookie_strip(v, kept, VALUE_MAX) &&
		    bytebuf_printf(b, "cookie: %s\r\n", kept) < 0) {
			free(kept);
			goto out;
		}
		free(kept);
	}
	for (size_t i = 0; i < sizeof(pass_custom) / sizeof(pass_custom[0]); i++) {
		int n = (int)strlen(pass_custom[i]);

		if (lws_hdr_custom_copy(r->wsi, v, VALUE_MAX, pass_custom[i], n) > 0 &&
		    bytebuf_printf(b, "%s %s\r\n", pass_custom[i], v) < 0)
			goto out;
	}
	*chunked = r->chunked;
	if (r->chunked && bytebuf_printf(b, "transfer-encoding: chunked\r\n") < 0)
		goto out;
	if (r->route.kind == R_SESSION_PORT &&
	    bytebuf_printf(b, "x-forwarded-prefix: /v1/sessions/%s/ports/%s\r\n", r->route.id,
			   r->route.sub) < 0)
		goto out;
	if (bytebuf_printf(b,
			   "x-forwarded-proto: http\r\nx-forwarded-for: %s\r\n"
			   "connection: close\r\n\r\n",
			   audit_peer(r->wsi, peer, sizeof(peer)) ? peer : "") < 0)
		goto out;
	rc = 0;
out:
	free(target);
	free(v);
	return rc;
}

int api_ports_count(const char *sess_id)
{
	int n = 0;

	for (struct port_conn *c = all; c; c = c->next)
		n += c->r && !strcmp(c->sess_id, sess_id);
	return n;
}

static int own_write(struct http_req *r);

/* Sends what the client sent of its body on to the guest. */
static int body_sink(struct http_req *r, const void *p, size_t n)
{
	struct port_conn *c = *(struct port_conn **)r->route_state;
	char size[24];
	int rc;

	if (!c->pc.chan)
		return 0;
	if (c->chunked_body) {
		int sl = snprintf(size, sizeof(size), "%zx\r\n", n);

		agent_chan_send(c->pc.link, c->pc.chan, AGENT_DATA, 0, size, (size_t)sl);
	}
	rc = agent_chan_send(c->pc.link, c->pc.chan, AGENT_DATA, 0, p, n);
	if (c->chunked_body && rc >= 0)
		rc = agent_chan_send(c->pc.link, c->pc.chan, AGENT_DATA, 0, "\r\n", 2);
	if (rc == AGENT_SEND_FULL) {
		c->rx_stopped = true;
		lws_rx_flow_control(r->wsi, 0);
	} else if (rc == -ENOBUFS) {
		return -1; /* sent past the stop: the connection is of no use */
	}
	return 0;
}

/* The connection of r, made (forward_auth: its Authorization header goes
 * to the guest) (with its channel opened and the request
 * head sent) and kept in r's state. NULL when answered instead. */
static struct port_conn *conn_new(struct http_req *r, struct sess *s, struct agent_link *l,
				  int port, bool forward_auth)
{
	struct port_conn **slot = http_route_state(r), *c = NULL;
	struct bytebuf head = { 0 };
	enum lws_token_indexes tok;
	const char *method = method_name(r->wsi, &tok);
	bool chunked = false;
	int rc;

	if (!slot)
		return NULL; /* answered 500 */
	rc = request_head(r, forward_auth, &chunked, &head);
	if (rc == -ENAMETOOLONG) {
		http_reply_error(r, 414, "too_long", "the request's path or a header is too long");
		goto fail;
	}
	if (rc < 0 || !(c = calloc(1, sizeof(*c))) || !(c->out = malloc(LWS_PRE + WRITE_CHUNK))) {
		http_reply_error(r, 500, "internal", "out of memory");
		goto fail;
	}
	port_chan_init(&c->pc, r->gw->ctx, l, conn_free);
	c->r = r;
	c->chunked_body = chunked;
	c->is_head = method && !strcmp(method, "HEAD");
	c->body_left = -1;
	snprintf(c->sess_id, sizeof(c->sess_id), "%s", sess_id(s));
	*slot = c;
	c->next = all;
	all = c;
	if (port_chan_open(&c->pc, port) < 0) {
		http_reply_error(r, 503, "agent_unavailable", "the guest agent is not connected");
		bytebuf_free(&head);
		return NULL; /* c is the request's: freed with its state */
	}
	agent_chan_send(l, c->pc.chan, AGENT_DATA, 0, head.data, head.len);
	bytebuf_free(&head);
	return c;
fail:
	if (c)
		free(c->out);
	free(c);
	bytebuf_free(&head);
	agent_link_release(l);
	return NULL;
}

bool api_ports_public(const struct sess *s, int port)
{
	const json_t *pub = json_object_get(sess_ext_get(s, "ports"), "public"), *v;
	size_t i;

	json_array_foreach(pub, i, v) if (json_integer_value(v) == port) return true;
	return false;
}

/* Makes port public or not in s's record. 0, or -ENOMEM. */
static int set_public(struct sess *s, int port, bool pub)
{
	const json_t *old = json_object_get(sess_ext_get(s, "ports"), "public"), *v;
	json_t *list = json_array();
	size_t i;

	if (!list)
		return -ENOMEM;
	json_array_foreach(old, i, v) if (json_integer_value(v) != port &&
					  json_array_append(list, (json_t *)v) < 0) goto oom;
	if (pub && json_array_append_new(list, json_integer(port)) < 0)
		goto oom;
	if (!json_array_size(list)) {
		json_decref(list);
		return sess_ext_set(s, "ports", NULL);
	}
	return sess_ext_set(s, "ports", json_pack("{s:o}", "public", list));
oom:
	json_decref(list);
	return -ENOMEM;
}

bool api_ports_link_ok(struct lws *wsi, const char *id, int port)
{
	char *h = malloc(VALUE_MAX), v[PORT_LINK_VALUE_MAX];
	bool ok = false;

	if (h && secret() && lws_hdr_copy(wsi, h, VALUE_MAX, WSI_TOKEN_HTTP_COOKIE) > 0 &&
	    port_link_cookie(h, v, sizeof(v)))
		ok = port_link_check(secret(), id, port, (int64_t)time(NULL), v);
	free(h);
	return ok;
}

/* Whether r asks for the link's own path (PORT_LINK_PATH on the port). */
static bool is_link_path(struct http_req *r)
{
	enum lws_token_indexes tok;
	char uri[512];

	return method_name(r->wsi, &tok) && !strcmp(method_name(r->wsi, &tok), "GET") &&
	       lws_hdr_copy(r->wsi, uri, sizeof(uri), tok) > 0 &&
	       !strcmp(guest_path(r->route.kind == R_SESSION_PORT_HOST, uri), PORT_LINK_PATH);
}

/* Opens a link: its value (?t=) becomes the cookie, scoped to the port's
 * host or path, and the browser goes to the port's root. 401 for a value
 * that is not good (any more). */
static void open_link(struct http_req *r, struct sess *s, int port)
{
	char v[PORT_LINK_VALUE_MAX + 8], cookie[256], root[96];

	if (!http_query(r, "t=", v, sizeof(v)) || !secret() ||
	    !port_link_check(secret(), sess_id(s), port, (int64_t)time(NULL), v)) {
		http_reply_error(r, 401, "unauthorized", "the link is not valid (or has expired)");
		return;
	}
	if (r->route.kind == R_SESSION_PORT_HOST)
		snprintf(root, sizeof(root), "/");
	else
		snprintf(root, sizeof(root), "/v1/sessions/%s/ports/%d/", sess_id(s), port);
	/* a cookie of the browser's session (the value holds its own expiry),
	 * within http_add_header's 192 bytes */
	if (snprintf(cookie, sizeof(cookie), "%s=%s; Path=%s; HttpOnly", PORT_LINK_COOKIE, v,
		     root) >= 192) {
		http_reply_error(r, 500, "internal", "the link's cookie is too long");
		return;
	}
	http_add_header(r, "set-cookie", cookie);
	http_add_header(r, "location", root);
	http_reply_json(r, 302, json_pack("{s:s}", "location", root));
}

/* Starts r's connection to the guest's port: 0, or -1 when answered. A
 * public port takes any request (an Authorization header that is none of
 * the session's goes on to the guest); others need the route's right. */
static int start(struct http_req *r)
{
	struct sess *s = sess_find(r->gw, r->route.id);
	int port = port_number_parse(r->route.sub);
	bool pub = s && port > 0 &&
		   (api_ports_public(s, port) || api_ports_link_ok(r->wsi, r->route.id, port));
	struct agent_link *l;

	if (s && port > 0 && is_link_path(r)) {
		open_link(r, s, port);
		return -1;
	}
	if (!pub && !(s = api_route_session(r)))
		return -1;
	if (port < 0) {
		http_reply_error(r, 400, "bad_port", "a port is a number in 1..65535");
		return -1;
	}
	if (sess_state_of(s) != SESS_READY) {
		http_reply_error(r, 409, "not_running", "the session is not running");
		return -1;
	}
	if (api_ports_count(sess_id(s)) + api_ports_ws_count(sess_id(s)) >=
	    API_PORTS_MAX_PER_SESSION) {
		http_reply_error(r, 429, "too_many_connections",
				 "the session has as many port connections as it may");
		return -1;
	}
	if (!(l = sess_agent_get(sess_agent_of(s), 0))) {
		http_reply_error(r, 503, "agent_unavailable", "the guest agent is not connected");
		return -1;
	}
	if (!conn_new(r, s, l, port, pub && !sess_rights(r->gw, s, r->token, NULL)))
		return -1;
	r->body_sink = body_sink;
	r->own_write = own_write;
	api_hold(r, IDLE_S);
	sess_touch(s);
	return 0;
}

void api_ports_begin(struct http_req *r)
{
	if (start(r) < 0)
		r->close_after = true; /* its body is not read */
}

void api_ports_handle(struct http_req *r)
{
	struct port_conn **slot = r->route_state, *c = slot ? *slot : NULL;

	if (!c && (start(r) < 0 || !(c = *(struct port_conn **)r->route_state)))
		return;
	if (c->body_done)
		return;
	c->body_done = true;
	if (c->chunked_body && c->pc.chan)
		agent_chan_send(c->pc.link, c->pc.chan, AGENT_DATA, 0, "0\r\n\r\n", 5);
}

/* ---- the answer towards the client (loop) ---- */

/* Answers with an error before any of the guest's answer went out. */
static int fail_early(struct http_req *r, int status, const char *code, const char *msg)
{
	r->own_write = NULL;
	r->close_after = true;
	http_reply_error(r, status, code, msg);
	return 0;
}

/* Writes the guest's answer head (parsed from c->head) as the client's:
 * 0, or -1 to close. */
static int write_head(struct port_conn *c, struct http_req *r, const struct port_head *h)
{
	unsigned char buf[LWS_PRE + PORT_HEAD_MAX + 512], *start = buf + LWS_PRE, *p = start,
							  *end = buf + sizeof(buf) - 1;
	bool no_body = c->is_head || h->status == 204 || h->status == 304;

	if (lws_add_http_header_status(r->wsi, (unsigned)h->status, &p, end))
		return -1;
	for (size_t i = 0; i < h->n; i++) {
		char name[128];

		if (h->h[i].name_len + 2 > sizeof(name) ||
		    port_header_hop(h->h[i].name, h->h[i].name_len))
			continue;
		snprintf(name, sizeof(name), "%.*s:", (int)h->h[i].name_len, h->h[i].name);
		if (lws_add_http_header_by_name(r->wsi, (const unsigned char *)name,
						(const unsigned char *)h->h[i].value,
						(int)h->h[i].value_len, &p, end))
			return -1;
	}
	c->framed = no_body || h->chunked || h->content_length >= 0;
	c->body_left = no_body ? 0 : h->chunked ? -1 : h->content_length;
	c->must_close = !c->framed || r->close_after;
	if (c->must_close &&
	    lws_add_http_header_by_name(r->wsi, (const unsigned char *)"connection:",
					(const unsigned char *)"close", 5, &p, end))
		return -1;
	if (lws_finalize_write_http_header(r->wsi, start, &p, end))
		return -1;
	c->head_sent = true;
	http_answered(r, h->status);
	return 0;
}

/* The answer is whole (or cut short): the channel goes; the connection
 * goes on to its next request, or closes (-1). */
static void unlink_conn(struct port_conn *c)
{
	struct port_conn **pp;

	for (pp = &all; *pp && *pp != c; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = c->next;
	c->r = NULL;
}

static int finish(struct port_conn *c, struct http_req *r, bool cut)
{
	unlink_conn(c); /* a kept-alive connection is none of the session's any more */
	if (!c->body_done)
		cut = true; /* answered before the client's body was in: not read any more */
	if (c->pc.chan)
		agent_chan_close(c->pc.link, c->pc.chan, "");
	c->pc.chan = 0;
	r->own_write = NULL;
	if (c->must_close || cut)
		return -1;
	return lws_http_transaction_completed(r->wsi) ? -1 : 0;
}

/* Before the head went out: the guest's bytes into c->head until it is
 * whole, then the head to the client. */
static int own_write_head(struct port_conn *c, struct http_req *r, unsigned char *b)
{
	struct port_head h;
	char why[160], msg[224];
	bool ended;
	size_t n = port_chan_take(&c->pc, b, WRITE_CHUNK, &ended, why, sizeof(why));
	long hl;

	/* given back already, held here: bounded by PORT_HEAD_MAX below */
	if (bytebuf_append(&c->head, b, n) < 0)
		return -1;
	hl = port_head_parse(c->head.data, c->head.len, &h);
	if (hl < 0 || (hl > 0 && h.status < 200))
		return fail_early(r, 502, "bad_gateway",
				  hl < 0 ? "the guest's server sent no valid HTTP answer"
					 : "the guest's server answered 1xx to a plain request");
	if (hl == 0) {
		if (!ended)
			return 0; /* more comes: pending wakes us */
		snprintf(msg, sizeof(msg), "the guest's port did not answer: %s",
			 why[0] ? why : "it closed the connection");
		return fail_early(r, 502, "bad_gateway", msg);
	}
	if (write_head(c, r, &h) < 0)
		return -1;
	/* the body's first bytes came with the head (acked already) */
	memmove(c->head.data, c->head.data + hl, c->head.len - (size_t)hl);
	c->head.len -= (size_t)hl;
	lws_callback_on_writable(r->wsi);
	return 0;
}

/* One writable's worth of the guest's answer: its head once it is whole,
 * then its body as it comes, in its own framing. */
static int own_write(struct http_req *r)
{
	struct port_conn *c = *(struct port_conn **)r->route_state;
	unsigned char *b = c->out + LWS_PRE;
	char why[160] = "";
	bool ended = false;
	size_t n;

	if (!c->head_sent)
		return own_write_head(c, r, b);
	if (c->head.len) { /* acked already */
		n = c->head.len < WRITE_CHUNK ? c->head.len : WRITE_CHUNK;
		memcpy(b, c->head.data, n);
		memmove(c->head.data, c->head.data + n, c->head.len - n);
		c->head.len -= n;
	} else {
		n = port_chan_take(&c->pc, b, WRITE_CHUNK, &ended, why, sizeof(why));
	}
	if (c->body_left >= 0 && (int64_t)n > c->body_left)
		n = (size_t)c->body_left; /* past its length: not the client's */
	if (n) {
		if (lws_write(r->wsi, b, n, LWS_WRITE_HTTP) != (int)n)
			return -1;
		if (c->body_left > 0)
			c->body_left -= (int64_t)n;
		api_hold(r, IDLE_S);
		lws_callback_on_writable(r->wsi);
		return 0;
	}
	if (c->body_left == 0)
		return finish(c, r, false);
	if (!ended)
		return 0;
	return finish(c, r, why[0] || c->body_left > 0);
}

void api_ports_poke_all(void)
{
	for (struct port_conn *c = all; c; c = c->next) {
		if (!atomic_exchange(&c->pc.pending, false) || !c->r)
			continue;
		if (atomic_exchange(&c->pc.resume, false) && c->rx_stopped) {
			c->rx_stopped = false;
			lws_rx_flow_control(c->r->wsi, 1);
		}
		lws_callback_on_writable(c->r->wsi);
	}
}

void api_ports_state_release(void *state)
{
	struct port_conn *c = *(struct port_conn **)state;

	if (!c)
		return;
	unlink_conn(c);
	if (c->pc.chan)
		agent_chan_close(c->pc.link, c->pc.chan, "the client went away");
	port_chan_release(&c->pc);
}

void api_ports_claim(struct http_req *r)
{
	char host[256], id[ROUTE_ID_MAX + 1];
	int port, rc;

	if (r->route.kind == R_DOOR || !r->gw->public_domain[0] ||
	    lws_hdr_copy(r->wsi, host, sizeof(host), WSI_TOKEN_HOST) <= 0)
		return;
	rc = port_host_parse(host, r->gw->public_domain, &port, id,
			     sizeof(id) < ROUTE_SESSION_ID_MAX + 1 ? sizeof(id)
								   : ROUTE_SESSION_ID_MAX + 1);
	if (rc == -EINVAL || (rc == 0 && api_door_owns_port(port)))
		return;
	r->route.kind = R_SESSION_PORT_HOST;
	snprintf(r->route.id, sizeof(r->route.id), "%s", id);
	if (rc == 0)
		snprintf(r->route.sub, sizeof(r->route.sub), "%d", port);
	else
		snprintf(r->route.sub, sizeof(r->route.sub), "0"); /* answered 400 */
}

/* POST .../ports/{port}: a link for a browser, good for LINK_TTL_S: by
 * path on the gateway's URL, and by host name with --public-domain. */
static void reply_link(struct http_req *r, struct sess *s, int port)
{
	char v[PORT_LINK_VALUE_MAX], url[512], host_url[512] = "";
	int64_t expiry = (int64_t)time(NULL) + LINK_TTL_S;
	const char *pu = r->gw->public_url, *rest;
	json_t *j;

	if (!secret()) {
		http_reply_error(r, 500, "internal", "no randomness for the link's key");
		return;
	}
	port_link_sign(secret(), sess_id(s), port, expiry, v);
	snprintf(url, sizeof(url), "%s/v1/sessions/%s/ports/%d%s?t=%s", pu, sess_id(s), port,
		 PORT_LINK_PATH, v);
	if (r->gw->public_domain[0]) {
		/* the public URL's scheme and port, the port's host name */
		const char *hp = strstr(pu, "://") ? strstr(pu, "://") + 3 : pu, *colon;

		rest = hp + strcspn(hp, "/");
		colon = memchr(hp, ':', (size_t)(rest - hp));
		snprintf(host_url, sizeof(host_url), "%.*s%d-%s.%s%.*s%s?t=%s", (int)(hp - pu), pu,
			 port, sess_id(s), r->gw->public_domain, colon ? (int)(rest - colon) : 0,
			 colon ? colon : "", PORT_LINK_PATH, v);
	}
	j = json_pack("{s:i, s:s, s:I}", "port", port, "url", url, "expires_unix",
		      (json_int_t)expiry);
	if (j && host_url[0])
		json_object_set_new(j, "host_url", json_string(host_url));
	http_reply_json(r, 201, j);
}

void api_ports_settings(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	int port = port_number_parse(r->route.sub), pub;
	json_error_t je;
	json_t *body;

	if (!s)
		return;
	if (port < 0) {
		http_reply_error(r, 400, "bad_port", "a port is a number in 1..65535");
		return;
	}
	if (r->method == M_POST) {
		reply_link(r, s, port);
		return;
	}
	if (r->method == M_PUT) {
		body = r->body ? json_loadb(r->body, r->body_len, 0, &je) : NULL;
		if (!body || json_unpack_ex(body, &je, JSON_STRICT, "{s:b}", "public", &pub) < 0) {
			json_decref(body);
			http_reply_error(r, 400, "bad_request",
					 "the body is {\"public\": true|false}");
			return;
		}
		json_decref(body);
		if (set_public(s, port, pub) < 0) {
			http_reply_error(r, 500, "internal", "out of memory");
			return;
		}
		api_audit_set(r, "port", json_pack("{s:i, s:b}", "port", port, "public", pub));
	}
	http_reply_json(r, 200,
			json_pack("{s:i, s:b}", "port", port, "public", api_ports_public(s, port)));
}
