/* gateway/api/guest_ws.c: see guest_ws.h. A connection is held twice: by lws
 * (until CLOSED) and by its agent channel (until the channel's closed
 * callback); the link's thread only queues messages under the
 * connection's lock and wakes the loop, which writes them.
 *
 * Backpressure both ways. Towards the client: the guest's bytes are
 * returned to its window only once lws took them, so a slow client stalls
 * the guest's sender (the queue holds at most the window, and the link
 * gives up a channel that overruns it); the queue is bounded in messages
 * too (OUT_MAX_MSGS). One exception: the parts of a DevTools message
 * being joined are returned as they come while nothing waits for the
 * client (a message may be larger than the window, and the agent sends
 * no more than the window before credit comes back), so besides the
 * window the queue holds at most one message (GUEST_WS_MAX_MESSAGE).
 * Towards the guest: when the channel's queue is full (agent_chan_send
 * says so) the client is not read until writable(). */
#include "gateway/api/guest_ws.h"

#include "common/bytebuf.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "common/ws_rx.h"
#include "gateway/api/routes.h"
#include "gateway/api/ws_msg.h"
#include "gateway/api/ws_upgrade.h"
#include "gateway/core/audit.h"
#include "gateway/core/auth.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/live_auth.h"
#include "gateway/session/session.h"
#include "gateway/stream/recorder.h"
#include "vmm-qemu/agent_exec.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CDP_PORT "9222" /* the guest's Chromium, on its own 127.0.0.1 */
#define AGENT_POLL_US (20 * LWS_US_PER_MS)
/* Messages queued towards the client. Their bytes are bounded by the
 * channel's window; this bounds their number (and overhead): a guest
 * sending one-byte messages. Exec output is joined into messages of up to
 * EXEC_JOIN bytes. */
#define OUT_MAX_MSGS (128 * 1024)
#define EXEC_JOIN (64 * 1024)

struct outmsg {
	struct outmsg *next;
	bool binary;
	size_t len, ack; /* ack: guest bytes to return to the window once sent */
	size_t cap; /* bytes after LWS_PRE */
	unsigned char data[]; /* LWS_PRE, then len bytes */
};

struct guest_ws {
	atomic_int refs; /* lws + the channel */
	struct guest_ws *next; /* all (loop thread only) */
	struct lws *wsi; /* NULL once lws closed it */
	struct lws_context *ctx;
	bool cdp; /* else exec */
	struct agent_link *link; /* held; NULL while waiting for the session's link */
	char sess_id[SESS_ID_MAX]; /* the session, looked up again while waiting for its link */
	struct gw *gw;
	int64_t link_wait_until; /* monotonic ms */
	lws_sorted_usec_list_t sul_link; /* polls for the link (nothing waits on the loop) */
	uint32_t chan; /* 0 until opened */
	struct ws_rx rx; /* the client's message being received (loop) */
	/* a client message the channel's full queue refused (loop), sent
	 * again on resume; the client is not read meanwhile */
	unsigned char *held;
	size_t held_len;
	bool held_binary, rx_stopped;
	atomic_bool resume; /* writable() came: read the client again */
	/* exec (loop) */
	struct exec_job *spec; /* owned: the first message, parsed */
	int64_t started_ms; /* when the command started (monotonic; 0: it did not) */
	struct audit_principal who; /* the token's, for the command's audit entry */
	char remote[64];
	lws_sorted_usec_list_t sul; /* the command's timeout */
	bool timed_out;
	/* shared with the link's thread, under mu */
	pthread_mutex_t mu;
	struct outmsg *out, **out_tail;
	struct outmsg **out_last; /* what points at the last message; NULL when none */
	size_t out_msgs;
	struct bytebuf gmsg; /* cdp: a message from the browser being joined */
	size_t gmsg_ack; /* its bytes not returned yet (while out is not empty) */
	bool ended; /* the channel is gone: close once out is empty */
	bool exited; /* the command's exit status came: exit_code, exit_signal */
	int exit_code, exit_signal;
	char reason[128];
	atomic_bool pending;
	/* loop thread: what the token may do, and its watch (revoked: closes
	 * at once, with revoked_why) */
	unsigned rights;
	struct live_auth la;
	char revoked_why[96];
};

static struct guest_ws *all; /* loop thread */

static bool guest_ws_is(struct lws *wsi)
{
	enum route_kind k = ws_upgrade_route(wsi).kind;

	return k == R_SESSION_CDP_WS || k == R_SESSION_EXEC_WS;
}

