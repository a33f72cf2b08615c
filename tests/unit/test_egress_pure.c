/* tests/unit/test_egress_pure.c: the pure parts of per-session egress: the
 * allowlist (parsing, every refusal, matching), the classes of resolved
 * addresses, the proxy request head (parsed as bytes arrive, rewritten for
 * plain http) and the connection log the API serves. */
#include "gateway/egress/egress_addr.h"
#include "gateway/egress/egress_log.h"
#include "gateway/egress/egress_rules.h"
#include "gateway/egress/proxy_req.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- rules ---- */

/* Parses the JSON text egress (NULL: no field); NULL on refusal, with the
 * message in err. */
static struct egress_rules *rules(const char *egress, char *err, size_t errlen)
{
	json_t *j = egress ? json_loads(egress, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : NULL;
	struct egress_rules *r = NULL;
	int rc;

	if (egress && !j)
		fail_msg("bad test JSON %s", egress);
	err[0] = '\0';
	rc = egress_rules_parse(j, &r, err, errlen);
	json_decref(j);
	if (rc == 0)
		assert_non_null(r);
	else
		assert_null(r);
	return r;
}

/* The normalized JSON of r, as text (static buffer). */
static const char *rules_text(const struct egress_rules *r)
{
	static char out[4096];
	json_t *j = egress_rules_json(r);
	char *s = json_dumps(j, JSON_COMPACT);

	snprintf(out, sizeof(out), "%s", s);
	free(s);
	json_decref(j);
	return out;
}

static void test_rules_parse(void **state)
{
	static const char *empty[] = { NULL, "null", "{}", "{\"allow\":null}", "{\"allow\":[]}" };
	struct egress_rules *r;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		r = rules(empty[i], err, sizeof(err));
		assert_non_null(r);
		assert_true(egress_rules_empty(r));
		assert_string_equal(rules_text(r), "{\"allow\":[]}");
		assert_false(egress_rules_allows(r, "example.com", 443));
		egress_rules_destroy(r);
	}
	r = rules("{\"allow\":[\"Example.COM\",\"*.Example.org:443\",\"web.test:8080\","
		  "\"api.test:*\",\"*\",\"*:*\",\"192.0.2.7\",\"10.0.0.1:22\",\"a-b.c1.xn--p1ai\","
		  "\"*.com\",\"x:1\",\"y:65535\"]}",
		  err, sizeof(err));
	assert_non_null(r);
	assert_false(egress_rules_empty(r));
	assert_string_equal(rules_text(r),
			    "{\"allow\":[\"example.com\",\"*.example.org:443\",\"web.test:8080\","
			    "\"api.test:*\",\"*\",\"*:*\",\"192.0.2.7\",\"10.0.0.1:22\","
			    "\"a-b.c1.xn--p1ai\",\"*.com\",\"x:1\",\"y:65535\"]}");
	egress_rules_destroy(r);
	egress_rules_destroy(NULL);
	assert_true(egress_rules_empty(NULL));
	assert_false(egress_rules_allows(NULL, "example.com", 80));
}

static void test_rules_limits(void **state)
{
	char label63[64], label64[65], name253[254], name254[255], body[1024], err[256];
	struct egress_rules *r;
	json_t *j, *allow;

	(void)state;
	memset(label63, 'a', 63);
	label63[63] = '\0';
	memset(label64, 'a', 64);
	label64[64] = '\0';
	/* 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 */
	snprintf(name253, sizeof(name253), "%s.%s.%s.%.61s", label63, label63, label63, label63);
	snprintf(name254, sizeof(name254), "%s.%s.%s.%.62s", label63, label63, label63, label63);
	assert_int_equal(strlen(name253), 253);
	assert_int_equal(strlen(name254), 254);

	snprintf(body, sizeof(body), "{\"allow\":[\"%s\",\"%s\"]}", label63, name253);
	r = rules(body, err, sizeof(err));
	assert_non_null(r);
	assert_true(egress_rules_allows(r, name253, 443));
	egress_rules_destroy(r);
	snprintf(body, sizeof(body), "{\"allow\":[\"ok.test\",\"%s\"]}", label64);
	assert_null(rules(body, err, sizeof(err)));
	assert_non_null(strstr(err, "egress.allow[1]: 'aaaa"));
	snprintf(body, sizeof(body), "{\"allow\":[\"%s\"]}", name254);
	assert_null(rules(body, err, sizeof(err)));
	assert_non_null(strstr(err, "egress.allow[0]:"));

	/* 256 entries, not 257 */
	allow = json_array();
	for (int i = 0; i < EGRESS_MAX_RULES; i++)
		json_array_append_new(allow, json_sprintf("h%d.test", i));
	j = json_pack("{s:O}", "allow", allow);
	assert_int_equal(egress_rules_parse(j, &r, err, sizeof(err)), 0);
	assert_true(egress_rules_allows(r, "h255.test", 80));
	egress_rules_destroy(r);
	json_array_append_new(allow, json_string("one-more.test"));
	assert_int_equal(egress_rules_parse(j, &r, err, sizeof(err)), -EINVAL);
	assert_null(r);
	assert_string_equal(err, "egress.allow has 257 entries, more than 256");
	json_decref(j);
	json_decref(allow);
}

