/* gateway/api/guest_ws.h: WebSockets tied to a channel of the guest's agent:
 *
 *   WS /v1/sessions/{id}/cdp          the Chrome DevTools Protocol of the
 *       guest's Chromium (browser endpoint): each text message is one CDP
 *       message, relayed whole both ways (the agent speaks WebSocket to
 *       Chromium inside the guest; no guest port is exposed).
 *   WS /v1/sessions/{id}/exec/stream  one command with streamed output:
 *       the first text message is the body POST .../exec takes; then
 *       binary messages are stdin, text {"type":"eof"} ends it and
 *       {"type":"signal","signal":N} signals its process group. The
 *       server sends {"type":"started","pid"}, binary messages whose first
 *       byte is 1 (stdout) or 2 (stderr), and {"type":"exit", "exit_code",
 *       "signal", "timed_out"} before closing.
 *
 * Both need the session's control token in an Authorization header on
 * the upgrade. Docs: docs/api.md. */
#ifndef VITRINE_GATEWAY_GUEST_WS_H
#define VITRINE_GATEWAY_GUEST_WS_H

#include "gateway/core/gw.h"

#include <libwebsockets.h>
#include <stdbool.h>

#define GUEST_WS_MAX_MESSAGE (64u << 20) /* a CDP screenshot can be a few MiB */

struct guest_ws;

/* Upgrade-time check: 0 to accept, non-zero to refuse. */
int guest_ws_filter(struct gw *gw, struct lws *wsi);
/* The lws protocol callback of CDP and exec connections (api/protocols.c);
 * the per-connection data is a struct guest_ws pointer. */
int guest_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		      size_t len);
/* Loop side, on a cancel_service wake-up: asks for writable where the
 * guest sent something. */
void guest_ws_poke_all(void);

#endif
