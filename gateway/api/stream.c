/* gateway/api/stream.c: see stream.h. One WRITEABLE callback writes one message:
 * a pending close, a PING, a queued text message, the cursor, or the frame
 * that brings the viewer to the newest screen (never a queue of frames: the
 * viewer's base frame is the only state, so a viewer that fell behind
 * simply gets a bigger delta or a whole frame). */
#include "gateway/api/stream.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "display/stream_wire.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/routes.h"
#include "gateway/api/ws_upgrade.h"
#include "gateway/core/audit.h"
#include "gateway/core/metrics.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/guest_apps.h"
#include "gateway/session/session.h"
#include "gateway/stream/stream_hub.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_RETRY_US (50 * LWS_US_PER_MS)

/* A WebSocket viewer: the hub's viewer, and what only the socket does. */
struct ws_viewer {
	struct stream_viewer v;
	struct exec_job *clip; /* owned: the guest's clipboard being read, or NULL */
};

#define WS_VIEWER(vp) lws_container_of(vp, struct ws_viewer, v)

/* What token grants on s: its own tokens, the operator key, or a share. */
static enum auth_scope token_scope(struct gw *gw, struct sess *s, const char *token)
{
	enum auth_scope got = auth_scope_from_rights(sess_rights(gw, s, token, NULL));

	if (got == AUTH_NONE && stream_hub_find(s))
		got = share_scope(&stream_hub_find(s)->shares, token, fs_now_ms());
	return got;
}

/* live_auth: a share link counts while it lives. */
static unsigned share_rights(struct live_auth *la, struct sess *s)
{
	struct stream_hub *h = stream_hub_find(s);
	enum auth_scope got = h ? share_scope_of_hash(&h->shares, la->hash, fs_now_ms())
				: AUTH_NONE;

	return got >= AUTH_CONTROL ? AUTH_R_VIEW | AUTH_R_ACT : got == AUTH_VIEW ? AUTH_R_VIEW : 0;
}

static void close_with(struct stream_viewer *v, int code, const char *reason);

static void on_lost(struct live_auth *la, const char *why)
{
	close_with(lws_container_of(la, struct stream_viewer, la), STREAM_CLOSE_POLICY, why);
}

/* v authenticated with token: watched from now on. */
static void viewer_authed(struct stream_viewer *v, struct sess *s, const char *token)
{
	const char *which = "";

	v->la.extra = share_rights;
	v->la.lost = on_lost;
	live_auth_watch(&v->la, v->gw, sess_id(s), token, AUTH_R_VIEW);
	sess_rights_of_hash(v->gw, s, v->la.hash, &which);
	audit_principal_set(&v->who, v->la.hash, which, !which[0]);
	if (!audit_peer(v->wsi, v->remote, sizeof(v->remote)))
		v->remote[0] = '\0';
}

/* What the upgrade's Authorization header grants on s; its token in token
 * (size bytes) when it has one. */
static enum auth_scope header_scope(struct gw *gw, struct lws *wsi, struct sess *s, char *token,
				    size_t size)
{
	return ws_upgrade_bearer(wsi, token, size) < 0 ? AUTH_NONE : token_scope(gw, s, token);
}

int stream_filter(struct gw *gw, struct lws *wsi)
{
	struct route r;
	struct sess *s = ws_upgrade_session(gw, wsi, R_SESSION_STREAM_WS, &r);
	char token[160];

	if (!s)
		return 1;
	if (ws_upgrade_has_auth(wsi) && header_scope(gw, wsi, s, token, sizeof(token)) < AUTH_VIEW)
		return 1;
	return 0;
}

static void close_with(struct stream_viewer *v, int code, const char *reason)
{
	if (v->close_code)
		return;
	v->close_code = code;
	snprintf(v->close_reason, sizeof(v->close_reason), "%s", reason);
	lws_callback_on_writable(v->wsi);
	lws_set_timeout(v->wsi, PENDING_TIMEOUT_USER_OK, 2);
}

static int idle_s(const struct stream_viewer *v)
{
	return v->gw->stream_idle_s > 0 ? v->gw->stream_idle_s : STREAM_DEFAULT_IDLE_S;
}

