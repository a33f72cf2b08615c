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

static enum egress_addr_class classify6(const uint8_t b[16])
{
	static const uint8_t zero[12], mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint32_t low = IP4(b[12], b[13], b[14], b[15]);

	if (!memcmp(b, mapped, 12))
		return classify4(low);
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
