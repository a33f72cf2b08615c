/* gateway/egress/egress_rules.h: a session's egress allowlist: which host:port the
 * guest may reach through the gateway's HTTP proxy (its only way out: it
 * has no network device). Parsed from the `egress` field of POST
 * /v1/sessions and PUT /v1/sessions/{id}/egress, matched against the host
 * a proxy request names. Pure: the address a name resolves to is checked
 * separately (egress_addr.h), whatever the rules say.
 *
 * {"allow": [ENTRY...]}, ENTRY = HOST[:PORT|:*]:
 *   HOST  "example.com" (that name only), "*.example.com" (any name strictly
 *         below it, at any depth, not example.com itself), "*" (any name or
 *         IPv4 literal), "192.0.2.7" (that IPv4 address, dotted quad).
 *   PORT  none: 80 and 443; ":N": N (1..65535); ":*": any port.
 * Absent, null, {} or {"allow": []}: no network at all (the default). */
#ifndef VITRINE_GATEWAY_EGRESS_RULES_H
#define VITRINE_GATEWAY_EGRESS_RULES_H

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>

#define EGRESS_MAX_RULES 256
#define EGRESS_MAX_NAME 253 /* characters in a DNS name, no trailing dot */

struct egress_rules;

/* Parses egress (NULL and JSON null mean no network) into *out. Returns 0
 * with *out set (never NULL: an empty rule set when nothing is allowed), or
 * -EINVAL with a sentence naming the field or entry in err (e.g.
 * "egress.allow[2]: 'exa mple.com' is not a host name") and *out NULL, or
 * -ENOMEM. */
int egress_rules_parse(const json_t *egress, struct egress_rules **out, char *err, size_t errlen);

/* True when some rule allows host:port. host is as the guest asked for it:
 * any case, one trailing dot allowed, an IPv4 literal matches only its own
 * entry or "*" (and only as a canonical dotted quad: "127.1" or "0x7f.0.0.1"
 * match nothing), an IPv6 literal ("::1" or "[::1]") matches nothing. A
 * port outside 1..65535 or a host that is no name or address matches
 * nothing. r NULL allows nothing. This function can't fail. */
bool egress_rules_allows(const struct egress_rules *r, const char *host, int port);

/* True when r allows nothing (r NULL included). */
bool egress_rules_empty(const struct egress_rules *r);

/* {"allow": [...]} with each entry normalized (lowercase, "a.com:443",
 * "*.a.com:*"), for GET responses. NULL only when out of memory. */
json_t *egress_rules_json(const struct egress_rules *r);

/* Frees r. Accepts NULL. */
void egress_rules_destroy(struct egress_rules *r);

#endif