static void test_rules_refusals(void **state)
{
	static const struct {
		const char *egress, *message;
	} bad[] = {
		{ "[\"a.com\"]", "egress must be an object {\"allow\": [...]} or null" },
		{ "\"a.com\"", "egress must be an object {\"allow\": [...]} or null" },
		{ "{\"allow\":[],\"deny\":[]}", "egress: unknown field 'deny'" },
		{ "{\"allow\":\"a.com\"}", "egress.allow must be an array of strings" },
		{ "{\"allow\":{}}", "egress.allow must be an array of strings" },
		{ "{\"allow\":[\"a.com\",5]}",
		  "egress.allow[1] must be a string (HOST[:PORT|:*])" },
		{ "{\"allow\":[null]}", "egress.allow[0] must be a string (HOST[:PORT|:*])" },
		{ "{\"allow\":[\"a\\u0000b.com\"]}",
		  "egress.allow[0] must be a string (HOST[:PORT|:*])" },
	};
	/* entries that are not a host, each at index 2 */
	static const char *not_host[] = {
		"exa mple.com", "",
		":80",		"example.com.",
		".example.com", "a..b",
		"*.",		"**",
		"*.*",		"a.*.com",
		"*example.com", "*.*.example.com",
		"ex_ample.com", "exam/ple.com",
		"[::1]",	"::1",
		"1.2.3",	"1.2.3.4.5",
		"256.1.1.1",	"01.2.3.4",
		"0x7f.0.0.1",	"127.1",
		"2130706433",	"a.123",
		"*.1.2.3.4",	"a.b-",
		"-a.com",	"a-.com",
		"é.com",	"http://a.com",
		"a.com/x",
	};
	static const char *bad_port[] = { "a.com:0",  "a.com:65536",  "a.com:",	    "a.com:-1",
					  "a.com:08", "a.com:8a",     "a.com:**",   "a.com:+80",
					  "*:0",      "a.com:123456", "a.com:80:81" };
	char body[512], err[256], want[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (rules(bad[i].egress, err, sizeof(err)))
			fail_msg("accepted %s", bad[i].egress);
		assert_string_equal(err, bad[i].message);
	}
	for (size_t i = 0; i < sizeof(not_host) / sizeof(not_host[0]); i++) {
		json_t *j;
		struct egress_rules *r;

		j = json_pack("{s:[s,s,s]}", "allow", "a.com", "b.com", not_host[i]);
		assert_non_null(j);
		if (egress_rules_parse(j, &r, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted '%s'", not_host[i]);
		assert_null(r);
		snprintf(want, sizeof(want), "egress.allow[2]: '%s' is not a host name",
			 not_host[i]);
		if (strncmp(err, want, strlen(want)))
			fail_msg("'%s' -> %s", not_host[i], err);
		json_decref(j);
	}
	for (size_t i = 0; i < sizeof(bad_port) / sizeof(bad_port[0]); i++) {
		snprintf(body, sizeof(body), "{\"allow\":[\"%s\"]}", bad_port[i]);
		if (rules(body, err, sizeof(err)))
			fail_msg("accepted %s", bad_port[i]);
		snprintf(want, sizeof(want),
			 "egress.allow[0]: '%s' has a bad port (1..65535 or '*')", bad_port[i]);
		assert_string_equal(err, want);
	}
	/* the example of the API documentation */
	assert_null(rules("{\"allow\":[\"a.com\",\"b.com\",\"exa mple.com\"]}", err, sizeof(err)));
	assert_non_null(strstr(err, "egress.allow[2]: 'exa mple.com' is not a host name"));
}

static void test_rules_match(void **state)
{
	struct egress_rules *r;
	char err[256];

	(void)state;
	r = rules("{\"allow\":[\"example.com\",\"*.example.org:443\",\"web.test:8080\","
		  "\"api.test:*\",\"192.0.2.7\",\"198.51.100.1:*\"]}",
		  err, sizeof(err));
	assert_non_null(r);
	/* a name: that name, ports 80 and 443 */
	assert_true(egress_rules_allows(r, "example.com", 80));
	assert_true(egress_rules_allows(r, "example.com", 443));
	assert_false(egress_rules_allows(r, "example.com", 8080));
	assert_false(egress_rules_allows(r, "example.com", 22));
	assert_true(egress_rules_allows(r, "EXAMPLE.Com", 443));
	assert_true(egress_rules_allows(r, "example.com.", 443));
	assert_false(egress_rules_allows(r, "example.com..", 443));
	assert_false(egress_rules_allows(r, "www.example.com", 443));
	assert_false(egress_rules_allows(r, "example.com.evil.test", 443));
	assert_false(egress_rules_allows(r, "xexample.com", 443));
	assert_false(egress_rules_allows(r, "example.co", 443));
	/* *.NAME: strictly below, at any depth, on its port only */
	assert_true(egress_rules_allows(r, "www.example.org", 443));
	assert_true(egress_rules_allows(r, "a.b.c.example.org", 443));
	assert_true(egress_rules_allows(r, "A.Example.ORG.", 443));
	assert_true(egress_rules_allows(r, "under_score.example.org", 443));
	assert_true(egress_rules_allows(r, "-odd-.example.org", 443));
	assert_false(egress_rules_allows(r, "example.org", 443));
	assert_false(egress_rules_allows(r, "www.example.org", 80));
	assert_false(egress_rules_allows(r, "wwwexample.org", 443));
	assert_false(egress_rules_allows(r, ".example.org", 443));
	assert_false(egress_rules_allows(r, "a..example.org", 443));
	/* explicit and any port */
	assert_true(egress_rules_allows(r, "web.test", 8080));
	assert_false(egress_rules_allows(r, "web.test", 80));
	assert_false(egress_rules_allows(r, "web.test", 443));
	assert_true(egress_rules_allows(r, "api.test", 1));
	assert_true(egress_rules_allows(r, "api.test", 65535));
	assert_false(egress_rules_allows(r, "api.test", 0));
	assert_false(egress_rules_allows(r, "api.test", 65536));
	assert_false(egress_rules_allows(r, "api.test", -1));
	/* IPv4 literals: the canonical dotted quad only */
	assert_true(egress_rules_allows(r, "192.0.2.7", 443));
	assert_false(egress_rules_allows(r, "192.0.2.7", 22));
	assert_false(egress_rules_allows(r, "192.0.2.70", 443));
	assert_false(egress_rules_allows(r, "192.0.2.007", 443));
	assert_true(egress_rules_allows(r, "198.51.100.1", 5432));
	/* IPv6 literals, junk */
	assert_false(egress_rules_allows(r, "[2001:db8::1]", 443));
	assert_false(egress_rules_allows(r, "::1", 443));
	assert_false(egress_rules_allows(r, "", 443));
	assert_false(egress_rules_allows(r, ".", 443));
	assert_false(egress_rules_allows(r, NULL, 443));
	assert_false(egress_rules_allows(r, "exa mple.com", 80));
	egress_rules_destroy(r);

	/* "*": any name or IPv4 literal, never an IPv6 literal nor a number
	 * inet_aton would read as an address */
	r = rules("{\"allow\":[\"*\"]}", err, sizeof(err));
	assert_true(egress_rules_allows(r, "anything.test", 443));
	assert_true(egress_rules_allows(r, "localhost", 80));
	assert_true(egress_rules_allows(r, "10.1.2.3", 80));
	assert_false(egress_rules_allows(r, "10.1.2.3", 8080));
	assert_false(egress_rules_allows(r, "[::1]", 443));
	assert_false(egress_rules_allows(r, "fe80::1", 443));
	assert_false(egress_rules_allows(r, "2130706433", 80));
	assert_false(egress_rules_allows(r, "127.1", 80));
	assert_false(egress_rules_allows(r, "0x7f.0.0.1", 80));
	assert_false(egress_rules_allows(r, "1.2.3.0x4", 80));
	egress_rules_destroy(r);
	r = rules("{\"allow\":[\"*:*\"]}", err, sizeof(err));
	assert_true(egress_rules_allows(r, "a.test", 22));
	assert_true(egress_rules_allows(r, "203.0.113.9", 5900));
	assert_false(egress_rules_allows(r, "[2001:db8::1]", 22));
	egress_rules_destroy(r);
	/* a name entry matches no IPv4 literal and the reverse */
	r = rules("{\"allow\":[\"*.arpa\",\"10.0.0.1\"]}", err, sizeof(err));
	assert_true(egress_rules_allows(r, "x.in-addr.arpa", 443));
	assert_false(egress_rules_allows(r, "10.0.0.2", 443));
	assert_true(egress_rules_allows(r, "10.0.0.1.", 443));
	egress_rules_destroy(r);
}

/* ---- addresses ---- */

static enum egress_addr_class class_of(const char *text)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
	} else if (inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
	} else {
		fail_msg("bad test address %s", text);
	}
	return egress_addr_classify((struct sockaddr *)&ss);
}

