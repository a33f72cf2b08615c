/* gateway/api/http.c: see http.h. Follows the libwebsockets minimal examples:
 * headers and body are each written from their own WRITEABLE callback, with
 * LWS_PRE headroom, one lws_write per callback. */
#include "gateway/api/http.h"

#include "gateway/action/run.h"
#include "gateway/core/metrics.h"
#include "gateway/guest/exec.h"
#include "gateway/session/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lets go of a made body's source. */
static void drop_source(struct http_req *r)
{
	if (r->src_free)
		r->src_free(r->src);
	r->src = NULL;
	r->src_free = NULL;
	r->src_read = NULL;
}

void http_reply_json(struct http_req *r, int status, json_t *body)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	size_t n = text ? strlen(text) : 0;

	json_decref(body);
	drop_source(r);
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
	drop_source(r);
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

void http_reply_stream(struct http_req *r, int status, const char *content_type, uint64_t len,
		       http_read_fn read, void (*free_ud)(void *ud), void *ud)
{
	drop_source(r);
	free(r->resp);
	r->resp = malloc(LWS_PRE + HTTP_STREAM_CHUNK);
	if (!r->resp) {
		free_ud(ud);
		http_reply_json(r, 500, NULL);
		return;
	}
	r->src_read = read;
	r->src_free = free_ud;
	r->src = ud;
	r->src_len = len;
	r->src_off = 0;
	r->status = status;
	r->content_type = content_type;
	r->resp_len = (size_t)len;
	r->have_response = true;
	lws_callback_on_writable(r->wsi);
}

void http_reply_until_close(struct http_req *r, int status, const char *content_type,
			    int (*stream_write)(struct http_req *r))
{
	drop_source(r);
	free(r->resp);
	r->resp = NULL;
	r->resp_len = 0;
	r->status = status;
	r->content_type = content_type;
	r->stream_write = stream_write;
	r->close_after = true;
	r->have_response = true;
	lws_callback_on_writable(r->wsi);
}

void http_reply_pull(struct http_req *r, int status, const char *content_type, int64_t len,
		     long (*pull)(struct http_req *r, unsigned char *buf, size_t cap))
{
	drop_source(r);
	free(r->resp);
	r->resp = malloc(LWS_PRE + HTTP_STREAM_CHUNK);
	if (!r->resp) {
		http_reply_json(r, 500, NULL);
		return;
	}
	r->pull = pull;
	r->pull_len = len;
	r->pull_off = 0;
	r->resp_len = len > 0 ? (size_t)len : 0;
	if (len < 0)
		r->close_after = true;
	r->status = status;
	r->content_type = content_type;
	r->have_response = true;
	lws_callback_on_writable(r->wsi);
}

/* What the pull source has of the body now. Returns 0 while more is to
 * come, 1 at the end, -1 to close. */
static int write_pulled(struct lws *wsi, struct http_req *r)
{
	uint64_t left = r->pull_len >= 0 ? (uint64_t)r->pull_len - r->pull_off : HTTP_STREAM_CHUNK;
	size_t want = left < HTTP_STREAM_CHUNK ? (size_t)left : HTTP_STREAM_CHUNK;
	long got = want ? r->pull(r, r->resp + LWS_PRE, want) : 0;
	bool last;

	if (r->pull_len >= 0 && r->pull_off == (uint64_t)r->pull_len)
		return 1; /* (an empty body) */
	if (got == HTTP_PULL_END && r->pull_len < 0)
		return -1; /* the connection's end is the body's */
	if (got < 0 || (size_t)got > want)
		return -1;
	if (got == 0)
		return 0; /* the source wakes us */
	last = r->pull_len >= 0 && r->pull_off + (uint64_t)got == (uint64_t)r->pull_len;
	if (lws_write(wsi, r->resp + LWS_PRE, (size_t)got,
		      last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)got)
		return -1;
	r->pull_off += (uint64_t)got;
	if (last)
		return 1;
	/* A client that reads nothing for this long loses the connection. */
	lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, 120);
	lws_callback_on_writable(wsi);
	return 0;
}