/* The session of a CDP or exec upgrade whose Authorization header grants
 * control (these clients cannot send a token in a first message); the
 * header's token in token (size bytes). */
static struct sess *authorized(struct gw *gw, struct lws *wsi, struct route *r, char *token,
			       size_t size)
{
	enum route_kind kind = guest_ws_is(wsi) ? ws_upgrade_route(wsi).kind : R_NOT_FOUND;
	struct sess *s = ws_upgrade_session(gw, wsi, kind, r);

	if (!s || ws_upgrade_bearer(wsi, token, size) < 0 ||
	    !(sess_rights(gw, s, token, NULL) &
	      (kind == R_SESSION_EXEC_WS ? AUTH_R_EXEC : AUTH_R_ACT)))
		return NULL;
	return s;
}

int guest_ws_filter(struct gw *gw, struct lws *wsi)
{
	struct route r;
	char token[160];
	struct sess *s = authorized(gw, wsi, &r, token, sizeof(token));

	return s && sess_state_of(s) == SESS_READY && sess_agent_of(s) ? 0 : 1;
}

static void release(struct guest_ws *g)
{
	if (atomic_fetch_sub(&g->refs, 1) != 1)
		return;
	while (g->out) {
		struct outmsg *m = g->out;

		g->out = m->next;
		free(m);
	}
	ws_rx_free(&g->rx);
	free(g->held);
	bytebuf_free(&g->gmsg);
	exec_free(g->spec);
	agent_link_release(g->link);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

/* Under mu: ends the connection for a reason of the guest's making. */
static void fail(struct guest_ws *g, const char *why)
{
	if (!g->ended)
		snprintf(g->reason, sizeof(g->reason), "%s", why);
	g->ended = true;
	if (g->chan)
		agent_chan_close(g->link, g->chan, why);
	atomic_store(&g->pending, true);
	lws_cancel_service(g->ctx);
}

/* Under mu: exec output for the last queued message when it is of the
 * same stream and has room (the loop takes messages off the queue before
 * writing them, so the last one is the link's to change). True when it
 * took it. */
static bool join(struct guest_ws *g, unsigned char tag, const void *b, size_t blen, size_t ack)
{
	struct outmsg *m = g->out_last ? *g->out_last : NULL;

	if (!m || !m->binary || m->data[LWS_PRE] != tag || m->len + blen > EXEC_JOIN)
		return false;
	if (m->len + blen > m->cap) {
		size_t cap = m->cap * 2 < m->len + blen ? m->len + blen : m->cap * 2;

		if (cap > EXEC_JOIN)
			cap = EXEC_JOIN;
		if (!(m = realloc(m, sizeof(*m) + LWS_PRE + cap)))
			return false;
		m->cap = cap;
		*g->out_last = m;
		g->out_tail = &m->next;
	}
	memcpy(m->data + LWS_PRE + m->len, b, blen);
	m->len += blen;
	m->ack += ack;
	return true;
}

/* Under mu: queues a message and wakes the loop. */
static void push(struct guest_ws *g, bool binary, const void *a, size_t alen, const void *b,
		 size_t blen, size_t ack)
{
	struct outmsg *m;

	if (g->ended)
		return;
	if (binary && !g->cdp && alen == 1 && join(g, *(const unsigned char *)a, b, blen, ack))
		return;
	if (g->out_msgs >= OUT_MAX_MSGS) {
		fail(g, "the guest sent more messages than the client took");
		return;
	}
	if (!(m = malloc(sizeof(*m) + LWS_PRE + alen + blen))) {
		fail(g, "out of memory");
		return;
	}
	m->next = NULL;
	m->binary = binary;
	m->len = m->cap = alen + blen;
	m->ack = ack;
	if (alen)
		memcpy(m->data + LWS_PRE, a, alen);
	if (blen)
		memcpy(m->data + LWS_PRE + alen, b, blen);
	g->out_last = g->out_tail;
	*g->out_tail = m;
	g->out_tail = &m->next;
	g->out_msgs++;
	atomic_store(&g->pending, true);
	lws_cancel_service(g->ctx);
}

static void push_json(struct guest_ws *g, json_t *j)
{
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	if (text)
		push(g, false, text, strlen(text), NULL, 0, 0);
	free(text);
}

/* ---- the channel's side (link thread) ---- */

static void on_opened(void *u, const char *info)
{
	struct guest_ws *g = u;

	if (g->cdp)
		return;
	pthread_mutex_lock(&g->mu);
	push_json(g, json_pack("{s:s, s:I}", "type", "started", "pid",
			       (json_int_t)(strncmp(info, "pid=", 4) ? 0 : atoll(info + 4))));
	pthread_mutex_unlock(&g->mu);
}

static void on_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct guest_ws *g = u;
	size_t ack_now = 0;

	pthread_mutex_lock(&g->mu);
	if (!g->cdp) {
		unsigned char tag = (flags & AGENT_STREAM_MASK) == AGENT_STREAM_STDERR ? 2 : 1;

		push(g, true, &tag, 1, p, n, n);
	} else if (bytebuf_append(&g->gmsg, p, n) < 0 || g->gmsg.len > GUEST_WS_MAX_MESSAGE) {
		g->ended = true;
		snprintf(g->reason, sizeof(g->reason), "browser message too large");
		atomic_store(&g->pending, true);
		lws_cancel_service(g->ctx);
	} else {
		g->gmsg_ack += n;
		if (!(flags & AGENT_FLAG_MORE)) {
			push(g, false, g->gmsg.data, g->gmsg.len, NULL, 0, g->gmsg_ack);
			bytebuf_free(&g->gmsg);
			g->gmsg_ack = 0;
		} else if (!g->out) { /* the client has caught up: let the message come */
			ack_now = g->gmsg_ack;
			g->gmsg_ack = 0;
		}
	}
	pthread_mutex_unlock(&g->mu);
	if (ack_now)
		agent_chan_ack(g->link, g->chan, ack_now);
}

