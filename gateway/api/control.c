/* gateway/api/control.c: see control.h. */
#include "gateway/api/control.h"

#include "common/fsutil.h"
#include "common/ws_rx.h"

#include "gateway/action/run.h"
#include "gateway/api/api.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/routes.h"
#include "gateway/api/ws_msg.h"
#include "gateway/api/ws_upgrade.h"
#include "gateway/session/live_auth.h"
#include "gateway/session/session.h"
#include "gateway/stream/recorder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct control_conn {
	struct lws *wsi;
	struct gw *gw;
	char sid[ROUTE_ID_MAX + 1];
	bool authed;
	struct ws_rx rx; /* the message being received */
	struct {
		char *text; /* owned */
		size_t len; /* the message's, which may hold a NUL */
	} in[CONTROL_MAX_QUEUE]; /* actions waiting their turn */
	int n_in;
	char *out[CONTROL_MAX_QUEUE]; /* owned: replies, LWS_PRE headroom each */
	size_t out_len[CONTROL_MAX_QUEUE];
	int n_out;
	struct run *run; /* owned: the action under way */
	char *run_text; /* owned: its message, for a recording's timeline */
	size_t run_len;
	int64_t run_t0_ms; /* when it started */
	struct live_auth la; /* once authed: the token still acts here */
	lws_sorted_usec_list_t sul_auth; /* the deadline of a first-message token */
	char closing[128]; /* why it closes once its replies are out ("" while open) */
};

static void close_soon(struct control_conn *c, const char *why)
{
	if (c->closing[0])
		return;
	snprintf(c->closing, sizeof(c->closing), "%s", why);
	lws_callback_on_writable(c->wsi);
}

static void on_lost(struct live_auth *la, const char *why)
{
	close_soon(lws_container_of(la, struct control_conn, la), why);
}

/* How long a socket without a header credential has to send its token. */
static int auth_deadline_ms(const struct gw *gw)
{
	return gw->control_auth_ms > 0 ? gw->control_auth_ms : CONTROL_AUTH_DEADLINE_MS;
}

static void on_auth_deadline(lws_sorted_usec_list_t *sul)
{
	struct control_conn *c = lws_container_of(sul, struct control_conn, sul_auth);
	char why[64];

	snprintf(why, sizeof(why), "no token within %g s", auth_deadline_ms(c->gw) / 1000.0);
	if (!c->authed)
		close_soon(c, why);
}

/* The connection is authenticated by token: watched from now on. */
static void authed_by(struct control_conn *c, const char *token)
{
	c->authed = true;
	lws_sul_cancel(&c->sul_auth);
	c->la.lost = on_lost;
	live_auth_watch(&c->la, c->gw, c->sid, token, AUTH_R_ACT);
}

/* Whether the upgrade's Authorization header has a token that may act on
 * s: then it is in token (size bytes). */
static bool header_acts(struct gw *gw, struct lws *wsi, struct sess *s, char *token, size_t size)
{
	return ws_upgrade_bearer(wsi, token, size) == 0 &&
	       sess_rights(gw, s, token, NULL) & AUTH_R_ACT;
}

int control_filter(struct gw *gw, struct lws *wsi)
{
	struct route r;
	struct sess *s = ws_upgrade_session(gw, wsi, R_SESSION_CONTROL_WS, &r);
	char token[160];

	if (!s)
		return 1;
	/* A credential in the header must be good; without one, the first
	 * message must carry it. */
	if (ws_upgrade_has_auth(wsi) && !header_acts(gw, wsi, s, token, sizeof(token)))
		return 1;
	return 0;
}

static struct control_conn *control_open(struct gw *gw, struct lws *wsi)
{
	struct control_conn *c = calloc(1, sizeof(*c));
	struct route r;
	struct sess *s;
	char token[160];

