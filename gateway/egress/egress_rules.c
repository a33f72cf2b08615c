/* gateway/egress/egress_rules.c: see egress_rules.h. */
#include "gateway/egress/egress_rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PORT_WEB 0 /* no port in the entry: 80 and 443 */
#define PORT_ANY (-1)

enum rule_host {
	RULE_ANY, /* "*" */
	RULE_NAME, /* that name */
	RULE_BELOW, /* "*.NAME": names strictly below NAME */
	RULE_IPV4, /* that dotted quad */
};

struct egress_rule {
	enum rule_host kind;
	int port; /* PORT_WEB, PORT_ANY or 1..65535 */
	char host[EGRESS_MAX_NAME + 1]; /* lowercase; NAME for RULE_BELOW; "" for RULE_ANY */
};

struct egress_rules {
	size_t n;
	struct egress_rule rule[];
};

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_letter(char c)
{
	c = lower(c);
	return c >= 'a' && c <= 'z';
}

/* s[0..n) is a decimal number without a leading zero ("0" aside), at most
 * max_digits long, whose value goes into *v. */
static bool decimal(const char *s, size_t n, size_t max_digits, long *v)
{
	if (n == 0 || n > max_digits || (s[0] == '0' && n > 1))
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

/* s[0..n) is an IPv4 address written the one way the rules know it: four
 * decimal parts without leading zeros. The forms inet_aton also takes
 * ("127.1", "0x7f.0.0.1", "0177.0.0.1") are neither this nor a name. */
static bool canonical_ipv4(const char *s, size_t n)
{
	size_t start = 0, parts = 0;
	long v;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (++parts > 4 || !decimal(s + start, i - start, 3, &v) || v > 255)
			return false;
		start = i + 1;
	}
	return parts == 4;
}

/* s[0..n) is a DNS name: labels of 1..63 letters, digits and '-', at most
 * EGRESS_MAX_NAME characters, no trailing dot. Its last label must start
 * with a letter, so that no name is also a number to inet_aton. Names the
 * guest asks for may also have '_' and labels that start or end with '-'
 * (some hosts do); entries (strict) may not. */
static bool valid_name(const char *s, size_t n, bool strict)
{
	size_t label = 0;

	if (n == 0 || n > EGRESS_MAX_NAME)
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (label == 0 || (strict && (s[i - label] == '-' || s[i - 1] == '-')))
				return false;
			if (i < n)
				label = 0;
			continue;
		}
		if (!is_letter(s[i]) && !is_digit(s[i]) && s[i] != '-' && (strict || s[i] != '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return is_letter(s[n - label]);
}

/* Parses one entry into *rule; -EINVAL with err naming entry i. */
static int parse_entry(const json_t *v, size_t i, struct egress_rule *rule, char *err,
		       size_t errlen)
{
	const char *s = json_string_value(v), *colon, *host;
	size_t n, host_len;
	long port;

	if (!s || strlen(s) != json_string_length(v)) {
		snprintf(err, errlen, "egress.allow[%zu] must be a string (HOST[:PORT|:*])", i);
		return -EINVAL;
	}
	n = strlen(s);
	colon = strchr(s, ':');
	host_len = colon ? (size_t)(colon - s) : n;
	host = s;
	if (strchr(s, '/')) /* a URL or a path */
		goto not_host;
	if (host_len == 1 && host[0] == '*') {
		rule->kind = RULE_ANY;
		host_len = 0;
	} else if (host_len > 2 && host[0] == '*' && host[1] == '.') {
		rule->kind = RULE_BELOW;
		host += 2;
		host_len -= 2;
		if (!valid_name(host, host_len, true))
			goto not_host;
	} else if (canonical_ipv4(host, host_len)) {
		rule->kind = RULE_IPV4;
	} else if (valid_name(host, host_len, true)) {
		rule->kind = RULE_NAME;
	} else {
		goto not_host;
	}
	rule->port = PORT_WEB;
	if (colon) {
		const char *p = colon + 1;

		if (!strcmp(p, "*")) {
			rule->port = PORT_ANY;
		} else if (decimal(p, strlen(p), 5, &port) && port >= 1 && port <= 65535) {
			rule->port = (int)port;
		} else {
			snprintf(err, errlen,
				 "egress.allow[%zu]: '%.80s' has a bad port (1..65535 or '*')", i,
				 s);
			return -EINVAL;
		}
	}
	for (size_t k = 0; k < host_len; k++)
		rule->host[k] = lower(host[k]);
	rule->host[host_len] = '\0';
	return 0;
not_host:
	snprintf(err, errlen,
		 "egress.allow[%zu]: '%.80s' is not a host name (NAME, *.NAME, * or an IPv4 "
		 "address, then optionally :PORT or :*)",
		 i, s);
	return -EINVAL;
}

int egress_rules_parse(const json_t *egress, struct egress_rules **out, char *err, size_t errlen)
{
	const json_t *allow = NULL, *v;
	struct egress_rules *r;
	const char *key;
	size_t i, n = 0;

	*out = NULL;
	if (egress && !json_is_null(egress)) {
		if (!json_is_object(egress)) {
			snprintf(err, errlen,
				 "egress must be an object {\"allow\": [...]} or null");
			return -EINVAL;
		}
		json_object_foreach((json_t *)egress, key, v)
		{
			if (strcmp(key, "allow")) {
				snprintf(err, errlen, "egress: unknown field '%.64s'", key);
				return -EINVAL;
			}
		}
		allow = json_object_get(egress, "allow");
	}
	if (allow && !json_is_null(allow)) {
		if (!json_is_array(allow)) {
			snprintf(err, errlen, "egress.allow must be an array of strings");
			return -EINVAL;
		}
		n = json_array_size(allow);
		if (n > EGRESS_MAX_RULES) {
			snprintf(err, errlen, "egress.allow has %zu entries, more than %d", n,
				 EGRESS_MAX_RULES);
			return -EINVAL;
		}
	}
	r = calloc(1, sizeof(*r) + n * sizeof(r->rule[0]));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (parse_entry(json_array_get(allow, i), i, &r->rule[i], err, errlen) < 0) {
			free(r);
			return -EINVAL;
		}
	}
	r->n = n;
	*out = r;
	return 0;
}

