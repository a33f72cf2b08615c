/* gateway/api/stream.h: WS /v1/sessions/{id}/stream, the live view: the
 * connection side (auth, the viewer's messages, writing frames, ping/pong
 * and idle timeouts, close codes). docs/stream.md is the protocol. Frames
 * come from the session's hub (stream_hub.h): each encoded once and shared,
 * latest frame wins, so a slow viewer never holds up anyone. Everything runs
 * on the lws service thread. */
#ifndef VITRINE_GATEWAY_STREAM_H
#define VITRINE_GATEWAY_STREAM_H

#include "gateway/core/gw.h"

#include <libwebsockets.h>
#include <stdbool.h>

#define STREAM_DEFAULT_QUALITY 70
#define STREAM_DEFAULT_MAX_FPS 30
#define STREAM_DEFAULT_IDLE_S 30 /* no sign of life for this long: hung up */
#define STREAM_AUTH_TIMEOUT_S 10 /* to send {"type":"auth"} without a header */

struct stream_viewer;
struct http_req;
struct sess;

/* Decides at upgrade time: 0 accepts, non-zero refuses (bad path, unknown
 * session, disallowed Origin, a header token that is not good). */
int stream_filter(struct gw *gw, struct lws *wsi);
/* The lws protocol callback of stream connections (api/protocols.c); the
 * per-connection data is a struct stream_viewer pointer. */
int stream_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len);

#endif
