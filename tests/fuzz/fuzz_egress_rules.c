/* tests/fuzz/fuzz_egress_rules.c: libFuzzer target for a session's egress
 * allowlist (gateway/egress/egress_rules.c): the rules come from a client
 * (POST /v1/sessions, PUT .../egress), the host names they are matched with
 * from the guest. The input is the rules' JSON, a newline, then a host name
 * the guest asks for. Checked besides "no crash":
 *   - accepted rules re-serialise (egress_rules_json) into rules that parse
 *     again, serialise the same, and allow exactly the same host:ports;
 *   - every normalized entry allows what it names (its host, a name below a
 *     "*." entry, its port or 80 and 443);
 *   - matching ignores case and one trailing dot, and refuses ports outside
 *     1..65535; refused rules leave nothing behind (ASan's leak check). */
#include "gateway/egress/egress_rules.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int ports[] = { 1, 80, 443, 8080, 65535 };

static void same_answers(const struct egress_rules *a, const struct egress_rules *b,
			 const char *host)
{
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		if (egress_rules_allows(a, host, ports[i]) !=
		    egress_rules_allows(b, host, ports[i]))
			__builtin_trap();
}

/* The entry's own host:port is allowed. */
static void entry_allows_itself(const struct egress_rules *r, const char *entry)
{
	char host[EGRESS_MAX_NAME + 8];
	const char *colon = strrchr(entry, ':');
	size_t n = colon ? (size_t)(colon - entry) : strlen(entry);
	int port = 443;

	if (colon && strcmp(colon, ":*"))
		port = atoi(colon + 1);
	if (!strncmp(entry, "*.", 2))
		snprintf(host, sizeof(host), "a.%.*s", (int)(n - 2), entry + 2);
	else if (n == 1 && entry[0] == '*')
		snprintf(host, sizeof(host), "example.com");
	else
		snprintf(host, sizeof(host), "%.*s", (int)n, entry);
	if (strlen(host) <= EGRESS_MAX_NAME && !egress_rules_allows(r, host, port))
		__builtin_trap();
	if (!colon && !egress_rules_allows(r, host, 80))
		__builtin_trap();
	if (colon && !strcmp(colon, ":*") && strlen(host) <= EGRESS_MAX_NAME &&
	    (!egress_rules_allows(r, host, 1) || !egress_rules_allows(r, host, 65535)))
		__builtin_trap();
}

static void probe(const struct egress_rules *r, const char *host)
{
	size_t n = strlen(host);
	char *up = malloc(n + 2);

	if (!up)
		return;
	for (size_t i = 0; i <= n; i++)
		up[i] = (char)toupper((unsigned char)host[i]);
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		if (egress_rules_allows(r, host, ports[i]) != egress_rules_allows(r, up, ports[i]))
			__builtin_trap();
	if (n && host[n - 1] != '.') {
		memcpy(up, host, n);
		up[n] = '.';
		up[n + 1] = '\0';
		if (egress_rules_allows(r, host, 443) != egress_rules_allows(r, up, 443))
			__builtin_trap();
	}
	if (egress_rules_allows(r, host, 0) || egress_rules_allows(r, host, 65536) ||
	    egress_rules_allows(r, host, -1))
		__builtin_trap();
	free(up);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	size_t jlen = nl ? (size_t)(nl - (const char *)data) : size;
	char *host = malloc(size - jlen + 1), err[256];
	struct egress_rules *r = NULL, *again = NULL;
	json_t *in, *j = NULL, *j2 = NULL, *entry;
	size_t i;

	if (!host)
		return 0;
	if (nl)
		memcpy(host, nl + 1, size - jlen - 1);
	host[nl ? size - jlen - 1 : 0] = '\0';
	in = json_loadb((const char *)data, jlen, 0, NULL);

	if (egress_rules_parse(in, &r, err, sizeof(err)) != 0) {
		if (r || !err[0])
			__builtin_trap();
		goto out;
	}
	if (!r || !(j = egress_rules_json(r)))
		__builtin_trap();
	if (egress_rules_parse(j, &again, err, sizeof(err)) != 0 ||
	    !(j2 = egress_rules_json(again)) || !json_equal(j, j2) ||
	    egress_rules_empty(r) != egress_rules_empty(again))
		__builtin_trap();
	json_array_foreach(json_object_get(j, "allow"), i, entry)
		entry_allows_itself(r, json_string_value(entry));
	same_answers(r, again, host);
	probe(r, host);
out:
	json_decref(in);
	json_decref(j);
	json_decref(j2);
	egress_rules_destroy(r);
	egress_rules_destroy(again);
	free(host);
	return 0;
}
