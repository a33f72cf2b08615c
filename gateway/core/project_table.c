/* gateway/core/project_table.c: see project_table.h. */
#include "gateway/core/project_table.h"

#include "gateway/core/json_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROJECTS_FILE_MAX (1 << 20)
/* Far past any host: a quota above it is a typo, not a limit. */
#define QUOTA_VALUE_MAX (1LL << 40)

const char *const project_quota_names[QUOTA_N] = {
	[QUOTA_SESSIONS] = "sessions",
	[QUOTA_VCPUS] = "vcpus",
	[QUOTA_MEMORY_MIB] = "memory_mib",
	[QUOTA_DISK_GIB] = "disk_gib",
};

static int64_t *quota_field(struct project_quota *q, enum project_quota_kind k)
{
	switch (k) {
	case QUOTA_SESSIONS:
		return &q->sessions;
	case QUOTA_VCPUS:
		return &q->vcpus;
	case QUOTA_MEMORY_MIB:
		return &q->memory_mib;
	default:
		return &q->disk_gib;
	}
}

int64_t project_quota_get(const struct project_quota *q, enum project_quota_kind k)
{
	return *quota_field((struct project_quota *)q, k);
}

bool project_name_ok(const char *name)
{
	size_t n;

	if (!name || !(name[0] >= 'a' && name[0] <= 'z'))
		return false;
	for (n = 0; name[n]; n++)
		if (!((name[n] >= 'a' && name[n] <= 'z') || (name[n] >= '0' && name[n] <= '9') ||
		      name[n] == '-'))
			return false;
	return n <= PROJECT_NAME_MAX;
}

const struct project *projects_find_const(const struct projects *t, const char *name)
{
	for (int i = 0; name && i < t->n; i++)
		if (!strcmp(t->p[i].name, name))
			return &t->p[i];
	return NULL;
}

struct project *projects_find(struct projects *t, const char *name)
{
	return (struct project *)projects_find_const(t, name);
}

int project_quota_parse(const json_t *j, struct project_quota *q, char *err, size_t errlen)
{
	struct project_quota out = *q;
	const char *key;
	json_t *v;

	if (!json_is_object(j)) {
		snprintf(err, errlen, "\"quota\" must be an object");
		return -EINVAL;
	}
	json_object_foreach((json_t *)j, key, v)
	{
		int k;

		for (k = 0; k < QUOTA_N && strcmp(key, project_quota_names[k]); k++)
			;
		if (k == QUOTA_N) {
			snprintf(err, errlen,
				 "unknown quota \"%.64s\" (sessions, vcpus, memory_mib, disk_gib)",
				 key);
			return -EINVAL;
		}
		if (json_is_null(v)) {
			*quota_field(&out, k) = PROJECT_NO_LIMIT;
			continue;
		}
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > QUOTA_VALUE_MAX) {
			snprintf(err, errlen,
				 "quota \"%s\" must be a whole number from 0 to 2^40, or null for "
				 "no limit",
				 key);
			return -EINVAL;
		}
		*quota_field(&out, k) = json_integer_value(v);
	}
	*q = out;
	return 0;
}

