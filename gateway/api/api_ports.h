/* gateway/api/api_ports.h: a guest's TCP ports through the gateway
 * (docs/api.md, "Ports"): HTTP to any port a server listens on in the
 * guest, over a TCP channel of the guest's agent (the guest has no network
 * device), by path
 *
 *   ANY /v1/sessions/{id}/ports/{port}/REST   -> REST on the guest's port
 *
 * or by host name, {port}-{id}.{domain} with `vitrine serve
 * --public-domain DOMAIN` (every path; ports a door owns stay the
 * door's). Authorised like any route of the session (the token's "act"
 * scope), the token's Authorization header kept from the guest.
 *
 * One channel per request: the request head is rebuilt for the guest
 * (Connection: close, X-Forwarded-*), its body streamed as it comes; the
 * answer's head parsed (port_parse.h) and sent on, its body in its own
 * framing as it comes. Backpressure both ways: the guest's bytes are
 * returned to its window only once lws took them (so at most the agent's
 * window, 1 MiB, waits here per connection), and the client is not read
 * while the channel's queue towards the guest is full.
 * Loop thread only. */
#ifndef VITRINE_GATEWAY_API_PORTS_H
#define VITRINE_GATEWAY_API_PORTS_H

#include "gateway/api/http.h"

struct sess;

/* Requests through a session's ports at once; past it 429. */
#define API_PORTS_MAX_PER_SESSION 64

/* After http_begin (and a door's claim): makes r a request to a guest's
 * port when its Host names one under gw->public_domain. */
void api_ports_claim(struct http_req *r);
/* The rows' handlers (route_table.c): R_SESSION_PORT (by path) and
 * R_SESSION_PORT_HOST (by host name): the check before a body (which
 * starts the guest's side), and the answer once the body is in. */
void api_ports_begin(struct http_req *r);
void api_ports_handle(struct http_req *r);
void api_ports_state_release(void *state);
/* R_SESSION_PORT_SETTINGS: GET {"port", "public"}, PUT {"public": bool}
 * (kept in the session's record: public ports take requests without a
 * token). */
void api_ports_settings(struct http_req *r);
/* On the loop's wake-up: connections the guest's side moved. */
void api_ports_poke_all(void);

/* Shared with the ports' WebSockets (api_ports_ws.c). */
/* The request target for the guest (the path of tok's header as lws
 * decoded it, its arguments): by host name all of it, by path what follows
 * /v1/sessions/{id}/ports/{port}. 0, -ENAMETOOLONG, or -ENOMEM. */
int api_ports_target(struct lws *wsi, enum lws_token_indexes tok, bool by_host, char *target,
		     size_t cap);
/* Whether the session's owner made port public (its record's "ports"). */
bool api_ports_public(const struct sess *s, int port);
/* Whether wsi's Cookie holds a link's value for session id's port. */
bool api_ports_link_ok(struct lws *wsi, const char *id, int port);
/* The session's HTTP requests through its ports now. */
int api_ports_count(const char *sess_id);

#endif
