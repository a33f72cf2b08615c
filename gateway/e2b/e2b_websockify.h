/* gateway/e2b/e2b_websockify.h: noVNC's /websockify at the URL of
 * @e2b/desktop's stream (a "PORT-{id}." Host, docs/e2b.md): RFB over
 * WebSocket for the sandbox's screen, as E2B's novnc_proxy serves it. It
 * works while the SDK's stream "runs" on PORT (desktop_stream_started),
 * with the security the SDK gave x11vnc: VNC Authentication with the
 * password it stored (`requireAuth`), else None. `?view_only=true` on the
 * socket's URL makes it a view-only client, its input dropped.
 *
 * Each connection is a client of the session's VNC door (stream/vnc.h,
 * held with vnc_hold while it lasts) over loopback TCP, the door's socket
 * joined to the loop (lws_adopt_descriptor_vhost_via_info): the gateway
 * speaks the RFB handshakes on both sides (e2b/rfb_relay.h), then moves
 * the bytes through in both directions. Each direction queues at most
 * about WEBSOCKIFY_HIGH bytes: past that the other side is not read
 * (lws_rx_flow_control) until the queue is down to WEBSOCKIFY_LOW.
 * Loop thread only. */
#ifndef VITRINE_GATEWAY_E2B_WEBSOCKIFY_H
#define VITRINE_GATEWAY_E2B_WEBSOCKIFY_H

#include "gateway/core/gw.h"

#include <libwebsockets.h>
#include <stdbool.h>

#define WEBSOCKIFY_HIGH (256 * 1024)
#define WEBSOCKIFY_LOW (64 * 1024)
#define WEBSOCKIFY_CHUNK (64 * 1024) /* one write, one WebSocket message */
#define WEBSOCKIFY_PER_SESSION 16 /* connections at once */
#define WEBSOCKIFY_HANDSHAKE_MS 60000 /* a person may be typing the password */
#define WEBSOCKIFY_FAIL_DELAY_MS 1000 /* a wrong password's answer waits */

/* Whether the upgrade is one of ours: /websockify on a "PORT-{id}." Host
 * whose PORT is not envd's. */
bool e2b_websockify_is(struct lws *wsi);
/* LWS_CALLBACK_HTTP_CONFIRM_UPGRADE of one of ours: 0 to go on with the
 * upgrade, or 1 when it was answered with an HTTP error instead (404 no
 * such sandbox, 502 the stream is not running on PORT, 503 the sandbox is
 * not running or has its maximum of these connections), as
 * {"error":{"code","message"}}. */
int e2b_websockify_confirm(struct gw *gw, struct lws *wsi);
/* The WebSocket's callback (the door's ws_callback, api/door.h); user
 * points at the connection's own pointer. */
int e2b_websockify_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			    size_t len);
/* The LWS_CALLBACK_RAW_* of the doors' sockets (the only raw sockets on
 * the vhost). */
int e2b_websockify_door_callback(struct lws *wsi, enum lws_callback_reasons reason, void *in,
				 size_t len);

#endif