static void test_addr_classes(void **state)
{
	static const struct {
		const char *addr;
		enum egress_addr_class c;
	} cases[] = {
		{ "8.8.8.8", EGRESS_ADDR_PUBLIC },
		{ "1.1.1.1", EGRESS_ADDR_PUBLIC },
		{ "0.0.0.0", EGRESS_ADDR_OTHER_SPECIAL },
		{ "0.255.255.255", EGRESS_ADDR_OTHER_SPECIAL },
		{ "1.0.0.0", EGRESS_ADDR_PUBLIC },
		{ "9.255.255.255", EGRESS_ADDR_PUBLIC },
		{ "10.0.0.0", EGRESS_ADDR_PRIVATE },
		{ "10.255.255.255", EGRESS_ADDR_PRIVATE },
		{ "11.0.0.0", EGRESS_ADDR_PUBLIC },
		{ "100.63.255.255", EGRESS_ADDR_PUBLIC },
		{ "100.64.0.0", EGRESS_ADDR_PRIVATE },
		{ "100.64.0.1", EGRESS_ADDR_PRIVATE },
		{ "100.127.255.255", EGRESS_ADDR_PRIVATE },
		{ "100.128.0.0", EGRESS_ADDR_PUBLIC },
		{ "126.255.255.255", EGRESS_ADDR_PUBLIC },
		{ "127.0.0.0", EGRESS_ADDR_LOOPBACK },
		{ "127.0.0.1", EGRESS_ADDR_LOOPBACK },
		{ "127.255.255.255", EGRESS_ADDR_LOOPBACK },
		{ "128.0.0.0", EGRESS_ADDR_PUBLIC },
		{ "169.253.255.255", EGRESS_ADDR_PUBLIC },
		{ "169.254.0.0", EGRESS_ADDR_LINK_LOCAL },
		{ "169.254.169.254", EGRESS_ADDR_LINK_LOCAL },
		{ "169.254.255.255", EGRESS_ADDR_LINK_LOCAL },
		{ "169.255.0.0", EGRESS_ADDR_PUBLIC },
		{ "172.15.255.255", EGRESS_ADDR_PUBLIC },
		{ "172.16.0.0", EGRESS_ADDR_PRIVATE },
		{ "172.31.255.255", EGRESS_ADDR_PRIVATE },
		{ "172.32.0.0", EGRESS_ADDR_PUBLIC },
		{ "191.255.255.255", EGRESS_ADDR_PUBLIC },
		{ "192.0.0.0", EGRESS_ADDR_OTHER_SPECIAL },
		{ "192.0.0.255", EGRESS_ADDR_OTHER_SPECIAL },
		{ "192.0.1.0", EGRESS_ADDR_PUBLIC },
		{ "192.167.255.255", EGRESS_ADDR_PUBLIC },
		{ "192.168.0.0", EGRESS_ADDR_PRIVATE },
		{ "192.168.255.255", EGRESS_ADDR_PRIVATE },
		{ "192.169.0.0", EGRESS_ADDR_PUBLIC },
		{ "198.17.255.255", EGRESS_ADDR_PUBLIC },
		{ "198.18.0.0", EGRESS_ADDR_OTHER_SPECIAL },
		{ "198.19.255.255", EGRESS_ADDR_OTHER_SPECIAL },
		{ "198.20.0.0", EGRESS_ADDR_PUBLIC },
		{ "223.255.255.255", EGRESS_ADDR_PUBLIC },
		{ "224.0.0.0", EGRESS_ADDR_OTHER_SPECIAL },
		{ "239.255.255.255", EGRESS_ADDR_OTHER_SPECIAL },
		{ "240.0.0.0", EGRESS_ADDR_OTHER_SPECIAL },
		{ "255.255.255.255", EGRESS_ADDR_OTHER_SPECIAL },
		{ "::", EGRESS_ADDR_OTHER_SPECIAL },
		{ "::1", EGRESS_ADDR_LOOPBACK },
		{ "::2", EGRESS_ADDR_OTHER_SPECIAL },
		{ "::127.0.0.1", EGRESS_ADDR_OTHER_SPECIAL },
		{ "::ffff:127.0.0.1", EGRESS_ADDR_LOOPBACK },
		{ "::ffff:10.1.2.3", EGRESS_ADDR_PRIVATE },
		{ "::ffff:169.254.169.254", EGRESS_ADDR_LINK_LOCAL },
		{ "::ffff:0.0.0.0", EGRESS_ADDR_OTHER_SPECIAL },
		{ "::ffff:8.8.8.8", EGRESS_ADDR_PUBLIC },
		{ "::fffe:127.0.0.1", EGRESS_ADDR_PUBLIC },
		{ "::ffff:192.168.1.1", EGRESS_ADDR_PRIVATE },
		{ "::ffff:100.64.0.1", EGRESS_ADDR_PRIVATE },
		{ "::ffff:224.0.0.1", EGRESS_ADDR_OTHER_SPECIAL },
		/* NAT64, well-known prefix: the IPv4 address it embeds */
		{ "64:ff9b::8.8.8.8", EGRESS_ADDR_PUBLIC },
		{ "64:ff9b::127.0.0.1", EGRESS_ADDR_LOOPBACK },
		{ "64:ff9b::10.0.0.1", EGRESS_ADDR_PRIVATE },
		{ "64:ff9b::172.16.5.4", EGRESS_ADDR_PRIVATE },
		{ "64:ff9b::192.168.0.1", EGRESS_ADDR_PRIVATE },
		{ "64:ff9b::169.254.169.254", EGRESS_ADDR_LINK_LOCAL },
		{ "64:ff9b::0.0.0.0", EGRESS_ADDR_OTHER_SPECIAL },
		{ "64:ff9b::255.255.255.255", EGRESS_ADDR_OTHER_SPECIAL },
		{ "64:ff9b::1:10.0.0.1", EGRESS_ADDR_PUBLIC }, /* not in the /96 */
		/* NAT64, local use: the /96 as above, the rest of the /48 special */
		{ "64:ff9b:1::8.8.8.8", EGRESS_ADDR_PUBLIC },
		{ "64:ff9b:1::127.0.0.1", EGRESS_ADDR_LOOPBACK },
		{ "64:ff9b:1::10.1.2.3", EGRESS_ADDR_PRIVATE },
		{ "64:ff9b:1::169.254.169.254", EGRESS_ADDR_LINK_LOCAL },
		{ "64:ff9b:1:a00:1::8.8.8.8", EGRESS_ADDR_OTHER_SPECIAL },
		{ "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", EGRESS_ADDR_OTHER_SPECIAL },
		{ "64:ff9b:2::10.0.0.1", EGRESS_ADDR_PUBLIC },
		/* 6to4: the IPv4 address in bits 16-47 */
		{ "2002:808:808::1", EGRESS_ADDR_PUBLIC },
		{ "2002:7f00:1::1", EGRESS_ADDR_LOOPBACK },
		{ "2002:a00:1::", EGRESS_ADDR_PRIVATE },
		{ "2002:c0a8:101:1::5", EGRESS_ADDR_PRIVATE },
		{ "2002:a9fe:a9fe::1", EGRESS_ADDR_LINK_LOCAL },
		{ "2002::1", EGRESS_ADDR_OTHER_SPECIAL }, /* 0.0.0.0 */
		{ "2003::1", EGRESS_ADDR_PUBLIC },
		/* Teredo: refused whatever it tunnels to */
		{ "2001:0:4136:e378:8000:63bf:3fff:fdd2", EGRESS_ADDR_OTHER_SPECIAL },
		{ "2001::1", EGRESS_ADDR_OTHER_SPECIAL },
		{ "2001:1::1", EGRESS_ADDR_PUBLIC },
		{ "2001:db8::1", EGRESS_ADDR_PUBLIC },
		{ "2606:4700::1111", EGRESS_ADDR_PUBLIC },
		{ "fbff:ffff::1", EGRESS_ADDR_PUBLIC },
		{ "fc00::", EGRESS_ADDR_PRIVATE },
		{ "fd12:3456::1", EGRESS_ADDR_PRIVATE },
		{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", EGRESS_ADDR_PRIVATE },
		{ "fe00::1", EGRESS_ADDR_PUBLIC },
		{ "fe7f:ffff::1", EGRESS_ADDR_PUBLIC },
		{ "fe80::", EGRESS_ADDR_LINK_LOCAL },
		{ "fe80::1", EGRESS_ADDR_LINK_LOCAL },
		{ "febf:ffff::1", EGRESS_ADDR_LINK_LOCAL },
		{ "fec0::1", EGRESS_ADDR_PRIVATE },
		{ "feff:ffff::1", EGRESS_ADDR_PRIVATE },
		{ "ff00::", EGRESS_ADDR_OTHER_SPECIAL },
		{ "ff02::1", EGRESS_ADDR_OTHER_SPECIAL },
	};
	struct sockaddr unknown = { .sa_family = AF_UNIX };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (class_of(cases[i].addr) != cases[i].c)
			fail_msg("%s: %s, want %s", cases[i].addr,
				 egress_addr_class_name(class_of(cases[i].addr)),
				 egress_addr_class_name(cases[i].c));
	assert_int_equal(egress_addr_classify(&unknown), EGRESS_ADDR_OTHER_SPECIAL);
	assert_int_equal(egress_addr_classify(NULL), EGRESS_ADDR_OTHER_SPECIAL);
	assert_string_equal(egress_addr_class_name(EGRESS_ADDR_PUBLIC), "public");
	assert_string_equal(egress_addr_class_name(EGRESS_ADDR_LOOPBACK), "loopback");
	assert_string_equal(egress_addr_class_name(EGRESS_ADDR_PRIVATE), "private");
	assert_string_equal(egress_addr_class_name(EGRESS_ADDR_LINK_LOCAL), "link_local");
	assert_string_equal(egress_addr_class_name(EGRESS_ADDR_OTHER_SPECIAL), "special");
}

/* One getifaddrs() entry. */
static struct ifaddrs *ifa(struct ifaddrs *next, struct sockaddr_storage *ss, const char *text)
{
	struct ifaddrs *i = calloc(1, sizeof(*i));

	assert_non_null(i);
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)ss)->sin_addr) == 1)
		ss->ss_family = AF_INET;
	else if (inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1)
		ss->ss_family = AF_INET6;
	else
		fail_msg("bad test address %s", text);
	i->ifa_addr = (struct sockaddr *)ss;
	i->ifa_next = next;
	return i;
}

