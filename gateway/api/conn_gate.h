/* gateway/api/conn_gate.h: how many client connections the gateway holds,
 * in all and from one address. A crowd of idle or slow sockets (slowloris,
 * a thousand that never send a byte) must not take the descriptors the
 * guests' monitors, screens and agents need, nor the room of the clients
 * from other addresses: a connection past either cap is closed as it is
 * accepted, before lws gives it any memory. lws's own timeouts end the idle
 * ones that got in. The caps are `vitrine serve --max-connections` and
 * `--max-connections-per-ip` (behind a reverse proxy every client has the
 * proxy's address: raise the second). Loop thread only. */
#ifndef VITRINE_GATEWAY_CONN_GATE_H
#define VITRINE_GATEWAY_CONN_GATE_H

#include <libwebsockets.h>
#include <stdbool.h>

#define CONN_GATE_DEFAULT_MAX 512
#define CONN_GATE_DEFAULT_PER_IP 128

/* Sets the caps (0: the defaults). Frees what a previous run left. */
void conn_gate_init(int max_total, int max_per_ip);
/* LWS_CALLBACK_FILTER_NETWORK_CONNECTION: whether the socket fd, just
 * accepted, may stay (false: lws closes it). */
bool conn_gate_admit(int fd);
/* LWS_CALLBACK_WSI_CREATE and _DESTROY: the connection just admitted starts
 * being counted, or one stops. Connections lws makes for itself (the
 * listener) follow no admission and are not counted. */
void conn_gate_opened(struct lws *wsi);
void conn_gate_closed(struct lws *wsi);
/* Counted connections now, and refused since init. */
int conn_gate_count(void);
long conn_gate_refused(void);

#endif