/* Pings a quiet viewer, hangs up on a dead one or one that never said who it is. */
static void on_idle(lws_sorted_usec_list_t *sul)
{
	struct stream_viewer *v = lws_container_of(sul, struct stream_viewer, sul_idle);
	int64_t now = fs_now_ms(), quiet = now - v->last_rx_ms, limit = (int64_t)idle_s(v) * 1000;

	if (v->scope == AUTH_NONE && now - v->opened_ms >= STREAM_AUTH_TIMEOUT_S * 1000) {
		close_with(v, STREAM_CLOSE_POLICY, "no auth message in time");
		return;
	}
	if (quiet >= limit) {
		log_info("stream", "viewer %d silent for %lld ms: hanging up", v->id,
			 (long long)quiet);
		/* It may not be reading at all: no close handshake to wait for. */
		lws_set_timeout(v->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		return;
	}
	if (quiet >= limit / 3) {
		v->ping_due = true;
		lws_callback_on_writable(v->wsi);
	}
	lws_sul_schedule(lws_get_context(v->wsi), 0, &v->sul_idle, on_idle,
			 (lws_usec_t)(limit / 6 > 0 ? limit / 6 : 1) * LWS_US_PER_MS);
}

static void on_pace(lws_sorted_usec_list_t *sul)
{
	struct stream_viewer *v = lws_container_of(sul, struct stream_viewer, sul_pace);

	lws_callback_on_writable(v->wsi);
}

static void send_json(struct stream_viewer *v, json_t *j);
static void send_error(struct stream_viewer *v, const char *code, const char *msg);
static void clipboard_done(struct exec_job *j, void *ud);

/* The hub's side of a WebSocket viewer (stream/stream_hub.h). */
static void ws_poke(struct stream_viewer *v, bool changed)
{
	if (changed && v->scope != AUTH_NONE)
		lws_callback_on_writable(v->wsi);
}

/* {"type":"clipboard"}: reads the desktop's clipboard through the agent, as
 * GET .../clipboard does, for a viewer with a control token (holding the
 * lease or not: the token may read it over REST anyway). */
static void clipboard_start(struct stream_viewer *v)
{
	struct ws_viewer *w = WS_VIEWER(v);
	struct sess *s = v->hub->s;

	if (v->scope < AUTH_CONTROL) {
		send_error(v, "forbidden", "a view token cannot read the clipboard");
		return;
	}
	if (w->clip) {
		send_error(v, "busy", "the clipboard is being read: wait for its answer");
		return;
	}
	if (!sess_guest_free(s) || !sess_agent_of(s)) {
		send_error(v,
			   sess_state_of(s) == SESS_PAUSED ? "session_paused" : "session_not_ready",
			   "the session is not running: the clipboard needs a ready session");
		return;
	}
	w->clip = exec_new(guest_clipboard_get_argv, NULL, 0, GUEST_CLIPBOARD_TIMEOUT_S);
	if (!w->clip) {
		send_error(v, "internal", "out of memory");
	} else if (exec_start(w->clip, v->gw, sess_agent_of(s), clipboard_done, v) < 0) {
		exec_free(w->clip);
		w->clip = NULL;
		send_error(v, "agent_unavailable", "the guest agent is not connected");
	}
}

/* The read has ended (its completion, on the loop): the viewer gets
 * {"type":"clipboard","text"} or an error. */
static void clipboard_done(struct exec_job *job, void *ud)
{
	struct stream_viewer *v = ud;
	struct ws_viewer *w = WS_VIEWER(v);
	const struct agent_exec_result *res;
	const char *err;
	int rc = exec_result(job, &res, &err);
	json_t *j = NULL;

	if (rc < 0) {
		send_error(v, "agent_unavailable", err);
	} else if (res->exit_code == 0 || guest_clipboard_empty(res->exit_code, res->err)) {
		size_t n = res->exit_code == 0 && res->out ? res->out_len : 0;

		j = json_pack("{s:s, s:s%}", "type", "clipboard", "text", n ? res->out : "", n);
		if (j)
			send_json(v, j);
		else
			send_error(v, "clipboard_failed", "the clipboard does not hold UTF-8 text");
	} else {
		send_error(v, "clipboard_failed",
			   res->err && res->err_len ? res->err : "xclip failed in the guest");
	}
	if (v->hub)
		audit_log(v->gw, "clipboard_get", sess_id(v->hub->s), &v->who, v->remote,
			  json_pack("{s:i, s:b}", "exit_code", rc < 0 ? -1 : res->exit_code,
				    "websocket", 1));
	exec_release(job);
	w->clip = NULL;
}

static void ws_gone(struct stream_viewer *v, struct stream_hub *h)
{
	(void)h;
	v->hub = NULL; /* the connection still owns v; it closes with 1001 */
	v->close_code = STREAM_CLOSE_GOING_AWAY;
	snprintf(v->close_reason, sizeof(v->close_reason), "the session was deleted");
	lws_callback_on_writable(v->wsi);
	/* A viewer that does not read never becomes writable. */
	lws_set_timeout(v->wsi, PENDING_TIMEOUT_USER_OK, 2);
}

static const struct stream_viewer_ops ws_viewer_ops = {
	.poke = ws_poke,
	.text = send_json,
	.gone = ws_gone,
};

static struct stream_viewer *stream_open(struct gw *gw, struct lws *wsi)
{
	struct ws_viewer *w = calloc(1, sizeof(*w));
	struct stream_viewer *v = w ? &w->v : NULL;
	struct stream_hub *h;
	struct route r;
	struct sess *s;
	char token[160];
	bool full;

	if (!v || !(s = ws_upgrade_session(gw, wsi, R_SESSION_STREAM_WS, &r)) ||
	    !(h = stream_hub_of(s))) {
		free(w);
		return NULL;
	}
	v->wsi = wsi;
	v->ops = &ws_viewer_ops;
	ws_rx_init(&v->rx, STREAM_MSG_MAX);
	v->gw = gw;
	v->quality = STREAM_DEFAULT_QUALITY;
	v->max_fps = STREAM_DEFAULT_MAX_FPS;
	v->cur_x = v->cur_y = -1;
	v->opened_ms = v->last_rx_ms = fs_now_ms();
	v->scope = header_scope(gw, wsi, s, token, sizeof(token));
	full = stream_hub_count(h, v->scope != AUTH_NONE) >=
	       (v->scope != AUTH_NONE ? STREAM_MAX_VIEWERS : STREAM_MAX_UNAUTHED);
	stream_hub_add(h, v);
	snprintf(v->name, sizeof(v->name), "viewer %d", v->id);
	if (full) {
		v->scope = AUTH_NONE; /* says nothing more */
		close_with(v, STREAM_CLOSE_POLICY,
			   "this session has its maximum of live viewers: try again later");
	} else if (v->scope != AUTH_NONE) {
		viewer_authed(v, s, token);
		send_json(v, NULL); /* the hello */
	}
	lws_sul_schedule(lws_get_context(wsi), 0, &v->sul_idle, on_idle,
			 (lws_usec_t)idle_s(v) * 1000 / 6 * LWS_US_PER_MS);
	return v;
}

static const char *scope_name(enum auth_scope a)
{
	return a == AUTH_OPERATOR ? "operator" : a == AUTH_CONTROL ? "control" : "view";
}

/* Queues a text message for v (stolen JSON; dropped when the queue is
 * full); NULL: the hello. */
static void send_json(struct stream_viewer *v, json_t *j)
{
	char *text, *buf;
	size_t n;

	if (!j && v->hub) { /* NULL: the hello, once authenticated */
		struct sess *s = v->hub->s;
		json_t *ctl = stream_control_json(v->hub, v);

		j = json_pack("{s:s, s:s, s:i, s:s, s:s, s:i, s:i, s:i, s:i, s:o}", "type", "hello",
			      "session", sess_id(s), "viewer", v->id, "name", v->name, "scope",
			      scope_name(v->scope), "width", sess_screen(s).width, "height",
			      sess_screen(s).height, "quality", v->quality, "max_fps", v->max_fps,
			      "controller", json_incref(json_object_get(ctl, "controller")));
		json_decref(ctl);
	}
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!text)
		return;
	n = strlen(text);
	if (v->n_text == STREAM_TEXT_QUEUE) { /* not reading: drop the oldest */
		free(v->text[0]);
		memmove(v->text, v->text + 1, (size_t)(v->n_text - 1) * sizeof(v->text[0]));
		memmove(v->text_len, v->text_len + 1,
			(size_t)(v->n_text - 1) * sizeof(v->text_len[0]));
		v->n_text--;
	}
	buf = malloc(LWS_PRE + n);
	if (buf) {
		memcpy(buf + LWS_PRE, text, n);
		v->text[v->n_text] = buf;
		v->text_len[v->n_text++] = n;
		lws_callback_on_writable(v->wsi);
	}
	free(text);
}

