/* gateway/core/json_file.c: see json_file.h. */
#include "gateway/core/json_file.h"

#include "common/fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int json_file_read(const char *path, size_t max, json_t **out, char *err, size_t errlen)
{
	char *data = NULL;
	size_t len = 0;
	json_error_t je;
	int rc;

	*out = NULL;
	rc = fs_read_file(path, max, &data, &len);
	if (rc == -ENOENT)
		return rc;
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	*out = json_loadb(data, len, 0, &je);
	free(data);
	if (!*out) {
		snprintf(err, errlen, "%s: line %d: %s", path, je.line, je.text);
		return -EINVAL;
	}
	return 0;
}

int json_file_load(const char *path, size_t max, json_file_parse_fn parse, void *table, char *err,
		   size_t errlen)
{
	json_t *j;
	int rc = json_file_read(path, max, &j, err, errlen);

	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	rc = parse(j, table, err, errlen);
	json_decref(j);
	if (rc < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", path, why);
	}
	return rc;
}

int json_file_write(const char *path, const json_t *j, char *err, size_t errlen)
{
	char *text = j ? json_dumps(j, JSON_INDENT(1)) : NULL;
	int rc = text ? fs_write_file_atomic(path, text, strlen(text), 0600) : -ENOMEM;

	if (rc < 0)
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	free(text);
	return rc;
}
