/* gateway/api/api_ports_ws.c: see api_ports_ws.h. A connection is held
 * twice (port_chan.h): by lws (until CLOSED) and by its agent channel
 * (until the channel's closed callback). The link's thread only queues the guest's
 * bytes under the connection's lock and wakes the loop, which reads the
 * guest's frames from them, writes them on and returns their credit. */
#include "gateway/api/api_ports_ws.h"

#include "common/bytebuf.h"
#include "common/log.h"
#include "gateway/api/api_ports.h"
#include "gateway/api/door.h"
#include "gateway/api/port_chan.h"
#include "gateway/api/routes.h"
#include "gateway/api/ws_upgrade.h"
#include "gateway/core/audit.h"
#include "gateway/core/auth.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/ports/port_link.h"
#include "gateway/ports/port_parse.h"
#include "gateway/ports/port_ws.h"
#include "gateway/session/live_auth.h"
#include "gateway/session/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

/* The guest's bytes read at once, and so the largest piece written. */
#define WRITE_CHUNK (64 * 1024)
#define TARGET_MAX 8192
#define VALUE_MAX 4096
#define REASON_MAX 123 /* a close frame's reason */
/* The client's frames held before the guest's 101, past which the client
 * is not read. */
#define HELD_MAX (64 * 1024)
/* How long the guest's server may take to answer the upgrade. */
#define HANDSHAKE_S 120

struct port_ws {
	struct port_chan pc; /* the guest's side; held by lws + the channel */
	struct port_ws *next; /* all (loop thread only) */
	struct lws *wsi; /* NULL once lws closed it (loop) */
	char sess_id[SESS_ID_MAX];
	char accept[PORT_WS_ACCEPT_LEN]; /* what the guest's 101 must say */
	/* loop */
	bool open; /* the guest's server took the upgrade */
	struct bytebuf head; /* its answer while it comes */
	struct port_ws_rx rx;
	uint8_t *pend; /* WRITE_CHUNK: the guest's bytes taken, not read yet */
	size_t pend_off, pend_len;
	unsigned char *out; /* LWS_PRE + WRITE_CHUNK */
	struct bytebuf held; /* frames for the guest before its 101, or its full queue refused */
	bool rx_stopped;
	struct live_auth la; /* a token's connection: closes when it loses "act" */
	char revoked_why[96];
};

static struct port_ws *all; /* loop thread */

static void sha1(const void *p, size_t n, uint8_t out[20])
{
	lws_SHA1(p, n, out);
}

int api_ports_ws_count(const char *sess_id)
{
	int n = 0;

	for (struct port_ws *c = all; c; c = c->next)
		n += c->wsi && !strcmp(c->sess_id, sess_id);
	return n;
}

/* The last hold of the connection went (port_chan_release). */
static void ws_free(struct port_chan *pc)
{
	struct port_ws *c = lws_container_of(pc, struct port_ws, pc);

	bytebuf_free(&c->head);
	bytebuf_free(&c->held);
	free(c->pend);
	free(c->out);
	free(c);
}

/* ---- who may: the upgrade's checks (loop) ---- */

/* The session id and port an upgrade names, by host name or by path;
 * *by_host says which. 0, -ERANGE (a port out of range), or -ENOENT (not
 * a port's). */
static int target_of(struct gw *gw, struct lws *wsi, bool *by_host, char *id, size_t idlen,
		     int *port)
{
	char host[256];
	struct route r;
	int rc;

	*by_host = false;
	if (gw->public_domain[0] && lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST) > 0) {
		rc = port_host_parse(host, gw->public_domain, port, id,
				     idlen < ROUTE_SESSION_ID_MAX + 1 ? idlen
								      : ROUTE_SESSION_ID_MAX + 1);
		if (rc == -ERANGE || (rc == 0 && !api_door_owns_port(*port))) {
			*by_host = true;
			return rc;
		}
	}
	r = ws_upgrade_route(wsi);
	if (r.kind != R_SESSION_PORT)
		return -ENOENT;
	snprintf(id, idlen, "%s", r.id);
	*port = port_number_parse(r.sub);
	return *port > 0 ? 0 : -ERANGE;
}

bool api_ports_ws_claim(struct lws *wsi)
{
	struct gw *gw = lws_context_user(lws_get_context(wsi));
	char id[ROUTE_ID_MAX + 1];
	bool by_host;
	int port;

	return target_of(gw, wsi, &by_host, id, sizeof(id), &port) != -ENOENT && by_host;
}

