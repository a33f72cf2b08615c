/* gateway/api/routes.h: the API's URL space as one table of routes
 * (gateway/api/route_table.c): each row says a route's methods, path
 * pattern, the right it needs, its body limit, its handler, how a parked
 * request of it is woken, its own state and its audit events. Parsing walks
 * the table without I/O, so it is unit-tested and fuzzed: method + path ->
 * which route, and the ids in it. Loop thread only (the table is const). */
#ifndef VITRINE_GATEWAY_ROUTES_H
#define VITRINE_GATEWAY_ROUTES_H

#include <libwebsockets.h>

#include <stdbool.h>
#include <stddef.h>

#define ROUTE_ID_MAX 64 /* the longest id: a template name */
/* The longest session id: the node name (at most GW_NODE_MAX, 20) and 16
 * random characters (gateway/core/gw.h, sess_alloc). */
#define ROUTE_SESSION_ID_MAX 36

enum route_method { M_GET, M_POST, M_DELETE, M_PUT, M_PATCH, M_OTHER };

/* Every kind of request, with its name (a metrics label, the access log's
 * "route"). What each one is, its row, is in gateway/api/route_table.c;
 * route_parse walks the rows in this order. R_DOOR is set by a door's
 * claim (api/door.h), never by route_parse; its name is the door's, once
 * one is registered. */
#define ROUTE_KINDS(X)                                                                             \
	X(R_NOT_FOUND, "not_found")                                                                \
	X(R_METHOD_NOT_ALLOWED, "method_not_allowed")                                              \
	X(R_HEALTH, "health")                                                                      \
	X(R_SESSIONS_LIST, "sessions_list")                                                        \
	X(R_SESSIONS_CREATE, "sessions_create")                                                    \
	X(R_SESSION_GET, "session_get")                                                            \
	X(R_SESSION_DELETE, "session_delete")                                                      \
	X(R_SESSION_SCREENSHOT, "session_screenshot")                                              \
	X(R_SESSION_ACTIONS, "session_actions")                                                    \
	X(R_SESSION_CONTROL_WS, "session_control_ws")                                              \
	X(R_SESSION_STREAM_WS, "session_stream_ws")                                                \
	X(R_SESSION_SHARE, "session_share")                                                        \
	X(R_ROOT, "root")                                                                          \
	X(R_SESSION_VNC, "session_vnc")                                                            \
	X(R_SESSION_PAUSE, "session_pause")                                                        \
	X(R_SESSION_RESUME, "session_resume")                                                      \
	X(R_SESSION_FORK, "session_fork")                                                          \
	X(R_SESSION_EVENTS, "session_events")                                                      \
	X(R_SESSION_EXEC, "session_exec")                                                          \
	X(R_SESSION_FILES, "session_files")                                                        \
	X(R_SESSION_EXEC_WS, "session_exec_ws")                                                    \
	X(R_SESSION_CDP_WS, "session_cdp_ws")                                                      \
	X(R_SESSION_CDP_VERSION, "session_cdp_version")                                            \
	X(R_SESSION_EGRESS, "session_egress")                                                      \
	X(R_SESSION_EGRESS_LOG, "session_egress_log")                                              \
	X(R_SESSION_CLIPBOARD, "session_clipboard")                                                \
	X(R_SESSION_OPEN, "session_open")                                                          \
	X(R_SESSION_LAUNCH, "session_launch")                                                      \
	X(R_TEMPLATES_LIST, "templates_list")                                                      \
	X(R_TEMPLATES_CREATE, "templates_create")                                                  \
	X(R_TEMPLATE_GET, "template_get")                                                          \
	X(R_TEMPLATE_DELETE, "template_delete")                                                    \
	X(R_TEMPLATE_PATCH, "template_patch")                                                      \
	X(R_SESSION_TOKENS, "session_tokens")                                                      \
	X(R_SESSION_TOKEN, "session_token")                                                        \
	X(R_SESSION_TOKEN_ROTATE, "session_token_rotate")                                          \
	X(R_METRICS, "metrics")                                                                    \
	X(R_USAGE, "usage")                                                                        \
	X(R_SESSION_THUMBNAIL, "session_thumbnail")                                                \
	X(R_SESSION_TRAJECTORY, "session_trajectory")                                              \
	X(R_SESSION_RECORDING, "session_recording")                                                \
	X(R_SESSION_RECORDING_START, "session_recording_start")                                    \
	X(R_SESSION_RECORDING_STOP, "session_recording_stop")                                      \
	X(R_SESSION_RECORDING_FRAME, "session_recording_frame")                                    \
	X(R_SESSION_RECORDING_WEBM, "session_recording_webm")                                      \
	X(R_KEYS, "keys")                                                                          \
	X(R_KEY_DELETE, "key_delete")                                                              \
	X(R_TEMPLATE_EXPORT, "template_export")                                                    \
	X(R_TEMPLATE_IMPORT, "template_import")                                                    \
	X(R_TEMPLATES_GC, "templates_gc")                                                          \
	X(R_PROJECTS, "projects")                                                                  \
	X(R_PROJECT, "project")                                                                    \
	X(R_PROJECT_KEYS, "project_keys")                                                          \
	X(R_PROJECT_KEY, "project_key")                                                            \
	X(R_SESSION_PORT, "session_port")                                                          \
	X(R_SESSION_PORT_SETTINGS, "session_port_settings")                                        \
	X(R_SESSION_PORT_HOST, "session_port_host")                                                \
	X(R_DOOR, "door")

