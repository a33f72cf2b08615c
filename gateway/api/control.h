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

struct control_conn;

/* Decides at upgrade time: returns 0 to accept, non-zero to refuse (a bad
 * path, an unknown session, a disallowed Origin or a wrong token). */
int control_filter(struct gw *gw, struct lws *wsi);
/* The connection is up: returns its state (owned by the caller, freed with
 * control_close), or NULL to drop it. */
struct control_conn *control_open(struct gw *gw, struct lws *wsi);
/* A fragment of a message arrived. Returns 0, or -1 to close. */
int control_receive(struct control_conn *c, const void *in, size_t len);
/* The socket is writable: sends one queued reply. Returns 0, or -1 to close. */
int control_writeable(struct control_conn *c);
/* Frees everything; cancels an action under way. Accepts NULL. */
void control_close(struct control_conn *c);

#endif
