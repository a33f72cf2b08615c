/* tests/fuzz/fuzz_e2b_api.c: libFuzzer target for E2B's control-plane
 * inputs beyond the bodies fuzz_e2b.c takes: the v2 list's query
 * arguments (gateway/e2b/e2b_list.c) and the network options
 * (gateway/e2b/e2b_network.c). The first byte picks the parser, the rest
 * is the input. Checked besides "no crash" and no leak:
 *   - list: a query taken has a limit of 1..100, states of the two known
 *     bits, a cursor id of [A-Za-z0-9_-] that its token writes back to a
 *     token the query takes again, the same; an RFC 3339 time taken is a
 *     time at or after 1969-12-31 (the epoch less an offset);
 *   - network: an accepted option set gives an allowlist egress_rules_parse
 *     takes, whose entries are "*:*" alone or one per allowOut entry, in
 *     order; a refusal says why. */
#include "gateway/e2b/e2b_list.h"
#include "gateway/e2b/e2b_network.h"
#include "gateway/egress/egress_rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void list_args(const char *text)
{
	struct e2b_list_query q, again;
	char err[200], copy[4096], tok[E2B_LIST_TOKEN_MAX + 16];
	char *save = NULL, *a;

	e2b_list_query_init(&q);
	snprintf(copy, sizeof(copy), "%s", text);
	for (a = strtok_r(copy, "&", &save); a; a = strtok_r(NULL, "&", &save)) {
		err[0] = '\0';
		if (e2b_list_query_arg(&q, a, err, sizeof(err)) < 0 && !err[0])
			__builtin_trap(); /* a refusal says why */
	}
	if (q.limit < 1 || q.limit > E2B_LIST_MAX_LIMIT || (q.states & ~3u) ||
	    q.started_after_ms < -86400000LL)
		__builtin_trap();
	if (q.has_cursor) {
		for (const char *p = q.cursor_id; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
				__builtin_trap();
		strcpy(tok, "nextToken=");
		e2b_list_token(q.cursor_ms, q.cursor_id, tok + 10, sizeof(tok) - 10);
		e2b_list_query_init(&again);
		if (e2b_list_query_arg(&again, tok, err, sizeof(err)) < 0 ||
		    again.cursor_ms != q.cursor_ms || strcmp(again.cursor_id, q.cursor_id))
			__builtin_trap();
	}
}

static void network(const char *text, size_t n)
{
	json_t *body = json_loadb(text, n, JSON_DECODE_ANY, NULL), *egress = NULL, *allow;
	const json_t *net = json_is_object(body) ? json_object_get(body, "network") : body;
	const json_t *internet = json_is_object(body)
					 ? json_object_get(body, "allow_internet_access")
					 : NULL;
	struct egress_rules *rules;
	char err[320] = "";
	int rc;

	if (!body)
		return;
	rc = e2b_network_egress(net, internet, &egress, err, sizeof(err));
	if (rc < 0 && (egress || (rc == -EINVAL && !err[0])))
		__builtin_trap();
	if (rc == 0 && egress) {
		const json_t *out = json_is_object(net) ? json_object_get(net, "allowOut") : NULL;

		allow = json_object_get(egress, "allow");
		if (egress_rules_parse(egress, &rules, err, sizeof(err)) < 0)
			__builtin_trap();
		egress_rules_destroy(rules);
		if (!(json_array_size(allow) == 1 &&
		      !strcmp(json_string_value(json_array_get(allow, 0)), "*:*")) &&
		    json_array_size(allow) != json_array_size(out))
			__builtin_trap();
	}
	json_decref(egress);
	json_decref(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size < 1 || size > 4096)
		return 0;
	if (!(text = malloc(size)))
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (data[0] % 2 == 0)
		list_args(text);
	else
		network(text, size - 1);
	free(text);
	return 0;
}
