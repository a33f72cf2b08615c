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
 *   - a token's rights: the operator key gives all, a token whose hash is
 *     the control hash the control token's, the view hash the view token's,
 *     a minted grant its own (never admin) until it ends, and nothing else
 *     anything. */
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

/* The rights token has given the operator key op and the two session
 * hashes, as gateway/session's sess_rights asks (an empty token or key is
 * none). */
static unsigned rights(const char *token, const char *op, const char *ctl, const char *view,
		       const struct auth_grant *g, int n, int64_t now)
{
	char h[AUTH_HASH_LEN + 1], oh[AUTH_HASH_LEN + 1] = "";

	if (!*token)
		return 0;
	auth_token_hash(token, h);
	if (*op)
		auth_token_hash(op, oh);
	return auth_rights_of_hash(h, oh, ctl, view, g, n, now, NULL);
}

static void check_scope(const char *token, const char *other)
{
	char h[AUTH_HASH_LEN + 1], ho[AUTH_HASH_LEN + 1];
	bool same = !strcmp(token, other), empty = !*token;
	struct auth_grant g = { .id = "t000000000",
				.rights = AUTH_R_EXEC | AUTH_R_ADMIN,
				.expires_unix_ms = 100 };

	auth_token_hash(token, h);
	auth_token_hash(other, ho);
	if (strlen(h) != AUTH_HASH_LEN || (same != !strcmp(h, ho)))
		__builtin_trap();
	memcpy(g.hash, ho, sizeof(g.hash));
	if (rights(token, token, NULL, NULL, NULL, 0, 0) != (empty ? 0 : AUTH_RIGHTS_OPERATOR) ||
	    rights(token, other, h, NULL, NULL, 0, 0) != (empty	 ? 0
							  : same ? AUTH_RIGHTS_OPERATOR
								 : AUTH_RIGHTS_CONTROL) ||
	    rights(token, "", "", h, NULL, 0, 0) != (empty ? 0 : AUTH_RIGHTS_VIEW) ||
	    rights(token, other, ho, ho, NULL, 0, 0) != (empty	? 0
							 : same ? AUTH_RIGHTS_OPERATOR
								: 0))
		__builtin_trap();
	/* a minted grant: its rights but never admin, and nothing once it ended */
	if (rights(token, "", NULL, NULL, &g, 1, 99) != (empty || !same ? 0 : AUTH_R_EXEC) ||
	    rights(token, "", NULL, NULL, &g, 1, 100) != 0)
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