bool api_ports_ws_is(struct lws *wsi)
{
	struct gw *gw = lws_context_user(lws_get_context(wsi));
	char id[ROUTE_ID_MAX + 1];
	bool by_host;
	int port;

	return target_of(gw, wsi, &by_host, id, sizeof(id), &port) != -ENOENT;
}

/* Whether a browser's Origin (when there is one) is the port's own host
 * (the Host the upgrade came to) or one --origins allows. */
static bool origin_ok(struct gw *gw, struct lws *wsi)
{
	char origin[256] = "", host[256] = "";
	const char *o;

	if (lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) < 0)
		return false;
	if (!origin[0] || auth_origin_allowed(origin, gw->origins))
		return true;
	o = strstr(origin, "://");
	return o && lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST) > 0 &&
	       !strcasecmp(o + 3, host);
}

/* What the upgrade is allowed: its session, port and whether it came with
 * the session's token (token then holds it) and whether an Authorization
 * header goes on to the guest. An HTTP status with code and message when
 * it is refused; 0 when it may go on. */
struct admit {
	struct sess *s;
	int port;
	bool by_host, by_token, forward_auth;
	char token[160];
	const char *code, *msg;
};

static int admit(struct gw *gw, struct lws *wsi, struct admit *a)
{
	char id[ROUTE_ID_MAX + 1];
	unsigned rights = 0;
	bool pub, by_link;
	int rc = target_of(gw, wsi, &a->by_host, id, sizeof(id), &a->port);

	a->s = NULL;
	a->by_token = a->forward_auth = false;
	if (rc == -ERANGE) {
		a->code = "bad_port";
		a->msg = "a port is a number in 1..65535";
		return 400;
	}
	if (rc < 0 || !(a->s = sess_find(gw, id))) {
		a->code = "not_found";
		a->msg = "no such session";
		return 404;
	}
	if (ws_upgrade_bearer(wsi, a->token, sizeof(a->token)) == 0)
		rights = sess_rights(gw, a->s, a->token, NULL);
	a->by_token = rights & AUTH_R_ACT;
	pub = api_ports_public(a->s, a->port);
	by_link = api_ports_link_ok(wsi, sess_id(a->s), a->port);
	if (!a->by_token && !pub && !by_link) {
		a->code = rights ? "forbidden" : "unauthorized";
		a->msg = rights ? "the token lacks the \"act\" right"
				: "a port takes the session's token, a link's cookie, or is public";
		return rights ? 403 : 401;
	}
	if (!a->by_token && !pub && !origin_ok(gw, wsi)) {
		a->code = "origin_not_allowed";
		a->msg = "the page's Origin is not the port's own nor one --origins allows";
		return 403;
	}
	a->forward_auth = !a->by_token;
	if (sess_state_of(a->s) != SESS_READY) {
		a->code = "not_running";
		a->msg = "the session is not running";
		return 409;
	}
	if (api_ports_count(sess_id(a->s)) + api_ports_ws_count(sess_id(a->s)) >=
	    API_PORTS_MAX_PER_SESSION) {
		a->code = "too_many_connections";
		a->msg = "the session has as many port connections as it may";
		return 429;
	}
	if (!sess_agent_of(a->s)) {
		a->code = "agent_unavailable";
		a->msg = "the guest agent is not connected";
		return 503;
	}
	return 0;
}

int api_ports_ws_confirm(struct gw *gw, struct lws *wsi)
{
	struct admit a;
	int status = admit(gw, wsi, &a);

	explicit_bzero(a.token, sizeof(a.token));
	return status ? ws_upgrade_refuse(wsi, status, a.code, a.msg) : 0;
}

/* ---- towards the guest (loop) ---- */

static void stop_client(struct port_ws *c)
{
	if (!c->rx_stopped && c->wsi)
		lws_rx_flow_control(c->wsi, 0);
	c->rx_stopped = true;
}

/* Sends a masked frame of p[n] to the guest: queued on the channel, or
 * held before the guest's 101 or while its queue is full (the client is
 * not read meanwhile, or past HELD_MAX before the 101). 0, or
 * -1 (out of memory, or no randomness for the mask). */