enum route_kind {
#define ROUTE_KIND_ENUM(kind, name) kind,
	ROUTE_KINDS(ROUTE_KIND_ENUM)
#undef ROUTE_KIND_ENUM
};
#define R_KIND_COUNT (R_DOOR + 1)

#define ROUTE_SUB_MAX 16 /* a token id: "control", "view" or a minted one */

struct route {
	enum route_kind kind;
	char id[ROUTE_ID_MAX +
		1]; /* session id (R_SESSION_*), template name (R_TEMPLATE_*), key id */
	char sub[ROUTE_SUB_MAX + 1]; /* R_SESSION_TOKEN*: the token's id; a frame's number */
};

/* A row's methods: a set of 1u << M_*. */
#define ROUTE_GET (1u << M_GET)
#define ROUTE_POST (1u << M_POST)
#define ROUTE_DELETE (1u << M_DELETE)
#define ROUTE_PUT (1u << M_PUT)
#define ROUTE_PATCH (1u << M_PATCH)
/* every method, those of no name here (OPTIONS, HEAD) too */
#define ROUTE_ANY                                                                                  \
	(ROUTE_GET | ROUTE_POST | ROUTE_DELETE | ROUTE_PUT | ROUTE_PATCH | (1u << M_OTHER))

/* A row's right, besides the AUTH_R_* bits (gateway/core/auth.h) a token
 * must hold: answered to anyone, without a token; the operator key itself
 * (an API key has its rights but is refused); or checked by the route
 * itself (a door's: api/door.h). */
#define ROUTE_NO_TOKEN (1u << 24)
#define ROUTE_OPERATOR_KEY (1u << 25)
#define ROUTE_OWN_AUTH (1u << 26)

/* A row's audit event for a method that changes nothing worth an entry
 * (NULL there would be a row that forgot to say). */
#define ROUTE_NO_AUDIT ""

struct http_req;
struct sess;

/* One route. Its pattern is the path, literal but for placeholders copied
 * into struct route: {id} a session id (1..ROUTE_SESSION_ID_MAX id
 * characters, into id), {name} a template's and {key} an API key's
 * (1..ROUTE_ID_MAX, into id), {tid} a token's (1..ROUTE_SUB_MAX, into
 * sub), {n} a number (1..9 digits, into sub); a pattern ending in "/?"
 * takes the path with or without its last slash, one ending in {rest}
 * a '/' and anything after it (not copied). A row without a pattern
 * is no path of the API's (not found, not allowed, a door's). */
struct route_def {
	unsigned methods; /* ROUTE_GET | ... */
	const char *pattern;
	/* AUTH_R_* needed (or ROUTE_* above); right_of: a method's own, when
	 * it differs (0: right) */
	unsigned right, right_of[M_OTHER];
	size_t body_max; /* the largest request body kept (413 past it) */
	size_t (*body_max_of)(const struct http_req *r); /* or this says */
	/* Called when the token is known to be something, before a body comes
	 * (a template import takes its body as it comes), or NULL. */
	void (*begin)(struct http_req *r);
	/* Called instead of the usual token check before a body (a door's), or NULL. */
	void (*refuse_early)(struct http_req *r);
	/* Answers the request (its body, if any, is in): for a WebSocket
	 * route, one asked without an upgrade. */
	void (*handle)(struct http_req *r);
	/* A WebSocket route: the callback its upgraded connection is served
	 * by from its filter on (user: a pointer of the connection's own,
	 * NULL at first); NULL for a route that takes no upgrade. */
	int (*ws)(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		  size_t len);
	/* A request parked on session s (api_wait, api_watch) was woken or
	 * timed out: answers, or keeps waiting. NULL: the session's JSON once
	 * it is not busy. */
	void (*resume)(struct http_req *r, struct sess *s, bool timed_out);
	/* The route's own state (http_route_state): its size (or
	 * state_size_of says: a door's), and what releases what it holds
	 * before it is freed (or NULL). */
	size_t state_size;
	size_t (*state_size_of)(void);
	void (*state_release)(void *state);
	/* The audit event of an answered request, by method (ROUTE_NO_AUDIT:
	 * none); or audit_of, which says (a door's). */
	const char *audit[M_OTHER];
	const char *(*audit_of)(const struct http_req *r);
};

/* Indexed by kind; every kind has a row. */
extern const struct route_def route_table[R_KIND_COUNT];

/* Each kind's name (a metrics label: "session_screenshot", ...), index =
 * kind, R_KIND_COUNT of them. R_DOOR's is set when a door registers
 * (api_door_register), before the loop runs. */
extern const char *route_kind_names[R_KIND_COUNT];

/* Parses path (no query string) for method by walking route_table: the
 * first row whose pattern takes the path and whose methods include
 * method (M_OTHER: only a ROUTE_ANY row's). An id is [A-Za-z0-9_-] of the lengths above; anything else is
 * R_NOT_FOUND. (Session ids are only [a-z0-9], 17 or more: other ids of the
 * right length name no session and are refused later, as an unknown session
 * is.) A known path with the wrong method is R_METHOD_NOT_ALLOWED, with the
 * ids of the first row that takes the path. This function can't fail. */
struct route route_parse(enum route_method method, const char *path);

/* Whether pattern takes path; its placeholders' values into *out (kind
 * untouched) when it does. Pure. */
bool route_pattern_match(const char *pattern, const char *path, struct route *out);

/* Whether kind's path names a session ({id}). */
bool route_names_session(enum route_kind kind);

/* The AUTH_R_* bits (with ROUTE_* flags) kind needs for method. */
unsigned route_right(enum route_kind kind, enum route_method method);

#endif