	if (!c || !(s = ws_upgrade_session(gw, wsi, R_SESSION_CONTROL_WS, &r))) {
		free(c);
		return NULL;
	}
	snprintf(c->sid, sizeof(c->sid), "%s", r.id);
	c->wsi = wsi;
	ws_rx_init(&c->rx, CONTROL_MAX_MESSAGE);
	c->gw = gw;
	if (header_acts(gw, wsi, s, token, sizeof(token))) {
		authed_by(c, token);
	} else {
		lws_sul_schedule(lws_get_context(wsi), 0, &c->sul_auth, on_auth_deadline,
				 (lws_usec_t)auth_deadline_ms(gw) * LWS_US_PER_MS);
	}
	return c;
}

/* Queues reply (stolen) to be sent; a client that lets CONTROL_MAX_QUEUE
 * replies wait is closed (1008). */
static void send_json(struct control_conn *c, json_t *reply)
{
	char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
	size_t n = text ? strlen(text) : 0;
	char *buf;

	json_decref(reply);
	if (c->closing[0]) { /* nothing more goes out */
		free(text);
		return;
	}
	if (c->n_out == CONTROL_MAX_QUEUE) {
		/* A client that does not read its replies loses the connection,
		 * not a reply it would wait for forever. */
		free(text);
		for (int i = 0; i < c->n_out; i++)
			free(c->out[i]);
		c->n_out = 0;
		close_soon(c, "replies were not read: 32 are waiting");
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, 2); /* it may never be writable */
		return;
	}
	if (!text || !(buf = malloc(LWS_PRE + n))) {
		free(text);
		return;
	}
	memcpy(buf + LWS_PRE, text, n);
	free(text);
	c->out[c->n_out] = buf;
	c->out_len[c->n_out++] = n;
	lws_callback_on_writable(c->wsi);
}

static void send_error(struct control_conn *c, const json_t *id, const char *code, const char *msg)
{
	json_t *j = api_error_json(code, msg);

	if (j && id)
		json_object_set(j, "id", (json_t *)id);
	send_json(c, j);
}

static void start_next(struct control_conn *c);

static void action_done(void *ud, struct run_outcome *out)
{
	struct control_conn *c = ud;
	struct sess *s = sess_find(c->gw, c->sid);

	c->run = NULL;
	if (s)
		rec_note_action(s, c->run_text, c->run_len, out->failed ? out->err.status : 200,
				c->run_t0_ms, fs_now_ms(), "control");
	free(c->run_text);
	c->run_text = NULL;
	if (out->failed && out->reply) /* a batch: which action failed, what ran */
		send_json(c, out->reply);
	else if (out->failed)
		send_json(c, api_error_json(out->err.code, out->err.message));
	else
		send_json(c, out->reply);
	display_image_unref(out->image);
	start_next(c);
}

/* Starts the oldest queued action, if none runs. */
static void start_next(struct control_conn *c)
{
	while (!c->run && c->n_in > 0) {
		char *text = c->in[0].text;
		size_t len = c->in[0].len;
		struct sess *s = sess_find(c->gw, c->sid);
		json_t *error = NULL;
		int status;

		memmove(c->in, c->in + 1, (size_t)(--c->n_in) * sizeof(c->in[0]));
		if (!s) {
			send_error(c, NULL, "gone", "the session no longer exists");
		} else {
			int64_t t0 = fs_now_ms();

			c->run = api_start_action(s, text, len, TRAJ_CONTROL, action_done, c,
						  &status, &error);
			if (!c->run) {
				rec_note_action(s, text, len, status, t0, fs_now_ms(), "control");
				send_json(c, error);
			} else {
				c->run_text = text;
				c->run_len = len;
				c->run_t0_ms = t0;
				text = NULL; /* kept until the action is done */
			}
		}
		free(text);
	}
}

