/* gateway/session/usage_log.c: see usage_log.h. */
#include "gateway/session/usage_log.h"

#include "common/fsutil.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct usage_log {
	char path[PATH_MAX];
	size_t retention;
	json_t *entries; /* array, oldest first, at most retention */
};

int usage_overlaps(int64_t created, int64_t ended, int64_t from, int64_t to)
{
	if (to && created > to)
		return 0;
	if (from && ended && ended < from)
		return 0;
	return 1;
}

static void keep_newest(struct usage_log *l)
{
	while (json_array_size(l->entries) > l->retention)
		json_array_remove(l->entries, 0);
}

/* Rewrites the file with the entries in memory (atomically: a temp file
 * renamed over it). */
static int rewrite(struct usage_log *l)
{
	char tmp[PATH_MAX + 8];
	FILE *f;
	size_t i;
	json_t *e;
	int rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", l->path);
	if (!(f = fopen(tmp, "we")))
		return -errno;
	json_array_foreach(l->entries, i, e)
	{
		char *line = json_dumps(e, JSON_COMPACT);

		if (!line || fprintf(f, "%s\n", line) < 0)
			rc = -EIO;
		free(line);
	}
	if (fclose(f) != 0)
		rc = -EIO;
	if (rc == 0 && rename(tmp, l->path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

struct usage_log *usage_log_open(const char *dir, size_t retention, char *err, size_t errlen)
{
	struct usage_log *l = calloc(1, sizeof(*l));
	char *text = NULL;
	size_t len = 0, lines = 0;
	int rc;

	if (!l || !(l->entries = json_array())) {
		free(l);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(l->path, sizeof(l->path), "%s/usage.jsonl", dir);
	l->retention = retention ? retention : USAGE_LOG_DEFAULT_RETENTION;
	rc = fs_read_file(l->path, 1u << 30, &text, &len);
	if (rc < 0 && rc != -ENOENT) {
		snprintf(err, errlen, "%s: %s", l->path, strerror(-rc));
		usage_log_close(l);
		return NULL;
	}
	for (char *p = text; p && p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		json_t *e;

		if (nl)
			*nl = '\0';
		if (*p && (e = json_loads(p, 0, NULL))) {
			if (json_is_object(e))
				json_array_append(l->entries, e);
			json_decref(e);
			lines++;
		}
		p = nl ? nl + 1 : text + len;
		if (json_array_size(l->entries) > 2 * l->retention)
			keep_newest(l);
	}
	free(text);
	keep_newest(l);
	if (lines > 2 * l->retention && (rc = rewrite(l)) < 0)
		log_warn("usage", "%s: cannot compact it: %s", l->path, strerror(-rc));
	return l;
}

void usage_log_close(struct usage_log *l)
{
	if (!l)
		return;
	json_decref(l->entries);
	free(l);
}

void usage_log_add(struct usage_log *l, json_t *entry)
{
	char *line;
	int fd;

	if (!l || !entry) {
		json_decref(entry);
		return;
	}
	line = json_dumps(entry, JSON_COMPACT);
	fd = open(l->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (!line || fd < 0 || dprintf(fd, "%s\n", line) < 0)
		log_warn("usage", "%s: cannot append a session's usage: %s", l->path,
			 strerror(errno));
	if (fd >= 0)
		close(fd);
	free(line);
	json_array_append_new(l->entries, entry);
	keep_newest(l);
}

void usage_log_select(const struct usage_log *l, int64_t from_ms, int64_t to_ms, json_t *out)
{
	size_t i;
	json_t *e;

	if (!l)
		return;
	json_array_foreach(l->entries, i, e)
	{
		json_int_t c = json_integer_value(json_object_get(e, "created_unix_ms")),
			   d = json_integer_value(json_object_get(e, "ended_unix_ms"));

		if (usage_overlaps(c, d, from_ms, to_ms))
			json_array_append(out, e);
	}
}