static int send_frame(struct port_ws *c, enum port_ws_opcode op, bool fin, const void *p, size_t n)
{
	uint8_t mask[4], *f = malloc(PORT_WS_HEAD_MAX + n);
	size_t hl;
	int rc = 0;

	if (!f || getrandom(mask, sizeof(mask), 0) != (ssize_t)sizeof(mask)) {
		free(f);
		return -1;
	}
	hl = port_ws_frame_head(f, op, fin, n, mask);
	if (n)
		memcpy(f + hl, p, n);
	port_ws_mask(f + hl, n, mask, 0);
	if (!c->open || c->held.len) {
		/* before the guest's 101 (the client is read on, so that its
		 * leaving is seen, up to HELD_MAX), or behind what waits already */
		rc = bytebuf_append(&c->held, f, hl + n);
		if (c->open || c->held.len > HELD_MAX)
			stop_client(c);
	} else {
		int sent = agent_chan_send(c->pc.link, c->pc.chan, AGENT_DATA, 0, f, hl + n);

		if (sent == -ENOBUFS)
			rc = bytebuf_append(&c->held, f, hl + n);
		if (sent == -ENOBUFS || sent == AGENT_SEND_FULL)
			stop_client(c);
	}
	free(f);
	return rc < 0 ? -1 : 0;
}

/* The channel's queue has room again, or the guest's 101 came: what was
 * held goes, then the client is read again. */
static void resume(struct port_ws *c)
{
	int sent = 0;

	if (!c->open)
		return; /* held until the guest's server takes the upgrade */
	if (c->held.len) {
		sent = agent_chan_send(c->pc.link, c->pc.chan, AGENT_DATA, 0, c->held.data,
				       c->held.len);
		if (sent == -ENOBUFS)
			return; /* writable comes again */
		c->held.len = 0;
	}
	if (sent != AGENT_SEND_FULL && c->rx_stopped && c->open && c->wsi) {
		c->rx_stopped = false;
		lws_rx_flow_control(c->wsi, 1);
	}
}

/* The upgrade request for the guest into b: 0, -ENAMETOOLONG, -ENOMEM. */
static int upgrade_head(struct port_ws *c, struct lws *wsi, const struct admit *a, const char *key,
			struct bytebuf *b)
{
	static const enum lws_token_indexes pass[] = {
		WSI_TOKEN_ORIGIN,
		WSI_TOKEN_HTTP_USER_AGENT,
		WSI_TOKEN_HTTP_ACCEPT_LANGUAGE,
		WSI_TOKEN_HTTP_CACHE_CONTROL,
		WSI_TOKEN_HTTP_PRAGMA,
	};
	char *target = malloc(TARGET_MAX), *v = malloc(VALUE_MAX), *kept = malloc(VALUE_MAX),
	     peer[64];
	int rc = -ENOMEM;

	if (!target || !v || !kept)
		goto out;
	if ((rc = api_ports_target(wsi, WSI_TOKEN_GET_URI, a->by_host, target, TARGET_MAX)) < 0)
		goto out;
	rc = -ENOMEM;
	if (bytebuf_printf(b,
			   "GET %s HTTP/1.1\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
			   "sec-websocket-key: %s\r\nsec-websocket-version: 13\r\n",
			   target, key) < 0)
		goto out;
	if (lws_hdr_copy(wsi, v, VALUE_MAX, WSI_TOKEN_HOST) > 0 &&
	    bytebuf_printf(b, "host: %s\r\nx-forwarded-host: %s\r\n", v, v) < 0)
		goto out;
	for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
		const char *name = (const char *)lws_token_to_string(pass[i]);

		if (name && lws_hdr_copy(wsi, v, VALUE_MAX, pass[i]) > 0 &&
		    bytebuf_printf(b, "%s %s\r\n", name, v) < 0)
			goto out;
	}
	if (a->forward_auth && lws_hdr_copy(wsi, v, VALUE_MAX, WSI_TOKEN_HTTP_AUTHORIZATION) > 0 &&
	    bytebuf_printf(b, "authorization: %s\r\n", v) < 0)
		goto out;
	if (lws_hdr_copy(wsi, v, VALUE_MAX, WSI_TOKEN_HTTP_COOKIE) > 0 &&
	    port_link_cookie_strip(v, kept, VALUE_MAX) &&
	    bytebuf_printf(b, "cookie: %s\r\n", kept) < 0)
		goto out;
	if (!a->by_host && bytebuf_printf(b, "x-forwarded-prefix: /v1/sessions/%s/ports/%d\r\n",
					  c->sess_id, a->port) < 0)
		goto out;
	if (bytebuf_printf(b, "x-forwarded-proto: http\r\nx-forwarded-for: %s\r\n\r\n",
			   audit_peer(wsi, peer, sizeof(peer)) ? peer : "") < 0)
		goto out;
	rc = 0;
out:
	free(target);
	free(v);
	free(kept);
	return rc;
}

static void on_lost(struct live_auth *la, const char *why)
{
	struct port_ws *c = lws_container_of(la, struct port_ws, la);

	snprintf(c->revoked_why, sizeof(c->revoked_why), "%s", why);
	if (c->wsi)
		lws_callback_on_writable(c->wsi);
}

