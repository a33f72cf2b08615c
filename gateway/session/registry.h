/* gateway/session/registry.h: the session registry on disk, so that
 * sessions outlive the gateway process (docs/durability.md). One JSON
 * record per session in the state dir ($VITRINE_HOME/sessions, or serve
 * --state-dir), named ID.json, each replaced atomically (temporary file,
 * fsync, rename, fsync of the directory): after a crash a record is the old
 * or the new one, never torn. The directory is locked (flock) by the one
 * gateway that uses it. This file knows files and JSON; what a record says
 * is session_record.h's. */
#ifndef VITRINE_GATEWAY_REGISTRY_H
#define VITRINE_GATEWAY_REGISTRY_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* The state dir's files that hold no session's record: the tables of API
 * keys (core/key_table.h), projects (core/project_table.h) and warm pools
 * (pool.h), which the
 * listing passes by. */
#define REGISTRY_KEYS_FILE "api-keys.json"
#define REGISTRY_PROJECTS_FILE "projects.json"
#define REGISTRY_POOLS_FILE "pools.json" /* the warm pools' sizes (pool.h) */

struct registry {
	char dir[PATH_MAX - 64];
	int lock_fd; /* owned while locked: flock of dir/.lock while this gateway runs */
	bool locked;
};

/* Opens (creating) the state dir and locks it. Returns 0, -EBUSY when
 * another gateway holds it, or -errno, with a reason in err. */
int registry_open(struct registry *r, const char *dir, char *err, size_t errlen);
/* Unlocks. Accepts a zeroed registry (never opened). */
void registry_close(struct registry *r);

/* The path of id's record into buf (len bytes). Returns 0 or -ENAMETOOLONG. */
int registry_path(const struct registry *r, const char *id, char *buf, size_t len);
/* Writes id's record (rec is not stolen). Returns 0 or -errno. */
int registry_write(const struct registry *r, const char *id, const json_t *rec);
/* Removes id's record; a missing one is success. Returns 0 or -errno. */
int registry_remove(const struct registry *r, const char *id);

/* Called for each record file found: rec (borrowed) is its JSON object,
 * or NULL with why set when the file cannot be read or is not a JSON
 * object (torn, truncated, not JSON). id is the name without ".json". */
typedef void (*registry_each_fn)(void *ud, const char *id, json_t *rec, const char *why);
/* Calls fn for every ID.json (temporary files of an interrupted write are
 * removed). Returns the number of records, or -errno when the dir cannot
 * be read. */
int registry_each(const struct registry *r, registry_each_fn fn, void *ud);

/* Whether id is a session id as the gateway makes them (lowercase letters
 * and digits, 1..63): what may become a file name. Pure. */
bool registry_id_ok(const char *id);

#endif