/* One chunk of a made body; the last one ends the answer (1). Returns 0
 * while more is to come, 1 at the end, -1 to close. */
static int write_chunk(struct lws *wsi, struct http_req *r)
{
	uint64_t left = r->src_len - r->src_off;
	size_t want = left < HTTP_STREAM_CHUNK ? (size_t)left : HTTP_STREAM_CHUNK;
	size_t got = r->src_read(r->src, r->src_off, r->resp + LWS_PRE, want);
	bool last = got == left;

	if (got != want) /* the source is shorter than it said: the length would lie */
		return -1;
	if (lws_write(wsi, r->resp + LWS_PRE, got, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) !=
	    (int)got)
		return -1;
	r->src_off += got;
	if (last) {
		drop_source(r);
		return 1;
	}
	/* A client that reads nothing for this long loses the connection. */
	lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, 30);
	lws_callback_on_writable(wsi);
	return 0;
}

const char *http_query(struct http_req *r, const char *name, char *buf, int len)
{
	size_t n = strlen(name);
	int flen;

	for (int i = 0; (flen = lws_hdr_fragment_length(r->wsi, WSI_TOKEN_HTTP_URI_ARGS, i)) > 0;
	     i++) {
		if ((size_t)flen < n || flen >= len ||
		    lws_hdr_copy_fragment(r->wsi, buf, len, WSI_TOKEN_HTTP_URI_ARGS, i) < 0 ||
		    strncmp(buf, name, n))
			continue;
		memmove(buf, buf + n, strlen(buf + n) + 1);
		return buf;
	}
	return NULL;
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
		{ WSI_TOKEN_PATCH_URI, M_PATCH },   { WSI_TOKEN_OPTIONS_URI, M_OTHER },
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
						r->stream_write || (r->pull && r->pull_len < 0)
							? LWS_ILLEGAL_HTTP_CONTENT_LEN
							: r->resp_len,
						&p, end) ||
		    lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
						(const unsigned char *)"no-store", 8, &p, end))
			return -1;
		for (int i = 0; i < r->n_hdrs; i++)
			if (lws_add_http_header_by_name(wsi, (const unsigned char *)r->hdrs[i].name,
							(const unsigned char *)r->hdrs[i].value,
							(int)strlen(r->hdrs[i].value), &p, end))
				return -1;
		/* (lws says close itself for a body of no length) */
		if (r->close_after && !r->stream_write && !r->pull &&
		    lws_add_http_header_by_name(wsi, (const unsigned char *)"connection:",
						(const unsigned char *)"close", 5, &p, end))
			return -1;
		if (lws_finalize_write_http_header(wsi, start, &p, end))
			return -1;
		r->headers_sent = true;
		metrics_http((int)r->route.kind, r->status, (int64_t)(lws_now_usecs() - r->t0_us));
		if (r->answered)
			r->answered(r);
		if (r->resp_len || r->close_after || r->pull) {
			lws_callback_on_writable(wsi);
			return 0;
		}
	} else if (r->src_read) {
		int rc = write_chunk(wsi, r);

		if (rc <= 0)
			return rc;
	} else if (r->pull) {
		int rc = write_pulled(wsi, r);

		if (rc <= 0)
			return rc;
	} else if (r->stream_write) {
		return r->stream_write(r);
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
	exec_release(r->exec);
	r->exec = NULL;
	free(r->body);
	r->body = NULL;
	free(r->resp);
	r->resp = NULL;
	drop_source(r);
	if (r->route_state && route_table[r->route.kind].state_release)
		route_table[r->route.kind].state_release(r->route_state);
	free(r->route_state);
	r->route_state = NULL;
	r->body_sink = NULL;
	json_decref(r->audit_fields);
	r->audit_fields = NULL;
}

