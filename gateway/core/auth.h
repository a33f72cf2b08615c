/* gateway/core/auth.h: who may do what. The operator holds one API key (bearer)
 * for the whole REST API; each session gets two tokens of its own, scoped
 * "control" (act and view) and "view" (view only). Tokens travel in the
 * Authorization header, never required in a URL that ends up in logs.
 * Every comparison is constant-time. */
#ifndef VITRINE_GATEWAY_AUTH_H
#define VITRINE_GATEWAY_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_TOKEN_LEN 43 /* 32 random bytes, base64url without padding */
#define AUTH_HASH_LEN 64 /* SHA-256 of a token, lowercase hex */

enum auth_scope { AUTH_NONE, AUTH_VIEW, AUTH_CONTROL, AUTH_OPERATOR };

/* What a credential may do on a session, as bits: the table in docs/api.md
 * ("Tokens and their rights") is the contract. The control token (the one
 * handed to an agent) has VIEW, ACT and EXEC; the view token VIEW; the
 * operator key all. The rest are for tokens the operator mints with
 * exactly the scopes it wants (POST /v1/sessions/{id}/tokens). */
enum auth_right {
	AUTH_R_VIEW = 1u << 0, /* the session, its screen and stream, events */
	AUTH_R_ACT = 1u << 1, /* actions, control, clipboard, open, launch, CDP, pause,
			       * resume, egress rules and log (read) */
	AUTH_R_EXEC = 1u << 2, /* commands as the desktop user, files */
	AUTH_R_ROOT = 1u << 3, /* commands as root */
	AUTH_R_EGRESS = 1u << 4, /* change the egress rules */
	AUTH_R_FORK = 1u << 5, /* fork the session */
	AUTH_R_SHARE = 1u << 6, /* mint sharing links (view links need ACT too) */
	AUTH_R_VNC = 1u << 7, /* open the VNC door */
	AUTH_R_MANAGE = 1u << 8, /* create, list and delete sessions, their tokens, templates,
				  * usage: a project key's within its project, the operator's
				  * everywhere */
	AUTH_R_ADMIN = 1u << 9, /* the operator's alone: projects, keys, metrics, template import
				 * and gc, every project */
};
#define AUTH_RIGHTS_VIEW ((unsigned)AUTH_R_VIEW)
#define AUTH_RIGHTS_CONTROL ((unsigned)(AUTH_R_VIEW | AUTH_R_ACT | AUTH_R_EXEC))
#define AUTH_RIGHTS_MINTABLE (AUTH_RIGHTS_OPERATOR & ~(unsigned)(AUTH_R_ADMIN | AUTH_R_MANAGE))
#define AUTH_RIGHTS_OPERATOR ((unsigned)(AUTH_R_ADMIN << 1) - 1u)
/* A project key's (but "root" unless its project allows it). */
#define AUTH_RIGHTS_PROJECT (AUTH_RIGHTS_OPERATOR & ~(unsigned)AUTH_R_ADMIN)

/* The live view's names for what rights allow there: AUTH_OPERATOR with
 * ADMIN or MANAGE, AUTH_CONTROL with ACT (may take control), AUTH_VIEW
 * with VIEW. */
enum auth_scope auth_scope_from_rights(unsigned rights);

/* The scope name of one right ("view", "act", "exec", "root", "egress",
 * "fork", "share", "vnc"; "manage" and "admin" for the two no token is
 * minted with), or NULL. */
const char *auth_right_name(unsigned right);
/* The right named name among the mintable ones, or 0. */
unsigned auth_right_by_name(const char *name);

/* A token minted for one session: its id (for listing and revoking), the
 * hash of its secret, its rights and when it ends (unix ms; 0: with the
 * session). */
#define AUTH_GRANT_ID_LEN 10 /* "t" + 9 of [a-z0-9] */
struct auth_grant {
	char id[AUTH_GRANT_ID_LEN + 1];
	char hash[AUTH_HASH_LEN + 1];
	unsigned rights;
	int64_t expires_unix_ms;
};
/* Fills id (AUTH_GRANT_ID_LEN + 1 bytes) with a fresh grant id. */
int auth_new_grant_id(char *id);

/* The rights of the credential whose hash is hash, given the hashes of the
 * operator key and of the session's control and view tokens (each may be
 * NULL or "" for none) and n minted grants, at now_unix_ms (an expired
 * grant gives nothing). *which names what matched ("operator", "control",
 * "view", a grant's id; "" for nothing), when which is not NULL. Pure;
 * every comparison is constant-time and all are made. */
unsigned auth_rights_of_hash(const char *hash, const char *operator_hash, const char *control_hash,
			     const char *view_hash, const struct auth_grant *grants, int n,
			     int64_t now_unix_ms, const char **which);

/* Fills out (AUTH_TOKEN_LEN + 1 bytes) with a fresh random token.
 * Returns 0 or -errno when the system has no randomness to give. */
int auth_new_token(char *out);

/* Constant-time equality of two NUL-terminated strings (time depends only on
 * the length of the longer one). */
bool auth_equal(const char *a, const char *b);

/* Extracts the token of an "Authorization: Bearer TOKEN" value into out.
 * Returns 0, or -EINVAL when the value is not a bearer credential. */
int auth_parse_bearer(const char *header, char *out, size_t outlen);

/* The SHA-256 of token in hex: what a session keeps of its tokens (in
 * memory and in its record on disk), never the tokens themselves once
 * they were handed out. */
void auth_token_hash(const char *token, char out[AUTH_HASH_LEN + 1]);

/* Whether an Origin header value is allowed by a comma-separated allowlist
 * ("*" allows any; an absent Origin — a non-browser client — is allowed). */
bool auth_origin_allowed(const char *origin, const char *allowlist);

/* Reads the operator key from the existing file path, with the checks
 * below (a client's, which never creates it). Returns 0, -ENOENT, or
 * -errno with a reason in err. */
int auth_read_key(const char *path, char *key, size_t keylen, char *err, size_t errlen);
/* Loads the operator key from path, creating it (0600, a fresh token) when
 * missing. An existing path must be a regular file, not a symlink, that
 * neither group nor others may read or write: otherwise -ELOOP, -EINVAL or
 * -EPERM with a reason in err that names the file and the fix (chmod 600).
 * Returns 0 or -errno with a reason in err. */
int auth_load_or_create_key(const char *path, char *key, size_t keylen, char *err, size_t errlen);

#endif
