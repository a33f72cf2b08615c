/* gateway/session/live_auth.h: live connections keep their right to be open. A
 * WebSocket (control, stream, CDP, exec) checks its token once, at the
 * upgrade or in its first message; a token can later be revoked, rotated
 * or expire, and the session can go. Each such connection registers here
 * with the hash of its token and the rights it needs; once a second the
 * session room checks every one against its session
 * (sess_rights_of_hash), and tells those that lost them, which close with
 * 1008 and the reason. Loop thread only. */
#ifndef VITRINE_GATEWAY_LIVE_AUTH_H
#define VITRINE_GATEWAY_LIVE_AUTH_H

#include "gateway/core/auth.h"
#include "gateway/core/gw.h"

#include <stdbool.h>

#define LIVE_AUTH_PERIOD_MS 1000

struct sess;
struct live_auth;
/* Rights a connection has beyond the session's tokens (a share link of
 * the live view, say); may be NULL. */
typedef unsigned (*live_auth_extra_fn)(struct live_auth *la, struct sess *s);
/* The connection lost its right (why names it); it should close. Called
 * once; the entry is no longer watched. */
typedef void (*live_auth_lost_fn)(struct live_auth *la, const char *why);

struct live_auth {
	struct live_auth *next; /* the watched list */
	bool watched;
	struct gw *gw;
	char sid[SESS_ID_MAX];
	char hash[AUTH_HASH_LEN + 1]; /* of the token the connection authenticated with */
	unsigned need; /* every one of these rights, or lost */
	live_auth_extra_fn extra;
	live_auth_lost_fn lost;
};

/* Watches la (embedded in its connection; extra and lost set by the
 * caller) for the token it authenticated with on session sid. */
void live_auth_watch(struct live_auth *la, struct gw *gw, const char *sid, const char *token,
		     unsigned need);
/* Stops watching (the connection closes); nothing when not watched. */
void live_auth_unwatch(struct live_auth *la);
/* Checks every watched connection now (also what the timer does). */
void live_auth_check_all(void);

#endif