/* A first message {"token": "..."} authenticates a browser. */
static void authenticate(struct control_conn *c, const char *text, size_t len)
{
	struct sess *s = sess_find(c->gw, c->sid);
	char token[160];

	if (s && control_auth_parse(text, len, token, sizeof(token)) == 0 &&
	    sess_rights(c->gw, s, token, NULL) & AUTH_R_ACT) {
		authed_by(c, token);
		send_json(c, json_pack("{s:b}", "authenticated", 1));
	} else {
		/* One try: the error goes out, then the socket closes. */
		api_audit_ws_refused(c->gw, c->wsi, R_SESSION_CONTROL_WS, c->sid,
				     control_auth_parse(text, len, token, sizeof(token)) == 0
					     ? token
					     : NULL,
				     1008);
		send_error(c, NULL, "unauthorized",
			   "send {\"token\": CONTROL_TOKEN} first, or an Authorization header");
		close_soon(c, "unauthorized");
	}
}

static int control_receive(struct control_conn *c, const void *in, size_t len)
{
	char *text;
	size_t n;
	int rc = ws_rx_append(&c->rx, in, len, lws_is_first_fragment(c->wsi),
			      lws_is_final_fragment(c->wsi), lws_frame_is_binary(c->wsi));

	if (rc == -EMSGSIZE) {
		send_error(c, NULL, "message_too_large", "one action per message, at most 256 KiB");
		return 0;
	}
	if (rc == -ENOMEM)
		return -1;
	if (rc != WS_RX_COMPLETE)
		return 0;
	text = (char *)ws_rx_take(&c->rx, &n);
	if (c->closing[0]) { /* what comes after the end is dropped */
		free(text);
		return 0;
	}
	if (!c->authed) {
		authenticate(c, text, n);
		free(text);
		return 0;
	}
	if (c->n_in == CONTROL_MAX_QUEUE) {
		free(text);
		send_error(c, NULL, "busy", "too many actions queued on this connection");
		return 0;
	}
	c->in[c->n_in].text = text;
	c->in[c->n_in++].len = n;
	start_next(c);
	return 0;
}

static int control_writeable(struct control_conn *c)
{
	char *buf;
	size_t n;

	if (!c->n_out && c->closing[0]) {
		lws_close_reason(c->wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION,
				 (unsigned char *)c->closing, strlen(c->closing));
		return -1;
	}
	if (!c->n_out)
		return 0;
	buf = c->out[0];
	n = c->out_len[0];
	memmove(c->out, c->out + 1, (size_t)(c->n_out - 1) * sizeof(c->out[0]));
	memmove(c->out_len, c->out_len + 1, (size_t)(c->n_out - 1) * sizeof(c->out_len[0]));
	c->n_out--;
	if (lws_write(c->wsi, (unsigned char *)buf + LWS_PRE, n, LWS_WRITE_TEXT) < (int)n) {
		free(buf);
		return -1;
	}
	free(buf);
	if (c->n_out || c->closing[0])
		lws_callback_on_writable(c->wsi);
	return 0;
}

static void control_close(struct control_conn *c)
{
	if (!c)
		return;
	run_cancel(c->run);
	free(c->run_text);
	live_auth_unwatch(&c->la);
	lws_sul_cancel(&c->sul_auth);
	ws_rx_free(&c->rx);
	for (int i = 0; i < c->n_in; i++)
		free(c->in[i].text);
	for (int i = 0; i < c->n_out; i++)
		free(c->out[i]);
	free(c);
}

int control_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		     size_t len)
{
	struct control_conn **c = user;
	struct gw *gw = wsi ? lws_context_user(lws_get_context(wsi)) : NULL;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: /* a client that named our subprotocol */
		return control_filter(gw, wsi);
	case LWS_CALLBACK_ESTABLISHED:
		*c = control_open(gw, wsi);
		return *c ? 0 : -1;
	case LWS_CALLBACK_RECEIVE:
		return *c ? control_receive(*c, in, len) : -1;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return *c ? control_writeable(*c) : 0;
	case LWS_CALLBACK_CLOSED:
		control_close(*c);
		*c = NULL;
		return 0;
	default:
		return 0;
	}
}
