/* gateway/egress/egress_addr.h: what kind of address a name the guest asked for
 * resolved to. Whatever a session's rules allow, the proxy refuses to
 * connect anywhere but public addresses by default: a name in the
 * allowlist may resolve (or be rebound) to the gateway's own host, its LAN
 * or a cloud metadata service. Pure. */
#ifndef VITRINE_GATEWAY_EGRESS_ADDR_H
#define VITRINE_GATEWAY_EGRESS_ADDR_H

#include <ifaddrs.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define EGRESS_ADDR_TEXT_MAX 46 /* INET6_ADDRSTRLEN: "ffff:...:255.255.255.255" and NUL */

enum egress_addr_class {
	EGRESS_ADDR_PUBLIC,
	EGRESS_ADDR_LOOPBACK, /* 127/8, ::1 */
	EGRESS_ADDR_PRIVATE, /* 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, fec0::/10 */
	EGRESS_ADDR_LINK_LOCAL, /* 169.254/16, fe80::/10 */
	/* 0/8, 192.0.0/24, 198.18/15, 224/4, 240/4 (255.255.255.255 included),
	 * ::, ::/96 (IPv4-compatible), ff00::/8, 64:ff9b:1::/48 but for its /96,
	 * any other family */
	EGRESS_ADDR_OTHER_SPECIAL,
};

/* The class of sa (AF_INET or AF_INET6). An IPv6 address that stands for
 * an IPv4 one is classified as that a.b.c.d: IPv4-mapped ::ffff:a.b.c.d
 * and NAT64's 64:ff9b::a.b.c.d and 64:ff9b:1::a.b.c.d (the rest of the
 * local-use 64:ff9b:1::/48 is special: its translator may read the IPv4
 * address from other bits). NULL or another family:
 * EGRESS_ADDR_OTHER_SPECIAL. This function can't fail. */
enum egress_addr_class egress_addr_classify(const struct sockaddr *sa);

/* True when sa reaches this host: loopback, 0.0.0.0 or ::, or one of the
 * interface addresses in ifs (a getifaddrs() list, may be NULL). An IPv6
 * address that stands for an IPv4 one (as above) is compared with the
 * IPv4 interface addresses too. Pure. This function can't fail. */
bool egress_addr_is_own(const struct sockaddr *sa, const struct ifaddrs *ifs);

/* "public", "loopback", "private", "link_local" or "special". Never NULL. */
const char *egress_addr_class_name(enum egress_addr_class c);

/* The address of sa as text, without port or brackets ("192.0.2.7",
 * "2001:db8::1", "::ffff:10.0.0.1") into out. Returns 0, -EAFNOSUPPORT for
 * another family (out ""), or -ENOSPC when len is too small (out "" when
 * len > 0). EGRESS_ADDR_TEXT_MAX is always enough. */
int egress_addr_format(const struct sockaddr *sa, char *out, size_t len);

#endif
