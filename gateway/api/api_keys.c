/* gateway/api/api_keys.c: the routes of API keys (core/key_table.h): GET
 * /v1/keys lists them all (never a secret or a hash), POST /v1/keys
 * {"name"?} makes an admin key and shows its secret this once, GET and POST
 * /v1/projects/{name}/keys do the same for a project's keys, DELETE
 * /v1/keys/{id} revokes any and DELETE /v1/projects/{name}/keys/{id} one of
 * that project's (live sockets it opened close within a second, as for
 * revoked tokens). Only the operator key itself manages keys: an
 * admin key may do everything else the operator key does, a project's key
 * what its project may. Every change is on disk before it is answered. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/api/bodies.h"
#include "gateway/core/audit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* The operator key itself, or an answer (401 or 403) and false. */
static bool operator_only(struct http_req *r)
{
	char h[AUTH_HASH_LEN + 1];

	if (!api_authorise_route(r))
		return false;
	auth_token_hash(r->token, h);
	if (auth_equal(h, r->gw->operator_hash))
		return true;
	http_reply_error(r, 403, "forbidden",
			 "API keys are managed with the operator key (the key file's) alone");
	return false;
}

/* project: the keys of that project alone (NULL: every key). */
static void list_keys(struct http_req *r, const char *project)
{
	json_t *a = json_array();

	for (int i = 0; a && i < r->gw->api_keys.n; i++)
		if (!project || !strcmp(r->gw->api_keys.k[i].project, project))
			json_array_append_new(a, api_key_json(&r->gw->api_keys.k[i]));
	http_reply_json(r, 200, json_pack("{s:o}", "keys", a ? a : json_array()));
}

/* project: a key of that project ("" an admin key). */
static void make_key(struct http_req *r, const char *project)
{
	char name[API_KEY_NAME_MAX + 1], secret[API_KEY_SECRET_LEN + 1], err[PATH_MAX + 64];
	const struct api_key *k;
	struct api_error e;
	json_t *j;

	if (api_keys_parse(r->body ? r->body : "", r->body_len, name, sizeof(name), &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	if (!(k = api_keys_add(&r->gw->api_keys, name, project, fs_unix_ms(), secret))) {
		if (errno == ENOSPC)
			http_reply_error(r, 409, "too_many_keys",
					 "there are " STR(API_KEYS_MAX) " API keys already: revoke "
									"one first");
		else
			http_reply_error(r, 500, "internal", "no randomness for a key");
		return;
	}
	if (api_keys_save(&r->gw->api_keys, err, sizeof(err)) < 0) {
		log_error("api keys", "%s", err);
		api_keys_remove(&r->gw->api_keys, k->id);
		http_reply_error(r, 500, "internal", "the key could not be saved");
		return;
	}
	log_info("api keys", "%s made (%s)", k->id, k->name[0] ? k->name : "no name");
	j = api_key_json(k);
	api_audit_set(r, "key",
		      json_pack("{s:s, s:s, s:s%, s:s*}", "id", k->id, "name", k->name, "token_id",
				k->hash, (size_t)AUDIT_TOKEN_ID_LEN, "project",
				k->project[0] ? k->project : NULL));
	json_object_set_new(j, "key", json_string(secret));
	http_reply_json(r, 201, j);
}

/* id: the key's; project: the project it must be of (NULL: any). */
static void revoke_key(struct http_req *r, const char *id, const char *project)
{
	struct api_keys *t = &r->gw->api_keys;
	char err[PATH_MAX + 64];
	struct api_key gone;
	int i;

	for (i = 0; i < t->n && strcmp(t->k[i].id, id); i++)
		;
	if (i == t->n || (project && strcmp(t->k[i].project, project))) {
		http_reply_error(r, 404, "unknown_key", "no API key has that id");
		return;
	}
	gone = t->k[i];
	api_keys_remove(t, gone.id);
	if (api_keys_save(t, err, sizeof(err)) < 0) {
		log_error("api keys", "%s", err);
		t->k[t->n++] = gone; /* still on disk: still valid */
		http_reply_error(r, 500, "internal", "the revocation could not be saved");
		return;
	}
	log_info("api keys", "%s revoked", gone.id);
	api_audit_set(r, "key",
		      json_pack("{s:s, s:s, s:s%}", "id", gone.id, "name", gone.name, "token_id",
				gone.hash, (size_t)AUDIT_TOKEN_ID_LEN));
	http_reply_json(r, 200, json_pack("{s:s, s:b}", "id", gone.id, "revoked", 1));
}

void api_keys(struct http_req *r)
{
	const char *project = NULL;

	if (!operator_only(r))
		return;
	if (r->route.kind == R_PROJECT_KEYS || r->route.kind == R_PROJECT_KEY) {
		if (!projects_find(&r->gw->projects, r->route.id)) {
			http_reply_error(r, 404, "unknown_project", "no such project");
			return;
		}
		project = r->route.id;
	}
	if (r->route.kind == R_KEY_DELETE || r->route.kind == R_PROJECT_KEY)
		revoke_key(r, r->route.kind == R_KEY_DELETE ? r->route.id : r->route.sub, project);
	else if (r->method == M_POST)
		make_key(r, project ? project : "");
	else
		list_keys(r, project);
}
