/* gateway/stream/share.c: see share.h. */
#include "gateway/stream/share.h"

#include <string.h>

int share_add(struct share_table *st, enum auth_scope scope, int ttl_s, int64_t now_ms, char *out)
{
	int slot = 0, rc;

	for (int i = 0; i < SHARE_MAX; i++) {
		if (!st->t[i].token[0] || st->t[i].expires_ms <= now_ms) {
			slot = i;
			break;
		}
		if (st->t[i].expires_ms < st->t[slot].expires_ms)
			slot = i;
	}
	rc = auth_new_token(out);
	if (rc < 0)
		return rc;
	memcpy(st->t[slot].token, out, AUTH_TOKEN_LEN + 1);
	st->t[slot].scope = scope;
	st->t[slot].expires_ms = now_ms + (int64_t)ttl_s * 1000;
	return 0;
}

enum auth_scope share_scope(const struct share_table *st, const char *token, int64_t now_ms)
{
	enum auth_scope got = AUTH_NONE;

	for (int i = 0; i < SHARE_MAX; i++)
		if (st->t[i].token[0] && auth_equal(st->t[i].token, token) &&
		    st->t[i].expires_ms > now_ms)
			got = st->t[i].scope;
	return got;
}
