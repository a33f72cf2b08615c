/* gateway/stream/share.h: short-lived tokens for sharing links. A person with a
 * session token (or the operator) mints a view or control token that
 * expires after ttl_s; it is good only on the session's stream socket. The
 * web viewer carries it in the URL fragment (#...), which browsers never
 * send to a server, so it never reaches a request line or a log. Pure: the
 * caller passes the clock. */
#ifndef VITRINE_GATEWAY_SHARE_H
#define VITRINE_GATEWAY_SHARE_H

#include "gateway/core/auth.h"

#include <stdint.h>

#define SHARE_MAX 32
#define SHARE_MAX_TTL_S 86400
#define SHARE_DEFAULT_TTL_S 600

struct share_table {
	struct {
		char hash[AUTH_HASH_LEN + 1]; /* of the token; "" when the slot is free */
		enum auth_scope scope;
		int64_t expires_ms;
	} t[SHARE_MAX];
};

/* Mints a token (written to out, AUTH_TOKEN_LEN + 1 bytes) of scope, valid
 * until now_ms + ttl_s; only its hash is kept. Expired slots are reused;
 * a live share is never evicted. Returns 0, -ENOSPC when all SHARE_MAX are
 * live, or -EIO when the system has no randomness. */
int share_add(struct share_table *st, enum auth_scope scope, int ttl_s, int64_t now_ms, char *out);
/* The scope token has at now_ms (AUTH_NONE if unknown or expired).
 * Constant-time per comparison. */
enum auth_scope share_scope(const struct share_table *st, const char *token, int64_t now_ms);
/* The same for a token known by its hash (a live viewer re-checks). */
enum auth_scope share_scope_of_hash(const struct share_table *st, const char *hash, int64_t now_ms);
/* Revokes every share; returns how many were live at now_ms. */
int share_revoke_all(struct share_table *st, int64_t now_ms);

#endif
