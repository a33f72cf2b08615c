/* gateway/api/ws_upgrade.c: see ws_upgrade.h. */
#include "gateway/api/ws_upgrade.h"

#include "gateway/api/door.h"

#include "gateway/core/auth.h"
#include "gateway/session/session.h"

#include <stdio.h>
#include <string.h>

struct route ws_upgrade_route(struct lws *wsi)
{
	char path[256];
	struct route r = { .kind = R_NOT_FOUND };

	if (lws_hdr_copy(wsi, path, sizeof(path), WSI_TOKEN_GET_URI) > 0)
		r = route_parse(M_GET, path);
	return r;
}

struct sess *ws_upgrade_session(struct gw *gw, struct lws *wsi, enum route_kind kind,
				struct route *r)
{
	char origin[256] = "";
	struct sess *s;

	*r = ws_upgrade_route(wsi);
	if (r->kind != kind || !(s = sess_find(gw, r->id)))
		return NULL;
	if (lws_hdr_copy(wsi, origin, sizeof(origin), WSI_TOKEN_ORIGIN) < 0)
		return NULL;
	if (!auth_origin_allowed(origin, gw->origins) &&
	    (kind != R_SESSION_STREAM_WS || !api_door_stream_origin(gw, wsi, s, origin)))
		return NULL;
	return s;
}

bool ws_upgrade_has_auth(struct lws *wsi)
{
	return lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) > 0;
}

int ws_upgrade_bearer(struct lws *wsi, char *token, size_t len)
{
	char h[256];

	if (lws_hdr_copy(wsi, h, sizeof(h), WSI_TOKEN_HTTP_AUTHORIZATION) <= 0 ||
	    auth_parse_bearer(h, token, len) < 0)
		return -1;
	return 0;
}

int ws_upgrade_refuse(struct lws *wsi, int status, const char *code, const char *msg)
{
	unsigned char buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *p = start,
					   *end = buf + sizeof(buf);
	char body[384], clen[16];
	int n = snprintf(body, sizeof(body), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n",
			 code, msg);
	int m = snprintf(clen, sizeof(clen), "%d", n);

	if (n < 0 || (size_t)n >= sizeof(body) ||
	    lws_add_http_header_status(wsi, (unsigned)status, &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE,
					 (const unsigned char *)"application/json", 16, &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH,
					 (const unsigned char *)clen, m, &p, end) ||
	    lws_finalize_http_header(wsi, &p, end) || end - p < n)
		return -1;
	memcpy(p, body, (size_t)n);
	p += n;
	return lws_write(wsi, start, (size_t)(p - start), LWS_WRITE_HTTP) == p - start ? 1 : -1;
}
