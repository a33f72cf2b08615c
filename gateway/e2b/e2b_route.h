/* gateway/e2b/e2b_route.h: which E2B call a request is, from its method,
 * path and whether it names a sandbox for envd (the E2b-Sandbox-Id header
 * or a "49983-{id}." Host): the control plane's paths and envd's. Pure. */
#ifndef VITRINE_GATEWAY_E2B_ROUTE_H
#define VITRINE_GATEWAY_E2B_ROUTE_H

#include <stdbool.h>

enum e2b_kind {
	E2B_NONE, /* not an E2B path: the native API's */
	E2B_BAD_METHOD, /* an E2B path with another method */
	E2B_CREATE, /* POST /sandboxes, /v2/sandboxes */
	E2B_LIST, /* GET /sandboxes, /v2/sandboxes */
	E2B_GET, /* GET /sandboxes/{id} */
	E2B_KILL, /* DELETE /sandboxes/{id} */
	E2B_TIMEOUT, /* POST /sandboxes/{id}/timeout */
	E2B_PAUSE, /* POST /sandboxes/{id}/pause */
	E2B_CONNECT, /* POST /sandboxes/{id}/connect|resume, /v2/sandboxes/{id}/connect */
	E2B_METRICS, /* GET /sandboxes/{id}/metrics */
	E2B_NETWORK, /* PUT /sandboxes/{id}/network */
	E2B_FORK, /* POST /sandboxes/{id}/fork */
	E2B_SNAPSHOT_CREATE, /* POST /sandboxes/{id}/snapshots */
	E2B_SNAPSHOT_LIST, /* GET /snapshots */
	E2B_SNAPSHOT_DELETE, /* DELETE /templates/{id} (deleteSnapshot) */
	/* the stream's live view at the SDK's URL ("PORT-{id}." Host, PORT
	 * not envd's; set by the caller, not by e2b_route_parse) */
	E2B_LIVE_VIEW, /* GET /vnc.html */
	E2B_LIVE_SOCKET, /* /websockify */
	/* envd (the sandbox comes from the request's headers) */
	E2B_ENVD_HEALTH, /* GET /health */
	E2B_ENVD_FILES, /* GET|POST /files */
	E2B_ENVD_RPC, /* POST /{service}/{method}: rpc holds "process.Process/Start" */
	E2B_ENVD_NOT_FOUND, /* anything else sent to envd */
};

#define E2B_ID_MAX 64 /* a sandbox id, or a snapshot's name (a template's, 63 at most) */

struct e2b_route {
	enum e2b_kind kind;
	char id[E2B_ID_MAX]; /* the control plane's sandbox id (a snapshot's, for its delete) */
	char rpc[64]; /* E2B_ENVD_RPC: "service/Method" */
};

/* method is "GET", "POST", ...; envd: the request names a sandbox for
 * envd. This function can't fail. */
struct e2b_route e2b_route_parse(const char *method, const char *path, bool envd);

#endif
