/* common/http_client.c: see http_client.h. */
#include "common/http_client.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* write_all for a socket: a peer that has answered and closed makes
 * -EIO, not SIGPIPE. */
static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* What is left to read on fd after the have_len bytes of have already read:
 * a NUL-terminated buffer of *len bytes (caller frees), read until the peer
 * closes, a read fails, or the buffer would grow past max; NULL when out of
 * memory at the start. */
static char *read_rest(int fd, const char *have, size_t have_len, size_t max, size_t *len)
{
	size_t cap = have_len + 16384;
	char *buf = malloc(cap + 1);

	*len = have_len;
	if (!buf)
		return NULL;
	if (have_len)
		memcpy(buf, have, have_len);
	for (;;) {
		ssize_t r;

		if (*len == cap) {
			char *nb = cap < max ? realloc(buf, (cap *= 2) + 1) : NULL;

			if (!nb)
				break;
			buf = nb;
		}
		r = read(fd, buf + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	buf[*len] = '\0';
	return buf;
}

static int connect_to(const char *host, int port, int timeout_s)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *ai;
	struct timeval tv = { .tv_sec = timeout_s };
	char service[16];
	int fd = -1;

	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(host, service, &hints, &res) != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd < 0 ? -ECONNREFUSED : fd;
}

int http_request(const char *host, int port, const char *method, const char *path,
		 const char *token, const char *body, size_t body_len, int timeout_s,
		 struct http_resp *resp)
{
	return http_request_headers(host, port, method, path, token, NULL, body, body_len,
				    timeout_s, resp);
}

int http_request_headers(const char *host, int port, const char *method, const char *path,
			 const char *token, const char *headers, const char *body, size_t body_len,
			 int timeout_s, struct http_resp *resp)
{
	char head[1024], *buf, *sep;
	size_t used;
	int fd, n;

	memset(resp, 0, sizeof(*resp));
	fd = connect_to(host, port, timeout_s);
	if (fd < 0)
		return fd;
	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n%s%s%s%s"
		     "Content-Length: %zu\r\n\r\n",
		     method, path, host, port, token ? "Authorization: Bearer " : "",
		     token ? token : "", token ? "\r\n" : "", headers ? headers : "",
		     body ? body_len : 0);
	if (n < 0 || (size_t)n >= sizeof(head)) {
		close(fd);
		return -E2BIG;
	}
	if (write_all(fd, head, (size_t)n) < 0 || (body && write_all(fd, body, body_len) < 0)) {
		close(fd);
		return -EIO;
	}
	buf = read_rest(fd, NULL, 0, SIZE_MAX, &used);
	close(fd);
	if (!buf)
		return -EIO;
	if (sscanf(buf, "HTTP/1.1 %d", &resp->status) != 1 || !(sep = strstr(buf, "\r\n\r\n"))) {
		free(buf);
		resp->status = 0;
		return -EPROTO;
	}
	resp->body_len = used - (size_t)(sep + 4 - buf);
	resp->body = malloc(resp->body_len + 1);
	if (!resp->body) {
		free(buf);
		resp->status = 0;
		return -ENOMEM;
	}
	memcpy(resp->body, sep + 4, resp->body_len);
	resp->body[resp->body_len] = '\0';
	*sep = '\0';
	resp->headers = strdup(buf);
	free(buf);
	resp->json = json_loadb(resp->body, resp->body_len, 0, NULL);
	return 0;
}

int http_request_fd(const char *host, int port, const char *method, const char *path,
		    const char *token, int in_fd, uint64_t in_len, int out_fd, int timeout_s,
		    struct http_resp *resp)
{
	char head[1024], buf[65536], *sep, *hdrs;
	unsigned long long want = 0;
	uint64_t sent = 0, got = 0;
	size_t used = 0;
	int fd, n, rc = 0;

	memset(resp, 0, sizeof(*resp));
	fd = connect_to(host, port, timeout_s);
	if (fd < 0)
		return fd;
	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n%s%s%s"
		     "Content-Length: %llu\r\n\r\n",
		     method, path, host, port, token ? "Authorization: Bearer " : "",
		     token ? token : "", token ? "\r\n" : "",
		     (unsigned long long)(in_fd >= 0 ? in_len : 0));
	if (n < 0 || (size_t)n >= sizeof(head) || send_all(fd, head, (size_t)n) < 0) {
		close(fd);
		return n < 0 || (size_t)n >= sizeof(head) ? -E2BIG : -EIO;
	}
	while (in_fd >= 0 && sent < in_len) {
		ssize_t r = read(in_fd, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || send_all(fd, buf, (size_t)r) < 0)
			break; /* the gateway may have answered early: read it */
		sent += (uint64_t)r;
	}
	/* The head, then the body to out_fd or into memory. */
	for (;;) {
		ssize_t r = read(fd, buf + used, sizeof(buf) - 1 - used);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		used += (size_t)r;
		buf[used] = '\0';
		if (strstr(buf, "\r\n\r\n") || used == sizeof(buf) - 1)
			break;
	}
	buf[used] = '\0';
	if (sscanf(buf, "HTTP/1.1 %d", &resp->status) != 1 || !(sep = strstr(buf, "\r\n\r\n"))) {
		close(fd);
		resp->status = 0;
		return -EPROTO;
	}
	*sep = '\0';
	hdrs = strdup(buf);
	resp->headers = hdrs;
	if (out_fd < 0 || resp->status < 200 || resp->status > 299) {
		/* an error's body: small, into memory */
		size_t len;
		char *b = read_rest(fd, sep + 4, used - (size_t)(sep + 4 - buf), 64u << 20, &len);

		close(fd);
		if (!b)
			return -ENOMEM;
		resp->body = b;
		resp->body_len = len;
		resp->json = json_loadb(b, len, 0, NULL);
		return 0;
	}
	if (http_header(resp, "content-length", head, sizeof(head)))
		want = strtoull(head, NULL, 10);
	got = used - (size_t)(sep + 4 - buf);
	if (write_all(out_fd, sep + 4, (size_t)got) < 0)
		rc = -EIO;
	while (rc == 0) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (write_all(out_fd, buf, (size_t)r) < 0)
			rc = -EIO;
		got += (uint64_t)r;
	}
	close(fd);
	resp->body = strdup("");
	if (rc == 0 && want && got != want)
		rc = -EIO;
	return rc;
}

const char *http_header(const struct http_resp *resp, const char *name, char *buf, size_t len)
{
	size_t n = strlen(name);

	for (const char *p = resp->headers; p && *p;
	     p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *v;
		size_t vl;

		if (strncasecmp(p, name, n) || p[n] != ':')
			continue;
		v = p + n + 1;
		while (*v == ' ')
			v++;
		vl = strcspn(v, "\r\n");
		if (vl >= len)
			vl = len - 1;
		memcpy(buf, v, vl);
		buf[vl] = '\0';
		return buf;
	}
	return NULL;
}

void http_resp_free(struct http_resp *resp)
{
	free(resp->headers);
	free(resp->body);
	json_decref(resp->json);
	memset(resp, 0, sizeof(*resp));
}

const char *http_error_code(const struct http_resp *resp)
{
	const char *c = json_string_value(
		json_object_get(json_object_get(resp->json, "error"), "code"));

	return c ? c : "";
}
