/* gateway/core/auth.h: who may do what. The operator holds one API key (bearer)
 * for the whole REST API; each session gets two tokens of its own, scoped
 * "control" (act and view) and "view" (view only). Tokens travel in the
 * Authorization header, never required in a URL that ends up in logs.
 * Every comparison is constant-time. */
#ifndef VITRINE_GATEWAY_AUTH_H
#define VITRINE_GATEWAY_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#define AUTH_TOKEN_LEN 43 /* 32 random bytes, base64url without padding */
#define AUTH_HASH_LEN 64 /* SHA-256 of a token, lowercase hex */

enum auth_scope { AUTH_NONE, AUTH_VIEW, AUTH_CONTROL, AUTH_OPERATOR };

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

/* The scope token grants on a session whose tokens hash to control_hash
 * and view_hash (auth_token_hash), given the operator key: AUTH_OPERATOR,
 * AUTH_CONTROL, AUTH_VIEW or AUTH_NONE. Pure. The hashes may be NULL or ""
 * (no session in question). */
enum auth_scope auth_scope_of(const char *token, const char *operator_key, const char *control_hash,
			      const char *view_hash);

/* Whether an Origin header value is allowed by a comma-separated allowlist
 * ("*" allows any; an absent Origin — a non-browser client — is allowed). */
bool auth_origin_allowed(const char *origin, const char *allowlist);

/* Loads the operator key from path, creating it (0600, a fresh token) when
 * missing. An existing path must be a regular file, not a symlink, that
 * neither group nor others may read or write: otherwise -ELOOP, -EINVAL or
 * -EPERM with a reason in err that names the file and the fix (chmod 600).
 * Returns 0 or -errno with a reason in err. */
int auth_load_or_create_key(const char *path, char *key, size_t keylen, char *err, size_t errlen);

#endif
