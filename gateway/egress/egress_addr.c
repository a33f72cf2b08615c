/* gateway/egress/egress_addr.c: see egress_addr.h. */
#include "gateway/egress/egress_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* a (host order) is in prefix/bits. */
static bool in4(uint32_t a, uint32_t prefix, int bits)
{
	uint32_t mask = bits ? ~(uint32_t)0 << (32 - bits) : 0;

	return (a & mask) == (prefix & mask);
}

#define IP4(a, b, c, d)                                                                            \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static enum egress_addr_class classify4(uint32_t a)
{
	if (in4(a, IP4(127, 0, 0, 0), 8))
		return EGRESS_ADDR_LOOPBACK;
	if (in4(a, IP4(10, 0, 0, 0), 8) || in4(a, IP4(172, 16, 0, 0), 12) ||
	    in4(a, IP4(192, 168, 0, 0), 16) || in4(a, IP4(100, 64, 0, 0), 10))
		return EGRESS_ADDR_PRIVATE;
	if (in4(a, IP4(169, 254, 0, 0), 16))
		return EGRESS_ADDR_LINK_LOCAL;
	if (in4(a, IP4(0, 0, 0, 0), 8) || in4(a, IP4(224, 0, 0, 0), 4) ||
	    in4(a, IP4(240, 0, 0, 0), 4) || in4(a, IP4(192, 0, 0, 0), 24) ||
	    in4(a, IP4(198, 18, 0, 0), 15))
		return EGRESS_ADDR_OTHER_SPECIAL;
	return EGRESS_ADDR_PUBLIC;
}

static const uint8_t mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
/* NAT64 (RFC 6052): the well-known 64:ff9b::/96 and the local-use
 * 64:ff9b:1::/48 (RFC 8215), which only the /96 form 64:ff9b:1::/96 makes
 * unambiguous here: a site's translator may use a longer sub-prefix and
 * read the IPv4 address from other bits. */
static const uint8_t nat64_prefix[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
static const uint8_t nat64_local_prefix[6] = { 0, 0x64, 0xff, 0x9b, 0, 1 };

/* The IPv4 address (host order) that b stands for: ::ffff:a.b.c.d,
 * 64:ff9b::a.b.c.d, 64:ff9b:1::a.b.c.d, and 6to4's 2002:AABB:CCDD::/48
 * (RFC 3056: a relay carries it to a.b.c.d). */
static bool embedded4(const uint8_t b[16], uint32_t *a)
{
	static const uint8_t zero[6];

	if (b[0] == 0x20 && b[1] == 0x02) {
		*a = IP4(b[2], b[3], b[4], b[5]);
		return true;
	}
	if (memcmp(b, mapped_prefix, 12) && memcmp(b, nat64_prefix, 12) &&
	    (memcmp(b, nat64_local_prefix, 6) || memcmp(b + 6, zero, 6)))
		return false;
	*a = IP4(b[12], b[13], b[14], b[15]);
	return true;
}

static enum egress_addr_class classify6(const uint8_t b[16])
{
	static const uint8_t zero[12];
	uint32_t low = IP4(b[12], b[13], b[14], b[15]);

	if (embedded4(b, &low))
		return classify4(low);
	/* Teredo (RFC 4380), 2001:0::/32: a tunnel to an IPv4 host named in
	 * its last bits (obfuscated); not a way out the rules can judge. */
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0)
		return EGRESS_ADDR_OTHER_SPECIAL;
	if (!memcmp(b, nat64_local_prefix, 6)) /* a local translator's own sub-prefix */
		return EGRESS_ADDR_OTHER_SPECIAL;
	if (!memcmp(b, zero, 12)) /* ::, ::1, and deprecated IPv4-compatible ::a.b.c.d */
		return low == 1 ? EGRESS_ADDR_LOOPBACK : EGRESS_ADDR_OTHER_SPECIAL;
	if ((b[0] & 0xfe) == 0xfc) /* fc00::/7 */
		return EGRESS_ADDR_PRIVATE;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) /* fe80::/10 */
		return EGRESS_ADDR_LINK_LOCAL;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) /* fec0::/10, the old site-local */
		return EGRESS_ADDR_PRIVATE;
	if (b[0] == 0xff) /* ff00::/8 */
		return EGRESS_ADDR_OTHER_SPECIAL;
	return EGRESS_ADDR_PUBLIC;
}

enum egress_addr_class egress_addr_classify(const struct sockaddr *sa)
{
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		return classify4(ntohl(in->sin_addr.s_addr));
	}
	if (sa && sa->sa_family == AF_INET6)
		return classify6(((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
	return EGRESS_ADDR_OTHER_SPECIAL;
}

bool egress_addr_is_own(const struct sockaddr *sa, const struct ifaddrs *ifs)
{
	const uint8_t *b6 = NULL;
	uint32_t v4 = 0;
	bool has4 = false;

	if (!sa)
		return false;
	if (sa->sa_family == AF_INET) {
		v4 = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
		has4 = true;
	} else if (sa->sa_family == AF_INET6) {
		static const uint8_t any6[16];

		b6 = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		has4 = embedded4(b6, &v4);
		if (!memcmp(b6, any6, 16)) /* :: means this host, like 0.0.0.0 */
			return true;
	} else {
		return false;
	}
	if (egress_addr_classify(sa) == EGRESS_ADDR_LOOPBACK || (has4 && v4 == INADDR_ANY))
		return true;
	for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
		const struct sockaddr *a = i->ifa_addr;

		if (!a)
			continue;
		if (has4 && a->sa_family == AF_INET &&
		    ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) == v4)
			return true;
		if (b6 && a->sa_family == AF_INET6 &&
		    !memcmp(((const struct sockaddr_in6 *)a)->sin6_addr.s6_addr, b6, 16))
			return true;
	}
	return false;
}

const char *egress_addr_class_name(enum egress_addr_class c)
{
	switch (c) {
	case EGRESS_ADDR_PUBLIC:
		return "public";
	case EGRESS_ADDR_LOOPBACK:
		return "loopback";
	case EGRESS_ADDR_PRIVATE:
		return "private";
	case EGRESS_ADDR_LINK_LOCAL:
		return "link_local";
	case EGRESS_ADDR_OTHER_SPECIAL:
		break;
	}
	return "special";
}

int egress_addr_format(const struct sockaddr *sa, char *out, size_t len)
{
	socklen_t n = len > 4096 ? 4096 : (socklen_t)len;
	const void *addr;

	if (len > 0)
		out[0] = '\0';
	if (sa && sa->sa_family == AF_INET)
		addr = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (sa && sa->sa_family == AF_INET6)
		addr = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	else
		return -EAFNOSUPPORT;
	if (!inet_ntop(sa->sa_family, addr, out, n)) {
		if (len > 0)
			out[0] = '\0';
		return -ENOSPC;
	}
	return 0;
}
