/* gateway/api/protocols.h: the front door's connections by kind, each with
 * its own callback and per-connection struct: plain HTTP (struct
 * http_req, api/http.c), the control WebSocket (struct control_conn,
 * api/control.c), the live stream (struct stream_viewer, api/stream.c),
 * CDP and streaming exec (struct guest_ws, api/guest_ws.c), and a door's
 * WebSockets (api/door.h: the door's own struct and callback, chosen
 * before the upgrade's path is looked at; the raw sockets it adopts are
 * the only raw ones).
 *
 * lws picks a WebSocket's protocol by the subprotocol the client names,
 * and our clients (Playwright, browsers, VNC-less viewers) name none; lws
 * 4.1 exports no way to move a connection to another protocol afterwards.
 * So lws sees one protocol for connections, and this router gives each
 * connection to its kind: HTTP until an upgrade, whose path decides the
 * kind for the rest of the connection's life. The table's second protocol
 * is no client's (it refuses upgrades): the sessions' guests' QMP sockets
 * and pidfds, raw files on the loop (session/guest_watch.c). Loop thread
 * only. */
#ifndef VITRINE_GATEWAY_PROTOCOLS_H
#define VITRINE_GATEWAY_PROTOCOLS_H

#include <libwebsockets.h>

/* The table for lws_context_creation_info::protocols (terminated). */
extern const struct lws_protocols api_protocols[];
/* The --metrics-listen vhost's: GET /metrics without a token, else 404. */
extern const struct lws_protocols metrics_protocols[];

#endif
