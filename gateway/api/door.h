/* gateway/api/door.h: a door: another API served on the front door's
 * listener beside the native one, which registers itself here at start
 * (cli/gw_start.c) and is called through its ops table; the front door
 * names nothing of it.
 *
 * A door's HTTP requests are one row of the route table, R_DOOR, that no
 * path parses to: the door claims a request right after http_begin (by
 * its path, Host or headers) with api_door_take, and the row calls the door
 * for the rest (the early token check, the body limit, the answer, the
 * waking of a parked request, the audit event), with the request's state
 * the door's own (state_size bytes: http_route_state). A door may also take
 * WebSocket upgrades before their path's route is looked at, and the raw
 * sockets it adopted on the vhost.
 *
 * One door at a time. Loop thread only (api_door_register: before the loop
 * runs). */
#ifndef VITRINE_GATEWAY_API_DOOR_H
#define VITRINE_GATEWAY_API_DOOR_H

#include "gateway/api/http.h"

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>

struct gw;
struct sess;

/* Every member is required. */
struct api_door_ops {
	/* R_DOOR's name: its metrics label, its access log and audit "route" */
	const char *name;
	/* Right after http_begin (of the API's listener and the metrics
	 * one): takes r with api_door_take when it is the door's, else
	 * leaves it as it is. */
	void (*claim)(struct http_req *r);
	/* R_DOOR's row (routes.h's struct route_def says what each is): the
	 * check before a body, the body limit, the answer, a parked request
	 * woken, the audit event (or NULL) and the request's state. */
	void (*refuse_early)(struct http_req *r);
	size_t (*body_max_of)(const struct http_req *r);
	void (*handle)(struct http_req *r);
	void (*resume)(struct http_req *r, struct sess *s, bool timed_out);
	const char *(*audit_of)(const struct http_req *r);
	size_t state_size;
	void (*state_release)(void *state);
	/* On each wake-up of the loop (lws_cancel_service): whatever waits on
	 * another thread looks. */
	void (*poke_all)(struct gw *gw);
	/* Whether a WebSocket upgrade is the door's (asked before its path's
	 * route is); LWS_CALLBACK_HTTP_CONFIRM_UPGRADE of one of its own: 0 to
	 * go on, 1 when answered with an HTTP status instead; then the
	 * connection's callback, user pointing at a pointer of the
	 * connection's own (NULL at first). */
	bool (*ws_claim)(struct lws *wsi);
	int (*ws_confirm)(struct gw *gw, struct lws *wsi);
	int (*ws_callback)(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			   size_t len);
	/* Whether a browser's Origin that --origins refused is the door's own
	 * page for s's stream socket (the web viewer, which the door sends
	 * browsers to on a host name of its own for s), to be let in all the
	 * same. */
	bool (*stream_origin)(struct gw *gw, struct lws *wsi, struct sess *s, const char *origin);
	/* Whether the {port}-{id}.{domain} host names of port are the door's
	 * (its own servers at a guest's port, by host name), so that a
	 * guest's ports (api/api_ports.h) leave them to it. */
	bool (*owns_port)(int port);
	/* The LWS_CALLBACK_RAW_* of the raw sockets it adopted (the only raw
	 * sockets on the vhost). */
	int (*raw_callback)(struct lws *wsi, enum lws_callback_reasons reason, void *in,
			    size_t len);
};

/* Makes ops the door (ops, static, outlives the loop). Returns 0, or
 * -EBUSY when another door is registered. */
int api_door_register(const struct api_door_ops *ops);

/* For a door's claim: makes r the door's (R_DOOR) and returns its state
 * (the door's state_size bytes, zeroed); NULL when out of memory, with r
 * answered 500 and its body left unread. */
void *api_door_take(struct http_req *r);

/* The front door's calls (api/protocols.c); each does nothing, or says no,
 * without a door. */
void api_door_claim(struct http_req *r);
void api_door_poke_all(struct gw *gw);
bool api_door_ws_claim(struct lws *wsi);
int api_door_ws_confirm(struct gw *gw, struct lws *wsi);
int api_door_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			 size_t len);
int api_door_raw_callback(struct lws *wsi, enum lws_callback_reasons reason, void *in, size_t len);
bool api_door_stream_origin(struct gw *gw, struct lws *wsi, struct sess *s, const char *origin);
bool api_door_owns_port(int port);

/* R_DOOR's row (api/route_table.c): the door's own, called only for
 * requests it took. */
void api_door_refuse_early(struct http_req *r);
size_t api_door_body_max(const struct http_req *r);
void api_door_handle(struct http_req *r);
void api_door_resume(struct http_req *r, struct sess *s, bool timed_out);
const char *api_door_audit_of(const struct http_req *r);
size_t api_door_state_size(void);
void api_door_state_release(void *state);

#endif
