/* tests/fuzz/fuzz_auth.c: libFuzzer target for the credentials a client
 * sends before anything else is looked at (gateway/core/auth.c): the
 * Authorization header and the Origin header. The input is two strings
 * separated by the first newline: a header value, and an Origin allowlist
 * (as --origins takes it). Checked besides "no crash":
 *   - a bearer value that parses is "Bearer" (any case), spaces, then the
 *     token, exactly: non-empty, no whitespace, shorter than the buffer;
 *     a buffer one byte too small refuses it;
 *   - the Origin check agrees with a plain reimplementation of the rule
 *     (items split at commas, spaces trimmed, "*" or a case-insensitive
 *     equal item allows), an absent Origin is allowed;
 *   - a token's scope: the operator key gives AUTH_OPERATOR, a token whose
 *     hash is the control hash AUTH_CONTROL, the view hash AUTH_VIEW, and
 *     nothing else anything. */
#include "gateway/core/auth.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_bearer(const char *h)
{
	char tok[160], small[160];
	size_t n, skip = 7;

	if (auth_parse_bearer(h, tok, sizeof(tok)) < 0)
		return;
	n = strlen(tok);
	if (n == 0 || n >= sizeof(tok) || strncasecmp(h, "Bearer ", 7) || strpbrk(tok, " \t\r\n"))
		__builtin_trap();
	while (h[skip] == ' ')
		skip++;
	if (strcmp(h + skip, tok))
		__builtin_trap();
	if (auth_parse_bearer(h, small, n) == 0 || auth_parse_bearer(h, small, n + 1) != 0 ||
	    strcmp(small, tok))
		__builtin_trap();
}

static bool origin_ref(const char *origin, const char *list)
{
	char *copy, *item, *save = NULL;
	bool ok = false;

	if (!origin || !*origin)
		return true;
	copy = strdup(list);
	if (!copy)
		abort();
	/* strtok_r merges empty items, which match nothing anyway. */
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		size_t n;

		while (*item == ' ')
			item++;
		n = strlen(item);
		while (n && item[n - 1] == ' ')
			item[--n] = '\0';
		if (!strcmp(item, "*") || (*item && !strcasecmp(item, origin)))
			ok = true;
	}
	free(copy);
	return ok;
}

static void check_scope(const char *token, const char *other)
{
	char h[AUTH_HASH_LEN + 1], ho[AUTH_HASH_LEN + 1];
	bool same = !strcmp(token, other), empty = !*token;

	auth_token_hash(token, h);
	auth_token_hash(other, ho);
	if (strlen(h) != AUTH_HASH_LEN || (same != !strcmp(h, ho)))
		__builtin_trap();
	if (auth_scope_of(token, token, NULL, NULL) != (empty ? AUTH_NONE : AUTH_OPERATOR) ||
	    auth_scope_of(token, other, h, NULL) != (empty  ? AUTH_NONE
						     : same ? AUTH_OPERATOR
							    : AUTH_CONTROL) ||
	    auth_scope_of(token, "", "", h) != (empty ? AUTH_NONE : AUTH_VIEW) ||
	    auth_scope_of(token, other, ho, ho) != (empty  ? AUTH_NONE
						    : same ? AUTH_OPERATOR
							   : AUTH_NONE))
		__builtin_trap();
	if (auth_equal(token, other) != same)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a = malloc(size + 1), *b;

	if (!a)
		return 0;
	memcpy(a, data, size);
	a[size] = '\0';
	b = strchr(a, '\n');
	if (b)
		*b++ = '\0';
	else
		b = a + strlen(a);
	check_bearer(a);
	check_bearer(b);
	if (auth_origin_allowed(a, b) != origin_ref(a, b) ||
	    auth_origin_allowed(b, a) != origin_ref(b, a) || !auth_origin_allowed(NULL, b) ||
	    auth_origin_allowed(a, NULL) != !*a)
		__builtin_trap();
	check_scope(a, b);
	free(a);
	return 0;
}