static void on_exit_status(void *u, const char *status)
{
	struct guest_ws *g = u;
	int code, sig;

	pthread_mutex_lock(&g->mu);
	if (agent_exit_parse(status, &code, &sig) < 0) {
		snprintf(g->reason, sizeof(g->reason),
			 "the guest agent's exit status is malformed");
	} else {
		g->exited = true;
		g->exit_code = code;
		g->exit_signal = sig;
		push_json(g, json_pack("{s:s, s:o, s:i, s:b}", "type", "exit", "exit_code",
				       sig ? json_null() : json_integer(code), "signal", sig,
				       "timed_out", g->timed_out));
	}
	pthread_mutex_unlock(&g->mu);
}

static void on_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct guest_ws *g = u;

	(void)in;
	(void)out;
	pthread_mutex_lock(&g->mu);
	g->ended = true;
	if (!g->reason[0])
		snprintf(g->reason, sizeof(g->reason), "%s", reason[0] ? reason : "done");
	atomic_store(&g->pending, true);
	lws_cancel_service(g->ctx);
	pthread_mutex_unlock(&g->mu);
	release(g);
}

/* The channel's queue towards the guest has room again. */
static void on_writable(void *u)
{
	struct guest_ws *g = u;

	atomic_store(&g->resume, true);
	atomic_store(&g->pending, true);
	lws_cancel_service(g->ctx);
}

static const struct agent_chan_ops ws_ops = {
	.opened = on_opened,
	.data = on_data,
	.exit = on_exit_status,
	.closed = on_closed,
	.writable = on_writable,
};

/* ---- the loop's side ---- */

/* The link is there: opens the CDP channel (an exec's waits for its first
 * message) and lets the client's messages in. Returns 0 or -1. */
static int linked(struct guest_ws *g, struct agent_link *l)
{
	g->link = l;
	if (g->cdp) {
		atomic_fetch_add(&g->refs, 1);
		if (!(g->chan = agent_chan_open(l, AGENT_CDP, CDP_PORT, strlen(CDP_PORT), &ws_ops,
						g))) {
			atomic_fetch_sub(&g->refs, 1);
			return -1;
		}
	}
	lws_rx_flow_control(g->wsi, 1);
	return 0;
}

/* Ends a connection that has no link (from a timer: it closes when it is
 * next writable). */
static void give_up(struct guest_ws *g, const char *why)
{
	log_warn("guest-ws", "%s: %s: connection dropped", g->sess_id, why);
	pthread_mutex_lock(&g->mu);
	g->ended = true;
	snprintf(g->reason, sizeof(g->reason), "%s", why);
	pthread_mutex_unlock(&g->mu);
	lws_callback_on_writable(g->wsi);
}

