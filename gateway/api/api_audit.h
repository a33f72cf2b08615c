/* gateway/api/api_audit.h: what the gateway records of each HTTP answer: the
 * audit entry of a request that changed something or read something out of
 * a guest (one per route and method, named by api_audit_event), an
 * "auth_refused" entry for every 401 and 403, and a line in the access log.
 * Both are written when the answer's headers go out (api/http.c), the one
 * place every request passes, so a handler only adds its fields to
 * r->audit_fields. Tokens never reach either: the principal is a kind and a
 * hash prefix, and paths are logged without their query strings. Loop
 * thread only. */
#ifndef VITRINE_GATEWAY_API_AUDIT_H
#define VITRINE_GATEWAY_API_AUDIT_H

#include "gateway/api/http.h"

/* The audit event of a request of kind and method that was authorised
 * ("session_create", "command", "file_put", ...), or NULL for the routes
 * that only read the gateway's own state (a GET of a session, a
 * screenshot, events...). Pure. */
const char *api_audit_event(enum route_kind kind, enum route_method method);
/* The method's name ("GET", ..., "OTHER" for the rest). Pure. */
const char *api_method_name(enum route_method method);

/* r's token was checked: remembers who it is (the hash of r->token, which
 * credential matched, as auth_rights_of_hash names it, and whether it is a
 * sharing link's). */
void api_audit_who(struct http_req *r, const char *hash, const char *which, bool share);
/* Sets a field of r's audit entry (value stolen). */
void api_audit_set(struct http_req *r, const char *key, json_t *value);

/* The answer's headers are out: writes r's audit entry (if its route has
 * one, or it was refused 401/403) and its access log line. */
void api_audit_answered(struct http_req *r);

/* A WebSocket of kind on session sid refused token (may be NULL or "")
 * with status (403 at the upgrade; 1008, the close code, for a first
 * message that did not authenticate): an "auth_refused" entry. */
void api_audit_ws_refused(struct gw *gw, struct lws *wsi, enum route_kind kind, const char *sid,
			  const char *token, int status);
/* An upgrade to a WebSocket was refused (its kind's filter said no): an
 * "auth_refused" entry with the route, the status lws answers (403) and
 * the bearer token's principal, if the request had one. */
void api_audit_upgrade_refused(struct gw *gw, struct lws *wsi);

#endif
