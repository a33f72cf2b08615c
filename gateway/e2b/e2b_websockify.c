/* gateway/e2b/e2b_websockify.c: see e2b_websockify.h. A connection is two
 * lws connections: the client's WebSocket (wsi) and the door's TCP socket
 * (door). Each holds it until it closes; it is freed when both have. */
#include "gateway/e2b/e2b_websockify.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "display/vnc_share.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/ws_upgrade.h"
#include "gateway/core/audit.h"
#include "gateway/e2b/desktop_serve.h"
#include "gateway/e2b/e2b_req.h"
#include "gateway/e2b/e2b_route.h"
#include "gateway/e2b/rfb_relay.h"
#include "gateway/session/session.h"
#include "gateway/stream/stream_hub.h"
#include "gateway/stream/vnc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHECK_US LWS_US_PER_SEC /* the stream still runs? */

/* Bytes waiting for one side. The first LWS_PRE bytes of data are never
 * queued bytes, so a WebSocket write finds its headroom before head. */
struct queue {
	uint8_t *data; /* owned */
	size_t head, len, cap; /* queued: data[head .. head + len) */
};

struct websockify {
	struct websockify *next; /* all */
	struct gw *gw;
	struct lws *wsi; /* the client's WebSocket; NULL once closed */
	struct lws *door; /* the door's socket; NULL once closed */
	bool adopting; /* inside lws_adopt_...: a close then is the adoption's */
	char sess_id[SESS_ID_MAX];
	int port; /* the Host's PORT: the stream must stay on it */
	char pw[DESKTOP_MAX_NAME + 1]; /* the stream's password when it came ("" none) */
	unsigned door_serial; /* the door held (vnc_hold) */
	bool held;
	struct rfb_relay relay;
	struct queue to_client, to_door;
	bool client_stopped, door_stopped; /* not read (rx flow off) */
	int64_t handshake_until; /* monotonic ms */
	lws_sorted_usec_list_t sul_check;
	lws_sorted_usec_list_t sul_refuse; /* a wrong password's answer, after a pause */
	struct rfb_relay_out refusal; /* what it is */
	bool refusing; /* sul_refuse is due: nothing closes the WebSocket before */
	int close_code; /* non-zero: close the WebSocket once to_client is sent */
	char close_reason[120];
};

static struct websockify *all;

/* ---- queues ---- */

static int queue_put(struct queue *q, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (q->head + q->len + n > q->cap && q->head > LWS_PRE) { /* move down first */
		memmove(q->data + LWS_PRE, q->data + q->head, q->len);
		q->head = LWS_PRE;
	}
	if (q->head + q->len + n > q->cap) {
		size_t cap = q->cap ? q->cap : LWS_PRE + 4096;
		uint8_t *d;

		while (cap < LWS_PRE + q->len + n)
			cap *= 2;
		if (!(d = malloc(cap)))
			return -ENOMEM;
		if (q->len)
			memcpy(d + LWS_PRE, q->data + q->head, q->len);
		free(q->data);
		q->data = d;
		q->head = LWS_PRE;
		q->cap = cap;
	}
	memcpy(q->data + q->head + q->len, p, n);
	q->len += n;
	return 0;
}

static void queue_drop(struct queue *q, size_t n)
{
	q->head += n;
	q->len -= n;
	if (!q->len)
		q->head = LWS_PRE;
}

static void queue_free(struct queue *q)
{
	free(q->data);
	memset(q, 0, sizeof(*q));
}

/* ---- the sandbox of a request ---- */

/* The sandbox id and PORT of the Host, and whether the path is ours. */
static bool target(struct lws *wsi, char *id, size_t idlen, int *port)
{
	char host[256], path[64];

	if (lws_hdr_copy(wsi, path, sizeof(path), WSI_TOKEN_GET_URI) <= 0 ||
	    strcmp(path, "/websockify"))
		return false;
	if (lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST) <= 0 ||
	    e2b_host_sandbox(host, port, id, idlen) < 0 || *port == E2B_ENVD_PORT)
		return false;
	return true;
}

