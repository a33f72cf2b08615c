/* gateway/ports/port_parse.c: see port_parse.h. */
#include "gateway/ports/port_parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int port_number_parse(const char *s)
{
	long n = 0;
	size_t i;

	if (!s || s[0] < '1' || s[0] > '9')
		return -1;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 5)
			return -1;
		n = n * 10 + (s[i] - '0');
	}
	return n <= 65535 ? (int)n : -1;
}

int port_host_parse(const char *host, const char *domain, int *port, char *id, size_t idlen)
{
	size_t name_len, dom_len, i, idn;
	const char *dash, *dot;
	long n = 0;

	if (!host || !domain || !domain[0] || idlen < 2)
		return -EINVAL;
	name_len = strcspn(host, ":");
	if (host[name_len] == ':' && !host[name_len + 1])
		return -EINVAL;
	for (i = name_len + (host[name_len] == ':'); host[i]; i++)
		if (host[i] < '0' || host[i] > '9')
			return -EINVAL;
	if (name_len && host[name_len - 1] == '.') /* the root's dot */
		name_len--;
	dom_len = strlen(domain);
	if (domain[dom_len - 1] == '.')
		dom_len--;
	if (!dom_len || name_len < dom_len + 4 || host[name_len - dom_len - 1] != '.' ||
	    strncasecmp(host + name_len - dom_len, domain, dom_len))
		return -EINVAL;
	dot = host + name_len - dom_len - 1; /* the label ends here */
	for (dash = host; dash < dot && *dash >= '0' && *dash <= '9'; dash++)
		if (dash - host < 6)
			n = n * 10 + (*dash - '0');
	if (dash == host || dash >= dot || *dash != '-' || host[0] == '0')
		return -EINVAL;
	idn = (size_t)(dot - dash - 1);
	if (!idn || idn >= idlen)
		return -EINVAL;
	for (i = 0; i < idn; i++) {
		char c = dash[1 + i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return -EINVAL;
		id[i] = c;
	}
	id[idn] = '\0';
	if (dash - host > 5 || n < 1 || n > 65535)
		return -ERANGE;
	*port = (int)n;
	return 0;
}

/* Appends c to out (at *at, cap bytes), percent-encoded unless keep says
 * it may stand as it is. False when it does not fit (with the NUL). */
static bool put(char *out, size_t cap, size_t *at, unsigned char c, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		     (c && strchr("-._~", c)) || (c && strchr(keep, c));

	if (*at + (plain ? 1 : 3) >= cap)
		return false;
	if (plain) {
		out[(*at)++] = (char)c;
	} else {
		out[(*at)++] = '%';
		out[(*at)++] = hex[c >> 4];
		out[(*at)++] = hex[c & 15];
	}
	return true;
}

long port_target(char *out, size_t cap, const char *path, const char *const *args, size_t nargs)
{
	size_t at = 0;

	if (!cap || !path || (path[0] && path[0] != '/'))
		return -1;
	if (!path[0])
		path = "/";
	for (const char *p = path; *p; p++)
		if (!put(out, cap, &at, (unsigned char)*p, "/:@!$&'()*+,;="))
			return -1;
	for (size_t i = 0; i < nargs; i++) {
		const char *a = args[i], *eq = strchr(a, '=');

		if (at + 1 >= cap)
			return -1;
		out[at++] = i ? '&' : '?';
		for (const char *p = a; *p; p++)
			/* the first '=' splits name and value; any later one is the value's */
			if (!put(out, cap, &at, (unsigned char)*p, p == eq ? "=" : "/:@!$'()*,;"))
				return -1;
	}
	out[at] = '\0';
	return (long)at;
}

static bool tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The end of the line at p (before CRLF or LF) within end, with *next
 * after it; NULL when no line end is there yet. */
static const char *line_end(const char *p, const char *end, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	if (!nl)
		return NULL;
	*next = nl + 1;
	return nl > p && nl[-1] == '\r' ? nl - 1 : nl;
}

static bool is(const struct port_header *h, const char *name)
{
	return h->name_len == strlen(name) && !strncasecmp(h->name, name, h->name_len);
}

/* Whether the comma list v[len] holds token (any case). */
static bool list_has(const char *v, size_t len, const char *token, bool last_only)
{
	size_t tl = strlen(token), i = 0;
	bool found = false;

	while (i < len) {
		size_t s, e;

		while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < len && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e == s)
			continue;
		found = e - s == tl && !strncasecmp(v + s, token, tl);
		if (found && !last_only)
			return true;
	}
	return found;
}

/* The content length of v[len] (digits only), or -1. */
static int64_t length_of(const char *v, size_t len)
{
	int64_t n = 0;

	if (!len || len > 18)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		n = n * 10 + (v[i] - '0');
	}
	return n;
}

long port_head_parse(const char *buf, size_t len, struct port_head *out)
{
	const char *end, *p = buf, *le, *next;

	memset(out, 0, sizeof(*out));
	out->content_length = -1;
	if (!len) /* buf may be NULL */
		return 0;
	end = buf + (len < PORT_HEAD_MAX ? len : PORT_HEAD_MAX);
	if (!(le = line_end(p, end, &next)))
		return len >= PORT_HEAD_MAX ? -1 : 0;
	/* HTTP/1.x SSS[ reason] */
	if (le - p < 12 || memcmp(p, "HTTP/1.", 7) || p[7] < '0' || p[7] > '9' || p[8] != ' ' ||
	    p[9] < '1' || p[9] > '9' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
	    (le - p > 12 && p[12] != ' '))
		return -1;
	out->minor = p[7] - '0';
	out->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	for (p = next;; p = next) {
		struct port_header *h;
		const char *colon, *v;

		if (!(le = line_end(p, end, &next)))
			return len >= PORT_HEAD_MAX ? -1 : 0;
		if (le == p)
			break; /* the empty line: the head's end */
		colon = memchr(p, ':', (size_t)(le - p));
		if (!colon || colon == p || out->n == PORT_HEADERS_MAX)
			return -1;
		for (const char *c = p; c < colon; c++)
			if (!tchar(*c))
				return -1;
		for (v = colon + 1; v < le && (*v == ' ' || *v == '\t'); v++)
			;
		h = &out->h[out->n++];
		h->name = p;
		h->name_len = (size_t)(colon - p);
		h->value = v;
		h->value_len = (size_t)(le - v);
		while (h->value_len && (v[h->value_len - 1] == ' ' || v[h->value_len - 1] == '\t'))
			h->value_len--;
		for (size_t i = 0; i < h->value_len; i++)
			if ((unsigned char)v[i] < 0x20 && v[i] != '\t')
				return -1; /* a bare CR or a control character */
		if (is(h, "content-length")) {
			int64_t cl = length_of(h->value, h->value_len);

			if (cl < 0 || (out->content_length >= 0 && out->content_length != cl))
				return -1;
			out->content_length = cl;
		} else if (is(h, "transfer-encoding")) {
			out->chunked = list_has(h->value, h->value_len, "chunked", true);
		} else if (is(h, "connection")) {
			out->conn_close |= list_has(h->value, h->value_len, "close", false);
		}
	}
	if (out->chunked && out->content_length >= 0)
		return -1; /* a smuggler's answer: which length counts? */
	return (long)(next - buf);
}

bool port_header_hop(const char *name, size_t len)
{
	static const char *const hop[] = {
		"connection", "keep-alive",	    "proxy-connection",
		"upgrade",    "proxy-authenticate", "proxy-authorization",
		"te"
	};

	for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		if (len == strlen(hop[i]) && !strncasecmp(name, hop[i], len))
			return true;
	return false;
}
