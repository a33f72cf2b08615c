/* gateway/api/e2b_api.h: E2B's SDKs on the gateway's own listener (docs/e2b.md):
 * the control plane (e2b_api.c: /sandboxes, /v2/sandboxes, X-API-KEY) and
 * envd (e2b_envd.c: Connect-RPC process.Process, /files, /health, for the
 * sandbox an E2b-Sandbox-Id header or a "49983-{id}." Host names,
 * X-Access-Token). The sandbox id is the session id. Loop thread. */
#ifndef VITRINE_GATEWAY_API_E2B_H
#define VITRINE_GATEWAY_API_E2B_H

#include "gateway/api/http.h"

/* Called right after http_begin (api/protocols.c): makes r an R_E2B
 * request when its path and headers
 * are E2B's (and takes the token from X-API-KEY or X-Access-Token). */
void api_e2b_begin(struct http_req *r);
/* Before a body is read: answers 401 (and closes after) unless r's key
 * or token is good for its call. */
void api_e2b_refuse_early(struct http_req *r);
/* E2B's file uploads (POST /files to envd): as much as a command's output
 * carries back (gateway/guest/exec.c), so what is written can be read. */
#define E2B_MAX_FILE_BODY (4u << 20)
/* The largest body an R_E2B request may have: E2B_MAX_FILE_BODY for a file
 * upload, else HTTP_MAX_BODY (its route's body_max_of). */
size_t api_e2b_body_max(const struct http_req *r);
/* Answers an R_E2B request (its body, if any, is in). */
void api_e2b_handle(struct http_req *r);
/* A parked R_E2B request was woken (files). */
void api_e2b_resume(struct http_req *r, struct sess *s, bool timed_out);
/* http_release's hook (its route's release): frees what r's E2B call holds. */
void api_e2b_release(struct http_req *r);
/* On each wake-up of the loop: streams with news become writable,
 * ended processes are reaped. */
void api_e2b_poke_all(struct gw *gw);

/* The value of query parameter name (with its '='), decoded, into buf;
 * false (buf "") when absent. */
bool api_e2b_query(struct http_req *r, const char *name, char *buf, int len);

/* What r's token may do on s (NULL: the operator's routes), noted for
 * r's audit entry. */
unsigned api_e2b_rights(struct http_req *r, const struct sess *s);
/* The audit event of r's E2B call (docs/audit.md's names), or NULL. */
const char *api_e2b_audit_event(const struct http_req *r);

/* e2b_live.c: GET /vnc.html and /websockify on a "PORT-{id}." Host. */
void api_e2b_live(struct http_req *r);

/* e2b_envd.c */
void api_e2b_envd(struct http_req *r);
void api_e2b_envd_resume(struct http_req *r, struct sess *s, bool timed_out);
void api_e2b_envd_release(struct http_req *r);
void api_e2b_envd_poke_all(void);

#endif