static bool own(const char *text, const struct ifaddrs *ifs)
{
	struct sockaddr_storage ss;
	struct ifaddrs *one = ifa(NULL, &ss, text);
	bool r = egress_addr_is_own(one->ifa_addr, ifs);

	free(one);
	return r;
}

static void test_addr_own(void **state)
{
	static const struct {
		const char *addr;
		bool own;
	} cases[] = {
		{ "203.0.113.7", true },
		{ "::ffff:203.0.113.7", true },
		{ "64:ff9b::203.0.113.7", true },
		{ "64:ff9b:1::203.0.113.7", true },
		{ "::ffff:192.168.1.10", true },
		{ "64:ff9b::192.168.1.10", true },
		{ "2001:db8::7", true },
		{ "127.0.0.1", true },
		{ "127.1.2.3", true },
		{ "::1", true },
		{ "::ffff:127.0.0.1", true },
		{ "64:ff9b::127.0.0.1", true },
		{ "0.0.0.0", true },
		{ "::", true },
		{ "::ffff:0.0.0.0", true },
		{ "64:ff9b::0.0.0.0", true },
		{ "2002:cb00:7107::1", true }, /* 6to4 of 203.0.113.7 */
		{ "2002:7f00:1::", true },
		{ "2002:cb00:7108::1", false },
		{ "203.0.113.8", false },
		{ "::ffff:203.0.113.8", false },
		{ "64:ff9b::203.0.113.8", false },
		{ "2001:db8::8", false },
		{ "::203.0.113.7", false }, /* IPv4-compatible: special, not this host */
		{ "64:ff9b:1:1::203.0.113.7", false },
		{ "8.8.8.8", false },
	};
	struct sockaddr_storage a, b, c;
	struct ifaddrs nameless = { 0 }, *ifs;
	struct sockaddr unknown = { .sa_family = AF_UNIX };

	(void)state;
	ifs = ifa(ifa(ifa(&nameless, &c, "2001:db8::7"), &b, "192.168.1.10"), &a, "203.0.113.7");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (own(cases[i].addr, ifs) != cases[i].own)
			fail_msg("%s: own %d, want %d", cases[i].addr, !cases[i].own, cases[i].own);
	assert_true(own("127.0.0.1", NULL));
	assert_true(own("::ffff:127.0.0.1", NULL));
	assert_false(own("::ffff:203.0.113.7", NULL));
	assert_false(egress_addr_is_own(&unknown, ifs));
	assert_false(egress_addr_is_own(NULL, ifs));
	while (ifs != &nameless) {
		struct ifaddrs *next = ifs->ifa_next;

		free(ifs);
		ifs = next;
	}
}

