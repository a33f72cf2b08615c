/* gateway/stream/share.h: short-lived tokens for sharing links. A person with a
 * session token (or the operator) mints a view or control token that
 * expires after ttl_s; it is good only on the session's stream socket. The
 * web viewer carries it in the URL fragment (#...), which browsers never
 * send to a server, so it never reaches a request line or a log.
 *
 * The links E2B's live view hands out with no credential (e2b/e2b_live.c)
 * have a pool of their own, apart from the table POST .../share fills: a
 * few slots, one live link per scope handed out again and again, so that
 * no number of those requests keeps the session's owner from sharing.
 * Pure: the caller passes the clock. */
#ifndef VITRINE_GATEWAY_SHARE_H
#define VITRINE_GATEWAY_SHARE_H

#include "gateway/core/auth.h"

#include <stdint.h>

#define SHARE_MAX 32
#define SHARE_MAX_TTL_S 86400
#define SHARE_DEFAULT_TTL_S 600
/* The live view's pool: two per scope (view, control) are enough, since a
 * link is handed out again until less than half its life is left, when
 * the one before it has expired (share_live). */
#define SHARE_LIVE_MAX 4

struct share_table {
	struct {
		char hash[AUTH_HASH_LEN + 1]; /* of the token; "" when the slot is free */
		enum auth_scope scope;
		int64_t expires_ms;
	} t[SHARE_MAX];
	/* The live view's pool: the token itself is kept (it is handed out
	 * again), in memory only, as long as the link lives. */
	struct {
		char token[AUTH_TOKEN_LEN + 1]; /* "" when the slot is free */
		char hash[AUTH_HASH_LEN + 1];
		enum auth_scope scope;
		int64_t expires_ms;
	} live[SHARE_LIVE_MAX];
};

/* Mints a token (written to out, AUTH_TOKEN_LEN + 1 bytes) of scope, valid
 * until now_ms + ttl_s; only its hash is kept. Expired slots are reused;
 * a live share is never evicted. Returns 0, -ENOSPC when all SHARE_MAX are
 * live, or -EIO when the system has no randomness. */
int share_add(struct share_table *st, enum auth_scope scope, int ttl_s, int64_t now_ms, char *out);
/* The live view's link of scope into out (AUTH_TOKEN_LEN + 1 bytes): the
 * pool's newest of that scope while more than half of ttl_s is left of
 * it, else a new one valid until now_ms + ttl_s, in an expired slot (or
 * the older one of that scope's, which has expired by then). Never
 * touches the table share_add fills. Returns 1 when out is one handed out
 * before, 0 when it is new, -ENOSPC when the pool has no room (only when
 * ttl_s changed between calls), or -EIO. */
int share_live(struct share_table *st, enum auth_scope scope, int ttl_s, int64_t now_ms, char *out);
/* The scope token has at now_ms (AUTH_NONE if unknown or expired), from
 * either table.
 * Constant-time per comparison. */
enum auth_scope share_scope(const struct share_table *st, const char *token, int64_t now_ms);
/* The same for a token known by its hash (a live viewer re-checks). */
enum auth_scope share_scope_of_hash(const struct share_table *st, const char *hash, int64_t now_ms);
/* Revokes every share, the live view's too; returns how many were live at
 * now_ms. */
int share_revoke_all(struct share_table *st, int64_t now_ms);

#endif
