/* gateway/session/session_grants.c: a session's credentials beyond the two
 * it is born with: tokens the operator mints with chosen rights and an end,
 * revocation, and new secrets for the control and view tokens. Only hashes
 * are kept (in memory and in the session's record), and every change is
 * recorded before it is answered: one whose record cannot be written is
 * undone (and answered 500), so what a restart finds is what was said.
 * Connections that authenticated with a token that no longer holds are
 * closed once live_auth.c re-checks them. Loop thread only. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/session/session_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A project key's rights on s (NULL: no session, its project's routes):
 * nothing on another project's session, nothing once its project is gone;
 * "root" only where its project allows it. */
static unsigned project_key_rights(struct gw *gw, const struct api_key *k, const struct sess *s)
{
	const struct project *p = projects_find_const(&gw->projects, k->project);

	if (!p || (s && strcmp(s->req.project, p->name)))
		return 0;
	return AUTH_RIGHTS_PROJECT & ~(p->allow_root ? 0u : (unsigned)AUTH_R_ROOT);
}

unsigned sess_rights_of_hash(struct gw *gw, const struct sess *s, const char *hash,
			     const char **which)
{
	unsigned rights = auth_rights_of_hash(hash, gw->operator_hash, s ? s->control_hash : NULL,
					      s ? s->view_hash : NULL, s ? s->grants : NULL,
					      s ? s->n_grants : 0, fs_unix_ms(), which);
	const struct api_key *k = api_keys_match(&gw->api_keys, hash);

	/* An admin key has the operator key's rights (not to manage keys: that
	 * asks for which == "operator"); a project's key its project's. */
	if (k && !(rights & AUTH_R_ADMIN)) {
		rights = k->project[0] ? project_key_rights(gw, k, s) : AUTH_RIGHTS_OPERATOR;
		if (which)
			*which = k->id;
	}
	return rights;
}

const char *sess_project_of_hash(struct gw *gw, const char *hash)
{
	const struct api_key *k = api_keys_match(&gw->api_keys, hash);

	return k && k->project[0] ? k->project : NULL;
}

const char *sess_project_of(struct gw *gw, const char *token)
{
	char h[AUTH_HASH_LEN + 1];

	if (!token || !*token)
		return NULL;
	auth_token_hash(token, h);
	return sess_project_of_hash(gw, h);
}

bool sess_in_project(const struct sess *s, const char *project)
{
	return !project || !strcmp(s->req.project, project);
}

unsigned sess_rights(struct gw *gw, const struct sess *s, const char *token, const char **which)
{
	char h[AUTH_HASH_LEN + 1];

	if (!token || !*token) {
		if (which)
			*which = "";
		return 0;
	}
	auth_token_hash(token, h);
	return sess_rights_of_hash(gw, s, h, which);
}

/* Drops grants that ended; true when any did. */
static bool drop_expired(struct sess *s)
{
	int64_t now = fs_unix_ms();
	int kept = 0;

	for (int i = 0; i < s->n_grants; i++)
		if (!s->grants[i].expires_unix_ms || s->grants[i].expires_unix_ms > now)
			s->grants[kept++] = s->grants[i];
	if (kept == s->n_grants)
		return false;
	s->n_grants = kept;
	return true;
}

/* The error a credential change answers when its record cannot be
 * written (the change is rolled back first). */
static int not_recorded(struct sess *s, int rc, struct api_error *e)
{
	log_error("session", "%s: cannot write its record: %s (a token change is undone)", s->id,
		  strerror(-rc));
	if (e)
		api_error_set(e, 500, "not_recorded",
			      "the session's record could not be written; nothing was changed");
	return rc;
}

const struct auth_grant *sess_grant_add(struct sess *s, unsigned rights, int ttl_s, char *token,
					struct api_error *e)
{
	struct auth_grant *g;
	int rc;

	drop_expired(s);
	if (s->n_grants >= SESS_GRANTS_MAX) {
		api_error_set(e, 409, "too_many_tokens",
			      "this session has its maximum of live minted tokens: revoke one");
		return NULL;
	}
	g = &s->grants[s->n_grants];
	memset(g, 0, sizeof(*g));
	if (auth_new_token(token) < 0 || auth_new_grant_id(g->id) < 0) {
		api_error_set(e, 500, "internal", "no randomness to mint a token");
		return NULL;
	}
	auth_token_hash(token, g->hash);
	g->rights = rights & AUTH_RIGHTS_MINTABLE;
	g->expires_unix_ms = ttl_s ? fs_unix_ms() + (int64_t)ttl_s * 1000 : 0;
	s->n_grants++;
	if ((rc = sess_save_checked(s)) < 0) {
		s->n_grants--;
		memset(token, 0, AUTH_TOKEN_LEN + 1);
		not_recorded(s, rc, e);
		return NULL;
	}
	return g;
}

/* Revokes the control or view token (which names it). */
static int revoke_own(struct sess *s, bool control)
{
	char *hash = control ? s->control_hash : s->view_hash;
	char *token = control ? s->control_token : s->view_token;
	char old_hash[sizeof(s->control_hash)], old_token[sizeof(s->control_token)];
	int rc;

	if (!hash[0])
		return -ENOENT;
	memcpy(old_hash, hash, sizeof(old_hash));
	memcpy(old_token, token, sizeof(old_token));
	hash[0] = token[0] = '\0';
	if ((rc = sess_save_checked(s)) < 0) {
		memcpy(hash, old_hash, sizeof(old_hash));
		memcpy(token, old_token, sizeof(old_token));
		return not_recorded(s, rc, NULL);
	}
	return 0;
}

int sess_grant_revoke(struct sess *s, const char *id)
{
	if (!strcmp(id, "control") || !strcmp(id, "view"))
		return revoke_own(s, id[0] == 'c');
	for (int i = 0; i < s->n_grants; i++)
		if (!strcmp(s->grants[i].id, id)) {
			struct auth_grant gone = s->grants[i];
			int rc;

			s->grants[i] = s->grants[--s->n_grants];
			if ((rc = sess_save_checked(s)) < 0) {
				s->grants[s->n_grants++] = s->grants[i];
				s->grants[i] = gone;
				return not_recorded(s, rc, NULL);
			}
			return 0;
		}
	return -ENOENT;
}

int sess_token_rotate(struct sess *s, const char *id, char *token, struct api_error *e)
{
	bool control = !strcmp(id, "control");
	char *hash = control ? s->control_hash : s->view_hash;
	char *kept = control ? s->control_token : s->view_token;
	char old_hash[sizeof(s->control_hash)], old_token[sizeof(s->control_token)];
	int rc;

	if (!control && strcmp(id, "view"))
		return api_error_set(
			e, 400, "invalid_argument",
			"only the control and view tokens rotate; mint a new token instead");
	if (auth_new_token(token) < 0) {
		api_error_set(e, 500, "internal", "no randomness to mint a token");
		return -EIO;
	}
	memcpy(old_hash, hash, sizeof(old_hash));
	memcpy(old_token, kept, sizeof(old_token));
	auth_token_hash(token, hash);
	kept[0] = '\0';
	if ((rc = sess_save_checked(s)) < 0) {
		memcpy(hash, old_hash, sizeof(old_hash));
		memcpy(kept, old_token, sizeof(old_token));
		memset(token, 0, AUTH_TOKEN_LEN + 1);
		return not_recorded(s, rc, e);
	}
	return 0;
}