static void test_addr_format(void **state)
{
	struct sockaddr_in in4 = { .sin_family = AF_INET, .sin_port = htons(443) };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct sockaddr unknown = { .sa_family = AF_UNIX };
	char out[EGRESS_ADDR_TEXT_MAX], small[8] = "x";

	(void)state;
	inet_pton(AF_INET, "192.0.2.7", &in4.sin_addr);
	assert_int_equal(egress_addr_format((struct sockaddr *)&in4, out, sizeof(out)), 0);
	assert_string_equal(out, "192.0.2.7");
	inet_pton(AF_INET6, "2001:db8::1", &in6.sin6_addr);
	assert_int_equal(egress_addr_format((struct sockaddr *)&in6, out, sizeof(out)), 0);
	assert_string_equal(out, "2001:db8::1");
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &in6.sin6_addr);
	assert_int_equal(egress_addr_format((struct sockaddr *)&in6, out, sizeof(out)), 0);
	assert_string_equal(out, "::ffff:10.0.0.1");
	inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", &in6.sin6_addr);
	assert_int_equal(egress_addr_format((struct sockaddr *)&in6, out, sizeof(out)), 0);
	assert_int_equal(egress_addr_format((struct sockaddr *)&in6, small, sizeof(small)),
			 -ENOSPC);
	assert_string_equal(small, "");
	assert_int_equal(egress_addr_format(&unknown, out, sizeof(out)), -EAFNOSUPPORT);
	assert_string_equal(out, "");
	assert_int_equal(egress_addr_format(NULL, out, sizeof(out)), -EAFNOSUPPORT);
}

/* ---- proxy requests ---- */

static int parse(const char *head, struct proxy_req *r)
{
	return proxy_req_parse(head, strlen(head), r);
}

