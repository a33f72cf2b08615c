/* gateway/e2b/e2b_network.h: E2B's network options (a create's `network`
 * {allowOut, denyOut, rules, egressProxy, ...} and `allow_internet_access`;
 * PUT /sandboxes/{id}/network's body) as Vitrine's egress rules
 * (gateway/egress/egress_rules.h: an allowlist of HOST[:PORT]).
 *
 * E2B's sandbox may go anywhere unless denyOut denies all traffic
 * ("0.0.0.0/0", the SDK's allTraffic) or allow_internet_access is false;
 * allowOut entries always win over denyOut. So: all traffic allowed is
 * {"allow": ["*:*"]}; all denied is the allowOut entries (an IPv4 address
 * or /32 as "A.B.C.D:*", a name or "*.name" as itself: ports 80 and 443,
 * where E2B filters names). What an allowlist cannot say is refused with
 * a sentence: a denyOut of some addresses while the rest stays open, an
 * allowOut range wider than one address, IPv6, per-host header rules and
 * an egress proxy. Nothing of the three given: no rules (Vitrine's default
 * for a sandbox, no network). Pure: tests/unit/test_e2b_api.c,
 * tests/fuzz/fuzz_e2b_api.c. */
#ifndef VITRINE_GATEWAY_E2B_NETWORK_H
#define VITRINE_GATEWAY_E2B_NETWORK_H

#include <jansson.h>

#include <stddef.h>

#define E2B_ALL_TRAFFIC "0.0.0.0/0"

/* network: the `network` object (NULL or null: none); allow_internet: the
 * `allow_internet_access` value (NULL or null: none). Returns 0 with
 * *egress an {"allow": [...]} that egress_rules_parse takes (owned), or
 * NULL when neither says anything of egress; -EINVAL with a sentence
 * naming the field in err; -ENOMEM. */
int e2b_network_egress(const json_t *network, const json_t *allow_internet, json_t **egress,
		       char *err, size_t errlen);

#endif
