/* tests/fuzz/fuzz_egress_addr.c: libFuzzer target for the address classes
 * of gateway/egress/egress_addr.c, the check that keeps a guest's proxy
 * connections off the host, its LAN and metadata services whatever name
 * it asked for (a DNS answer is the guest's to choose). The input's first
 * 16 bytes are an IPv6 address, its first 4 an IPv4 one. Checked besides
 * "no crash":
 *   - the IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d,
 *     64:ff9b:1::a.b.c.d) forms of an IPv4 address have its class, and
 *     are this host exactly when the IPv4 address is;
 *   - an address is this host when an interface has it, and loopback,
 *     0.0.0.0 and :: always are;
 *   - the text form parses back (inet_pton) to the same address, fits
 *     EGRESS_ADDR_TEXT_MAX, and a buffer one byte short is refused. */
#include "gateway/egress/egress_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_format(const struct sockaddr *sa, int family, const void *addr, size_t alen)
{
	char text[EGRESS_ADDR_TEXT_MAX], small[EGRESS_ADDR_TEXT_MAX];
	uint8_t back[16];
	size_t n;

	if (egress_addr_format(sa, text, sizeof(text)) != 0)
		__builtin_trap();
	n = strlen(text);
	if (inet_pton(family, text, back) != 1 || memcmp(back, addr, alen))
		__builtin_trap();
	if (egress_addr_format(sa, small, n) != -ENOSPC || (n && small[0]) ||
	    egress_addr_format(sa, small, n + 1) != 0 || strcmp(small, text))
		__builtin_trap();
	if (!egress_addr_class_name(egress_addr_classify(sa)))
		__builtin_trap();
}

/* An interface list of one address (is_own's view of this host). */
static bool own_with(const struct sockaddr *sa, const struct sockaddr *iface)
{
	struct ifaddrs ifa = { .ifa_name = (char *)"fuzz0", .ifa_addr = (struct sockaddr *)iface };

	return egress_addr_is_own(sa, &ifa);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in v4 = { .sin_family = AF_INET };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 }, form = { .sin6_family = AF_INET6 };
	static const uint8_t prefixes[3][12] = {
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff },
		{ 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 },
		{ 0, 0x64, 0xff, 0x9b, 0, 1, 0, 0, 0, 0, 0, 0 },
	};
	enum egress_addr_class c4;
	bool own4;

	if (size < 16)
		return 0;
	memcpy(&v4.sin_addr, data, 4);
	memcpy(&v6.sin6_addr, data, 16);
	check_format((struct sockaddr *)&v4, AF_INET, &v4.sin_addr, 4);
	check_format((struct sockaddr *)&v6, AF_INET6, &v6.sin6_addr, 16);

	c4 = egress_addr_classify((struct sockaddr *)&v4);
	own4 = egress_addr_is_own((struct sockaddr *)&v4, NULL);
	if ((c4 == EGRESS_ADDR_LOOPBACK || !memcmp(data, "\0\0\0\0", 4)) && !own4)
		__builtin_trap();
	if (!memcmp(data, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) &&
	    !egress_addr_is_own((struct sockaddr *)&v6, NULL))
		__builtin_trap();
	if (!own_with((struct sockaddr *)&v4, (struct sockaddr *)&v4) ||
	    !own_with((struct sockaddr *)&v6, (struct sockaddr *)&v6))
		__builtin_trap();
	for (int i = 0; i < 3; i++) {
		memcpy(form.sin6_addr.s6_addr, prefixes[i], 12);
		memcpy(form.sin6_addr.s6_addr + 12, data, 4);
		if (egress_addr_classify((struct sockaddr *)&form) != c4 ||
		    egress_addr_is_own((struct sockaddr *)&form, NULL) != own4 ||
		    !own_with((struct sockaddr *)&form, (struct sockaddr *)&v4))
			__builtin_trap();
	}
	if (egress_addr_classify(NULL) != EGRESS_ADDR_OTHER_SPECIAL)
		__builtin_trap();
	return 0;
}