static bool port_matches(int rule_port, int port)
{
	if (rule_port == PORT_ANY)
		return true;
	if (rule_port == PORT_WEB)
		return port == 80 || port == 443;
	return port == rule_port;
}

bool egress_rules_allows(const struct egress_rules *r, const char *host, int port)
{
	char name[EGRESS_MAX_NAME + 1];
	size_t n;
	bool ipv4;

	if (!r || !host || port < 1 || port > 65535)
		return false;
	n = strlen(host);
	if (n > 0 && host[n - 1] == '.')
		n--;
	/* ':' or '[': an IPv6 literal, which no rule names. */
	if (n == 0 || n > EGRESS_MAX_NAME || memchr(host, ':', n) || host[0] == '[')
		return false;
	for (size_t i = 0; i < n; i++)
		name[i] = lower(host[i]);
	name[n] = '\0';
	ipv4 = canonical_ipv4(name, n);
	if (!ipv4 && !valid_name(name, n, false))
		return false;
	for (size_t i = 0; i < r->n; i++) {
		const struct egress_rule *rule = &r->rule[i];
		size_t len = strlen(rule->host);

		if (!port_matches(rule->port, port))
			continue;
		switch (rule->kind) {
		case RULE_ANY:
			return true;
		case RULE_NAME:
			if (!ipv4 && !strcmp(name, rule->host))
				return true;
			break;
		case RULE_BELOW:
			if (!ipv4 && n > len + 1 && name[n - len - 1] == '.' &&
			    !strcmp(name + n - len, rule->host))
				return true;
			break;
		case RULE_IPV4:
			if (ipv4 && !strcmp(name, rule->host))
				return true;
			break;
		}
	}
	return false;
}

bool egress_rules_empty(const struct egress_rules *r)
{
	return !r || r->n == 0;
}

/* The normalized text of rule, as a JSON string. */
static json_t *rule_json(const struct egress_rule *rule)
{
	const char *prefix = "";
	char port[8] = "";

	if (rule->kind == RULE_ANY)
		prefix = "*";
	else if (rule->kind == RULE_BELOW)
		prefix = "*.";
	if (rule->port == PORT_ANY)
		snprintf(port, sizeof(port), ":*");
	else if (rule->port != PORT_WEB)
		snprintf(port, sizeof(port), ":%d", rule->port);
	return json_sprintf("%s%s%s", prefix, rule->host, port);
}

json_t *egress_rules_json(const struct egress_rules *r)
{
	json_t *allow = json_array();

	for (size_t i = 0; allow && r && i < r->n; i++) {
		if (json_array_append_new(allow, rule_json(&r->rule[i])) < 0) {
			json_decref(allow);
			return NULL;
		}
	}
	return allow ? json_pack("{s:o}", "allow", allow) : NULL;
}

void egress_rules_destroy(struct egress_rules *r)
{
	free(r);
}
