/* gateway/session/registry.c: see registry.h. */
#include "gateway/session/registry.h"

#include "common/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORD_MAX (1u << 20)

bool registry_id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9')))
			return false;
	return true;
}

int registry_open(struct registry *r, const char *dir, char *err, size_t errlen)
{
	char lock[PATH_MAX];
	int rc;

	r->lock_fd = -1;
	if ((size_t)snprintf(r->dir, sizeof(r->dir), "%s", dir) >= sizeof(r->dir)) {
		snprintf(err, errlen, "state dir %s: name too long", dir);
		return -ENAMETOOLONG;
	}
	rc = fs_mkdir_p(dir, 0700);
	if (rc < 0) {
		snprintf(err, errlen, "create %s: %s", dir, strerror(-rc));
		return rc;
	}
	snprintf(lock, sizeof(lock), "%s/.lock", dir);
	if ((rc = fs_lock_file(lock, 0, err, errlen)) < 0) {
		if (rc == -EBUSY)
			snprintf(err, errlen, "%s is in use by another gateway (it holds .lock)",
				 dir);
		return rc;
	}
	r->lock_fd = rc;
	r->locked = true;
	return 0;
}

void registry_close(struct registry *r)
{
	if (r->locked)
		close(r->lock_fd); /* the lock goes with it */
	r->locked = false;
	r->lock_fd = -1;
}

int registry_path(const struct registry *r, const char *id, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/%s.json", r->dir, id) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int registry_write(const struct registry *r, const char *id, const json_t *rec)
{
	char path[PATH_MAX], *text;
	int rc;

	if (!registry_id_ok(id) || registry_path(r, id, path, sizeof(path)) < 0)
		return -EINVAL;
	if (!(text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS)))
		return -ENOMEM;
	rc = fs_write_file_atomic(path, text, strlen(text), 0600);
	free(text);
	return rc;
}

int registry_remove(const struct registry *r, const char *id)
{
	char path[PATH_MAX];

	if (!registry_id_ok(id) || registry_path(r, id, path, sizeof(path)) < 0)
		return -EINVAL;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* The names in dir, read before any is looked at: handling one may
 * rewrite records (a rename adds a directory entry), which readdir could
 * then return again. NULL-terminated, or NULL with *err set. */
static char **list_names(const char *dir, int *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, **grown;
	size_t n = 0, cap = 0;

	if (!d) {
		*err = -errno;
		return NULL;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n + 2 > cap) {
			cap = cap ? cap * 2 : 64;
			if (!(grown = realloc(names, cap * sizeof(*names))))
				break;
			names = grown;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		names[++n] = NULL;
	}
	closedir(d);
	if (!names && !(names = calloc(1, sizeof(*names))))
		*err = -ENOMEM;
	return names;
}

int registry_each(const struct registry *r, registry_each_fn fn, void *ud)
{
	int n = 0, err = 0;
	char **names = list_names(r->dir, &err);

	if (!names)
		return err;
	for (char **name = names; *name; name++) {
		char path[PATH_MAX + 256], id[64], why[512], *text = NULL;
		size_t len = strlen(*name);
		json_error_t jerr;
		json_t *rec;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", r->dir, *name);
		if (strstr(*name, ".tmp-")) {
			unlink(path); /* a write that never reached its rename */
			continue;
		}
		if (len < 6 || strcmp(*name + len - 5, ".json") || len - 5 >= sizeof(id) ||
		    !strcmp(*name, REGISTRY_KEYS_FILE) || !strcmp(*name, REGISTRY_PROJECTS_FILE) ||
		    !strcmp(*name, REGISTRY_POOLS_FILE))
			continue;
		snprintf(id, sizeof(id), "%.*s", (int)(len - 5), *name);
		n++;
		rc = fs_read_file(path, RECORD_MAX, &text, NULL);
		if (rc < 0) {
			snprintf(why, sizeof(why), "cannot read %.256s: %s", *name, strerror(-rc));
			fn(ud, id, NULL, why);
			continue;
		}
		rec = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
		free(text);
		if (!json_is_object(rec)) {
			snprintf(why, sizeof(why), "%.256s is not a JSON object: %.200s", *name,
				 rec ? "another JSON value" : jerr.text);
			fn(ud, id, NULL, why);
		} else {
			fn(ud, id, rec, NULL);
		}
		json_decref(rec);
	}
	for (char **name = names; *name; name++)
		free(*name);
	free(names);
	return n;
}
