/* gateway/api/control.h: WS /v1/sessions/{id}/control: one JSON action per text
 * message, one JSON reply per action (the same body POST .../actions
 * answers, with the action's id echoed), in order. Authenticated by an
 * Authorization header on the upgrade or, for browsers, which cannot set
 * one, by a first message {"token": "..."}; the Origin must be allowed. */
#ifndef VITRINE_GATEWAY_CONTROL_H
#define VITRINE_GATEWAY_CONTROL_H

#include "gateway/core/gw.h"

#include <libwebsockets.h>

#define CONTROL_MAX_MESSAGE (256u << 10)
#define CONTROL_MAX_QUEUE 32
/* A socket without a header credential has this long to send its token
 * (gw::control_auth_ms shortens it for tests). */
#define CONTROL_AUTH_DEADLINE_MS 10000

struct control_conn;

/* Decides at upgrade time: returns 0 to accept, non-zero to refuse (a bad
 * path, an unknown session, a disallowed Origin or a wrong token). */
int control_filter(struct gw *gw, struct lws *wsi);
/* The lws protocol callback of these connections (api/protocols.c); the
 * per-connection data is a struct control_conn pointer. */
int control_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		     size_t len);

#endif