static void send_error(struct stream_viewer *v, const char *code, const char *msg)
{
	send_json(v, json_pack("{s:s, s:s, s:o}", "type", "error", "code", code, "message",
			       api_error_text(msg)));
}

/* Handles one complete, parsed message. Returns 0, or a close code. */
static int handle(struct stream_viewer *v, const struct stream_msg *m, char *reason, size_t rn)
{
	struct stream_hub *h = v->hub;
	const char *code, *msg;
	int rc;

	if (v->scope == AUTH_NONE) {
		if (m->kind != SM_AUTH) {
			snprintf(reason, rn, "the first message must be {\"type\":\"auth\",...}");
			return STREAM_CLOSE_POLICY;
		}
		if (stream_hub_count(h, true) >= STREAM_MAX_VIEWERS) {
			snprintf(reason, rn,
				 "this session has its maximum of live viewers: try again later");
			return STREAM_CLOSE_POLICY;
		}
		v->scope = token_scope(v->gw, h->s, m->token);
		if (v->scope == AUTH_NONE) {
			api_audit_ws_refused(v->gw, v->wsi, R_SESSION_STREAM_WS, sess_id(h->s),
					     m->token, 1008);
			snprintf(reason, rn,
				 "unauthorized: the token is not valid for this session");
			return STREAM_CLOSE_POLICY;
		}
		viewer_authed(v, h->s, m->token);
		if (m->name[0])
			snprintf(v->name, sizeof(v->name), "%s", m->name);
		if (m->quality)
			v->quality = m->quality;
		if (m->max_fps)
			v->max_fps = m->max_fps;
		send_json(v, NULL);
		return 0;
	}
	switch (m->kind) {
	case SM_AUTH:
		snprintf(reason, rn, "already authenticated");
		return STREAM_CLOSE_POLICY;
	case SM_SETTINGS:
		if (m->quality)
			v->quality = m->quality;
		if (m->max_fps) {
			v->max_fps = m->max_fps;
			v->next_frame_ms = 0;
		}
		if (m->name[0])
			snprintf(v->name, sizeof(v->name), "%s", m->name);
		send_json(v, json_pack("{s:s, s:i, s:i, s:s}", "type", "settings", "quality",
				       v->quality, "max_fps", v->max_fps, "name", v->name));
		lws_callback_on_writable(v->wsi);
		return 0;
	case SM_TAKE: {
		bool had = h->controller == v;

		/* A change is announced to everyone; a repeated take is answered. */
		if (stream_hub_take(h, v, &code, &msg) < 0)
			send_error(v, code, msg);
		else if (had)
			send_json(v, stream_control_json(h, v));
		return 0;
	}
	case SM_RELEASE:
		if (stream_hub_release(h, v, "released") < 0)
			send_error(v, "not_controller", "this viewer does not hold control");
		return 0;
	case SM_POINTER:
	case SM_WHEEL:
	case SM_KEY:
	case SM_TEXT:
		rc = stream_hub_input(h, v, m);
		if (rc == -EPERM)
			send_error(v, v->scope < AUTH_CONTROL ? "forbidden" : "not_controller",
				   v->scope < AUTH_CONTROL ? "a view token only watches"
							   : "send {\"type\":\"take\"} first");
		else if (rc < 0)
			send_error(v, "guest_gone", "the guest is not running");
		return 0;
	case SM_TYPE:
		rc = stream_hub_type(h, v, m->text, m->text_len, &code, &msg);
		if (rc == -EPERM)
			send_error(v, v->scope < AUTH_CONTROL ? "forbidden" : "not_controller",
				   v->scope < AUTH_CONTROL ? "a view token only watches"
							   : "send {\"type\":\"take\"} first");
		else if (rc == -EBUSY)
			send_error(v, "busy", "the last text is still being typed: wait for typed");
		else if (rc == -EPIPE)
			send_error(v, code, msg);
		else if (rc < 0)
			send_error(v, "internal", "out of memory");
		return 0;
	case SM_CLIPBOARD:
		clipboard_start(v);
		return 0;
	case SM_PING:
		send_json(v, m->has_t ? json_pack("{s:s, s:f}", "type", "pong", "t", m->t)
				      : json_pack("{s:s}", "type", "pong"));
		return 0;
	}
	return 0;
}

