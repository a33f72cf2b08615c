/* gateway/api/api_share.c: POST /v1/sessions/{id}/share: a short-lived
 * view or control token for the live stream only, and the viewer link that
 * carries it in its fragment (docs/stream.md); DELETE revokes them all. A
 * view link needs the "act" scope (the route checks it), a control link
 * "share" too. Loop thread only. */
#include "common/fsutil.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/session/session.h"
#include "gateway/stream/share.h"
#include "gateway/stream/stream_hub.h"

#include <errno.h>
#include <string.h>

int api_share_parse(const char *body, size_t len, enum auth_scope *want, int *ttl_s,
		    struct api_error *e)
{
	json_t *j = len ? json_loadb(body, len, 0, NULL) : json_object();
	const char *scope = json_string_value(json_object_get(j, "scope"));
	json_t *ttl = json_object_get(j, "ttl_s");
	int rc = 0;

	*ttl_s = SHARE_DEFAULT_TTL_S;
	if (!json_is_object(j)) {
		rc = api_error_set(e, 400, "invalid_json", "the body must be a JSON object");
	} else if (!scope || (strcmp(scope, "view") && strcmp(scope, "control"))) {
		rc = api_error_set(e, 400, "invalid_argument",
				   "scope must be \"view\" or \"control\"");
	} else if (ttl && (!json_is_integer(ttl) || json_integer_value(ttl) < 1 ||
			   json_integer_value(ttl) > SHARE_MAX_TTL_S)) {
		rc = api_error_set(e, 400, "out_of_range", "ttl_s must be an integer in 1..86400");
	} else {
		*want = scope[0] == 'v' ? AUTH_VIEW : AUTH_CONTROL;
		if (ttl)
			*ttl_s = (int)json_integer_value(ttl);
	}
	json_decref(j);
	return rc;
}

/* DELETE: every sharing link of the session stops working, and the live
 * viewers that came with one close within a second (live_auth). */
static void revoke_shares(struct http_req *r, struct sess *s)
{
	struct stream_hub *h = stream_hub_find(s);
	int n = h ? share_revoke_all(&h->shares, fs_now_ms()) : 0;

	api_audit_set(r, "revoked", json_integer(n));
	http_reply_json(r, 200, json_pack("{s:s, s:i}", "id", sess_id(s), "revoked", n));
}

static void mint_share(struct http_req *r, struct sess *s)
{
	unsigned got = sess_rights(r->gw, s, r->token, NULL);
	enum auth_scope want = AUTH_VIEW;
	struct stream_hub *h;
	struct api_error e;
	char token[AUTH_TOKEN_LEN + 1];
	const char *scope;
	int ttl_s, rc;

	if (api_share_parse(r->body, r->body_len, &want, &ttl_s, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	scope = want == AUTH_VIEW ? "view" : "control";
	if (want == AUTH_CONTROL && !(got & AUTH_R_SHARE)) {
		http_reply_error(r, 403, "forbidden",
				 "a control link needs the \"share\" scope (the operator key, or a "
				 "token minted with it)");
		return;
	}
	if (!(h = stream_hub_of(s))) {
		http_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	rc = share_add(&h->shares, want, ttl_s, fs_now_ms(), token);
	if (rc == -ENOSPC) {
		http_reply_error(
			r, 409, "too_many_shares",
			"this session has its maximum of live sharing links (32): revoke them "
			"with DELETE .../share or wait for one to expire");
		return;
	}
	if (rc < 0) {
		http_reply_error(r, 500, "internal", "cannot mint a token");
		return;
	}
	{
		char tid[AUDIT_TOKEN_ID_LEN + 1];

		audit_token_id(token, tid);
		api_audit_set(r, "share",
			      json_pack("{s:s, s:i, s:s}", "scope", scope, "ttl_s", ttl_s,
					"token_id", tid));
	}
	http_reply_json(r, 201,
			json_pack("{s:s, s:s, s:i, s:s++++}", "token", token, "scope", scope,
				  "expires_in_s", ttl_s, "url", r->gw->public_url,
				  "/web/#s=", sess_id(s), "&t=", token));
}

void api_share(struct http_req *r, struct sess *s)
{
	if (r->method != M_DELETE)
		mint_share(r, s);
	else /* its row: "share" too */
		revoke_shares(r, s);
}
