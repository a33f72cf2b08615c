/* gateway/api/http.c: see http.h. Follows the libwebsockets minimal examples:
 * headers and body are each written from their own WRITEABLE callback, with
 * LWS_PRE headroom, one lws_write per callback. */
#include "gateway/api/http.h"

#include "gateway/action/run.h"
#include "gateway/api/api_audit.h"
#include "gateway/core/metrics.h"
#include "gateway/guest/exec.h"
#include "gateway/session/job.h"
#include "gateway/session/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void http_reply_json(struct http_req *r, int status, json_t *body)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	size_t n = text ? strlen(text) : 0;

	json_decref(body);
	free(r->resp);
	r->resp = text ? malloc(LWS_PRE + n + 1) : NULL;
	if (!r->resp) {
		status = 500;
		n = 0;
	} else {
		memcpy(r->resp + LWS_PRE, text, n);
		r->resp[LWS_PRE + n] = '\n';
		n++;
	}
	free(text);
	r->status = status;
	r->content_type = "application/json";
	r->resp_len = n;
	r->have_response = true;
	lws_callback_on_writable(r->wsi);
}

void http_reply_bytes(struct http_req *r, int status, const char *content_type, const void *data,
		      size_t len)
{
	free(r->resp);
	r->resp = malloc(LWS_PRE + len + 1);
	if (!r->resp) {
		http_reply_json(r, 500, NULL);
		return;
	}
	memcpy(r->resp + LWS_PRE, data, len);
	r->status = status;
	r->content_type = content_type;
	r->resp_len = len;
	r->have_response = true;
	lws_callback_on_writable(r->wsi);
}

void http_add_header(struct http_req *r, const char *name, const char *value)
{
	if (r->n_hdrs == (int)(sizeof(r->hdrs) / sizeof(r->hdrs[0])))
		return;
	snprintf(r->hdrs[r->n_hdrs].name, sizeof(r->hdrs[0].name), "%s:", name);
	snprintf(r->hdrs[r->n_hdrs].value, sizeof(r->hdrs[0].value), "%s", value);
	r->n_hdrs++;
}

void http_reply_error(struct http_req *r, int status, const char *code, const char *message)
{
	http_reply_json(r, status, api_error_json(code, message));
}

void http_reply_api_error(struct http_req *r, const struct api_error *e)
{
	http_reply_error(r, e->status, e->code, e->message);
}

static enum route_method method_of(struct lws *wsi, char *path, size_t len)
{
	static const struct {
		enum lws_token_indexes tok;
		enum route_method m;
	} methods[] = {
		{ WSI_TOKEN_GET_URI, M_GET },	    { WSI_TOKEN_POST_URI, M_POST },
		{ WSI_TOKEN_DELETE_URI, M_DELETE }, { WSI_TOKEN_PUT_URI, M_PUT },
		{ WSI_TOKEN_PATCH_URI, M_OTHER },   { WSI_TOKEN_OPTIONS_URI, M_OTHER },
	};

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (lws_hdr_total_length(wsi, methods[i].tok) > 0) {
			if (lws_hdr_copy(wsi, path, (int)len, methods[i].tok) < 0)
				path[0] = '\0';
			return methods[i].m;
		}
	path[0] = '\0';
	return M_OTHER;
}

static void read_bearer(struct lws *wsi, struct http_req *r)
{
	char h[256];

	r->token[0] = '\0';
	if (lws_hdr_copy(wsi, h, sizeof(h), WSI_TOKEN_HTTP_AUTHORIZATION) > 0 &&
	    auth_parse_bearer(h, r->token, sizeof(r->token)) < 0)
		r->token[0] = '\0';
}

static int write_response(struct lws *wsi, struct http_req *r)
{
	unsigned char hdr[LWS_PRE + 1024], *start = &hdr[LWS_PRE], *p = start,
					   *end = &hdr[sizeof(hdr) - 1];

	if (!r->headers_sent) {
		if (lws_add_http_common_headers(wsi, (unsigned int)r->status, r->content_type,
						r->resp_len, &p, end) ||
		    lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
						(const unsigned char *)"no-store", 8, &p, end))
			return -1;
		for (int i = 0; i < r->n_hdrs; i++)
			if (lws_add_http_header_by_name(wsi, (const unsigned char *)r->hdrs[i].name,
							(const unsigned char *)r->hdrs[i].value,
							(int)strlen(r->hdrs[i].value), &p, end))
				return -1;
		if (r->close_after &&
		    lws_add_http_header_by_name(wsi, (const unsigned char *)"connection:",
						(const unsigned char *)"close", 5, &p, end))
			return -1;
		if (lws_finalize_write_http_header(wsi, start, &p, end))
			return -1;
		r->headers_sent = true;
		metrics_http((int)r->route.kind, r->status, (int64_t)(lws_now_usecs() - r->t0_us));
		api_audit_answered(r);
		if (r->resp_len || r->close_after) {
			lws_callback_on_writable(wsi);
			return 0;
		}
	} else if (lws_write(wsi, r->resp + LWS_PRE, r->resp_len, LWS_WRITE_HTTP_FINAL) !=
		   (int)r->resp_len) {
		return -1;
	}
	/* Answered: keep-alive connections go on to their next request. */
	if (r->close_after)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

void http_release(struct http_req *r)
{
	if (!r) /* lws may drop the protocol of a connection that has no request data */
		return;
	if (r->wait_id[0]) {
		struct sess *s = sess_find(r->gw, r->wait_id);

		if (s)
			sess_remove_waiter(s, r->wsi);
		r->wait_id[0] = '\0';
	}
	lws_sul_cancel(&r->sul_wait);
	lws_sul_cancel(&r->sul_ticket);
	job_ticket_release(r->ticket);
	r->ticket = NULL;
	run_cancel(r->run);
	r->run = NULL;
	exec_release(r->exec);
	r->exec = NULL;
	free(r->body);
	r->body = NULL;
	free(r->resp);
	r->resp = NULL;
	json_decref(r->audit_fields);
	r->audit_fields = NULL;
}

bool http_begin(struct http_req *r, struct lws *wsi, const char *path_in)
{
	char path[512];

	http_release(r);
	memset(r, 0, sizeof(*r));
	r->wsi = wsi;
	r->gw = lws_context_user(lws_get_context(wsi));
	r->t0_us = lws_now_usecs();
	r->method = method_of(wsi, path, sizeof(path));
	/* lws hands the path without the query string. */
	r->route = route_parse(r->method, path_in ? path_in : path);
	snprintf(r->path, sizeof(r->path), "%.*s", (int)strcspn(path_in ? path_in : path, "?"),
		 path_in ? path_in : path);
	read_bearer(wsi, r);
	return r->method != M_POST && r->method != M_PUT;
}

int http_add_body(struct http_req *r, const void *in, size_t len)
{
	char *nb;

	if (len == 0) /* an empty body comes as (NULL, 0) */
		return 0;
	if (r->body_too_big || r->body_len + len > HTTP_MAX_BODY) {
		r->body_too_big = true;
		return 0;
	}
	if (!(nb = realloc(r->body, r->body_len + len + 1)))
		return -1;
	r->body = nb;
	memcpy(r->body + r->body_len, in, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	return 0;
}

bool http_body_ok(struct http_req *r)
{
	if (!r->body_too_big)
		return true;
	http_reply_error(r, 413, "body_too_large", "request body over 1 MiB");
	return false;
}

int http_write(struct http_req *r)
{
	return r->have_response ? write_response(r->wsi, r) : 0;
}