static void test_proxy_connect(void **state)
{
	static const char head[] = "CONNECT example.com:443 HTTP/1.1\r\n"
				   "Host: example.com:443\r\n"
				   "User-Agent: curl/8.5.0\r\n"
				   "Proxy-Connection: Keep-Alive\r\n\r\n";
	char buf[256];
	struct proxy_req r;

	(void)state;
	/* TLS bytes sent early are the stream's */
	snprintf(buf, sizeof(buf), "%s\x16\x03\x01", head);
	assert_int_equal(proxy_req_parse(buf, strlen(buf), &r), 0);
	assert_true(r.connect);
	assert_string_equal(r.method, "CONNECT");
	assert_string_equal(r.host, "example.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(r.head_len, strlen(head));
	assert_null(r.forward);
	assert_int_equal(r.forward_len, 0);
	proxy_req_free(&r);

	assert_int_equal(parse("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", &r), 0);
	assert_string_equal(r.host, "::1");
	assert_int_equal(r.port, 443);
	assert_int_equal(parse("CONNECT [2001:db8::a:1]:8443 HTTP/1.0\r\n\r\n", &r), 0);
	assert_string_equal(r.host, "2001:db8::a:1");
	assert_int_equal(r.port, 8443);
	assert_int_equal(parse("CONNECT 192.0.2.7:1 HTTP/1.1\r\n\r\n", &r), 0);
	assert_string_equal(r.host, "192.0.2.7");
	assert_int_equal(r.port, 1);
	assert_int_equal(parse("CONNECT Web.Test.:65535 HTTP/1.1\r\n\r\n", &r), 0);
	assert_string_equal(r.host, "Web.Test."); /* as sent: the rules normalize */
	assert_int_equal(r.port, 65535);
	proxy_req_free(&r);
}

static void test_proxy_forward(void **state)
{
	static const char head[] = "GET http://web.test:8080/p?q=1&r HTTP/1.1\r\n"
				   "Host: other.test\r\n"
				   "User-Agent: Mozilla/5.0\r\n"
				   "Accept: */*\r\n"
				   "Proxy-Connection: keep-alive\r\n"
				   "proxy-authorization: Basic eDp5\r\n"
				   "Connection: keep-alive\r\n"
				   "X-Empty:\r\n"
				   "X-Tab:\ta\tb\r\n\r\n";
	char buf[1024];
	struct proxy_req r;

	(void)state;
	snprintf(buf, sizeof(buf), "%sbody", head);
	assert_int_equal(proxy_req_parse(buf, strlen(buf), &r), 0);
	assert_false(r.connect);
	assert_string_equal(r.method, "GET");
	assert_string_equal(r.host, "web.test");
	assert_int_equal(r.port, 8080);
	assert_int_equal(r.head_len, strlen(head));
	assert_non_null(r.forward);
	assert_string_equal(r.forward, "GET /p?q=1&r HTTP/1.1\r\n"
				       "Host: web.test:8080\r\n"
				       "User-Agent: Mozilla/5.0\r\n"
				       "Accept: */*\r\n"
				       "X-Empty:\r\n"
				       "X-Tab:\ta\tb\r\n"
				       "Connection: close\r\n\r\n");
	assert_int_equal(r.forward_len, strlen(r.forward));
	proxy_req_free(&r);
	assert_null(r.forward);
	proxy_req_free(&r); /* twice is fine */

	/* no path, a query without one, default port, IPv6, HTTP/1.0 without headers */
	assert_int_equal(parse("HEAD http://a.test HTTP/1.0\r\n\r\n", &r), 0);
	assert_string_equal(r.host, "a.test");
	assert_int_equal(r.port, 80);
	assert_string_equal(r.forward,
			    "HEAD / HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n");
	proxy_req_free(&r);
	assert_int_equal(parse("POST HTTP://A.test?x HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &r),
			 0);
	assert_string_equal(r.host, "A.test");
	assert_string_equal(r.forward, "POST /?x HTTP/1.1\r\nHost: A.test\r\nContent-Length: 0\r\n"
				       "Connection: close\r\n\r\n");
	proxy_req_free(&r);
	assert_int_equal(parse("DELETE http://[2001:db8::1]:81/x HTTP/1.1\r\n\r\n", &r), 0);
	assert_string_equal(r.host, "2001:db8::1");
	assert_int_equal(r.port, 81);
	assert_string_equal(r.forward, "DELETE /x HTTP/1.1\r\nHost: [2001:db8::1]:81\r\n"
				       "Connection: close\r\n\r\n");
	proxy_req_free(&r);
	assert_int_equal(parse("OPTIONS http://[::1]/ HTTP/1.1\r\n\r\n", &r), 0);
	assert_string_equal(r.host, "::1");
	assert_int_equal(r.port, 80);
	proxy_req_free(&r);
	assert_int_equal(parse("PATCH http://a.test/ HTTP/1.1\r\n\r\n", &r), 0);
	proxy_req_free(&r);
	assert_int_equal(parse("PUT http://a.test/ HTTP/1.1\r\n\r\n", &r), 0);
	assert_string_equal(r.method, "PUT");
	proxy_req_free(&r);
}

static void test_proxy_split(void **state)
{
	static const char *heads[] = {
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		"GET http://web.test:8080/p?q HTTP/1.1\r\nHost: web.test\r\nProxy-Connection: x\r\n\r\n",
		"CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
	};
	struct proxy_req r;

	(void)state;
	for (size_t h = 0; h < sizeof(heads) / sizeof(heads[0]); h++) {
		size_t n = strlen(heads[h]);

		for (size_t len = 0; len < n; len++) {
			int rc = proxy_req_parse(heads[h], len, &r);

			if (rc != -EAGAIN)
				fail_msg("head %zu, %zu of %zu bytes: %d", h, len, n, rc);
			assert_null(r.forward);
		}
		assert_int_equal(proxy_req_parse(heads[h], n, &r), 0);
		assert_int_equal(r.head_len, n);
		proxy_req_free(&r);
	}
}

static void test_proxy_size(void **state)
{
	size_t big = PROXY_REQ_MAX_HEAD + 100, fill;
	char *buf = malloc(big);
	struct proxy_req r;

	(void)state;
	assert_non_null(buf);
	/* a head of exactly PROXY_REQ_MAX_HEAD bytes passes */
	strcpy(buf, "CONNECT a.test:443 HTTP/1.1\r\nX: ");
	fill = PROXY_REQ_MAX_HEAD - strlen(buf) - 4;
	memset(buf + strlen(buf), 'v', fill);
	memcpy(buf + PROXY_REQ_MAX_HEAD - 4, "\r\n\r\n", 4);
	assert_int_equal(proxy_req_parse(buf, PROXY_REQ_MAX_HEAD, &r), 0);
	assert_int_equal(r.head_len, PROXY_REQ_MAX_HEAD);
	assert_int_equal(proxy_req_parse(buf, big, &r), 0);
	assert_int_equal(proxy_req_parse(buf, PROXY_REQ_MAX_HEAD - 1, &r), -EAGAIN);
	/* one more byte of header does not */
	memset(buf + PROXY_REQ_MAX_HEAD - 4, 'v', 1);
	memcpy(buf + PROXY_REQ_MAX_HEAD - 3, "\r\n\r\n", 4);
	assert_int_equal(proxy_req_parse(buf, PROXY_REQ_MAX_HEAD - 1, &r), -EAGAIN);
	assert_int_equal(proxy_req_parse(buf, PROXY_REQ_MAX_HEAD, &r), -EMSGSIZE);
	assert_int_equal(proxy_req_parse(buf, PROXY_REQ_MAX_HEAD + 1, &r), -EMSGSIZE);
	assert_int_equal(proxy_req_parse(buf, big, &r), -EMSGSIZE);
	assert_null(r.forward);
	free(buf);
}

static void test_proxy_malformed(void **state)
{
	static const char *bad[] = {
		"\r\n\r\n",
		"\r\nCONNECT a.test:443 HTTP/1.1\r\n\r\n",
		"CONNECT a.test:443\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1 \r\n\r\n",
		"CONNECT  a.test:443 HTTP/1.1\r\n\r\n",
		"CONNECT a.test:443 HTTP/2\r\n\r\n",
		"CONNECT a.test:443 http/1.1\r\n\r\n",
		"connect a.test:443 HTTP/1.1\r\n\r\n",
		"TRACE http://a.test/ HTTP/1.1\r\n\r\n",
		"PROPFIND http://a.test/ HTTP/1.1\r\n\r\n",
		"CONNECT a.test HTTP/1.1\r\n\r\n",
		"CONNECT a.test: HTTP/1.1\r\n\r\n",
		"CONNECT :443 HTTP/1.1\r\n\r\n",
		"CONNECT a.test:0 HTTP/1.1\r\n\r\n",
		"CONNECT a.test:65536 HTTP/1.1\r\n\r\n",
		"CONNECT a.test:100000 HTTP/1.1\r\n\r\n",
		"CONNECT a.test:-1 HTTP/1.1\r\n\r\n",
		"CONNECT a.test:443x HTTP/1.1\r\n\r\n",
		"CONNECT a.test:443:1 HTTP/1.1\r\n\r\n",
		"CONNECT a te.st:443 HTTP/1.1\r\n\r\n",
		"CONNECT a!b.test:443 HTTP/1.1\r\n\r\n",
		"CONNECT user@a.test:443 HTTP/1.1\r\n\r\n",
		"CONNECT http://a.test:443 HTTP/1.1\r\n\r\n",
		"CONNECT ::1:443 HTTP/1.1\r\n\r\n",
		"CONNECT [::1] HTTP/1.1\r\n\r\n",
		"CONNECT [::1]443 HTTP/1.1\r\n\r\n",
		"CONNECT [::1:443 HTTP/1.1\r\n\r\n",
		"CONNECT []:443 HTTP/1.1\r\n\r\n",
		"CONNECT [a.test]:443 HTTP/1.1\r\n\r\n",
		"CONNECT [fe80::1%eth0]:443 HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"GET a.test:80 HTTP/1.1\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\n\r\n",
		"GET https://a.test/ HTTP/1.1\r\n\r\n",
		"GET ftp://a.test/ HTTP/1.1\r\n\r\n",
		"GET http:/a.test/ HTTP/1.1\r\n\r\n",
		"GET http:// HTTP/1.1\r\n\r\n",
		"GET http:///x HTTP/1.1\r\n\r\n",
		"GET http://u:p@a.test/ HTTP/1.1\r\n\r\n",
		"GET http://a.test:0/ HTTP/1.1\r\n\r\n",
		"GET http://a.test:/ HTTP/1.1\r\n\r\n",
		"GET http://a.test:99999/ HTTP/1.1\r\n\r\n",
		"GET http://a.test/\x7f HTTP/1.1\r\n\r\n",
		"GET http://a.test/\xc3\xa9 HTTP/1.1\r\n\r\n",
		"GET http://a\x01.test/ HTTP/1.1\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nNo colon\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\n: empty name\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nBad Name: x\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nName : x\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nA: b\x01\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\nA: b\x7f\r\n\r\n",
		/* CR and LF must pair, known before the head ends */
		"CONNECT a.test:443 HTTP/1.1\n\n",
		"CONNECT a.test:443 HTTP/1.1\r\nA: b\n",
		"CONNECT a.test:443 HTTP/1.1\r\nA: b\rc\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\r\n\r\n",
		"\n",
	};
	static const char with_nul[] = "CONNECT a.test:443 HTTP/1.1\r\nA: b\0c\r\n\r\n";
	char host[300];
	struct proxy_req r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i], &r);

		if (rc != -EINVAL)
			fail_msg("%zu '%s': %d", i, bad[i], rc);
		assert_null(r.forward);
	}
	assert_int_equal(proxy_req_parse(with_nul, sizeof(with_nul) - 1, &r), -EINVAL);
	assert_int_equal(proxy_req_parse(with_nul, 34, &r), -EINVAL); /* up to the NUL */
	assert_int_equal(proxy_req_parse(with_nul, 33, &r), -EAGAIN);
	/* a 256-byte host does not fit, 255 does */
	memset(host, 'a', sizeof(host));
	snprintf(host + 255, sizeof(host) - 255, ":443 HTTP/1.1\r\n\r\n");
	memmove(host + 8, host, strlen(host) + 1);
	memcpy(host, "CONNECT ", 8);
	assert_int_equal(parse(host, &r), 0);
	assert_int_equal(strlen(r.host), 255);
	memmove(host + 9, host + 8, strlen(host + 8) + 1);
	host[8] = 'a';
	assert_int_equal(parse(host, &r), -EINVAL);
}

