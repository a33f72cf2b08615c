/* gateway/core/audit.h: the audit log (`vitrine serve --audit-log FILE`): one
 * JSON line per thing someone did to a session or to the gateway, and per
 * refused authentication, in the one schema docs/audit.md describes. Who
 * did it is named by the kind of credential and a short token id (the first
 * 8 hex digits of the token's SHA-256), never by the token. Any room may
 * write an entry; the line is also echoed to the gateway's log at debug
 * level. Refused authentications are aggregated per address, so that a
 * flood of them cannot rotate the history away. Loop thread only. */
#ifndef VITRINE_GATEWAY_AUDIT_H
#define VITRINE_GATEWAY_AUDIT_H

#include "gateway/core/project_table.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gw;

#define AUDIT_TOKEN_ID_LEN 8

/* Who made a request: kind is "operator", "control", "view", "minted",
 * "share", "unknown" (a token that matched nothing), or NULL (no token at
 * all, or an entry the gateway makes on its own: the principal is null). */
struct audit_principal {
	const char *kind; /* static string or NULL */
	char token_id[AUDIT_TOKEN_ID_LEN + 1]; /* "" with kind NULL */
	char project[PROJECT_NAME_MAX + 1]; /* a project's key: its project; else "" */
};

/* The principal of the token whose SHA-256 (hex) is hash ("" or NULL: none),
 * given what matched it: which as auth_rights_of_hash names it ("operator",
 * "control", "view", a grant id, "" for nothing), or share true when a
 * sharing link's token matched. Pure. */
void audit_principal_set(struct audit_principal *p, const char *hash, const char *which,
			 bool share);

/* One entry as a line without its newline (malloc'd; NULL when out of
 * memory): {"time": RFC 3339 UTC with milliseconds of unix_ms, "event",
 * "session" (or null), "principal" ({kind, token_id} or null), "remote"
 * (or null), ...fields} (fields borrowed, may be NULL; their keys cannot
 * replace the five above). Pure. */
char *audit_format(int64_t unix_ms, const char *event, const char *session,
		   const struct audit_principal *p, const char *remote, const json_t *fields);
/* The short id of a token (the first AUDIT_TOKEN_ID_LEN hex digits of its
 * SHA-256) into out: what entries name a token by. Pure. */
void audit_token_id(const char *token, char out[AUDIT_TOKEN_ID_LEN + 1]);

struct lws;
/* The client address of wsi into buf ("127.0.0.1"; an IPv4-mapped IPv6
 * address as its IPv4 one), or NULL when lws cannot tell. */
const char *audit_peer(struct lws *wsi, char *buf, size_t len);

/* Writes one entry now (fields stolen, may be NULL) to gw's audit log.
 * An auth_refused entry past its address's burst is only counted
 * (audit_refusals.h): its window's summary, an auth_refused_summary entry,
 * is written when the window closes, on a timer of gw's context. Never
 * fails for the caller. */
void audit_log(struct gw *gw, const char *event, const char *session,
	       const struct audit_principal *p, const char *remote, json_t *fields);
/* Writes the summaries of every window still open and cancels the timer:
 * before gw's context is destroyed (cli/gw_start.c's gw_stop). Refusals
 * after it are written in full. */
void audit_stop(struct gw *gw);

#endif