bool e2b_websockify_is(struct lws *wsi)
{
	char id[E2B_ID_MAX];
	int port;

	return target(wsi, id, sizeof(id), &port);
}

static int count_of(const char *sess_id)
{
	int n = 0;

	for (struct websockify *b = all; b; b = b->next)
		n += b->wsi && !strcmp(b->sess_id, sess_id);
	return n;
}

/* Why the upgrade cannot be served now: an HTTP status with its code and
 * message; 0 when it can (*sp the session). */
static int why_not(struct gw *gw, struct lws *wsi, struct sess **sp, int *port, const char **code,
		   const char **msg)
{
	char id[E2B_ID_MAX];
	struct sess *s;
	int running;

	*sp = NULL;
	if (!target(wsi, id, sizeof(id), port) || !(s = sess_find(gw, id))) {
		*code = "not_found";
		*msg = "no such sandbox";
		return 404;
	}
	if (!desktop_stream_started(s, &running) || running != *port) {
		*code = "stream_not_running";
		*msg = "the sandbox's stream is not running on this port (stream.start())";
		return 502;
	}
	if (sess_state_of(s) != SESS_READY || !sess_mirror(s)) {
		*code = "session_not_ready";
		*msg = "the sandbox is not running";
		return 503;
	}
	if (count_of(sess_id(s)) >= WEBSOCKIFY_PER_SESSION) {
		*code = "too_many_viewers";
		*msg = "the sandbox has its maximum of VNC connections: try again later";
		return 503;
	}
	*sp = s;
	return 0;
}

int e2b_websockify_confirm(struct gw *gw, struct lws *wsi)
{
	const char *code, *msg;
	struct sess *s;
	int port, status = why_not(gw, wsi, &s, &port, &code, &msg);

	return status ? ws_upgrade_refuse(wsi, status, code, msg) : 0;
}

/* ---- moving bytes ---- */

static void want_client(struct websockify *b)
{
	if (b->wsi)
		lws_callback_on_writable(b->wsi);
}

static void want_door(struct websockify *b)
{
	if (b->door)
		lws_callback_on_writable(b->door);
}

/* Closes the WebSocket with code and reason once what is queued for the
 * client is sent; the door's side goes at once. */