/* The client's upgrade was taken: the connection, its channel opened and
 * the guest's upgrade sent. NULL when it cannot be (lws closes). */
static struct port_ws *ports_ws_open(struct gw *gw, struct lws *wsi)
{
	struct bytebuf head = { 0 };
	uint8_t nonce[16];
	char key[PORT_WS_KEY_LEN];
	struct agent_link *l;
	struct port_ws *c;
	struct admit a;

	if (admit(gw, wsi, &a) || !(l = sess_agent_get(sess_agent_of(a.s), 0)))
		goto fail_token;
	if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce) ||
	    !(c = calloc(1, sizeof(*c)))) {
		agent_link_release(l);
		goto fail_token;
	}
	port_chan_init(&c->pc, gw->ctx, l, ws_free); /* lws's hold; the channel's below */
	c->wsi = wsi;
	snprintf(c->sess_id, sizeof(c->sess_id), "%s", sess_id(a.s));
	port_ws_key(nonce, key);
	port_ws_accept(key, sha1, c->accept);
	if (!(c->pend = malloc(WRITE_CHUNK)) || !(c->out = malloc(LWS_PRE + WRITE_CHUNK)) ||
	    upgrade_head(c, wsi, &a, key, &head) < 0)
		goto fail;
	if (port_chan_open(&c->pc, a.port) < 0)
		goto fail;
	agent_chan_send(l, c->pc.chan, AGENT_DATA, 0, head.data, head.len);
	bytebuf_free(&head);
	/* the client's frames wait (held) until the guest's 101, which has
	 * its time (then lws drops the connection) */
	lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, HANDSHAKE_S);
	if (a.by_token) {
		c->la.lost = on_lost;
		live_auth_watch(&c->la, gw, c->sess_id, a.token, AUTH_R_ACT);
	}
	explicit_bzero(a.token, sizeof(a.token));
	c->next = all;
	all = c;
	sess_touch(a.s);
	return c;
fail:
	bytebuf_free(&head);
	port_chan_release(&c->pc);
fail_token:
	explicit_bzero(a.token, sizeof(a.token));
	return NULL;
}

/* ---- towards the client (loop) ---- */

/* Closes the client's socket with code and why (cut to a close frame's
 * room). Returns -1 (lws closes it). */
static int close_client(struct port_ws *c, int code, const char *why)
{
	size_t n = strlen(why);

	lws_close_reason(c->wsi, (enum lws_close_status)code, (unsigned char *)why,
			 n > REASON_MAX ? REASON_MAX : n);
	return -1;
}

/* Before the guest's 101: its answer head. 1 when the upgrade is taken
 * (the rest of the bytes wait in pend), 0 when more must come, -1 to
 * close. */
static int handshake(struct port_ws *c)
{
	char why[160], msg[240];
	struct port_head h;
	const char *bad;
	bool ended;
	size_t n = port_chan_take(&c->pc, c->pend, WRITE_CHUNK, &ended, why, sizeof(why));
	long hl;

	if (bytebuf_append(&c->head, c->pend, n) < 0)
		return -1;
	hl = port_head_parse(c->head.data, c->head.len, &h);
	if (hl < 0)
		return close_client(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
				    "the guest's server sent no valid HTTP answer to the upgrade");
	if (hl == 0) {
		if (!ended)
			return 0;
		snprintf(msg, sizeof(msg), "the guest's port did not answer: %s",
			 why[0] ? why : "it closed the connection");
		return close_client(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, msg);
	}
	if (port_ws_check_answer(&h, c->accept, &bad) < 0) {
		snprintf(msg, sizeof(msg), "%s (it answered %d)", bad, h.status);
		log_info("ports", "%s: a WebSocket to the guest: %s", c->sess_id, msg);
		return close_client(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, msg);
	}
	c->open = true;
	lws_set_timeout(c->wsi, NO_PENDING_TIMEOUT, 0);
	c->pend_off = 0;
	c->pend_len = c->head.len - (size_t)hl; /* within the last take */
	memcpy(c->pend, c->head.data + hl, c->pend_len);
	bytebuf_free(&c->head);
	resume(c); /* what the client sent meanwhile */
	return 1;
}

/* One writable's worth: the guest's frames read until one piece of a
 * message is written to the client (pings answered, pongs dropped on the
 * way), or a close. */
