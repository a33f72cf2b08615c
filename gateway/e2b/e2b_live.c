/* gateway/e2b/e2b_live.c: the live view at the URL @e2b/desktop's
 * stream.getUrl() gives (`https://6080-{id}.{domain}/vnc.html?...`, behind
 * the operator's wildcard TLS proxy: docs/e2b.md). Vitrine's own web viewer
 * is that view: /vnc.html answers with a redirect to /web/ carrying a
 * sharing token of the session (view scope with `view_only=true`, else
 * control) in the fragment, so the token never reaches a log. As in E2B,
 * the URL itself is the capability: it works only while the SDK's stream
 * "runs" on that port (desktop_stream_started), and with `requireAuth` only
 * with the password the SDK stored (`password=`). noVNC's /websockify is
 * the WebSocket of e2b/e2b_websockify.c; a plain GET of it is answered
 * here, with the same 404 and 502, then 426.
 *
 * Since anyone may ask, the links come from a pool of the session's own
 * (share.h's share_live: one per scope, handed out again while it has
 * more than half its hour left), never from the table POST .../share
 * fills, and the asking is rate-limited per client address and per
 * session (each password guess counts): 429 beyond that. Loop thread
 * only. */
#include "common/fsutil.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/core/rate.h"
#include "gateway/e2b/desktop_serve.h"
#include "gateway/e2b/e2b_api.h"
#include "gateway/e2b/e2b_req.h"
#include "gateway/session/session.h"
#include "gateway/stream/share.h"
#include "gateway/stream/stream_hub.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>

/* A sharing token lives this long: a viewer that outlives it closes
 * within a second (live_auth) and a reload of the URL gets a newer one. */
#define LIVE_TTL_S 3600

/* A person reloading the page is far below these; a script guessing a
 * stream's password or hammering the route is not. Behind a TLS proxy
 * every client has the proxy's address: the per-address limit is then
 * one for all, and the per-session one still holds. */
static const struct rate_limit per_addr = { .burst = 10, .interval_ms = 6000 };
static const struct rate_limit per_sess = { .burst = 30, .interval_ms = 2000 };
static struct rate_table asked_by_addr, asked_for_sess; /* loop thread only */

/* Whether r may ask for s's link now (and counts it); else answered 429. */
static bool within_limits(struct http_req *r, const struct sess *s)
{
	char addr[64] = "";
	int64_t now = fs_now_ms(), wait_a, wait_s;
	bool a, b;
	char msg[200], secs[24];

	if (!lws_get_peer_simple(r->wsi, addr, sizeof(addr)))
		snprintf(addr, sizeof(addr), "?");
	a = rate_would_allow(&asked_by_addr, addr, &per_addr, now, &wait_a);
	b = rate_would_allow(&asked_for_sess, sess_id(s), &per_sess, now, &wait_s);
	if (a && b) {
		rate_allow(&asked_by_addr, addr, &per_addr, now, NULL);
		rate_allow(&asked_for_sess, sess_id(s), &per_sess, now, NULL);
		return true;
	}
	if (wait_s > wait_a)
		wait_a = wait_s;
	snprintf(secs, sizeof(secs), "%lld", (long long)(wait_a + 999) / 1000);
	snprintf(msg, sizeof(msg), "too many live view requests %s: try again in %s s",
		 a ? "for this sandbox" : "from this address", secs);
	http_add_header(r, "retry-after", secs);
	http_reply_error(r, 429, "rate_limited", msg);
	return false;
}

static void page(struct http_req *r, int status, const char *text)
{
	char body[512];
	int n = snprintf(body, sizeof(body),
			 "<!doctype html><meta charset=utf-8><title>Vitrine</title><p>%s</p>\n",
			 text);

	http_reply_bytes(r, status, "text/html; charset=utf-8", body, (size_t)n);
}

/* Constant time in the length of want. */
static bool same_secret(const char *got, const char *want)
{
	size_t n = strlen(want), m = strlen(got);
	unsigned char d = n != m;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(want[i] ^ (i < m ? got[i] : 0));
	return d == 0;
}

void e2b_live(struct http_req *r)
{
	const struct e2b_call *c = e2b_call_of(r);
	struct sess *s = sess_find(r->gw, c->sandbox);
	char pw[160], view[16], token[AUTH_TOKEN_LEN + 1], loc[256];
	const char *want;
	struct stream_hub *h;
	enum auth_scope scope;
	int port, got;

	if (!s) {
		page(r, 404, "No such sandbox.");
		return;
	}
	snprintf(r->audit_session, sizeof(r->audit_session), "%s", sess_id(s));
	if (r->method != M_GET) {
		page(r, 405, "Method not allowed.");
		return;
	}
	if (!desktop_stream_started(s, &port) || port != c->live_port) {
		page(r, 502, "The sandbox's stream is not running on this port (stream.start()).");
		return;
	}
	if (c->route.kind == E2B_LIVE_SOCKET) {
		http_add_header(r, "upgrade", "websocket");
		page(r, 426, "This is noVNC's RFB over WebSocket: connect with a WebSocket.");
		return;
	}
	if (!within_limits(r, s))
		return;
	e2b_query(r, "password=", pw, sizeof(pw));
	if ((want = desktop_stream_password(s)) && !same_secret(pw, want)) {
		page(r, 401, "This stream needs its password (stream.getUrl({authKey})).");
		return;
	}
	e2b_query(r, "view_only=", view, sizeof(view));
	scope = !strcmp(view, "true") || !strcmp(view, "1") ? AUTH_VIEW : AUTH_CONTROL;
	if (!(h = stream_hub_of(s)) ||
	    (got = share_live(&h->shares, scope, LIVE_TTL_S, fs_now_ms(), token)) < 0) {
		page(r, 503, "The sandbox has no room for another viewer link now.");
		return;
	}
	api_audit_set(r, "share",
		      json_pack("{s:s, s:i, s:b}", "scope", scope == AUTH_VIEW ? "view" : "control",
				"ttl_s", LIVE_TTL_S, "reused", got == 1));
	snprintf(loc, sizeof(loc), "/web/#s=%s&t=%s", sess_id(s), token);
	http_add_header(r, "location", loc);
	page(r, 302, "The live view is at /web/.");
}

bool e2b_live_stream_origin(struct gw *gw, struct lws *wsi, struct sess *s, const char *origin)
{
	char host[256];
	int port;

	return lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST) > 0 &&
	       desktop_stream_started(s, &port) &&
	       e2b_live_origin(origin, host, gw->public_url, sess_id(s), port);
}