static void close_with(struct websockify *b, int code, const char *reason)
{
	if (!b->close_code) {
		b->close_code = code;
		snprintf(b->close_reason, sizeof(b->close_reason), "%s", reason);
	}
	if (b->wsi && !b->client_stopped) {
		lws_rx_flow_control(b->wsi, 0);
		b->client_stopped = true;
	}
	if (b->door) /* its close comes back as LWS_CALLBACK_RAW_CLOSE */
		lws_set_timeout(b->door, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	want_client(b);
}

/* Queues what the relay gave; 0 or -ENOMEM. */
static int emit(struct websockify *b, const struct rfb_relay_out *out)
{
	if (queue_put(&b->to_client, out->to_client, out->client_len) < 0 ||
	    queue_put(&b->to_door, out->to_door, out->door_len) < 0)
		return -ENOMEM;
	if (out->client_len)
		want_client(b);
	if (out->door_len)
		want_door(b);
	return 0;
}

/* Bytes for the door; past WEBSOCKIFY_HIGH queued, the client is not read
 * until door_writeable has it down to WEBSOCKIFY_LOW (to_client: the same
 * the other way). */
static int to_door(struct websockify *b, const uint8_t *p, size_t n)
{
	if (queue_put(&b->to_door, p, n) < 0)
		return -ENOMEM;
	want_door(b);
	if (b->to_door.len > WEBSOCKIFY_HIGH && b->wsi && !b->client_stopped) {
		lws_rx_flow_control(b->wsi, 0);
		b->client_stopped = true;
	}
	return 0;
}

static int to_client(struct websockify *b, const uint8_t *p, size_t n)
{
	if (queue_put(&b->to_client, p, n) < 0)
		return -ENOMEM;
	want_client(b);
	if (b->to_client.len > WEBSOCKIFY_HIGH && b->door && !b->door_stopped) {
		lws_rx_flow_control(b->door, 0);
		b->door_stopped = true;
	}
	return 0;
}

static void on_refuse(lws_sorted_usec_list_t *sul)
{
	struct websockify *b = lws_container_of(sul, struct websockify, sul_refuse);

	b->refusing = false;
	(void)emit(b, &b->refusal); /* out of memory: it closes without */
	close_with(b, LWS_CLOSE_STATUS_POLICY_VIOLATION, b->relay.why);
}

/* What a relay call said. Returns 0, or -1 to close now. */
static int relay_said(struct websockify *b, enum rfb_relay_status st,
		      const struct rfb_relay_out *out, bool from_client)
{
	if (st == RFB_RELAY_FAILED && from_client) {
		/* The client's mistake: its refusal (what out holds) after a
		 * pause, as the VNC door answers a wrong password. */
		log_info("e2b", "sandbox %s: /websockify: %s", b->sess_id, b->relay.why);
		if (b->wsi && !strcmp(b->relay.why, "the password is wrong"))
			api_audit_ws_refused(b->gw, b->wsi, R_DOOR, b->sess_id, NULL,
					     LWS_CLOSE_STATUS_POLICY_VIOLATION);
		b->refusal = *out;
		b->refusing = true;
		if (b->wsi && !b->client_stopped) {
			lws_rx_flow_control(b->wsi, 0);
			b->client_stopped = true;
		}
		if (b->door) /* the door has no part in it any more */
			lws_set_timeout(b->door, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		lws_sul_schedule(b->gw->ctx, 0, &b->sul_refuse, on_refuse,
				 (lws_usec_t)WEBSOCKIFY_FAIL_DELAY_MS * LWS_US_PER_MS);
		return 0;
	}
	if (emit(b, out) < 0)
		return -1;
	if (st == RFB_RELAY_FAILED) {
		log_warn("e2b", "sandbox %s: /websockify: %s", b->sess_id, b->relay.why);
		close_with(b, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, b->relay.why);
	}
	return 0;
}

static int from_client(struct websockify *b, const uint8_t *in, size_t len)
{
	struct rfb_relay_out out;
	enum rfb_relay_status st;
	size_t used;

	if (b->close_code || b->relay.status == RFB_RELAY_FAILED)
		return 0; /* closing: what still comes is not read */
	if (b->relay.status == RFB_RELAY_OPEN)
		return to_door(b, in, len);
	st = rfb_relay_from_client(&b->relay, in, len, &used, &out);
	if (relay_said(b, st, &out, true) < 0)
		return -1;
	return st == RFB_RELAY_OPEN && used < len ? to_door(b, in + used, len - used) : 0;
}

static int from_door(struct websockify *b, const uint8_t *in, size_t len)
{
	struct rfb_relay_out out;
	enum rfb_relay_status st;
	size_t used;

	if (b->close_code || b->relay.status == RFB_RELAY_FAILED)
		return 0; /* closing: what still comes is not read */
	if (b->relay.status == RFB_RELAY_OPEN)
		return to_client(b, in, len);
	st = rfb_relay_from_door(&b->relay, in, len, &used, &out);
	if (relay_said(b, st, &out, false) < 0)
		return -1;
	return st == RFB_RELAY_OPEN && used < len ? to_client(b, in + used, len - used) : 0;
}

/* ---- the connection's life ---- */

static void on_check(lws_sorted_usec_list_t *sul)
{
	struct websockify *b = lws_container_of(sul, struct websockify, sul_check);
	struct sess *s = sess_find(b->gw, b->sess_id);
	const char *pw;
	int port;

	/* A stream stopped and started again within the second has another
	 * password, or none: what this client was let in with no longer holds. */
	pw = s ? desktop_stream_password(s) : NULL;
	if (!s || !desktop_stream_started(s, &port) || port != b->port ||
	    strcmp(pw ? pw : "", b->pw)) {
		close_with(b, LWS_CLOSE_STATUS_GOINGAWAY, "the stream stopped");
		return;
	}
	if (b->relay.status != RFB_RELAY_OPEN && fs_now_ms() >= b->handshake_until) {
		close_with(b, LWS_CLOSE_STATUS_POLICY_VIOLATION, "the RFB handshake took too long");
		return;
	}
	lws_sul_schedule(b->gw->ctx, 0, &b->sul_check, on_check, CHECK_US);
}

/* A non-blocking TCP connection to the door of h (loopback, or the
 * address it listens on); the socket, or -1. */
static int connect_door(struct gw *gw, struct stream_hub *h)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)display_vnc_share_port(h->vnc)) };
	const char *addr = gw->vnc_listen[0] ? gw->vnc_listen : "127.0.0.1";
	int fd;

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1 || sa.sin_addr.s_addr == INADDR_ANY)
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static void unhold(struct websockify *b)
{
	struct sess *s = b->held ? sess_find(b->gw, b->sess_id) : NULL;
	struct stream_hub *h = s ? stream_hub_find(s) : NULL;

	if (h)
		vnc_unhold(h, b->door_serial);
	b->held = false;
}

