/* gateway/ports/port_link.c: see port_link.h. */
#include "gateway/ports/port_link.h"

#include "common/sha256.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* HMAC-SHA256 (RFC 2104) of msg[len] under key[PORT_LINK_SECRET]. */
static void hmac(const uint8_t *key, const char *msg, size_t len, uint8_t out[SHA256_LEN])
{
	uint8_t pad[64], inner[SHA256_LEN];
	struct sha256_ctx c;

	memset(pad, 0x36, sizeof(pad));
	for (size_t i = 0; i < PORT_LINK_SECRET; i++)
		pad[i] ^= key[i];
	sha256_init(&c);
	sha256_update(&c, pad, sizeof(pad));
	sha256_update(&c, msg, len);
	sha256_final(&c, inner);
	memset(pad, 0x5c, sizeof(pad));
	for (size_t i = 0; i < PORT_LINK_SECRET; i++)
		pad[i] ^= key[i];
	sha256_init(&c);
	sha256_update(&c, pad, sizeof(pad));
	sha256_update(&c, inner, sizeof(inner));
	sha256_final(&c, out);
}

void port_link_sign(const uint8_t secret[PORT_LINK_SECRET], const char *id, int port,
		    int64_t expiry, char *out)
{
	char msg[160];
	uint8_t mac[SHA256_LEN];
	int n = snprintf(msg, sizeof(msg), "vitrine-port\n%s\n%d\n%" PRId64, id, port, expiry), at;

	hmac(secret, msg, n < (int)sizeof(msg) ? (size_t)n : sizeof(msg) - 1, mac);
	at = snprintf(out, PORT_LINK_VALUE_MAX, "%" PRId64 ".", expiry);
	for (int i = 0; i < SHA256_LEN && at + 2 < PORT_LINK_VALUE_MAX; i++)
		at += snprintf(out + at, PORT_LINK_VALUE_MAX - (size_t)at, "%02x", mac[i]);
}

bool port_link_check(const uint8_t secret[PORT_LINK_SECRET], const char *id, int port, int64_t now,
		     const char *value)
{
	char want[PORT_LINK_VALUE_MAX];
	int64_t expiry = 0;
	unsigned diff = 0;
	size_t i, n;

	for (i = 0; value[i] >= '0' && value[i] <= '9' && i < 18; i++)
		expiry = expiry * 10 + (value[i] - '0');
	if (!i || value[i] != '.' || expiry <= now)
		return false;
	port_link_sign(secret, id, port, expiry, want);
	n = strlen(want);
	if (strlen(value) != n)
		return false;
	for (i = 0; i < n; i++)
		diff |= (unsigned)(want[i] ^ value[i]);
	return diff == 0;
}

/* The next "name=value" pair of a Cookie header at *p: name and value
 * bounds; false at the end. */
static bool next_pair(const char **p, const char **name, size_t *nlen, const char **val,
		      size_t *vlen)
{
	const char *s = *p, *e, *eq;

	while (*s == ' ' || *s == ';')
		s++;
	if (!*s)
		return false;
	e = s + strcspn(s, ";");
	eq = memchr(s, '=', (size_t)(e - s));
	*name = s;
	*nlen = eq ? (size_t)(eq - s) : (size_t)(e - s);
	*val = eq ? eq + 1 : e;
	*vlen = (size_t)(e - *val);
	*p = e;
	return true;
}

bool port_link_cookie(const char *header, char *out, size_t len)
{
	const char *p = header, *name, *val;
	size_t nlen, vlen, cl = strlen(PORT_LINK_COOKIE);

	while (p && next_pair(&p, &name, &nlen, &val, &vlen))
		if (nlen == cl && !memcmp(name, PORT_LINK_COOKIE, cl) && vlen < len) {
			memcpy(out, val, vlen);
			out[vlen] = '\0';
			return true;
		}
	return false;
}

size_t port_link_cookie_strip(const char *header, char *out, size_t len)
{
	const char *p = header, *name, *val;
	size_t nlen, vlen, at = 0, cl = strlen(PORT_LINK_COOKIE);

	if (!len)
		return 0;
	while (p && next_pair(&p, &name, &nlen, &val, &vlen)) {
		size_t pl = (size_t)(val + vlen - name);

		if (nlen == cl && !memcmp(name, PORT_LINK_COOKIE, cl))
			continue;
		if (at + (at ? 2 : 0) + pl + 1 > len)
			break;
		if (at) {
			out[at++] = ';';
			out[at++] = ' ';
		}
		memcpy(out + at, name, pl);
		at += pl;
	}
	out[at] = '\0';
	return at;
}
