/* gateway/core/key_table.c: see key_table.h. */
#include "gateway/core/key_table.h"

#include "gateway/core/json_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define API_KEYS_FILE_MAX (1 << 20)

bool api_keys_name_ok(const char *name)
{
	size_t n = 0;

	if (!name)
		return false;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++, n++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr(" -_.:@", *p)))
			return false;
	return n <= API_KEY_NAME_MAX;
}

static bool id_ok(const char *id)
{
	if (strlen(id) != API_KEY_ID_LEN || strncmp(id, "key_", 4))
		return false;
	for (const char *p = id + 4; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

static bool hash_ok(const char *h)
{
	if (strlen(h) != AUTH_HASH_LEN)
		return false;
	for (; *h; h++)
		if (!((*h >= 'a' && *h <= 'f') || (*h >= '0' && *h <= '9')))
			return false;
	return true;
}

const struct api_key *api_keys_match(const struct api_keys *t, const char *hash)
{
	const struct api_key *found = NULL;

	if (!hash || !*hash)
		return NULL;
	for (int i = 0; i < t->n; i++)
		if (auth_equal(hash, t->k[i].hash))
			found = &t->k[i];
	return found;
}

static const struct api_key *find_id(const struct api_keys *t, const char *id)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->k[i].id, id))
			return &t->k[i];
	return NULL;
}

const struct api_key *api_keys_add(struct api_keys *t, const char *name, const char *project,
				   int64_t now_unix_ms, char *secret)
{
	static const char hex[] = "0123456789abcdef",
			  alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char raw[20], idraw[8];
	struct api_key *k;

	if (!api_keys_name_ok(name) || (project && *project && !project_name_ok(project))) {
		errno = EINVAL;
		return NULL;
	}
	if (t->n >= API_KEYS_MAX) {
		errno = ENOSPC;
		return NULL;
	}
	k = &t->k[t->n];
	memset(k, 0, sizeof(*k));
	do {
		if (getrandom(idraw, sizeof(idraw), 0) != (ssize_t)sizeof(idraw)) {
			errno = EIO;
			return NULL;
		}
		memcpy(k->id, "key_", 4);
		for (size_t i = 0; i < sizeof(idraw); i++)
			k->id[4 + i] = alnum[idraw[i] % (sizeof(alnum) - 1)];
		k->id[API_KEY_ID_LEN] = '\0';
	} while (find_id(t, k->id));
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		errno = EIO;
		return NULL;
	}
	memcpy(secret, "e2b_", 4);
	for (size_t i = 0; i < sizeof(raw); i++) {
		secret[4 + 2 * i] = hex[raw[i] >> 4];
		secret[5 + 2 * i] = hex[raw[i] & 15];
	}
	secret[API_KEY_SECRET_LEN] = '\0';
	snprintf(k->name, sizeof(k->name), "%s", name);
	snprintf(k->project, sizeof(k->project), "%s", project ? project : "");
	auth_token_hash(secret, k->hash);
	k->created_unix_ms = now_unix_ms;
	t->n++;
	return k;
}

int api_keys_remove(struct api_keys *t, const char *id)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->k[i].id, id)) {
			memmove(&t->k[i], &t->k[i + 1], (size_t)(t->n - i - 1) * sizeof(t->k[0]));
			t->n--;
			return 0;
		}
	return -ENOENT;
}

int api_keys_remove_project(struct api_keys *t, const char *project)
{
	int kept = 0, n = t->n;

	for (int i = 0; i < t->n; i++)
		if (strcmp(t->k[i].project, project))
			t->k[kept++] = t->k[i];
	t->n = kept;
	return n - kept;
}

json_t *api_key_json(const struct api_key *k)
{
	return json_pack("{s:s, s:s, s:s*, s:I, s:s%}", "id", k->id, "name", k->name, "project",
			 k->project[0] ? k->project : NULL, "created_at",
			 (json_int_t)k->created_unix_ms, "prefix", k->hash, (size_t)8);
}

json_t *api_keys_to_json(const struct api_keys *t)
{
	json_t *a = json_array();

	for (int i = 0; a && i < t->n; i++)
		if (json_array_append_new(a,
					  json_pack("{s:s, s:s, s:s, s:I, s:s*}", "id", t->k[i].id,
						    "name", t->k[i].name, "hash", t->k[i].hash,
						    "created_at",
						    (json_int_t)t->k[i].created_unix_ms, "project",
						    t->k[i].project[0] ? t->k[i].project : NULL)) <
		    0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

int api_keys_from_json(const json_t *j, struct api_keys *t, char *err, size_t errlen)
{
	size_t i;
	json_t *e;

	t->n = 0;
	if (!json_is_array(j) || json_array_size(j) > API_KEYS_MAX) {
		snprintf(err, errlen, "not an array of at most %d keys", API_KEYS_MAX);
		return -EINVAL;
	}
	json_array_foreach(j, i, e)
	{
		const char *id = NULL, *name = NULL, *hash = NULL, *project = NULL;
		json_int_t created = 0;
		json_error_t je;
		struct api_key *k = &t->k[t->n];

		if (json_unpack_ex((json_t *)e, &je, JSON_STRICT, "{s:s, s:s, s:s, s:I, s?s}", "id",
				   &id, "name", &name, "hash", &hash, "created_at", &created,
				   "project", &project) < 0 ||
		    !id_ok(id) || !api_keys_name_ok(name) || !hash_ok(hash) || find_id(t, id) ||
		    (project && !project_name_ok(project))) {
			snprintf(err, errlen, "key %zu: %s", i,
				 je.text[0] ? je.text
					    : "bad id, name or hash, or a second of an id");
			t->n = 0;
			return -EINVAL;
		}
		memset(k, 0, sizeof(*k));
		snprintf(k->id, sizeof(k->id), "%s", id);
		snprintf(k->name, sizeof(k->name), "%s", name);
		snprintf(k->hash, sizeof(k->hash), "%s", hash);
		snprintf(k->project, sizeof(k->project), "%s", project ? project : "");
		k->created_unix_ms = created;
		t->n++;
	}
	return 0;
}

/* json_file_load's parse: api_keys_from_json. */
static int parse(const json_t *j, void *table, char *err, size_t errlen)
{
	return api_keys_from_json(j, table, err, errlen);
}

int api_keys_load(struct api_keys *t, const char *path, char *err, size_t errlen)
{
	t->n = 0;
	snprintf(t->path, sizeof(t->path), "%s", path);
	return json_file_load(path, API_KEYS_FILE_MAX, parse, t, err, errlen);
}

int api_keys_save(const struct api_keys *t, char *err, size_t errlen)
{
	json_t *j = api_keys_to_json(t);
	int rc = json_file_write(t->path, j, err, errlen);

	json_decref(j);
	return rc;
}