json_t *project_quota_json(const struct project_quota *q)
{
	json_t *o = json_object();

	for (int k = 0; o && k < QUOTA_N; k++) {
		int64_t v = project_quota_get(q, k);

		if (json_object_set_new(o, project_quota_names[k],
					v == PROJECT_NO_LIMIT ? json_null() : json_integer(v)) <
		    0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* p's fields from o (the keys already checked). */
static int fields_parse(json_t *o, bool create, struct project *p, char *err, size_t errlen)
{
	json_t *v;

	if (create) {
		v = json_object_get(o, "name");
		if (!json_is_string(v) || !project_name_ok(json_string_value(v))) {
			snprintf(err, errlen,
				 "\"name\" must be 1..%d of [a-z0-9-], starting with a letter",
				 PROJECT_NAME_MAX);
			return -EINVAL;
		}
		snprintf(p->name, sizeof(p->name), "%s", json_string_value(v));
	}
	if ((v = json_object_get(o, "allow_root"))) {
		if (!json_is_boolean(v)) {
			snprintf(err, errlen, "\"allow_root\" must be true or false");
			return -EINVAL;
		}
		p->allow_root = json_is_true(v);
	}
	if ((v = json_object_get(o, "quota")))
		return project_quota_parse(v, &p->quota, err, errlen);
	return 0;
}

int project_body_parse(const char *body, size_t len, bool create, struct project *p, char *err,
		       size_t errlen)
{
	struct project out = *p;
	json_error_t je;
	const char *key;
	json_t *o, *v;
	int rc = 0;

	if (create) {
		memset(&out, 0, sizeof(out));
		out.quota = (struct project_quota){ PROJECT_NO_LIMIT, PROJECT_NO_LIMIT,
						    PROJECT_NO_LIMIT, PROJECT_NO_LIMIT };
	}
	if (!(o = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je)) ||
	    !json_is_object(o)) {
		snprintf(err, errlen, "the body must be a JSON object%s%s", o ? "" : ": ",
			 o ? "" : je.text);
		json_decref(o);
		return -EINVAL;
	}
	json_object_foreach(o, key, v) if (strcmp(key, "quota") && strcmp(key, "allow_root") &&
					   (!create || strcmp(key, "name")))
	{
		snprintf(err, errlen, "unknown field \"%.64s\"", key);
		rc = -EINVAL;
		break;
	}
	if (!rc)
		rc = fields_parse(o, create, &out, err, errlen);
	json_decref(o);
	if (!rc)
		*p = out;
	return rc;
}

const struct project *project_of_template(const struct projects *t, const char *name)
{
	const char *us = name ? strchr(name, '_') : NULL;
	char prefix[PROJECT_NAME_MAX + 1];

	if (!us || us == name || (size_t)(us - name) > PROJECT_NAME_MAX)
		return NULL;
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(us - name), name);
	return projects_find_const(t, prefix);
}

bool project_sees_template(const struct projects *t, const char *project, const char *name)
{
	const struct project *owner = project_of_template(t, name);

	return !project || !owner || !strcmp(owner->name, project);
}

int projects_add(struct projects *t, const struct project *p)
{
	if (!project_name_ok(p->name))
		return -EINVAL;
	if (projects_find(t, p->name))
		return -EEXIST;
	if (t->n >= PROJECTS_MAX)
		return -ENOSPC;
	t->p[t->n++] = *p;
	return 0;
}

int projects_remove(struct projects *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->p[i].name, name)) {
			memmove(&t->p[i], &t->p[i + 1], (size_t)(t->n - i - 1) * sizeof(t->p[0]));
			t->n--;
			return 0;
		}
	return -ENOENT;
}

json_t *project_json(const struct project *p)
{
	return json_pack("{s:s, s:o*, s:b, s:I}", "name", p->name, "quota",
			 project_quota_json(&p->quota), "allow_root", p->allow_root, "created_at",
			 (json_int_t)p->created_unix_ms);
}

json_t *projects_to_json(const struct projects *t)
{
	json_t *a = json_array();

	for (int i = 0; a && i < t->n; i++) {
		json_t *j = project_json(&t->p[i]);

		if (!j || json_array_append_new(a, j) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

int projects_from_json(const json_t *j, struct projects *t, char *err, size_t errlen)
{
	size_t i;
	json_t *e;

	t->n = 0;
	if (!json_is_array(j) || json_array_size(j) > PROJECTS_MAX) {
		snprintf(err, errlen, "not an array of at most %d projects", PROJECTS_MAX);
		return -EINVAL;
	}
	json_array_foreach(j, i, e)
	{
		struct project p = { .quota = { PROJECT_NO_LIMIT, PROJECT_NO_LIMIT,
						PROJECT_NO_LIMIT, PROJECT_NO_LIMIT } };
		const char *name = NULL;
		json_t *quota = NULL;
		json_int_t created = 0;
		int allow_root = 0;
		json_error_t je;
		char why[160] = "";

		if (json_unpack_ex(e, &je, JSON_STRICT, "{s:s, s:o, s:b, s:I}", "name", &name,
				   "quota", &quota, "allow_root", &allow_root, "created_at",
				   &created) < 0 ||
		    !project_name_ok(name) ||
		    project_quota_parse(quota, &p.quota, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "project %zu: %s", i,
				 why[0]	      ? why
				 : je.text[0] ? je.text
					      : "bad name");
			t->n = 0;
			return -EINVAL;
		}
		snprintf(p.name, sizeof(p.name), "%s", name);
		p.allow_root = allow_root;
		p.created_unix_ms = created;
		if (projects_add(t, &p) < 0) {
			snprintf(err, errlen, "project %zu: a second \"%s\"", i, name);
			t->n = 0;
			return -EINVAL;
		}
	}
	return 0;
}

/* json_file_load's parse: projects_from_json. */
static int parse(const json_t *j, void *table, char *err, size_t errlen)
{
	return projects_from_json(j, table, err, errlen);
}

int projects_load(struct projects *t, const char *path, char *err, size_t errlen)
{
	t->n = 0;
	snprintf(t->path, sizeof(t->path), "%s", path);
	return json_file_load(path, PROJECTS_FILE_MAX, parse, t, err, errlen);
}

int projects_save(const struct projects *t, char *err, size_t errlen)
{
	json_t *j = projects_to_json(t);
	int rc = json_file_write(t->path, j, err, errlen);

	json_decref(j);
	return rc;
}
