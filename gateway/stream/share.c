/* gateway/stream/share.c: see share.h. */
#include "gateway/stream/share.h"

#include <errno.h>
#include <string.h>

int share_add(struct share_table *st, enum auth_scope scope, int ttl_s, int64_t now_ms, char *out)
{
	int slot = -1, rc;

	/* A live share is never evicted to make room: the caller says so. */
	for (int i = 0; i < SHARE_MAX && slot < 0; i++)
		if (!st->t[i].hash[0] || st->t[i].expires_ms <= now_ms)
			slot = i;
	if (slot < 0)
		return -ENOSPC;
	rc = auth_new_token(out);
	if (rc < 0)
		return rc;
	auth_token_hash(out, st->t[slot].hash);
	st->t[slot].scope = scope;
	st->t[slot].expires_ms = now_ms + (int64_t)ttl_s * 1000;
	return 0;
}

int share_live(struct share_table *st, enum auth_scope scope, int ttl_s, int64_t now_ms, char *out)
{
	int newest = -1, slot = -1, rc;

	for (int i = 0; i < SHARE_LIVE_MAX; i++) {
		if (!st->live[i].token[0] || st->live[i].expires_ms <= now_ms) {
			if (slot < 0)
				slot = i;
		} else if (st->live[i].scope == scope &&
			   (newest < 0 || st->live[i].expires_ms > st->live[newest].expires_ms)) {
			newest = i;
		}
	}
	if (newest >= 0 && (st->live[newest].expires_ms - now_ms) * 2 > (int64_t)ttl_s * 1000) {
		memcpy(out, st->live[newest].token, AUTH_TOKEN_LEN + 1);
		return 1;
	}
	if (slot < 0)
		return -ENOSPC;
	rc = auth_new_token(out);
	if (rc < 0)
		return rc;
	memcpy(st->live[slot].token, out, AUTH_TOKEN_LEN + 1);
	auth_token_hash(out, st->live[slot].hash);
	st->live[slot].scope = scope;
	st->live[slot].expires_ms = now_ms + (int64_t)ttl_s * 1000;
	return 0;
}

enum auth_scope share_scope_of_hash(const struct share_table *st, const char *hash, int64_t now_ms)
{
	enum auth_scope got = AUTH_NONE;

	for (int i = 0; i < SHARE_MAX; i++)
		if (st->t[i].hash[0] && auth_equal(st->t[i].hash, hash) &&
		    st->t[i].expires_ms > now_ms)
			got = st->t[i].scope;
	for (int i = 0; i < SHARE_LIVE_MAX; i++)
		if (st->live[i].token[0] && auth_equal(st->live[i].hash, hash) &&
		    st->live[i].expires_ms > now_ms)
			got = st->live[i].scope;
	return got;
}

enum auth_scope share_scope(const struct share_table *st, const char *token, int64_t now_ms)
{
	char h[AUTH_HASH_LEN + 1];

	if (!token || !*token)
		return AUTH_NONE;
	auth_token_hash(token, h);
	return share_scope_of_hash(st, h, now_ms);
}

int share_revoke_all(struct share_table *st, int64_t now_ms)
{
	int live = 0;

	for (int i = 0; i < SHARE_MAX; i++) {
		live += st->t[i].hash[0] && st->t[i].expires_ms > now_ms;
		st->t[i].hash[0] = '\0';
	}
	for (int i = 0; i < SHARE_LIVE_MAX; i++) {
		live += st->live[i].token[0] && st->live[i].expires_ms > now_ms;
		memset(&st->live[i], 0, sizeof(st->live[i]));
	}
	return live;
}