static void release(struct websockify *b)
{
	if (b->wsi || b->door)
		return; /* the other one still holds it */
	lws_sul_cancel(&b->sul_check);
	lws_sul_cancel(&b->sul_refuse);
	queue_free(&b->to_client);
	queue_free(&b->to_door);
	explicit_bzero(&b->relay, sizeof(b->relay));
	explicit_bzero(b->pw, sizeof(b->pw));
	free(b);
}

static struct websockify *websockify_open(struct gw *gw, struct lws *wsi)
{
	const char *code, *msg, *pw;
	char err[256], view[16];
	uint8_t challenge[VNC_AUTH_CHALLENGE_LEN];
	struct rfb_relay_out out;
	struct stream_hub *h;
	struct websockify *b;
	struct sess *s;
	int port, fd;
	bool view_only;

	if (why_not(gw, wsi, &s, &port, &code, &msg) || !(h = stream_hub_of(s)))
		return NULL;
	if (getrandom(challenge, sizeof(challenge), 0) != (ssize_t)sizeof(challenge) ||
	    !(b = calloc(1, sizeof(*b))))
		return NULL;
	b->gw = gw;
	b->wsi = wsi;
	b->port = port;
	snprintf(b->sess_id, sizeof(b->sess_id), "%s", sess_id(s));
	if (vnc_hold(h, gw, &b->door_serial, &code, err, sizeof(err)) < 0) {
		log_warn("e2b", "sandbox %s: /websockify: the VNC door: %s", sess_id(s), err);
		free(b);
		return NULL;
	}
	b->held = true;
	if ((fd = connect_door(gw, h)) < 0) {
		log_warn("e2b", "sandbox %s: /websockify: cannot connect to the VNC door: %s",
			 sess_id(s), strerror(errno));
		unhold(b);
		free(b);
		return NULL;
	}
	b->adopting = true;
	b->door = lws_adopt_descriptor_vhost_via_info(&(lws_adopt_desc_t){
		.vh = lws_get_vhost(wsi),
		.type = LWS_ADOPT_SOCKET,
		.fd.sockfd = fd,
		.opaque = b,
	});
	b->adopting = false;
	if (!b->door) { /* lws closed fd */
		unhold(b);
		free(b);
		return NULL;
	}
	view_only = lws_get_urlarg_by_name(wsi, "view_only=", view, sizeof(view)) &&
		    (!strcmp(view + 10, "true") || !strcmp(view + 10, "1"));
	pw = desktop_stream_password(s);
	snprintf(b->pw, sizeof(b->pw), "%s", pw ? pw : "");
	rfb_relay_init(&b->relay, pw, view_only ? h->vnc_view_pw : h->vnc_control_pw, challenge,
		       &out);
	explicit_bzero(challenge, sizeof(challenge));
	b->handshake_until = fs_now_ms() + WEBSOCKIFY_HANDSHAKE_MS;
	lws_sul_schedule(gw->ctx, 0, &b->sul_check, on_check, CHECK_US);
	b->next = all;
	all = b;
	if (emit(b, &out) < 0)
		close_with(b, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "out of memory");
	log_info("e2b", "sandbox %s: /websockify: a %s RFB client (%s)", sess_id(s),
		 view_only ? "view-only" : "control", pw ? "VNC password" : "no password");
	sess_touch(s);
	return b;
}

