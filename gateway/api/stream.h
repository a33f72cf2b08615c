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

/* Whether the upgrade request on wsi is for a stream (not /control). */
bool stream_is_stream(struct lws *wsi);
/* Decides at upgrade time: 0 accepts, non-zero refuses (bad path, unknown
 * session, disallowed Origin, a header token that is not good). */
int stream_filter(struct gw *gw, struct lws *wsi);
/* The socket is up: returns its viewer (owned by the connection, freed by
 * stream_close), or NULL to drop it. */
struct stream_viewer *stream_open(struct gw *gw, struct lws *wsi);
/* A fragment of a message arrived. Returns 0, or -1 to close (the close
 * code is set). */
int stream_receive(struct stream_viewer *v, const void *in, size_t len);
/* A PONG arrived: the viewer is alive. */
void stream_pong(struct stream_viewer *v);
/* The socket is writable: sends one message. Returns 0, or -1 to close. */
int stream_writeable(struct stream_viewer *v);
/* Unlinks and frees; gives up control if held. Accepts NULL. */
void stream_close(struct stream_viewer *v);

/* Answers POST /v1/sessions/{id}/share on s (r's token already checked to
 * be at least a view token of s). */
void stream_share(struct http_req *r, struct sess *s);

#endif
