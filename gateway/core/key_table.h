/* gateway/core/key_table.h: API keys the operator makes (`vitrine key
 * create`, POST /v1/keys, POST /v1/projects/{name}/keys) besides the key in
 * its key file. E2B's SDKs want their key shaped `e2b_` + hex, and a team
 * wants one key per agent or pipeline that it can revoke alone. A key of no
 * project is an admin key: the operator key's rights (docs/api.md, "API
 * keys") but managing keys; a project's key sees that project alone
 * (project_table.h).
 *
 * Only each key's SHA-256 is kept, in STATE_DIR/api-keys.json (written with
 * rename + fsync on every change, before the change is answered); the
 * secret is shown once, when it is made. Matching compares against every
 * key, in constant time. The table and its JSON are pure; api_keys_load and
 * api_keys_save do the file. Loop thread. */
#ifndef VITRINE_GATEWAY_CORE_KEY_TABLE_H
#define VITRINE_GATEWAY_CORE_KEY_TABLE_H

#include "gateway/core/auth.h"
#include "gateway/core/project_table.h"

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define API_KEYS_MAX 512
#define API_KEY_ID_LEN 12 /* "key_" + 8 of [a-z0-9] */
#define API_KEY_SECRET_LEN 44 /* "e2b_" + 40 lowercase hex (20 random bytes), as E2B's keys */
#define API_KEY_NAME_MAX 64

struct api_key {
	char id[API_KEY_ID_LEN + 1];
	char name[API_KEY_NAME_MAX + 1]; /* may be "" */
	char hash[AUTH_HASH_LEN + 1];
	char project[PROJECT_NAME_MAX + 1]; /* "": an admin key */
	int64_t created_unix_ms;
};

struct api_keys {
	int n;
	struct api_key k[API_KEYS_MAX];
	char path[PATH_MAX]; /* the file; "" for a table in memory only */
};

/* Whether name can name a key: at most API_KEY_NAME_MAX bytes of letters,
 * digits, space and -_.:@ (the list shows it; no control characters). */
bool api_keys_name_ok(const char *name);

/* The key whose secret hashes to hash, or NULL. Every key is compared. */
const struct api_key *api_keys_match(const struct api_keys *t, const char *hash);

/* Makes a key named name for project ("" or NULL: an admin key) at
 * now_unix_ms: its secret into secret
 * (API_KEY_SECRET_LEN + 1 bytes), and returns it in the table. NULL with
 * errno EINVAL (bad name), ENOSPC (API_KEYS_MAX keys already) or EIO (no
 * randomness). Only the table changes: the caller saves. */
const struct api_key *api_keys_add(struct api_keys *t, const char *name, const char *project,
				   int64_t now_unix_ms, char *secret);
/* Takes key id out of the table. Returns 0, or -ENOENT. */
int api_keys_remove(struct api_keys *t, const char *id);
/* Takes every key of project out of the table; returns how many. */
int api_keys_remove_project(struct api_keys *t, const char *project);

/* One key as the API shows it: {id, name, project (null for an admin
 * key), created_at (Unix ms), prefix} with the first 8 hex digits of its
 * hash as the audit log names it; never the hash. New reference, or NULL
 * when out of memory. */
json_t *api_key_json(const struct api_key *k);
/* The file's form: [{id, name, hash, created_at, project?}, ...] (a key
 * without "project" is an admin key, as every key was before projects). */
json_t *api_keys_to_json(const struct api_keys *t);
/* Fills t (its path untouched) from the file's form. Returns 0, or -EINVAL
 * with a reason in err (t then holds no keys). */
int api_keys_from_json(const json_t *j, struct api_keys *t, char *err, size_t errlen);

/* Reads path into t (a missing file is no keys) and remembers path.
 * Returns 0, or -errno with a reason in err. */
int api_keys_load(struct api_keys *t, const char *path, char *err, size_t errlen);
/* Writes t to its path (mode 0600). Returns 0, or -errno with a reason. */
int api_keys_save(const struct api_keys *t, char *err, size_t errlen);

#endif
