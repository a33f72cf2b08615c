/* gateway/e2b/e2b_network.c: see e2b_network.h. */
#include "gateway/e2b/e2b_network.h"

#include "gateway/egress/egress_rules.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	return -EINVAL;
}

/* Whether s is a dotted quad of four numbers 0..255 (the whole string). */
static bool ipv4(const char *s, size_t n)
{
	int parts = 0, val = -1;

	for (size_t i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			val = (val < 0 ? 0 : val) * 10 + (s[i] - '0');
			if (val > 255)
				return false;
		} else if (s[i] == '.' && val >= 0 && parts < 3) {
			parts++;
			val = -1;
		} else {
			return false;
		}
	}
	return parts == 3 && val >= 0;
}

/* A list of strings (absent or null: empty). 0, or -EINVAL. */
static int strings(const json_t *v, const char *name, char *err, size_t errlen)
{
	size_t i;
	const json_t *e;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > EGRESS_MAX_RULES) {
		snprintf(err, errlen, "network.%s: a list of at most %d strings", name,
			 EGRESS_MAX_RULES);
		return -EINVAL;
	}
	json_array_foreach(v, i, e) if (!json_is_string(e) || !json_string_length(e) ||
					json_string_length(e) > 256)
	{
		snprintf(err, errlen, "network.%s[%zu]: not an address, range or name", name, i);
		return -EINVAL;
	}
	return 0;
}

static bool holds(const json_t *list, const char *what)
{
	size_t i;
	const json_t *e;

	json_array_foreach(list, i, e) if (!strcmp(json_string_value(e), what)) return true;
	return false;
}

/* allowOut[i] as one egress entry into out, or -EINVAL. */
static int allow_entry(const char *s, size_t i, char *out, size_t cap, char *err, size_t errlen)
{
	size_t n = strlen(s);
	const char *slash = strchr(s, '/');
	struct egress_rules *one;
	json_t *j;
	int rc;

	if (strchr(s, ':')) {
		snprintf(err, errlen,
			 "network.allowOut[%zu]: '%.64s': IPv6 and ports cannot be expressed "
			 "(Vitrine's egress rules name IPv4 addresses and host names)",
			 i, s);
		return -EINVAL;
	}
	if (slash) {
		if (!ipv4(s, (size_t)(slash - s)) || strcmp(slash, "/32")) {
			snprintf(err, errlen,
				 "network.allowOut[%zu]: '%.64s': a range wider than one address "
				 "cannot be expressed (Vitrine's egress rules name single IPv4 "
				 "addresses and host names)",
				 i, s);
			return -EINVAL;
		}
		n = (size_t)(slash - s);
	}
	if (n + 3 > cap)
		return fail(err, errlen, "network.allowOut: an entry is too long");
	/* an address on any port; a name on 80 and 443 (as E2B filters names) */
	snprintf(out, cap, "%.*s%s", (int)n, s, ipv4(s, n) ? ":*" : "");
	if (!(j = json_pack("{s:[s]}", "allow", out)))
		return -ENOMEM;
	rc = egress_rules_parse(j, &one, err, errlen);
	json_decref(j);
	egress_rules_destroy(one);
	if (rc == -EINVAL)
		snprintf(err, errlen,
			 "network.allowOut[%zu]: '%.64s' is not an address or host name", i, s);
	return rc;
}

int e2b_network_egress(const json_t *network, const json_t *allow_internet, json_t **egress,
		       char *err, size_t errlen)
{
	const json_t *allow = NULL, *deny = NULL, *v;
	bool deny_all, given;
	json_t *out;
	size_t i;
	int rc;

	*egress = NULL;
	if (network && json_is_null(network))
		network = NULL;
	if (allow_internet && json_is_null(allow_internet))
		allow_internet = NULL;
	if (allow_internet && !json_is_boolean(allow_internet))
		return fail(err, errlen, "allow_internet_access: true or false");
	if (network && !json_is_object(network))
		return fail(err, errlen, "network: an object");
	if (network) {
		allow = json_object_get(network, "allowOut");
		deny = json_object_get(network, "denyOut");
		if ((rc = strings(allow, "allowOut", err, errlen)) < 0 ||
		    (rc = strings(deny, "denyOut", err, errlen)) < 0)
			return rc;
		if ((v = json_object_get(network, "rules")) && !json_is_null(v) &&
		    (!json_is_object(v) || json_object_size(v)))
			return fail(err, errlen,
				    "network.rules: headers added to a host's requests cannot be "
				    "expressed in Vitrine's egress rules");
		if ((v = json_object_get(network, "egressProxy")) && !json_is_null(v))
			return fail(err, errlen,
				    "network.egressProxy: an upstream proxy cannot be expressed in "
				    "Vitrine's egress rules (the gateway is the guest's proxy)");
	}
	if (allow && json_is_null(allow))
		allow = NULL;
	if (deny && json_is_null(deny))
		deny = NULL;
	given = allow_internet || allow || deny;
	if (!given)
		return 0;
	deny_all = (allow_internet && json_is_false(allow_internet)) ||
		   (deny && holds(deny, E2B_ALL_TRAFFIC));
	if (!deny_all && deny && json_array_size(deny) && !(allow && holds(allow, E2B_ALL_TRAFFIC)))
		return fail(err, errlen,
			    "network.denyOut: denying some addresses while the rest stays open "
			    "cannot be expressed (Vitrine's egress rules are an allowlist): deny "
			    "all traffic (" E2B_ALL_TRAFFIC ") and allow what may go out");
	if (!(out = json_pack("{s:[]}", "allow")))
		return -ENOMEM;
	if (!deny_all || (allow && holds(allow, E2B_ALL_TRAFFIC))) {
		rc = json_array_append_new(json_object_get(out, "allow"), json_string("*:*"));
		goto done;
	}
	rc = 0;
	for (i = 0; allow && rc == 0 && i < json_array_size(allow); i++) {
		char entry[300];

		rc = allow_entry(json_string_value(json_array_get(allow, i)), i, entry,
				 sizeof(entry), err, errlen);
		if (rc == 0)
			rc = json_array_append_new(json_object_get(out, "allow"),
						   json_string(entry));
	}
done:
	if (rc < 0) {
		json_decref(out);
		return rc == -EINVAL ? rc : -ENOMEM;
	}
	*egress = out;
	return 0;
}
