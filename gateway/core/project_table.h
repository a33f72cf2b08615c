/* gateway/core/project_table.h: projects, the gateway's tenants. The
 * operator (an admin credential) makes a project with quotas; keys made for
 * it (key_table.h, a key's project) see its sessions and templates alone
 * and are held to its quotas (docs/api.md, "Projects"). A template belongs
 * to a project by its name: "PROJECT_rest" (project names hold no '_', so
 * the first one splits), the others are the operator's, which every
 * project may read and start from (docs/templates.md).
 *
 * The table lives in STATE_DIR/projects.json (rename + fsync on every
 * change, before the change is answered). The table and its JSON are pure;
 * projects_load and projects_save do the file. Loop thread. */
#ifndef VITRINE_GATEWAY_CORE_PROJECT_TABLE_H
#define VITRINE_GATEWAY_CORE_PROJECT_TABLE_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROJECTS_MAX 256
/* [a-z0-9-], starting with a letter: it prefixes template names
 * ([a-z0-9_-], at most 63) with room to spare. */
#define PROJECT_NAME_MAX 32
#define PROJECT_NO_LIMIT (-1)

/* A project's limits; PROJECT_NO_LIMIT where none is set. sessions counts
 * every session (paused too); vcpus and memory_mib those whose guest holds
 * the host (running or paused in memory); disk_gib the bytes of the
 * project's overlays, checkpoints, templates and recordings. */
struct project_quota {
	int64_t sessions, vcpus, memory_mib, disk_gib;
};

/* The quotas' names, as the API's bodies and 429 errors say them. */
enum project_quota_kind { QUOTA_SESSIONS, QUOTA_VCPUS, QUOTA_MEMORY_MIB, QUOTA_DISK_GIB, QUOTA_N };
extern const char *const project_quota_names[QUOTA_N];
int64_t project_quota_get(const struct project_quota *q, enum project_quota_kind k);

struct project {
	char name[PROJECT_NAME_MAX + 1];
	struct project_quota quota;
	bool allow_root; /* its keys may run commands as root in its guests */
	int64_t created_unix_ms;
};

struct projects {
	int n;
	struct project p[PROJECTS_MAX];
	char path[PATH_MAX]; /* the file; "" for a table in memory only */
};

/* Whether name can name a project (above). */
bool project_name_ok(const char *name);
/* The project named name, or NULL. */
struct project *projects_find(struct projects *t, const char *name);
const struct project *projects_find_const(const struct projects *t, const char *name);

/* Parses a quota object ({"sessions", "vcpus", "memory_mib", "disk_gib"},
 * each a whole number >= 0 or null for no limit; unknown fields are
 * errors) over *q: fields left out keep their value. Returns 0, or -EINVAL
 * with a reason in err. Pure. */
int project_quota_parse(const json_t *j, struct project_quota *q, char *err, size_t errlen);
/* {"sessions": N|null, ...}; NULL when out of memory. */
json_t *project_quota_json(const struct project_quota *q);

/* The body of POST /v1/projects ({"name", "quota"?, "allow_root"?}) and
 * of PATCH /v1/projects/{name} ({"quota"?, "allow_root"?}: name is NULL
 * there and p comes filled with the project as it is). Returns 0, or
 * -EINVAL with a reason in err. Pure. */
int project_body_parse(const char *body, size_t len, bool create, struct project *p, char *err,
		       size_t errlen);

/* The project template name belongs to ("PROJECT_..." with PROJECT in t),
 * or NULL for the operator's. */
const struct project *project_of_template(const struct projects *t, const char *name);
/* Whether a credential held to project (NULL: the operator's, which sees
 * all) sees template name: its own project's, or the operator's. */
bool project_sees_template(const struct projects *t, const char *project, const char *name);

/* Adds p (its name checked, not yet in t). Returns 0, -EEXIST, -ENOSPC or
 * -EINVAL. Only the table changes: the caller saves. */
int projects_add(struct projects *t, const struct project *p);
/* Takes project name out of the table. Returns 0, or -ENOENT. */
int projects_remove(struct projects *t, const char *name);

/* One project as the API shows it: {name, quota, allow_root, created_at}. */
json_t *project_json(const struct project *p);
/* The file's form: [project_json, ...]; and back (t's path untouched).
 * from_json returns 0, or -EINVAL with a reason in err (t then empty). */
json_t *projects_to_json(const struct projects *t);
int projects_from_json(const json_t *j, struct projects *t, char *err, size_t errlen);

/* Reads path into t (a missing file is no projects) and remembers path.
 * Returns 0, or -errno with a reason in err. */
int projects_load(struct projects *t, const char *path, char *err, size_t errlen);
/* Writes t to its path (mode 0600). Returns 0, or -errno with a reason. */
int projects_save(const struct projects *t, char *err, size_t errlen);

#endif