static int stream_receive(struct stream_viewer *v, const void *in, size_t len)
{
	struct stream_msg m;
	char reason[120];
	int code, rc;

	v->last_rx_ms = fs_now_ms();
	if (v->close_code)
		return 0; /* closing: nothing more is read */
	rc = ws_rx_append(&v->rx, in, len, lws_is_first_fragment(v->wsi),
			  lws_is_final_fragment(v->wsi), lws_frame_is_binary(v->wsi));
	if (rc == -ENOMEM)
		return -1;
	if (rc == WS_RX_PARTIAL)
		return 0;
	if (!v->hub)
		return -1;
	if (v->rx.binary) {
		code = STREAM_CLOSE_UNSUPPORTED;
		snprintf(reason, sizeof(reason),
			 "binary messages are not accepted: send JSON text");
	} else if (rc == -EMSGSIZE) {
		code = STREAM_CLOSE_TOO_BIG;
		snprintf(reason, sizeof(reason), "message over 4096 bytes");
	} else {
		code = stream_msg_parse((const char *)v->rx.buf, v->rx.len,
					sess_screen(v->hub->s).width, sess_screen(v->hub->s).height,
					&m, reason, sizeof(reason));
		if (code == 0)
			code = handle(v, &m, reason, sizeof(reason));
	}
	ws_rx_reset(&v->rx);
	if (code) {
		/* Closed from WRITEABLE: a frame may still be going out, and the
		 * close frame must follow it whole. */
		log_info("stream", "viewer %d closed with %d: %s", v->id, code, reason);
		close_with(v, code, reason);
	}
	return 0;
}

