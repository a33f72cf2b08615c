/* gateway/session/live_auth.c: see live_auth.h. */
#include "gateway/session/live_auth.h"

#include "gateway/session/session.h"

#include <stdio.h>
#include <string.h>

static struct live_auth *watched; /* loop thread */
static lws_sorted_usec_list_t sul;
static struct lws_context *timer_ctx; /* where sul is scheduled, NULL when it is not */

static void on_timer(lws_sorted_usec_list_t *u);

static void schedule(struct gw *gw)
{
	if (timer_ctx || !gw->ctx)
		return;
	timer_ctx = gw->ctx;
	lws_sul_schedule(timer_ctx, 0, &sul, on_timer,
			 (lws_usec_t)LIVE_AUTH_PERIOD_MS * LWS_US_PER_MS);
}

void live_auth_watch(struct live_auth *la, struct gw *gw, const char *sid, const char *token,
		     unsigned need)
{
	live_auth_unwatch(la);
	la->gw = gw;
	snprintf(la->sid, sizeof(la->sid), "%s", sid);
	auth_token_hash(token, la->hash);
	la->need = need;
	la->next = watched;
	watched = la;
	la->watched = true;
	schedule(gw);
}

void live_auth_unwatch(struct live_auth *la)
{
	if (!la->watched)
		return;
	for (struct live_auth **pp = &watched; *pp; pp = &(*pp)->next)
		if (*pp == la) {
			*pp = la->next;
			break;
		}
	la->watched = false;
	la->next = NULL;
	if (!watched && timer_ctx) {
		lws_sul_cancel(&sul);
		timer_ctx = NULL;
	}
}

/* Why la may no longer be open, or NULL while it may. */
static const char *lost_why(struct live_auth *la)
{
	struct sess *s = sess_find(la->gw, la->sid);
	unsigned rights;

	if (!s)
		return "the session is gone";
	rights = sess_rights_of_hash(la->gw, s, la->hash, NULL);
	if (la->extra)
		rights |= la->extra(la, s);
	return (rights & la->need) == la->need ? NULL : "the token was revoked or has expired";
}

void live_auth_check_all(void)
{
	struct live_auth *la = watched;

	while (la) {
		struct live_auth *next = la->next;
		const char *why = lost_why(la);

		if (why) {
			live_auth_unwatch(la);
			if (la->lost)
				la->lost(la, why);
			/* lost may have unwatched others: start over, cheaply */
			la = watched;
			continue;
		}
		la = next;
	}
}

static void on_timer(lws_sorted_usec_list_t *u)
{
	struct lws_context *ctx = timer_ctx;

	(void)u;
	timer_ctx = NULL;
	live_auth_check_all();
	if (watched && ctx) {
		timer_ctx = ctx;
		lws_sul_schedule(ctx, 0, &sul, on_timer,
				 (lws_usec_t)LIVE_AUTH_PERIOD_MS * LWS_US_PER_MS);
	}
}
