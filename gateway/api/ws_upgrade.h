/* gateway/api/ws_upgrade.h: what every WebSocket upgrade checks before its own
 * rules (control, stream, CDP and streaming exec): the route of the request
 * path, the session it names, an allowed Origin, and the bearer token of an
 * Authorization header. */
#ifndef VITRINE_GATEWAY_WS_UPGRADE_H
#define VITRINE_GATEWAY_WS_UPGRADE_H

#include "gateway/api/routes.h"
#include "gateway/core/gw.h"

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>

struct sess;

/* The route of the upgrade request's path (R_NOT_FOUND when it has none). */
struct route ws_upgrade_route(struct lws *wsi);
/* The session the path names when the route is of kind, and the Origin
 * (if any) is allowed by --origins or, for the stream socket, is a door's
 * own page for that session (api_door_stream_origin); else NULL. *r gets
 * the route. */
struct sess *ws_upgrade_session(struct gw *gw, struct lws *wsi, enum route_kind kind,
				struct route *r);
/* True when the request has an Authorization header. */
bool ws_upgrade_has_auth(struct lws *wsi);
/* The bearer token of the Authorization header into token: 0, or -1 when
 * there is none (or it is not a bearer token). */
int ws_upgrade_bearer(struct lws *wsi, char *token, size_t len);
/* Answers an upgrade request with status and {"error":{"code","message"}}
 * instead (from LWS_CALLBACK_HTTP_CONFIRM_UPGRADE; code and msg hold no
 * character JSON escapes). Returns 1 (answered), or -1 when it could not
 * be written (close). */
int ws_upgrade_refuse(struct lws *wsi, int status, const char *code, const char *msg);

#endif