static void test_proxy_replies(void **state)
{
	static const int statuses[] = { 400, 403, 502, 503, 504 };

	(void)state;
	assert_string_equal(proxy_reply(200), "HTTP/1.1 200 Connection established\r\n\r\n");
	assert_null(proxy_reply(404));
	assert_null(proxy_reply(0));
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		const char *s = proxy_reply(statuses[i]), *cl, *body;
		char first[16];

		assert_non_null(s);
		snprintf(first, sizeof(first), "HTTP/1.1 %d ", statuses[i]);
		assert_memory_equal(s, first, strlen(first));
		assert_non_null(strstr(s, "\r\nConnection: close\r\n"));
		cl = strstr(s, "\r\nContent-Length: ");
		body = strstr(s, "\r\n\r\n");
		assert_non_null(cl);
		assert_non_null(body);
		body += 4;
		assert_int_equal(strtol(cl + 18, NULL, 10), strlen(body));
		assert_memory_equal(body, "vitrine: ", 9);
	}
	assert_non_null(strstr(proxy_reply(403),
			       "\r\n\r\nvitrine: egress denied by the session's rules\n"));
	assert_non_null(strstr(proxy_reply(502), "cannot connect"));
	assert_non_null(strstr(proxy_reply(504), "timeout"));
}

/* ---- the log ---- */

static struct egress_log_entry entry(const char *host, int port, bool allowed,
				     enum egress_reason reason)
{
	struct egress_log_entry e = {
		.start_ms = 1700000000000, .port = port, .allowed = allowed, .reason = reason
	};

	snprintf(e.host, sizeof(e.host), "%s", host);
	return e;
}

/* The log's JSON as compact text (static buffer). */
static const char *log_text(struct egress_log *l, uint64_t after, size_t limit)
{
	static char out[8192];
	json_t *j = egress_log_json(l, after, limit);
	char *s;

	assert_non_null(j);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	snprintf(out, sizeof(out), "%s", s);
	free(s);
	json_decref(j);
	return out;
}

/* The seq of the first entry of a log's JSON. */
static json_int_t first_seq(const json_t *j)
{
	return json_integer_value(
		json_object_get(json_array_get(json_object_get(j, "entries"), 0), "seq"));
}

static void test_log(void **state)
{
	struct egress_log *l = egress_log_create(3);
	struct egress_log_entry e;
	json_t *j;

	(void)state;
	assert_null(egress_log_create(0));
	egress_log_destroy(NULL);
	assert_non_null(l);
	assert_string_equal(log_text(l, 0, 100), "{\"dropped\":0,\"entries\":[],\"next\":0}");

	e = entry("example.com", 443, true, EGRESS_REASON_ALLOWED);
	snprintf(e.address, sizeof(e.address), "93.184.215.14");
	e.seq = 77; /* ignored */
	assert_int_equal(egress_log_add(l, &e), 1);
	e = entry("evil.test", 80, false, EGRESS_REASON_NOT_IN_ALLOWLIST);
	assert_int_equal(egress_log_add(l, &e), 2);
	assert_string_equal(
		log_text(l, 0, 100),
		"{\"dropped\":0,\"entries\":["
		"{\"address\":\"93.184.215.14\",\"bytes_down\":0,\"bytes_up\":0,\"duration_ms\":0,"
		"\"ended\":false,\"host\":\"example.com\",\"port\":443,\"reason\":\"allowed\","
		"\"seq\":1,\"start_ms\":1700000000000,\"verdict\":\"allowed\"},"
		"{\"address\":\"\",\"bytes_down\":0,\"bytes_up\":0,\"duration_ms\":0,"
		"\"ended\":false,\"host\":\"evil.test\",\"port\":80,\"reason\":\"not_in_allowlist\","
		"\"seq\":2,\"start_ms\":1700000000000,\"verdict\":\"denied\"}],\"next\":2}");

	/* the connection ends: updated in place */
	e = entry("example.com", 443, true, EGRESS_REASON_ALLOWED);
	snprintf(e.address, sizeof(e.address), "93.184.215.14");
	e.bytes_up = 517;
	e.bytes_down = 5000000000ull;
	e.duration_ms = 1234;
	e.ended = true;
	assert_int_equal(egress_log_update(l, 1, &e), 0);
	assert_int_equal(egress_log_update(l, 0, &e), -ENOENT);
	assert_int_equal(egress_log_update(l, 3, &e), -ENOENT);
	assert_string_equal(
		log_text(l, 0, 1),
		"{\"dropped\":0,\"entries\":["
		"{\"address\":\"93.184.215.14\",\"bytes_down\":5000000000,\"bytes_up\":517,"
		"\"duration_ms\":1234,\"ended\":true,\"host\":\"example.com\",\"port\":443,"
		"\"reason\":\"allowed\",\"seq\":1,\"start_ms\":1700000000000,"
		"\"verdict\":\"allowed\"}],\"next\":1}");
	/* after and limit */
	j = egress_log_json(l, 1, 100);
	assert_int_equal(json_array_size(json_object_get(j, "entries")), 1);
	assert_int_equal(first_seq(j), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "next")), 2);
	json_decref(j);
	assert_string_equal(log_text(l, 2, 100), "{\"dropped\":0,\"entries\":[],\"next\":2}");
	assert_string_equal(log_text(l, 99, 100), "{\"dropped\":0,\"entries\":[],\"next\":2}");
	assert_string_equal(log_text(l, 0, 0), "{\"dropped\":0,\"entries\":[],\"next\":0}");

	/* the ring overflows: 5 entries in 3 slots, 1 and 2 dropped */
	for (int i = 3; i <= 5; i++) {
		char host[32];

		snprintf(host, sizeof(host), "h%d.test", i);
		e = entry(host, 443, false, EGRESS_REASON_PRIVATE_ADDRESS);
		assert_int_equal(egress_log_add(l, &e), (uint64_t)i);
	}
	assert_int_equal(egress_log_update(l, 1, &e), -ENOENT);
	assert_int_equal(egress_log_update(l, 2, &e), -ENOENT);
	assert_int_equal(egress_log_update(l, 3, &e), 0);
	j = egress_log_json(l, 0, 100);
	assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "next")), 5);
	assert_int_equal(json_array_size(json_object_get(j, "entries")), 3);
	assert_int_equal(first_seq(j), 3);
	json_decref(j);
	j = egress_log_json(l, 1, 1);
	assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "next")), 3);
	json_decref(j);
	j = egress_log_json(l, 3, 100);
	assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "entries")), 2);
	json_decref(j);
	egress_log_destroy(l);
}