static void stream_pong(struct stream_viewer *v)
{
	v->last_rx_ms = fs_now_ms();
}

/* Writes the frame or cursor the viewer lacks. Returns 1 when it wrote, 0
 * when there was nothing to send, -1 on a write error. */
static int write_screen(struct stream_viewer *v)
{
	struct sess *s = v->hub->s;
	struct display_stream_msg *m;
	struct display_cursor *c;
	struct display_frame *f;
	int64_t now;
	int n, px, py;

	c = sess_mirror(s) ? display_mirror_cursor(sess_mirror(s)) : NULL;
	if (c && c->serial != v->shape_serial) {
		v->shape_serial = c->serial;
		m = stream_hub_shape(v->hub, c);
		display_cursor_unref(c);
		if (!m)
			return 0;
		n = lws_write(v->wsi, m->buf + m->headroom, m->len, LWS_WRITE_BINARY);
		display_stream_msg_unref(m);
		return n < 0 ? -1 : 1;
	}
	display_cursor_unref(c);
	sess_pointer(s, &px, &py);
	if (px != v->cur_x || py != v->cur_y) {
		unsigned char buf[LWS_PRE + STREAM_WIRE_CURSOR_LEN];

		v->cur_x = px;
		v->cur_y = py;
		stream_wire_put_cursor(buf + LWS_PRE, v->cur_x, v->cur_y, true);
		return lws_write(v->wsi, buf + LWS_PRE, STREAM_WIRE_CURSOR_LEN, LWS_WRITE_BINARY) <
				       0
			       ? -1
			       : 1;
	}
	f = sess_mirror(s) ? display_mirror_latest(sess_mirror(s)) : NULL;
	if (!f || v->base == f) { /* the same frame object: the base holds it alive */
		display_frame_unref(f);
		return 0;
	}
	now = fs_now_ms();
	if (now < v->next_frame_ms) {
		display_frame_unref(f);
		lws_sul_schedule(lws_get_context(v->wsi), 0, &v->sul_pace, on_pace,
				 (lws_usec_t)(v->next_frame_ms - now) * LWS_US_PER_MS);
		return 0;
	}
	m = stream_hub_message(v->hub, v->base, f, v->quality);
	if (!m) {
		/* Being encoded: the hub wakes its viewers when it is done; a
		 * full encoder pool is asked again a little later. */
		display_frame_unref(f);
		lws_sul_schedule(lws_get_context(v->wsi), 0, &v->sul_pace, on_pace,
				 STREAM_RETRY_US);
		return 0;
	}
	n = lws_write(v->wsi, m->buf + m->headroom, m->len, LWS_WRITE_BINARY);
	v->frames++;
	v->bytes += m->len;
	metrics_stream_frame(m->len);
	display_stream_msg_unref(m);
	display_frame_unref(v->base);
	v->base = f;
	v->next_frame_ms = (v->next_frame_ms && now - v->next_frame_ms < 1000 / v->max_fps
				    ? v->next_frame_ms
				    : now) +
			   1000 / v->max_fps;
	return n < 0 ? -1 : 1;
}