static void poll_link(lws_sorted_usec_list_t *sul)
{
	struct guest_ws *g = lws_container_of(sul, struct guest_ws, sul_link);
	struct sess *s = sess_find(g->gw, g->sess_id);
	struct agent_link *l = s ? sess_agent_get(sess_agent_of(s), 0) : NULL;

	if (l) {
		if (linked(g, l) < 0)
			give_up(g, "the guest agent refused the channel");
		return;
	}
	if (!s || fs_now_ms() >= g->link_wait_until) {
		give_up(g, s ? "the guest agent is not connected" : "the session is gone");
		return;
	}
	lws_sul_schedule(g->ctx, 0, &g->sul_link, poll_link, AGENT_POLL_US);
}

static void on_lost(struct live_auth *la, const char *why)
{
	struct guest_ws *g = lws_container_of(la, struct guest_ws, la);

	snprintf(g->revoked_why, sizeof(g->revoked_why), "%s", why);
	if (g->wsi)
		lws_callback_on_writable(g->wsi);
}

static struct guest_ws *guest_ws_open(struct gw *gw, struct lws *wsi)
{
	struct route r;
	char token[160];
	struct sess *s = authorized(gw, wsi, &r, token, sizeof(token));
	struct guest_ws *g;
	struct agent_link *l;

	if (!s)
		return NULL;
	if (!(g = calloc(1, sizeof(*g))))
		return NULL;
	atomic_init(&g->refs, 1);
	g->wsi = wsi;
	ws_rx_init(&g->rx, GUEST_WS_MAX_MESSAGE);
	g->gw = gw;
	g->ctx = gw->ctx;
	g->cdp = r.kind == R_SESSION_CDP_WS;
	snprintf(g->sess_id, sizeof(g->sess_id), "%s", sess_id(s));
	g->out_tail = &g->out;
	pthread_mutex_init(&g->mu, NULL);
	g->rights = sess_rights(gw, s, token, NULL);
	g->la.lost = on_lost;
	live_auth_watch(&g->la, gw, sess_id(s), token, g->cdp ? AUTH_R_ACT : AUTH_R_EXEC);
	{
		const char *which = "";

		sess_rights_of_hash(gw, s, g->la.hash, &which);
		audit_principal_set(&g->who, g->la.hash, which, false);
		if (!audit_peer(wsi, g->remote, sizeof(g->remote)))
			g->remote[0] = '\0';
	}
	if ((l = sess_agent_get(sess_agent_of(s), 0))) {
		if (linked(g, l) < 0) {
			release(g);
			return NULL;
		}
	} else {
		/* Not linked yet (a session just ready): the client's messages
		 * wait in the socket until it is. */
		lws_rx_flow_control(wsi, 0);
		g->link_wait_until = fs_now_ms() + SESS_AGENT_WAIT_MS;
		lws_sul_schedule(g->ctx, 0, &g->sul_link, poll_link, AGENT_POLL_US);
	}
	g->next = all;
	all = g;
	sess_touch(s);
	return g;
}

static void on_timeout(lws_sorted_usec_list_t *sul)
{
	struct guest_ws *g = lws_container_of(sul, struct guest_ws, sul);

	g->timed_out = true;
	agent_chan_send(g->link, g->chan, AGENT_SIGNAL, 0, "9", 1);
}

/* Fails the connection with a reason the client can read. */
static int refuse(struct guest_ws *g, const char *why)
{
	lws_close_reason(g->wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)why,
			 strlen(why));
	return -1;
}

/* Runs the command of the first message (job, stolen). */
static int start_exec(struct guest_ws *g, struct exec_job *job)
{
	struct agent_exec_spec spec;
	const void *in;
	size_t in_len, plen;
	char *payload;

	g->spec = job;
	if (exec_as_root(g->spec) && !(g->rights & AUTH_R_ROOT))
		return refuse(g, "commands as root need the \"root\" scope");
	in = exec_stdin(g->spec, &in_len);
	spec = (struct agent_exec_spec){ .argv = exec_argv(g->spec),
					 .env = exec_env(g->spec),
					 .cwd = exec_cwd(g->spec),
					 .uid = exec_as_root(g->spec) ? -1 : EXEC_DESKTOP_UID,
					 .gid = exec_as_root(g->spec) ? -1 : EXEC_DESKTOP_UID };
	if (agent_exec_payload(&spec, &payload, &plen) < 0)
		return refuse(g, "the command line and environment are too long");
	atomic_fetch_add(&g->refs, 1);
	g->chan = agent_chan_open(g->link, AGENT_EXEC, payload, plen, &ws_ops, g);
	free(payload);
	if (!g->chan) {
		atomic_fetch_sub(&g->refs, 1);
		return refuse(g, "the guest agent is not connected");
	}
	if (in_len) {
		agent_chan_send(g->link, g->chan, AGENT_DATA, 0, in, in_len);
		agent_chan_send(g->link, g->chan, AGENT_EOF, 0, NULL, 0);
	}
	{
		struct sess *s = sess_find(g->gw, g->sess_id);

		if (s)
			sess_count_use(s, 0, 0, 1);
	}
	lws_sul_schedule(g->ctx, 0, &g->sul, on_timeout,
			 (lws_usec_t)exec_timeout_ms(g->spec) * LWS_US_PER_MS);
	g->started_ms = fs_now_ms();
	return 0;
}

