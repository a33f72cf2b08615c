/* gateway/api/api_tokens.c: a session's tokens, for the operator alone:
 * GET and POST /v1/sessions/{id}/tokens (list; mint one with chosen scopes
 * and a lifetime), DELETE .../tokens/{tid} (revoke) and POST
 * .../tokens/{control|view}/rotate (a new secret). A secret is in the
 * answer that makes it and nowhere else. Each change is in the session's
 * record before it is answered; one that cannot be recorded is undone and
 * answered 500 not_recorded (a revoke that answered 200 must hold after a
 * restart). docs/api.md "Tokens and their rights". Loop thread only. */
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/session/live_auth.h"
#include "gateway/session/session.h"

#include <errno.h>
#include <string.h>

#define TOKEN_MAX_TTL_S (30 * 86400)

static json_t *scope_names(unsigned rights)
{
	json_t *a = json_array();

	for (unsigned b = 1; b & AUTH_RIGHTS_MINTABLE; b <<= 1)
		if (rights & b)
			json_array_append_new(a, json_string(auth_right_name(b)));
	return a;
}

static json_t *grant_json(const struct auth_grant *g)
{
	return json_pack("{s:s, s:o, s:o}", "id", g->id, "scopes", scope_names(g->rights),
			 "expires_unix_ms",
			 g->expires_unix_ms ? json_integer(g->expires_unix_ms) : json_null());
}

static void list_tokens(struct http_req *r, struct sess *s)
{
	json_t *a = json_array();
	const struct auth_grant *g;
	int n;

	json_array_append_new(a, json_pack("{s:s, s:o, s:b}", "id", "control", "scopes",
					   scope_names(AUTH_RIGHTS_CONTROL), "live",
					   sess_token_live(s, "control")));
	json_array_append_new(a, json_pack("{s:s, s:o, s:b}", "id", "view", "scopes",
					   scope_names(AUTH_RIGHTS_VIEW), "live",
					   sess_token_live(s, "view")));
	g = sess_grants(s, &n);
	for (int i = 0; i < n; i++)
		json_array_append_new(a, grant_json(&g[i]));
	http_reply_json(r, 200, json_pack("{s:o}", "tokens", a));
}

/* {"scopes": [NAME...], "ttl_s": N}: the rights, *ttl_s (0: the session's
 * life). Answers 400 and returns -EINVAL on anything else. */
static int mint_args(struct http_req *r, unsigned *rights, int *ttl_s)
{
	json_t *body = json_loadb(r->body ? r->body : "", r->body_len, JSON_REJECT_DUPLICATES,
				  NULL);
	json_t *scopes = json_object_get(body, "scopes"), *ttl = json_object_get(body, "ttl_s"), *v;
	const char *key;
	size_t i;
	int rc = -EINVAL;

	*rights = 0;
	*ttl_s = 0;
	if (!json_is_object(body)) {
		http_reply_error(r, 400, "invalid_json", "the body must be a JSON object");
		goto out;
	}
	json_object_foreach(body, key, v)
	{
		if (strcmp(key, "scopes") && strcmp(key, "ttl_s")) {
			http_reply_error(r, 400, "invalid_argument",
					 "unknown field: only 'scopes' and 'ttl_s'");
			goto out;
		}
	}
	if (!json_is_array(scopes) || !json_array_size(scopes)) {
		http_reply_error(
			r, 400, "invalid_argument",
			"scopes must be a non-empty array of: view, act, exec, root, egress, "
			"fork, share, vnc");
		goto out;
	}
	json_array_foreach(scopes, i, v)
	{
		unsigned b = auth_right_by_name(json_string_value(v));

		if (!b) {
			http_reply_error(r, 400, "invalid_argument",
					 "unknown scope: the scopes are view, act, exec, root, "
					 "egress, fork, share, vnc");
			goto out;
		}
		*rights |= b;
	}
	if (ttl && (!json_is_integer(ttl) || json_integer_value(ttl) < 1 ||
		    json_integer_value(ttl) > TOKEN_MAX_TTL_S)) {
		http_reply_error(r, 400, "out_of_range", "ttl_s must be an integer in 1..2592000");
		goto out;
	}
	*ttl_s = ttl ? (int)json_integer_value(ttl) : 0;
	rc = 0;
out:
	json_decref(body);
	return rc;
}

static void mint(struct http_req *r, struct sess *s)
{
	const struct auth_grant *g;
	char token[AUTH_TOKEN_LEN + 1];
	struct api_error e;
	unsigned rights;
	int ttl_s;
	json_t *j;

	if (mint_args(r, &rights, &ttl_s) < 0)
		return;
	/* No more than the minter holds (a project's key may lack "root"). */
	if (!api_authorise(r, s, rights))
		return;
	if (!(g = sess_grant_add(s, rights, ttl_s, token, &e))) {
		http_reply_api_error(r, &e);
		return;
	}
	j = grant_json(g);
	api_audit_set(r, "grant",
		      json_pack("{s:s, s:s%, s:O}", "id", g->id, "token_id", g->hash,
				(size_t)AUDIT_TOKEN_ID_LEN, "scopes",
				json_object_get(j, "scopes") ? json_object_get(j, "scopes")
							     : json_null()));
	json_object_set_new(j, "token", json_string(token));
	http_reply_json(r, 201, j);
}

void api_tokens(struct http_req *r)
{
	struct sess *s = api_route_session(r);

	if (!s)
		return;
	if (r->method == M_GET)
		list_tokens(r, s);
	else
		mint(r, s);
}

void api_token_revoke(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	int rc;

	if (!s)
		return;
	api_audit_set(r, "grant", json_pack("{s:s}", "id", r->route.sub));
	rc = sess_grant_revoke(s, r->route.sub);
	if (rc == -ENOENT) {
		http_reply_error(r, 404, "not_found", "no such live token on this session");
		return;
	}
	if (rc < 0) {
		http_reply_error(r, 500, "not_recorded",
				 "the session's record could not be written; the token was not "
				 "revoked and still works");
		return;
	}
	live_auth_check_all(); /* its connections close now, not within a second */
	http_reply_json(r, 200, json_pack("{s:s, s:b}", "id", r->route.sub, "revoked", 1));
}

void api_token_rotate(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	char token[AUTH_TOKEN_LEN + 1], tid[AUDIT_TOKEN_ID_LEN + 1];
	struct api_error e;

	if (!s)
		return;
	if (sess_token_rotate(s, r->route.sub, token, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	live_auth_check_all();
	audit_token_id(token, tid);
	api_audit_set(r, "grant", json_pack("{s:s, s:s}", "id", r->route.sub, "token_id", tid));
	http_reply_json(r, 200, json_pack("{s:s, s:s}", "id", r->route.sub, "token", token));
}