static void websockify_closed(struct websockify *b)
{
	for (struct websockify **pp = &all; *pp; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	lws_sul_cancel(&b->sul_check);
	lws_sul_cancel(&b->sul_refuse);
	b->wsi = NULL;
	if (b->door)
		lws_set_timeout(b->door, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	unhold(b);
	release(b);
}

static int client_writeable(struct websockify *b)
{
	struct queue *q = &b->to_client;

	if (q->len) {
		size_t n = q->len < WEBSOCKIFY_CHUNK ? q->len : WEBSOCKIFY_CHUNK;

		if (lws_write(b->wsi, q->data + q->head, n, LWS_WRITE_BINARY) < (int)n)
			return -1;
		queue_drop(q, n);
		if (q->len)
			want_client(b);
		if (q->len < WEBSOCKIFY_LOW && b->door_stopped && b->door) {
			lws_rx_flow_control(b->door, 1);
			b->door_stopped = false;
		}
		if (!q->len && b->close_code)
			want_client(b);
		return 0;
	}
	if (b->close_code) {
		lws_close_reason(b->wsi, (enum lws_close_status)b->close_code,
				 (unsigned char *)b->close_reason, strlen(b->close_reason));
		return -1;
	}
	return 0;
}

static int door_writeable(struct websockify *b)
{
	struct queue *q = &b->to_door;
	size_t n = q->len < WEBSOCKIFY_CHUNK ? q->len : WEBSOCKIFY_CHUNK;

	if (!n || b->close_code)
		return 0;
	if (lws_write(b->door, q->data + q->head, n, LWS_WRITE_RAW) < (int)n)
		return -1;
	queue_drop(q, n);
	if (q->len)
		want_door(b);
	if (q->len < WEBSOCKIFY_LOW && b->client_stopped && b->wsi && !b->close_code &&
	    !b->refusing) {
		lws_rx_flow_control(b->wsi, 1);
		b->client_stopped = false;
	}
	return 0;
}

int e2b_websockify_door_callback(struct lws *wsi, enum lws_callback_reasons reason, void *in,
				 size_t len)
{
	struct websockify *b = lws_get_opaque_user_data(wsi);

	if (!b || b->adopting)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_RAW_RX:
		if (from_door(b, in, len) < 0)
			close_with(b, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "out of memory");
		return 0;
	case LWS_CALLBACK_RAW_WRITEABLE:
		return door_writeable(b);
	case LWS_CALLBACK_RAW_CLOSE:
		lws_set_opaque_user_data(wsi, NULL);
		b->door = NULL;
		if (b->wsi && !b->refusing)
			close_with(b, LWS_CLOSE_STATUS_GOINGAWAY,
				   b->relay.status == RFB_RELAY_OPEN
					   ? "the VNC door closed"
					   : "the screen is not available now");
		release(b);
		return 0;
	default:
		return 0;
	}
}

int e2b_websockify_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			    size_t len)
{
	struct websockify **b = user;
	struct gw *gw = wsi ? lws_context_user(lws_get_context(wsi)) : NULL;
	const char *code, *msg;
	struct sess *s;
	int port;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* HTTP_CONFIRM_UPGRADE answered the refusals already */
		return why_not(gw, wsi, &s, &port, &code, &msg) ? 1 : 0;
	case LWS_CALLBACK_ESTABLISHED:
		*b = websockify_open(gw, wsi);
		return *b ? 0 : -1;
	case LWS_CALLBACK_RECEIVE:
		if (!*b)
			return -1;
		if (!lws_frame_is_binary(wsi)) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE,
					 (unsigned char *)"binary messages only (RFB)", 26);
			return -1;
		}
		return from_client(*b, in, len);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return *b ? client_writeable(*b) : 0;
	case LWS_CALLBACK_CLOSED:
		if (*b)
			websockify_closed(*b);
		*b = NULL;
		return 0;
	default:
		return 0;
	}
}
