/* common/http_client.h: a minimal blocking HTTP/1.1 client, enough for the
 * `vitrine` CLI and the tests to talk to a gateway (plain HTTP, one request
 * per connection, whole body in memory). */
#ifndef VITRINE_COMMON_HTTP_CLIENT_H
#define VITRINE_COMMON_HTTP_CLIENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct http_resp {
	int status; /* 0 when the request failed */
	char *body; /* owned, NUL-terminated */
	size_t body_len;
	json_t *json; /* parsed body, or NULL */
	char *headers; /* owned: the raw header lines, NUL-terminated */
};

/* Sends method path to host:port with an optional bearer token and body,
 * waiting at most timeout_s for the answer. Returns 0 or -errno (resolve,
 * connect, I/O, or -EPROTO for a reply that is not HTTP); *resp is filled
 * either way (free it). */
int http_request(const char *host, int port, const char *method, const char *path,
		 const char *token, const char *body, size_t body_len, int timeout_s,
		 struct http_resp *resp);
/* The same with more request headers (each line ending in \r\n, or NULL). */
int http_request_headers(const char *host, int port, const char *method, const char *path,
			 const char *token, const char *headers, const char *body, size_t body_len,
			 int timeout_s, struct http_resp *resp);
/* The same for a body too large for memory (a template's export file):
 * the request's body read from in_fd (in_len bytes; in_fd -1 for none),
 * and a 2xx answer's body written to out_fd (-1: kept in resp as usual);
 * other answers are kept in resp. -EIO also when a 2xx body written to
 * out_fd is shorter than its Content-Length. */
int http_request_fd(const char *host, int port, const char *method, const char *path,
		    const char *token, int in_fd, uint64_t in_len, int out_fd, int timeout_s,
		    struct http_resp *resp);
void http_resp_free(struct http_resp *resp);
/* The value of response header name (case-insensitive) copied into buf, or
 * NULL when absent. */
const char *http_header(const struct http_resp *resp, const char *name, char *buf, size_t len);
/* The error code of an API error body, or "". */
const char *http_error_code(const struct http_resp *resp);

#endif