static int pump(struct port_ws *c)
{
	struct port_ws_ev ev;
	char why[160];
	bool ended;
	int rc;

	if (c->revoked_why[0])
		return close_client(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, c->revoked_why);
	if (!c->open && (rc = handshake(c)) <= 0)
		return rc;
	for (;;) {
		if (c->pend_off == c->pend_len) {
			c->pend_off = 0;
			c->pend_len = port_chan_take(&c->pc, c->pend, WRITE_CHUNK, &ended, why,
						     sizeof(why));
			if (!c->pend_len)
				return ended ? close_client(c,
							    LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
							    why[0] ? why
								   : "the guest's server closed "
								     "the connection")
					     : 0;
		}
		c->pend_off += port_ws_rx_step(&c->rx, c->pend + c->pend_off,
					       c->pend_len - c->pend_off, &ev);
		switch (ev.kind) {
		case PORT_WS_EV_NONE:
		case PORT_WS_EV_PONG:
			continue;
		case PORT_WS_EV_PING:
			if (send_frame(c, PORT_WS_PONG, true, ev.p, ev.n) < 0)
				return -1;
			continue;
		case PORT_WS_EV_DATA:
			memcpy(c->out + LWS_PRE, ev.p, ev.n);
			if (lws_write(c->wsi, c->out + LWS_PRE, ev.n,
				      lws_write_ws_flags(ev.binary ? LWS_WRITE_BINARY
								   : LWS_WRITE_TEXT,
							 ev.first, ev.final)) < (int)ev.n)
				return -1;
			lws_callback_on_writable(c->wsi);
			return 0;
		case PORT_WS_EV_CLOSE: {
			uint8_t echo[2] = { (uint8_t)(ev.code >> 8), (uint8_t)ev.code };
			char reason[REASON_MAX + 1];

			snprintf(reason, sizeof(reason), "%.*s", (int)ev.n, (const char *)ev.p);
			(void)send_frame(c, PORT_WS_CLOSE, true, echo, ev.code ? 2 : 0);
			return close_client(c, ev.code ? ev.code : LWS_CLOSE_STATUS_NORMAL, reason);
		}
		case PORT_WS_EV_ERROR:
		default:
			log_info("ports", "%s: a WebSocket to the guest: %s", c->sess_id,
				 ev.why ? ev.why : "?");
			(void)send_frame(c, PORT_WS_CLOSE, true, "\x03\xea", 2); /* 1002 */
			return close_client(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
					    ev.why ? ev.why
						   : "the guest's server broke the protocol");
		}
	}
}

/* A piece of the client's message: a frame of its own for the guest. */
static int from_client(struct port_ws *c, const void *in, size_t len)
{
	bool first = lws_is_first_fragment(c->wsi), final = lws_is_final_fragment(c->wsi);
	enum port_ws_opcode op = !first			       ? PORT_WS_CONT
				 : lws_frame_is_binary(c->wsi) ? PORT_WS_BINARY
							       : PORT_WS_TEXT;

	return send_frame(c, op, final, in, len);
}

static void ports_ws_closed(struct port_ws *c)
{
	for (struct port_ws **pp = &all; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	live_auth_unwatch(&c->la);
	if (c->pc.chan) {
		if (c->open) /* a close for the guest's server, then the channel goes */
			(void)send_frame(c, PORT_WS_CLOSE, true, "\x03\xe8", 2);
		agent_chan_close(c->pc.link, c->pc.chan, "the client went away");
	}
	c->wsi = NULL;
	port_chan_release(&c->pc);
}

void api_ports_ws_poke_all(void)
{
	for (struct port_ws *c = all; c; c = c->next) {
		if (!atomic_exchange(&c->pc.pending, false) || !c->wsi)
			continue;
		if (atomic_exchange(&c->pc.resume, false))
			resume(c);
		lws_callback_on_writable(c->wsi);
	}
}

int api_ports_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			  size_t len)
{
	struct port_ws **c = user;
	struct gw *gw = wsi ? lws_context_user(lws_get_context(wsi)) : NULL;
	struct admit a;
	int status;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* HTTP_CONFIRM_UPGRADE answered the refusals already */
		status = admit(gw, wsi, &a);
		explicit_bzero(a.token, sizeof(a.token));
		return status ? 1 : 0;
	case LWS_CALLBACK_ESTABLISHED:
		*c = ports_ws_open(gw, wsi);
		return *c ? 0 : -1;
	case LWS_CALLBACK_RECEIVE:
		return *c ? from_client(*c, in, len) : -1;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return *c ? pump(*c) : 0;
	case LWS_CALLBACK_CLOSED:
		if (*c)
			ports_ws_closed(*c);
		*c = NULL;
		return 0;
	default:
		return 0;
	}
}
