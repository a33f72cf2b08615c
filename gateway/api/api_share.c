/* gateway/api/api_share.c: POST /v1/sessions/{id}/share: a short-lived
 * view or control token for the live stream only, and the viewer link that
 * carries it in its fragment (docs/stream.md). Loop thread only. */
#include "common/fsutil.h"
#include "gateway/api/api_int.h"
#include "gateway/session/session.h"
#include "gateway/stream/share.h"
#include "gateway/stream/stream_hub.h"

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

void api_share(struct http_req *r, struct sess *s)
{
	enum auth_scope got = auth_scope_of(r->token, r->gw->operator_key, s->control_hash,
					    s->view_hash),
			want;
	struct stream_hub *h;
	struct api_error e;
	char token[AUTH_TOKEN_LEN + 1];
	const char *scope;
	int ttl_s;

	if (api_share_parse(r->body, r->body_len, &want, &ttl_s, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	scope = want == AUTH_VIEW ? "view" : "control";
	if (got < want) {
		http_reply_error(r, 403, "forbidden",
				 "a token can only share its own scope or less");
		return;
	}
	if (!(h = stream_hub_of(s)) || share_add(&h->shares, want, ttl_s, fs_now_ms(), token) < 0) {
		http_reply_error(r, 500, "internal", "cannot mint a token");
		return;
	}
	http_reply_json(r, 201,
			json_pack("{s:s, s:s, s:i, s:s++++}", "token", token, "scope", scope,
				  "expires_in_s", ttl_s, "url", r->gw->public_url,
				  "/web/#s=", s->id, "&t=", token));
}
