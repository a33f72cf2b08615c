/* gateway/api/routes.h: the API's URL space, parsed without I/O so it can be
 * unit-tested: method + path -> which handler, and the session id in it. */
#ifndef VITRINE_GATEWAY_ROUTES_H
#define VITRINE_GATEWAY_ROUTES_H

#include <stddef.h>

#define ROUTE_ID_MAX 64 /* the longest id: a template name */
/* The longest session id: the node name (at most GW_NODE_MAX, 20) and 16
 * random characters (gateway/core/gw.h, sess_alloc). */
#define ROUTE_SESSION_ID_MAX 36

enum route_method { M_GET, M_POST, M_DELETE, M_PUT, M_OTHER };

enum route_kind {
	R_NOT_FOUND,
	R_METHOD_NOT_ALLOWED,
	R_HEALTH, /* GET /healthz */
	R_SESSIONS_LIST, /* GET /v1/sessions */
	R_SESSIONS_CREATE, /* POST /v1/sessions */
	R_SESSION_GET, /* GET /v1/sessions/{id} */
	R_SESSION_DELETE, /* DELETE /v1/sessions/{id} */
	R_SESSION_SCREENSHOT, /* GET /v1/sessions/{id}/screenshot */
	R_SESSION_ACTIONS, /* POST /v1/sessions/{id}/actions */
	R_SESSION_CONTROL_WS, /* GET (upgrade) /v1/sessions/{id}/control */
	R_SESSION_STREAM_WS, /* GET (upgrade) /v1/sessions/{id}/stream (live view) */
	R_SESSION_SHARE, /* POST|DELETE /v1/sessions/{id}/share (live view links) */
	R_ROOT, /* GET / (live view: redirects to the web viewer) */
	R_SESSION_VNC, /* POST|DELETE /v1/sessions/{id}/vnc (live view: VNC door) */
	R_SESSION_PAUSE, /* POST /v1/sessions/{id}/pause */
	R_SESSION_RESUME, /* POST /v1/sessions/{id}/resume */
	R_SESSION_FORK, /* POST /v1/sessions/{id}/fork */
	R_SESSION_EVENTS, /* GET /v1/sessions/{id}/events */
	R_SESSION_EXEC, /* POST /v1/sessions/{id}/exec */
	R_SESSION_FILES, /* GET|PUT /v1/sessions/{id}/files?path= */
	R_SESSION_EXEC_WS, /* GET (upgrade) /v1/sessions/{id}/exec/stream */
	R_SESSION_CDP_WS, /* GET (upgrade) /v1/sessions/{id}/cdp: the DevTools protocol */
	R_SESSION_CDP_VERSION, /* GET /v1/sessions/{id}/cdp/json/version[/] */
	R_SESSION_EGRESS, /* GET|PUT /v1/sessions/{id}/egress: the rules */
	R_SESSION_EGRESS_LOG, /* GET /v1/sessions/{id}/egress/log */
	R_SESSION_CLIPBOARD, /* GET|PUT /v1/sessions/{id}/clipboard */
	R_SESSION_OPEN, /* POST /v1/sessions/{id}/open {url} */
	R_SESSION_LAUNCH, /* POST /v1/sessions/{id}/launch {command, args} */
	R_TEMPLATES_LIST, /* GET /v1/templates */
	R_TEMPLATES_CREATE, /* POST /v1/templates */
	R_TEMPLATE_GET, /* GET /v1/templates/{name} */
	R_TEMPLATE_DELETE, /* DELETE /v1/templates/{name} */
	R_SESSION_TOKENS, /* GET|POST /v1/sessions/{id}/tokens (list, mint) */
	R_SESSION_TOKEN, /* DELETE /v1/sessions/{id}/tokens/{tid} (revoke) */
	R_SESSION_TOKEN_ROTATE, /* POST /v1/sessions/{id}/tokens/{control|view}/rotate */
	R_METRICS, /* GET /metrics (operator) */
	R_USAGE, /* GET /v1/usage (operator) */
	R_SESSION_THUMBNAIL, /* GET /v1/sessions/{id}/thumbnail (a viewer's preview) */
	R_SESSION_TRAJECTORY, /* GET /v1/sessions/{id}/trajectory (a tar) */
	R_SESSION_RECORDING, /* GET /v1/sessions/{id}/recording: the timeline */
	R_SESSION_RECORDING_START, /* POST /v1/sessions/{id}/recording/start */
	R_SESSION_RECORDING_STOP, /* POST /v1/sessions/{id}/recording/stop */
	R_SESSION_RECORDING_FRAME, /* GET /v1/sessions/{id}/recording/frames/{i} (i in sub) */
	R_SESSION_RECORDING_WEBM, /* GET /v1/sessions/{id}/recording.webm */
	R_KEYS, /* GET|POST /v1/keys: the operator's API keys (list, make) */
	R_KEY_DELETE, /* DELETE /v1/keys/{id} (revoke) */
	R_TEMPLATE_EXPORT, /* GET /v1/templates/{name}/export */
	R_TEMPLATE_IMPORT, /* POST /v1/templates/import?name=N */
	R_TEMPLATES_GC, /* POST /v1/templates/gc?older_than_s=N */
	R_E2B, /* E2B's SDKs: set by api/e2b_api.c, never by route_parse */
};
#define R_KIND_COUNT (R_E2B + 1)

#define ROUTE_SUB_MAX 16 /* a token id: "control", "view" or a minted one */

struct route {
	enum route_kind kind;
	char id[ROUTE_ID_MAX +
		1]; /* session id (R_SESSION_*), template name (R_TEMPLATE_*), key id */
	char sub[ROUTE_SUB_MAX + 1]; /* R_SESSION_TOKEN*: the token's id; a frame's number */
};

/* Parses path (no query string) for method. An id is [A-Za-z0-9_-], 1 to
 * ROUTE_SESSION_ID_MAX characters for a session, ROUTE_ID_MAX for a
 * template; anything else is R_NOT_FOUND. (Session ids are only [a-z0-9],
 * 17 or more: other ids of the right length name no session and are
 * refused later, as an unknown session is.) A known path with the wrong method is
 * R_METHOD_NOT_ALLOWED. This function can't fail. */
struct route route_parse(enum route_method method, const char *path);

/* Each kind's name (a metrics label: "session_screenshot", ...), index =
 * kind, R_KIND_COUNT of them. */
extern const char *const route_kind_names[R_KIND_COUNT];

#endif
