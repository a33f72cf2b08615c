/* tests/fuzz/fuzz_ports.c: libFuzzer target for gateway/ports/port_parse.c,
 * whose inputs are a client's Host header and path (any client, before
 * its token is looked at) and a guest server's answer head (the guest's).
 * The first byte picks the parser (mod 4: host, target, head, cookie). Checked besides "no crash":
 *   - host: an accepted name has its port in 1..65535 and its id of
 *     [a-z0-9], both found in the name as given (the id in any case), and
 *     the name ends in the domain; the same with the name in upper case;
 *   - target: the written target has only printable ASCII and no space,
 *     '#' or byte that is not percent-encoded, and decodes back to the
 *     path (and the arguments) given;
 *   - head: an accepted head's length lies in the input, every header
 *     name and value lies inside the head, status in 100..999; the same
 *     head parses the same when given with more bytes after it; a
 *     shorter prefix never parses as complete past its end;
 *   - cookie (a Cookie header, and a link's value in it): a found value
 *     holds no ';', the stripped header has no such pair left and is no
 *     longer than the header; a value is good only as port_link_sign made
 *     it. */
#include "gateway/ports/port_link.h"
#include "gateway/ports/port_parse.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_host(const char *s)
{
	const char *slash = strchr(s, '/');
	char host[256], dom[128], id[40], up[256];
	size_t hl;
	int port = 0, port2 = 0, rc;

	if (!slash || (size_t)(slash - s) >= sizeof(host) || strlen(slash + 1) >= sizeof(dom))
		return;
	hl = (size_t)(slash - s);
	memcpy(host, s, hl);
	host[hl] = '\0';
	strcpy(dom, slash + 1);
	rc = port_host_parse(host, dom, &port, id, sizeof(id));
	if (rc == 0) {
		char *found;

		if (port < 1 || port > 65535 || !id[0])
			__builtin_trap();
		for (const char *c = id; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
				__builtin_trap();
		for (size_t i = 0; i < hl; i++)
			up[i] = (char)tolower((unsigned char)host[i]);
		up[hl] = '\0';
		found = up + strcspn(up, "-");
		if (!*found || strncmp(found + 1, id, strlen(id)) || found[1 + strlen(id)] != '.' ||
		    atoi(up) != port)
			__builtin_trap();
		for (size_t i = 0; i <= hl; i++)
			up[i] = (char)toupper((unsigned char)host[i]);
		if (port_host_parse(up, dom, &port2, id, sizeof(id)) != 0 || port2 != port)
			__builtin_trap();
	}
}

static int unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void fuzz_target(const char *s)
{
	const char *args[8];
	char *copy = strdup(s), *p, *out = malloc(4096), *dec;
	size_t n = 0, d = 0;
	long len;

	if (!copy || !out) {
		free(copy);
		free(out);
		return;
	}
	/* path, then arguments, split at '\n' */
	for (p = strchr(copy, '\n'); p && n < 8; p = strchr(p, '\n')) {
		*p++ = '\0';
		args[n++] = p;
	}
	if (p) /* more than 8: the rest is the last one's */
		n = 8;
	len = port_target(out, 4096, copy, args, n);
	if (len >= 0) {
		if ((size_t)len != strlen(out) || (copy[0] && copy[0] != '/'))
			__builtin_trap();
		dec = malloc((size_t)len + 1);
		if (!dec)
			goto done;
		for (long i = 0; i < len; i++) {
			unsigned char c = (unsigned char)out[i];

			if (c <= ' ' || c >= 0x7f || c == '#')
				__builtin_trap();
			if (c == '%') {
				int hi = unhex(out[i + 1]), lo = hi < 0 ? -1 : unhex(out[i + 2]);

				if (lo < 0)
					__builtin_trap();
				dec[d++] = (char)(hi * 16 + lo);
				i += 2;
			} else {
				dec[d++] = (char)c;
			}
		}
		dec[d] = '\0';
		/* the path reads back; a '?' stands alone exactly when arguments follow */
		{
			const char *q = strchr(out, '?');
			size_t pl = strlen(copy[0] ? copy : "/");

			if (strncmp(dec, copy[0] ? copy : "/", pl) || !n != !q)
				__builtin_trap();
		}
		free(dec);
	}
done:
	free(copy);
	free(out);
}

static void fuzz_head(const uint8_t *data, size_t size)
{
	struct port_head h, h2;
	long n = port_head_parse((const char *)data, size, &h), m;
	char *more;

	if (n < 0)
		return;
	if (n == 0) {
		if (size >= PORT_HEAD_MAX)
			__builtin_trap();
		return;
	}
	if ((size_t)n > size || (size_t)n > PORT_HEAD_MAX || h.status < 100 || h.status > 999 ||
	    h.n > PORT_HEADERS_MAX)
		__builtin_trap();
	for (size_t i = 0; i < h.n; i++) {
		const char *lo = (const char *)data, *hi = lo + n;

		if (h.h[i].name < lo || h.h[i].name + h.h[i].name_len > hi || !h.h[i].name_len ||
		    h.h[i].value < lo || h.h[i].value + h.h[i].value_len > hi)
			__builtin_trap();
	}
	if (h.chunked && h.content_length >= 0)
		__builtin_trap();
	/* a prefix is not complete before its end */
	m = port_head_parse((const char *)data, (size_t)n - 1, &h2);
	if (m > 0)
		__builtin_trap();
	/* more bytes after it change nothing */
	more = malloc((size_t)n + 16);
	if (!more)
		return;
	memcpy(more, data, (size_t)n);
	memset(more + n, 'Z', 16);
	m = port_head_parse(more, (size_t)n + 16, &h2);
	if (m != n || h2.status != h.status || h2.n != h.n ||
	    h2.content_length != h.content_length || h2.chunked != h.chunked)
		__builtin_trap();
	free(more);
}

static void fuzz_cookie(const char *s)
{
	static const uint8_t key[PORT_LINK_SECRET] = { 1, 2, 3 };
	char v[PORT_LINK_VALUE_MAX], good[PORT_LINK_VALUE_MAX], *out = malloc(strlen(s) + 1);
	const char *p;
	size_t n;

	if (!out)
		return;
	if (port_link_cookie(s, v, sizeof(v))) {
		if (strchr(v, ';'))
			__builtin_trap();
		port_link_sign(key, "vmx", 80, 4000000000, good);
		if (port_link_check(key, "vmx", 80, 0, v) != !strcmp(v, good))
			__builtin_trap();
	}
	n = port_link_cookie_strip(s, out, strlen(s) + 1);
	if (n != strlen(out) || n > strlen(s))
		__builtin_trap();
	for (p = out; (p = strstr(p, PORT_LINK_COOKIE "=")); p++)
		if (p == out || (p >= out + 2 && p[-2] == ';' && p[-1] == ' '))
			__builtin_trap();
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	if (data[0] % 4 == 2) {
		fuzz_head(data + 1, size - 1);
		return 0;
	}
	if (!(s = malloc(size)))
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	if (data[0] % 4 == 0)
		fuzz_host(s);
	else if (data[0] % 4 == 1)
		fuzz_target(s);
	else
		fuzz_cookie(s);
	free(s);
	return 0;
}
