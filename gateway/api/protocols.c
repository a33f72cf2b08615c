/* gateway/api/protocols.c: see protocols.h. */
#include "gateway/api/protocols.h"

#include "common/work_queue.h"
#include "display/encode_pool.h"
#include "gateway/action/run.h"
#include "gateway/api/api.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_ports.h"
#include "gateway/api/api_ports_ws.h"
#include "gateway/api/conn_gate.h"
#include "gateway/api/door.h"
#include "gateway/api/guest_ws.h"
#include "gateway/api/http.h"
#include "gateway/api/routes.h"
#include "gateway/api/web.h"
#include "gateway/api/ws_upgrade.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/file_xfer.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/job.h"
#include "gateway/session/session.h"
#include "gateway/stream/recorder.h"
#include "gateway/stream/stream_hub.h"

#include <string.h>

typedef int (*conn_callback_fn)(struct lws *wsi, enum lws_callback_reasons reason, void *user,
				void *in, size_t len);

/* Per connection, zeroed by lws: HTTP (ws NULL) until an upgrade, then the
 * callback of its WebSocket route (its row's ws, or a door's). */
struct conn {
	conn_callback_fn ws;
	union {
		struct http_req http;
		void *ws; /* the WebSocket's own object (its callback owns it) */
	} u;
};

/* The callback an upgrade is served by: a door's, or its route's row's;
 * NULL when its path takes no upgrade. */
static conn_callback_fn upgrade_callback(struct lws *wsi)
{
	if (api_door_ws_claim(wsi)) /* a door's, by whatever it looks at */
		return api_door_ws_callback;
	if (api_ports_ws_claim(wsi)) /* then a guest's port's, by its host name */
		return api_ports_ws_callback;
	return route_table[ws_upgrade_route(wsi).kind].ws;
}

/* c turns from HTTP into a WebSocket served by cb for the rest of its
 * life. Returns 0, or -1 when there is no cb. */
static int become_ws(struct conn *c, conn_callback_fn cb)
{
	if (!cb)
		return -1;
	/* A keep-alive connection may have served requests before. */
	http_release(&c->u.http);
	memset(c, 0, sizeof(*c));
	c->ws = cb;
	return 0;
}

/* Plain HTTP: the request's plumbing is api/http.c, its answer api/api.c. */
static int http(struct lws *wsi, enum lws_callback_reasons reason, struct http_req *r, void *in,
		size_t len)
{
	switch (reason) {
	case LWS_CALLBACK_HTTP: {
		bool whole = http_begin(r, wsi, in, api_audit_answered);

		api_door_claim(r); /* a door takes its paths and hosts */
		api_ports_claim(r); /* then a guest's ports their hosts */
		if (r->have_response) /* a door's, answered: no memory for its state */
			return 0;
		if (whole)
			api_handle(r);
		else
			api_refuse_early(r); /* a body follows, unless the token is no good */
		return 0;
	}
	case LWS_CALLBACK_HTTP_BODY:
		/* refused already: what still comes is not kept */
		if (r->have_response)
			return 0;
		if (http_add_body(r, in, len) < 0)
			return -1;
		/* A chunked body's end is only known from its framing; lws
		 * arms its body timeout after this callback, so the request
		 * is handled on the next writable (where a hold sticks). */
		if (http_body_complete(r)) {
			r->body_ready = true;
			lws_callback_on_writable(wsi);
		}
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (!r->have_response && !r->chunked && http_body_ok(r))
			api_handle(r);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		if (r->body_ready) {
			r->body_ready = false;
			if (!r->have_response && http_body_ok(r))
				api_handle(r);
		}
		if (!r->have_response && r->wait_id[0])
			api_resume_wait(r);
		return http_write(r);
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		/* Dropped too when a keep-alive connection moves on to a file
		 * of the web viewer's mount: lws frees r then. */
		http_release(r);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, r, in, len);
	}
}

/* Another thread woke the loop (lws_cancel_service): a mirror published a
 * frame or answered a probe, an encode or a job finished, a command
 * ended, the agent sent something. Everyone who may be waiting looks. */