/* A streamed command ended (its socket closes): its audit entry, as
 * POST .../exec makes one, and its entry in the session's recording (the
 * status is the upgrade's, 101). */
static void audit_exec(struct guest_ws *g)
{
	struct sess *s = sess_find(g->gw, g->sess_id);
	int64_t now = fs_now_ms();
	json_t *f = json_object(), *argv = json_array();
	bool exited;
	int code, sig;

	for (const char *const *a = exec_argv(g->spec); argv && a && *a; a++)
		json_array_append_new(argv, json_string(*a));
	pthread_mutex_lock(&g->mu);
	exited = g->exited;
	code = g->exit_code;
	sig = g->exit_signal;
	pthread_mutex_unlock(&g->mu);
	json_object_set_new(f, "argv", argv ? argv : json_null());
	json_object_set_new(f, "user", json_string(exec_as_root(g->spec) ? "root" : "desktop"));
	json_object_set_new(f, "exit_code", exited && !sig ? json_integer(code) : json_null());
	if (exited && sig)
		json_object_set_new(f, "signal", json_integer(sig));
	if (g->timed_out)
		json_object_set_new(f, "timed_out", json_true());
	json_object_set_new(f, "duration_ms", json_integer(now - g->started_ms));
	json_object_set_new(f, "websocket", json_true());
	if (s)
		rec_note_command(s, argv, exited && !sig ? code : -1, 101, g->started_ms, now);
	audit_log(g->gw, "command", g->sess_id, &g->who, g->remote[0] ? g->remote : NULL, f);
}

/* What agent_chan_send said about a client message: a full queue stops
 * reading the client until writable(); a refused message is held and
 * sent again then. Returns 0 or -1 (close). */
static int sent(struct guest_ws *g, int rc, const unsigned char *msg, size_t len, bool binary)
{
	if (rc == -ENOBUFS) {
		if (g->held) /* the client is not read while one is held */
			return refuse(g, "the guest agent is not reading");
		if (!(g->held = malloc(len ? len : 1)))
			return -1;
		memcpy(g->held, msg, len);
		g->held_len = len;
		g->held_binary = binary;
	}
	if (rc == -ENOBUFS || rc == AGENT_SEND_FULL) {
		if (!g->rx_stopped)
			lws_rx_flow_control(g->wsi, 0);
		g->rx_stopped = true;
		return 0;
	}
	return rc < 0 && g->cdp ? -1 : 0;
}

/* A whole message from the client (or a held one again). */
static int on_message(struct guest_ws *g, const unsigned char *msg, size_t len, bool binary)
{
	struct exec_ws_msg m;
	char sig[8];

	if (g->cdp)
		return sent(g, agent_chan_send(g->link, g->chan, AGENT_DATA, 0, msg, len), msg, len,
			    binary);
	if (exec_ws_msg_parse(g->chan != 0, binary, msg, len, &m) < 0)
		return refuse(g, m.why);
	switch (m.kind) {
	case EXEC_WS_START:
		return start_exec(g, m.job);
	case EXEC_WS_STDIN:
		return sent(g, agent_chan_send(g->link, g->chan, AGENT_DATA, 0, msg, len), msg, len,
			    binary);
	case EXEC_WS_EOF:
		return sent(g, agent_chan_send(g->link, g->chan, AGENT_EOF, 0, NULL, 0), msg, len,
			    binary);
	case EXEC_WS_SIGNAL:
		snprintf(sig, sizeof(sig), "%d", m.signal);
		return sent(g, agent_chan_send(g->link, g->chan, AGENT_SIGNAL, 0, sig, strlen(sig)),
			    msg, len, binary);
	}
	return -1;
}

