/* gateway/api/api_ports_ws.h: WebSockets to a guest's port (docs/api.md,
 * "Ports"), by path
 *
 *   WS /v1/sessions/{id}/ports/{port}/REST   -> ws://guest:port/REST
 *
 * or by host name ({port}-{id}.{domain} with --public-domain, any path).
 * The same credentials as the port's HTTP: the session's token with the
 * "act" right in an Authorization header, a signed link's cookie (then
 * the Origin, when a browser sends one, must be the port's own host or
 * one --origins allows), or none for a port its owner made public.
 * Refusals are HTTP answers to the upgrade (401, 400, 404, 409, 429, 503)
 * with the usual JSON error.
 *
 * The gateway ends the client's WebSocket (lws) and is a WebSocket client
 * of the guest's server over one TCP channel of the guest's agent
 * (gateway/ports/port_ws.h): once the client's upgrade is taken it sends
 * the guest its own upgrade, and passes frames on both ways as they come,
 * a message's pieces as pieces (no message is held whole); pings are
 * answered where they arrive. A guest server that refuses the upgrade or
 * breaks the protocol closes the client's socket with 1011 and a reason;
 * one that does not answer the upgrade within 120 s loses it (dropped).
 * Bytes in flight per connection: towards the client at most the agent's
 * window (1 MiB) and one 64 KiB piece (the guest's bytes are returned to
 * the window once lws took them); towards the guest the channel's queue
 * (AGENT_SEND_HIGH) and what lws had read when the client was stopped
 * (before the guest's 101, at most 64 KiB of the client's frames wait).
 * A session's HTTP requests and WebSockets through its ports count
 * together against API_PORTS_MAX_PER_SESSION. No subprotocol or extension
 * is passed on. Loop thread only. */
#ifndef VITRINE_GATEWAY_API_PORTS_WS_H
#define VITRINE_GATEWAY_API_PORTS_WS_H

#include "gateway/core/gw.h"

#include <libwebsockets.h>
#include <stdbool.h>

/* Whether an upgrade names a guest's port by host name (under
 * gw->public_domain, and no door's port); by path it is the route
 * table's R_SESSION_PORT row. */
bool api_ports_ws_claim(struct lws *wsi);
/* LWS_CALLBACK_HTTP_CONFIRM_UPGRADE of a port's upgrade (by path or
 * host): 0 to go on, or 1 when refused with an HTTP error answer. */
int api_ports_ws_confirm(struct gw *gw, struct lws *wsi);
/* Whether an upgrade is a port's (by path or by host). */
bool api_ports_ws_is(struct lws *wsi);
/* The WebSocket's callback (route_table.c's R_SESSION_PORT row and
 * protocols.c for host names); user points at the connection's pointer. */
int api_ports_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			  size_t len);
/* The session's WebSockets through its ports now. */
int api_ports_ws_count(const char *sess_id);
/* On the loop's wake-up: connections the guest's side moved. */
void api_ports_ws_poke_all(void);

#endif