static void woken(struct gw *gw)
{
	sess_reap_jobs(gw); /* a job's end is its session's at once */
	job_ticket_reap(); /* a deleted session's guests are gone: its DELETE answers */
	encode_pool_reap(gw->encoders); /* finished encodes */
	work_queue_reap(gw->guest_work); /* then the other work's dones */
	work_queue_reap(gw->bulk_work);
	exec_reap(gw->execs); /* commands that ended: each tells its starter */
	run_poke_all();
	stream_poke_all(gw);
	rec_poke_all(gw); /* new frames to record, a video made */
	guest_ws_poke_all();
	file_xfer_poke_all(); /* files moving to and from guests */
	api_ports_poke_all(); /* the guest's ports' answers */
	api_ports_ws_poke_all(); /* and their WebSockets */
	sess_agent_poke_all(); /* lost agent links: connect again */
	api_door_poke_all(gw);
}

static int route(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		 size_t len)
{
	struct conn *c = user;

	switch (reason) {
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED: {
		struct gw *gw = wsi ? lws_context_user(lws_get_context(wsi)) : NULL;

		if (gw)
			woken(gw);
		return 0;
	}
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
		/* user is lws's struct lws_filter_network_conn_args here */
		return user && conn_gate_admit(
				       ((struct lws_filter_network_conn_args *)user)->accept_fd)
			       ? 0
			       : 1;
	case LWS_CALLBACK_WSI_CREATE:
		conn_gate_opened(wsi);
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		conn_gate_closed(wsi);
		return 0;
	case LWS_CALLBACK_ADD_HEADERS:
		/* lws is serving a file of the web viewer's mount */
		return web_add_headers(wsi, in) < 0 ? 1 : 0;
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		/* A door's sockets refuse with an HTTP status (1: answered);
		 * so do a guest port's; the other kinds' filters close the connection. */
		if (api_door_ws_claim(wsi))
			return api_door_ws_confirm(lws_context_user(lws_get_context(wsi)), wsi);
		/* and a guest's port's, as its HTTP would be refused */
		return api_ports_ws_is(wsi)
			       ? api_ports_ws_confirm(lws_context_user(lws_get_context(wsi)), wsi)
			       : 0;
	case LWS_CALLBACK_RAW_ADOPT:
	case LWS_CALLBACK_RAW_RX:
	case LWS_CALLBACK_RAW_WRITEABLE:
	case LWS_CALLBACK_RAW_CLOSE:
		/* The only raw sockets: a door's. */
		return api_door_raw_callback(wsi, reason, in, len);
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		/* An upgrade: its path's row (or a door) says whose it is; that
		 * callback's filter decides. */
		if (!c || become_ws(c, upgrade_callback(wsi)) < 0)
			return 1; /* not a WebSocket route */
		if (c->ws(wsi, reason, &c->u.ws, in, len)) {
			api_audit_upgrade_refused(lws_context_user(lws_get_context(wsi)), wsi);
			return 1;
		}
		return 0;
	case LWS_CALLBACK_ESTABLISHED:
	case LWS_CALLBACK_RECEIVE:
	case LWS_CALLBACK_RECEIVE_PONG:
	case LWS_CALLBACK_SERVER_WRITEABLE:
	case LWS_CALLBACK_CLOSED:
	case LWS_CALLBACK_HTTP:
	case LWS_CALLBACK_HTTP_BODY:
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
	case LWS_CALLBACK_HTTP_WRITEABLE:
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		/* The reasons whose user is a connection's data. */
		if (!c)
			break;
		if (c->ws)
			return c->ws(wsi, reason, &c->u.ws, in, len);
		return http(wsi, reason, &c->u.http, in, len);
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* The --metrics-listen door: GET /metrics and nothing else, no token. */
static int metrics_door(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			size_t len)
{
	struct http_req *r = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (!http_begin(r, wsi, in, api_audit_answered))
			r->close_after = true; /* a body follows: not read */
		api_door_claim(r); /* named as the API's listener names them (access log) */
		if (r->route.kind == R_METRICS)
			api_metrics_reply(r);
		else if (r->route.kind == R_METHOD_NOT_ALLOWED)
			http_reply_error(r, 405, "method_not_allowed", "GET /metrics only");
		else
			http_reply_error(r, 404, "not_found",
					 "this address serves GET /metrics only");
		return 0;
	case LWS_CALLBACK_HTTP_BODY:
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return http_write(r);
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		http_release(r);
		return 0;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return 1; /* no WebSockets here */
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

const struct lws_protocols metrics_protocols[] = {
	{ "http", metrics_door, sizeof(struct http_req), 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

const struct lws_protocols api_protocols[] = {
	{ "http", route, sizeof(struct conn), 0, 0, NULL, 0 },
	/* the sessions' guests' QMP sockets and pidfds (session/guest_watch.c) */
	{ SESS_GUEST_PROTOCOL, sess_guest_fd_callback, 0, 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};
