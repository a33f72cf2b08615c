/* gateway/egress/proxy_req.c: see proxy_req.h. */
#include "gateway/egress/proxy_req.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A slice of the head. */
struct span {
	const char *p;
	size_t n;
};

static bool span_is(struct span s, const char *lit)
{
	return s.n == strlen(lit) && !memcmp(s.p, lit, s.n);
}

static bool span_is_nocase(struct span s, const char *lit)
{
	return s.n == strlen(lit) && !strncasecmp(s.p, lit, s.n);
}

/* Splits *s at the first c: the part before it is returned, *s keeps what
 * follows. Without c, all of *s is returned and *found is false. */
static struct span split(struct span *s, char c, bool *found)
{
	const char *at = memchr(s->p, c, s->n);
	struct span head = { s->p, at ? (size_t)(at - s->p) : s->n };

	*found = at != NULL;
	s->p += at ? head.n + 1 : s->n;
	s->n -= at ? head.n + 1 : s->n;
	return head;
}

static bool is_host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

static bool is_tchar(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Parses host[:port] or [v6]:port into out; port defaults to 80 unless
 * need_port. */
static int parse_authority(struct span a, bool need_port, struct proxy_req *out)
{
	struct span host, port = { NULL, 0 };
	bool has_port = false;

	if (a.n > 0 && a.p[0] == '[') {
		const char *close = memchr(a.p, ']', a.n);
		char v6[INET6_ADDRSTRLEN];
		struct in6_addr addr;

		if (!close)
			return -EINVAL;
		host = (struct span){ a.p + 1, (size_t)(close - a.p) - 1 };
		a.n -= host.n + 2;
		a.p = close + 1;
		if (a.n > 0 && a.p[0] != ':')
			return -EINVAL;
		if (host.n == 0 || host.n >= sizeof(v6))
			return -EINVAL;
		memcpy(v6, host.p, host.n);
		v6[host.n] = '\0';
		if (inet_pton(AF_INET6, v6, &addr) != 1)
			return -EINVAL;
		has_port = a.n > 0;
		port = (struct span){ a.p + has_port, a.n - has_port };
	} else {
		host = split(&a, ':', &has_port);
		port = a;
		if (host.n == 0)
			return -EINVAL;
		for (size_t i = 0; i < host.n; i++)
			if (!is_host_char(host.p[i]))
				return -EINVAL;
	}
	if (host.n >= sizeof(out->host))
		return -EINVAL;
	memcpy(out->host, host.p, host.n);
	out->host[host.n] = '\0';
	if (!has_port) {
		out->port = 80;
		return need_port ? -EINVAL : 0;
	}
	if (port.n == 0 || port.n > 5)
		return -EINVAL;
	out->port = 0;
	for (size_t i = 0; i < port.n; i++) {
		if (port.p[i] < '0' || port.p[i] > '9')
			return -EINVAL;
		out->port = out->port * 10 + (port.p[i] - '0');
	}
	return out->port >= 1 && out->port <= 65535 ? 0 : -EINVAL;
}

static bool known_method(struct span m)
{
	static const char *const methods[] = { "GET",	 "HEAD",    "POST",  "PUT",
					       "DELETE", "OPTIONS", "PATCH", "CONNECT" };

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (span_is(m, methods[i]))
			return true;
	return false;
}

/* A header line "Name: value" (no CRLF): a token, a colon, then a value
 * without control characters but tab. */
static bool valid_header(struct span line, struct span *name)
{
	bool colon;

	*name = split(&line, ':', &colon);
	if (!colon || name->n == 0)
		return false;
	for (size_t i = 0; i < name->n; i++)
		if (!is_tchar(name->p[i]))
			return false;
	for (size_t i = 0; i < line.n; i++) {
		unsigned char c = (unsigned char)line.p[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return false;
	}
	return true;
}

/* Headers that concern the hop to us, or that the rewrite supplies. */
static bool dropped_header(struct span name)
{
	return span_is_nocase(name, "Host") || span_is_nocase(name, "Connection") ||
	       span_is_nocase(name, "Proxy-Connection") ||
	       span_is_nocase(name, "Proxy-Authorization");
}

static void append(char *dst, size_t *n, const char *src, size_t len)
{
	memcpy(dst + *n, src, len);
	*n += len;
}

/* The length of the head in buf (blank line included), 0 when it is not
 * complete, -EINVAL for a byte no head may hold where it is: a NUL, or a CR
 * and an LF not paired as CRLF. */
static long head_end(const char *buf, size_t len)
{
	size_t scan = len < PROXY_REQ_MAX_HEAD ? len : PROXY_REQ_MAX_HEAD;

	for (size_t i = 0; i < scan; i++) {
		if (buf[i] == '\0')
			return -EINVAL;
		if (buf[i] == '\r' && i + 1 < len && buf[i + 1] != '\n')
			return -EINVAL;
		if (buf[i] != '\n')
			continue;
		if (i == 0 || buf[i - 1] != '\r')
			return -EINVAL;
		if (i >= 3 && buf[i - 2] == '\n')
			return (long)i + 1;
	}
	return 0;
}

int proxy_req_parse(const char *buf, size_t len, struct proxy_req *out)
{
	struct span head, line, method, target, version, path = { NULL, 0 },
							 authority = { NULL, 0 };
	long end = head_end(buf, len);
	size_t cap, n = 0;
	bool found;
	char *fw;

	memset(out, 0, sizeof(*out));
	if (end < 0)
		return (int)end;
	if (end == 0)
		return len >= PROXY_REQ_MAX_HEAD ? -EMSGSIZE : -EAGAIN;
	/* The lines, blank line excluded: each ends in CRLF. */
	head = (struct span){ buf, (size_t)end - 2 };
	line = split(&head, '\n', &found);
	line.n--; /* the CR */
	method = split(&line, ' ', &found);
	if (!found || !known_method(method) || method.n >= sizeof(out->method))
		return -EINVAL;
	target = split(&line, ' ', &found);
	version = line;
	if (!found || target.n == 0 ||
	    (!span_is(version, "HTTP/1.1") && !span_is(version, "HTTP/1.0")))
		return -EINVAL;
	for (size_t i = 0; i < target.n; i++)
		if (target.p[i] <= ' ' || target.p[i] >= 0x7f)
			return -EINVAL;
	memcpy(out->method, method.p, method.n);
	out->connect = span_is(method, "CONNECT");
	if (out->connect) {
		if (parse_authority(target, true, out) < 0)
			return -EINVAL;
	} else {
		if (target.n < 7 || strncasecmp(target.p, "http://", 7))
			return -EINVAL;
		path = (struct span){ target.p + 7, target.n - 7 };
		authority.p = path.p;
		while (path.n > 0 && path.p[0] != '/' && path.p[0] != '?') {
			path.p++;
			path.n--;
		}
		authority.n = (size_t)(path.p - authority.p);
		if (parse_authority(authority, false, out) < 0)
			return -EINVAL;
	}
	/* Header lines: checked for both, kept for plain http. */
	for (struct span rest = head; rest.n > 0;) {
		struct span name;

		line = split(&rest, '\n', &found);
		line.n--;
		if (!valid_header(line, &name))
			return -EINVAL;
	}
	out->head_len = (size_t)end;
	if (out->connect)
		return 0;
	cap = (size_t)end + authority.n + 64;
	fw = malloc(cap);
	if (!fw)
		return -ENOMEM;
	append(fw, &n, method.p, method.n);
	append(fw, &n, " ", 1);
	if (path.n == 0 || path.p[0] == '?')
		append(fw, &n, "/", 1);
	append(fw, &n, path.p, path.n);
	append(fw, &n, " ", 1);
	append(fw, &n, version.p, version.n);
	append(fw, &n, "\r\nHost: ", 8);
	append(fw, &n, authority.p, authority.n);
	append(fw, &n, "\r\n", 2);
	for (struct span rest = head; rest.n > 0;) {
		struct span value, name;

		line = split(&rest, '\n', &found);
		value = line;
		name = split(&value, ':', &found);
		if (!dropped_header(name))
			append(fw, &n, line.p, line.n + 1);
	}
	append(fw, &n, "Connection: close\r\n\r\n", 21);
	fw[n] = '\0';
	out->forward = fw;
	out->forward_len = n;
	return 0;
}

void proxy_req_free(struct proxy_req *r)
{
	free(r->forward);
	r->forward = NULL;
	r->forward_len = 0;
}

const char *proxy_reply(int status)
{
	switch (status) {
	case 200:
		return "HTTP/1.1 200 Connection established\r\n\r\n";
	case 400:
		return "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
		       "Content-Length: 33\r\nConnection: close\r\n\r\n"
		       "vitrine: malformed proxy request\n";
	case 403:
		return "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
		       "Content-Length: 46\r\nConnection: close\r\n\r\n"
		       "vitrine: egress denied by the session's rules\n";
	case 502:
		return "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
		       "Content-Length: 24\r\nConnection: close\r\n\r\n"
		       "vitrine: cannot connect\n";
	case 503:
		return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
		       "Content-Length: 30\r\nConnection: close\r\n\r\n"
		       "vitrine: too many connections\n";
	case 504:
		return "HTTP/1.1 504 Gateway Timeout\r\nContent-Type: text/plain\r\n"
		       "Content-Length: 17\r\nConnection: close\r\n\r\n"
		       "vitrine: timeout\n";
	}
	return NULL;
}