bool http_begin(struct http_req *r, struct lws *wsi, const char *path_in,
		void (*answered)(struct http_req *r))
{
	char path[512];

	http_release(r);
	memset(r, 0, sizeof(*r));
	r->wsi = wsi;
	r->answered = answered;
	r->gw = lws_context_user(lws_get_context(wsi));
	r->t0_us = lws_now_usecs();
	r->method = method_of(wsi, path, sizeof(path));
	/* lws hands the path without the query string. */
	r->route = route_parse(r->method, path_in ? path_in : path);
	snprintf(r->path, sizeof(r->path), "%.*s", (int)strcspn(path_in ? path_in : path, "?"),
		 path_in ? path_in : path);
	read_bearer(wsi, r);
	if (lws_hdr_copy(wsi, path, sizeof(path), WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0 &&
	    strstr(path, "chunked")) {
		r->chunked = true;
		/* lws keeps counting a body it cannot delimit: start afresh */
		r->close_after = true;
	}
	/* HTTP/1.1: with neither a length nor chunks there is no body */
	return (r->method != M_POST && r->method != M_PUT && r->method != M_PATCH) ||
	       (!r->chunked && lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0);
}

bool http_body_complete(struct http_req *r)
{
	if (!r->chunked || r->have_response)
		return false;
	if (r->chunks.state < 0) {
		http_reply_error(r, 400, "bad_request", "malformed chunked request body");
		return false;
	}
	return chunked_done(&r->chunks);
}

/* The largest body r may have: its route's. */
static size_t body_max(const struct http_req *r)
{
	const struct route_def *d = &route_table[r->route.kind];

	return d->body_max_of ? d->body_max_of(r) : d->body_max;
}

void *http_route_state(struct http_req *r)
{
	const struct route_def *d = &route_table[r->route.kind];
	size_t size = d->state_size_of ? d->state_size_of() : d->state_size;

	if (r->route_state || !size)
		return r->route_state;
	if (!(r->route_state = calloc(1, size)))
		http_reply_error(r, 500, "internal", "out of memory");
	return r->route_state;
}

int http_add_body(struct http_req *r, const void *in, size_t len)
{
	char *nb;
	unsigned char *dec = NULL;

	if (len == 0) /* an empty body comes as (NULL, 0) */
		return 0;
	if (r->chunked) {
		long n;

		if (r->chunks.state < 0 || !(dec = malloc(len)))
			return dec ? 0 : -1;
		n = chunked_decode(&r->chunks, in, len, dec);
		if (n < 0) {
			r->chunks.state = -1; /* http_body_complete answers */
			free(dec);
			return 0;
		}
		in = dec;
		len = (size_t)n;
	}
	if (len == 0) {
		free(dec);
		return 0;
	}
	if (r->body_sink) {
		int rc = r->body_sink(r, in, len);

		free(dec);
		return rc;
	}
	if (r->body_too_big || r->body_len + len > body_max(r)) {
		r->body_too_big = true;
		free(dec);
		return 0;
	}
	if (!(nb = realloc(r->body, r->body_len + len + 1))) {
		free(dec);
		return -1;
	}
	r->body = nb;
	memcpy(r->body + r->body_len, in, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	free(dec);
	return 0;
}

bool http_body_ok(struct http_req *r)
{
	if (!r->body_too_big)
		return true;
	char msg[64];

	snprintf(msg, sizeof(msg), "request body over %zu MiB", body_max(r) >> 20);
	http_reply_error(r, 413, "body_too_large", msg);
	return false;
}

void http_answered(struct http_req *r, int status)
{
	r->status = status;
	r->headers_sent = true;
	metrics_http((int)r->route.kind, status, (int64_t)(lws_now_usecs() - r->t0_us));
	if (r->answered)
		r->answered(r);
}

int http_write(struct http_req *r)
{
	if (r->own_write)
		return r->own_write(r);
	if (!r->have_response && r->waiting)
		r->waiting(r);
	return r->have_response ? write_response(r->wsi, r) : 0;
}