static int stream_writeable(struct stream_viewer *v)
{
	int rc;

	if (v->close_code) {
		lws_close_reason(v->wsi, (enum lws_close_status)v->close_code,
				 (unsigned char *)v->close_reason, strlen(v->close_reason));
		return -1;
	}
	if (!v->hub)
		return -1;
	if (v->ping_due) {
		/* A payload: lws 4.1 reports no RECEIVE_PONG for an empty pong. */
		unsigned char buf[LWS_PRE + 4] = { 0 };

		memcpy(buf + LWS_PRE, "vtr1", 4);
		v->ping_due = false;
		if (lws_write(v->wsi, buf + LWS_PRE, 4, LWS_WRITE_PING) < 0)
			return -1;
		lws_callback_on_writable(v->wsi);
		return 0;
	}
	if (v->n_text) {
		char *buf = v->text[0];
		size_t n = v->text_len[0];

		memmove(v->text, v->text + 1, (size_t)(v->n_text - 1) * sizeof(v->text[0]));
		memmove(v->text_len, v->text_len + 1,
			(size_t)(v->n_text - 1) * sizeof(v->text_len[0]));
		v->n_text--;
		rc = lws_write(v->wsi, (unsigned char *)buf + LWS_PRE, n, LWS_WRITE_TEXT);
		free(buf);
		if (rc < 0)
			return -1;
		lws_callback_on_writable(v->wsi);
		return 0;
	}
	if (v->scope == AUTH_NONE)
		return 0;
	rc = write_screen(v);
	if (rc < 0)
		return -1;
	if (rc > 0)
		lws_callback_on_writable(v->wsi);
	return 0;
}

static void stream_close(struct stream_viewer *v)
{
	if (!v)
		return;
	live_auth_unwatch(&v->la);
	if (v->hub)
		stream_hub_remove(v->hub, v, "disconnected");
	lws_sul_cancel(&v->sul_pace);
	lws_sul_cancel(&v->sul_idle);
	display_frame_unref(v->base);
	ws_rx_free(&v->rx);
	for (int i = 0; i < v->n_text; i++)
		free(v->text[i]);
	exec_release(WS_VIEWER(v)->clip); /* freed when it ends, if it still runs */
	free(WS_VIEWER(v));
}

int stream_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len)
{
	struct stream_viewer **v = user;
	struct gw *gw = wsi ? lws_context_user(lws_get_context(wsi)) : NULL;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: /* a client that named our subprotocol */
		return stream_filter(gw, wsi);
	case LWS_CALLBACK_ESTABLISHED:
		*v = stream_open(gw, wsi);
		return *v ? 0 : -1;
	case LWS_CALLBACK_RECEIVE:
		return *v ? stream_receive(*v, in, len) : -1;
	case LWS_CALLBACK_RECEIVE_PONG:
		if (*v)
			stream_pong(*v);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return *v ? stream_writeable(*v) : 0;
	case LWS_CALLBACK_CLOSED:
		stream_close(*v);
		*v = NULL;
		return 0;
	default:
		return 0;
	}
}