static void test_log_strings(void **state)
{
	struct egress_log *l = egress_log_create(2);
	struct egress_log_entry e;
	json_t *j;

	(void)state;
	/* a host that is not UTF-8, strings filled to the last byte */
	memset(&e, 'x', sizeof(e));
	e.reason = EGRESS_REASON_BAD_REQUEST;
	e.allowed = e.ended = false;
	e.host[0] = '\xff';
	assert_int_equal(egress_log_add(l, &e), 1);
	j = egress_log_json(l, 0, 10);
	assert_non_null(j);
	e.host[0] = '?';
	e.host[sizeof(e.host) - 1] = '\0';
	e.address[sizeof(e.address) - 1] = '\0';
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(json_object_get(j, "entries"),
								   0),
						    "host")),
			    e.host);
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(json_object_get(j, "entries"),
								   0),
						    "address")),
			    e.address);
	json_decref(j);
	egress_log_destroy(l);
}

static void test_reason_names(void **state)
{
	static const char *names[] = { "allowed",	  "not_in_allowlist", "no_network",
				       "private_address", "loopback_address", "link_local_address",
				       "special_address", "gateway_port",     "resolve_failed",
				       "connect_failed",  "bad_request",      "timeout" };

	(void)state;
	for (int i = EGRESS_REASON_ALLOWED; i <= EGRESS_REASON_TIMEOUT; i++)
		assert_string_equal(egress_reason_name((enum egress_reason)i), names[i]);
	assert_int_equal(egress_reason_for_addr(EGRESS_ADDR_PUBLIC), EGRESS_REASON_ALLOWED);
	assert_int_equal(egress_reason_for_addr(EGRESS_ADDR_LOOPBACK),
			 EGRESS_REASON_LOOPBACK_ADDRESS);
	assert_int_equal(egress_reason_for_addr(EGRESS_ADDR_PRIVATE),
			 EGRESS_REASON_PRIVATE_ADDRESS);
	assert_int_equal(egress_reason_for_addr(EGRESS_ADDR_LINK_LOCAL),
			 EGRESS_REASON_LINK_LOCAL_ADDRESS);
	assert_int_equal(egress_reason_for_addr(EGRESS_ADDR_OTHER_SPECIAL),
			 EGRESS_REASON_SPECIAL_ADDRESS);
}

#define LOG_THREADS 4
#define LOG_ADDS 2000

static void *log_writer(void *arg)
{
	struct egress_log *l = arg;
	struct egress_log_entry e = entry("t.test", 443, true, EGRESS_REASON_ALLOWED);

	for (int i = 0; i < LOG_ADDS; i++) {
		uint64_t seq = egress_log_add(l, &e);

		e.ended = true;
		(void)egress_log_update(l, seq, &e);
		e.ended = false;
	}
	return NULL;
}

static void test_log_threads(void **state)
{
	struct egress_log *l = egress_log_create(EGRESS_LOG_DEFAULT_CAPACITY);
	pthread_t t[LOG_THREADS];
	json_t *j;

	(void)state;
	for (int i = 0; i < LOG_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, log_writer, l), 0);
	for (int i = 0; i < 20; i++)
		json_decref(egress_log_json(l, 0, 50));
	for (int i = 0; i < LOG_THREADS; i++)
		pthread_join(t[i], NULL);
	j = egress_log_json(l, 0, SIZE_MAX);
	assert_int_equal(json_integer_value(json_object_get(j, "next")), LOG_THREADS * LOG_ADDS);
	assert_int_equal(json_integer_value(json_object_get(j, "dropped")),
			 LOG_THREADS * LOG_ADDS - EGRESS_LOG_DEFAULT_CAPACITY);
	assert_int_equal(json_array_size(json_object_get(j, "entries")),
			 EGRESS_LOG_DEFAULT_CAPACITY);
	json_decref(j);
	egress_log_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_parse),    cmocka_unit_test(test_rules_limits),
		cmocka_unit_test(test_rules_refusals), cmocka_unit_test(test_rules_match),
		cmocka_unit_test(test_addr_classes),   cmocka_unit_test(test_addr_own),
		cmocka_unit_test(test_addr_format),    cmocka_unit_test(test_proxy_connect),
		cmocka_unit_test(test_proxy_forward),  cmocka_unit_test(test_proxy_split),
		cmocka_unit_test(test_proxy_size),     cmocka_unit_test(test_proxy_malformed),
		cmocka_unit_test(test_proxy_replies),  cmocka_unit_test(test_log),
		cmocka_unit_test(test_log_strings),    cmocka_unit_test(test_reason_names),
		cmocka_unit_test(test_log_threads),
	};

	return cmocka_run_group_tests_name("egress: rules, addresses, proxy heads, log", tests,
					   NULL, NULL);
}
