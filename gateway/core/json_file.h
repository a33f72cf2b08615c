/* gateway/core/json_file.h: the small JSON files the operator's tables live
 * in (API keys, projects): read whole with a size bound, written with
 * rename + fsync and mode 0600, every failure a reason naming the file. */
#ifndef VITRINE_GATEWAY_CORE_JSON_FILE_H
#define VITRINE_GATEWAY_CORE_JSON_FILE_H

#include <jansson.h>
#include <stddef.h>

/* Parses the file at path (at most max bytes) into *out. Returns 0, -ENOENT
 * when there is no file (*out NULL, err untouched), or -errno with a reason
 * in err ("PATH: ..."). */
int json_file_read(const char *path, size_t max, json_t **out, char *err, size_t errlen);
/* What a table makes of its file's JSON: 0, or -EINVAL with a reason in
 * err. */
typedef int (*json_file_parse_fn)(const json_t *j, void *table, char *err, size_t errlen);
/* Reads path (at most max bytes) into table through parse: 0 (a missing
 * file too: parse is not called), or -errno with a reason in err that
 * names the file. */
int json_file_load(const char *path, size_t max, json_file_parse_fn parse, void *table, char *err,
		   size_t errlen);
/* Writes j (borrowed) to path, indented, mode 0600, atomically. Returns 0,
 * or -errno with a reason in err. */
int json_file_write(const char *path, const json_t *j, char *err, size_t errlen);

#endif