static int guest_ws_receive(struct guest_ws *g, const void *in, size_t len)
{
	int rc;

	if (!g->link) /* rx flow is off until linked: lws holds the bytes */
		return refuse(g, "the guest agent is not connected yet");
	if (g->held) /* lws delivered what it had read before the stop */
		return refuse(g, "the guest agent is not reading");
	rc = ws_rx_append(&g->rx, in, len, lws_is_first_fragment(g->wsi),
			  lws_is_final_fragment(g->wsi), lws_frame_is_binary(g->wsi));
	if (rc == -EMSGSIZE)
		return refuse(g, "message too large");
	if (rc < 0)
		return -1;
	if (rc != WS_RX_COMPLETE)
		return 0;
	rc = on_message(g, g->rx.buf, g->rx.len, g->rx.binary);
	ws_rx_reset(&g->rx);
	return rc;
}

/* Loop: the channel's queue has room again (writable() came): the held
 * message goes first, then the client is read again. */
static int resume(struct guest_ws *g)
{
	if (g->held) {
		unsigned char *msg = g->held;
		int rc;

		g->held = NULL;
		rc = on_message(g, msg, g->held_len, g->held_binary);
		free(msg);
		if (rc < 0 || g->held)
			return rc;
	}
	if (g->rx_stopped) {
		g->rx_stopped = false;
		lws_rx_flow_control(g->wsi, 1);
	}
	return 0;
}

static int guest_ws_writeable(struct guest_ws *g)
{
	struct outmsg *m;
	size_t joined_ack = 0;
	bool ended;
	char reason[128];

	if (g->revoked_why[0]) {
		lws_close_reason(g->wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION,
				 (unsigned char *)g->revoked_why, strlen(g->revoked_why));
		return -1;
	}
	if (atomic_exchange(&g->resume, false) && resume(g) < 0)
		return -1;
	pthread_mutex_lock(&g->mu);
	if ((m = g->out)) {
		if (!(g->out = m->next)) {
			g->out_tail = &g->out;
			g->out_last = NULL;
		} else if (g->out_last == &m->next) {
			g->out_last = &g->out;
		}
		g->out_msgs--;
		if (!g->out) { /* caught up: what the message being joined holds back */
			joined_ack = g->gmsg_ack;
			g->gmsg_ack = 0;
		}
	}
	ended = g->ended;
	snprintf(reason, sizeof(reason), "%s", g->reason);
	pthread_mutex_unlock(&g->mu);
	if (m) {
		int w = lws_write(g->wsi, m->data + LWS_PRE, m->len,
				  m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);

		if (m->ack || joined_ack)
			agent_chan_ack(g->link, g->chan, m->ack + joined_ack);
		free(m);
		if (w < 0)
			return -1;
		lws_callback_on_writable(g->wsi);
		return 0;
	}
	if (ended) {
		/* exec ends normally; a CDP channel only ends when the browser
		 * side went away */
		bool normal = !g->cdp && (!strcmp(reason, "done") || !reason[0]);

		lws_close_reason(g->wsi,
				 normal ? LWS_CLOSE_STATUS_NORMAL
					: LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
				 (unsigned char *)reason, strlen(reason));
		return -1;
	}
	return 0;
}

static void guest_ws_close(struct guest_ws *g)
{
	if (!g)
		return;
	for (struct guest_ws **pp = &all; *pp; pp = &(*pp)->next)
		if (*pp == g) {
			*pp = g->next;
			break;
		}
	lws_sul_cancel(&g->sul);
	lws_sul_cancel(&g->sul_link);
	live_auth_unwatch(&g->la);
	if (!g->cdp && g->spec && g->started_ms)
		audit_exec(g);
	if (g->chan)
		agent_chan_close(g->link, g->chan, "the client went away");
	g->wsi = NULL;
	release(g);
}

void guest_ws_poke_all(void)
{
	for (struct guest_ws *g = all; g; g = g->next)
		if (atomic_exchange(&g->pending, false))
			lws_callback_on_writable(g->wsi);
}

int guest_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		      size_t len)
{
	struct guest_ws **g = user;
	struct gw *gw = wsi ? lws_context_user(lws_get_context(wsi)) : NULL;

	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: /* a client that named our subprotocol */
		return guest_ws_filter(gw, wsi);
	case LWS_CALLBACK_ESTABLISHED:
		*g = guest_ws_open(gw, wsi);
		return *g ? 0 : -1;
	case LWS_CALLBACK_RECEIVE:
		return *g ? guest_ws_receive(*g, in, len) : -1;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return *g ? guest_ws_writeable(*g) : 0;
	case LWS_CALLBACK_CLOSED:
		guest_ws_close(*g);
		*g = NULL;
		return 0;
	default:
		return 0;
	}
}
