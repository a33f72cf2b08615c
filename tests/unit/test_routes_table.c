/* tests/unit/test_routes_table.c: the route table itself
 * (gateway/api/route_table.c): every row's pattern, made into a path,
 * parses back to its own row for each of its methods; two rows never
 * claim the same method and path; every row says its right, its body
 * limit, its handler and an audit event (or none, said) for each method;
 * every kind has a name of its own. */
#include "gateway/api/routes.h"
#include "gateway/core/auth.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* What each placeholder is made into, and where route_parse puts it. */
static const struct {
	const char *placeholder, *value;
	bool sub;
} samples[] = {
	{ "{id}", "s1abcdefghijklmnop", false },
	{ "{name}", "tpl-1", false },
	{ "{key}", "key_1", false },
	{ "{tid}", "control", true },
	{ "{kid}", "key_x1y2z3a4", true },
	{ "{n}", "42", true },
	{ "{rest}", "/a/b", false },
};

/* pattern as a path, its last slash (a "/?") there when slash; the
 * placeholders' values into id and sub. */
static void sample_path(const char *pattern, bool slash, char *out, size_t len, char *id, char *sub)
{
	size_t n = 0;

	id[0] = sub[0] = '\0';
	while (*pattern && n + 1 < len) {
		size_t i;

		if (!strcmp(pattern, "/?")) {
			if (slash)
				out[n++] = '/';
			break;
		}
		for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
			if (!strncmp(pattern, samples[i].placeholder,
				     strlen(samples[i].placeholder)))
				break;
		if (i == sizeof(samples) / sizeof(samples[0])) {
			out[n++] = *pattern++;
			continue;
		}
		n += (size_t)snprintf(out + n, len - n, "%s", samples[i].value);
		if (strcmp(samples[i].placeholder, "{rest}")) /* not copied */
			strcpy(samples[i].sub ? sub : id, samples[i].value);
		pattern += strlen(samples[i].placeholder);
	}
	out[n] = '\0';
}

static void test_every_pattern_parses_to_its_row(void **state)
{
	int checked = 0;

	(void)state;
	for (int k = 0; k < R_KIND_COUNT; k++) {
		const struct route_def *d = &route_table[k];

		if (!d->pattern)
			continue;
		for (int slash = 0; slash < 2; slash++) {
			char path[256], id[ROUTE_ID_MAX + 1], sub[ROUTE_SUB_MAX + 1];

			if (slash && !strstr(d->pattern, "/?"))
				continue;
			sample_path(d->pattern, slash, path, sizeof(path), id, sub);
			for (int m = M_GET; m < M_OTHER; m++) {
				struct route r;

				if (!(d->methods & (1u << m)))
					continue;
				r = route_parse((enum route_method)m, path);
				if ((int)r.kind != k)
					fail_msg("%s %s (%s): parsed as %s", route_kind_names[k],
						 path, d->pattern, route_kind_names[r.kind]);
				assert_string_equal(r.id, id);
				assert_string_equal(r.sub, sub);
				checked++;
			}
			/* no other method of the path's is a route: 405 (but
			 * where a row takes any) */
			assert_int_equal(route_parse(M_OTHER, path).kind,
					 d->methods & (1u << M_OTHER) ? (enum route_kind)k
								      : R_METHOD_NOT_ALLOWED);
		}
	}
	print_message("%d row x method paths parsed back\n", checked);
	assert_true(checked > 50);
}

static void test_no_two_rows_claim_a_path(void **state)
{
	(void)state;
	for (int a = 0; a < R_KIND_COUNT; a++) {
		char path[256], id[ROUTE_ID_MAX + 1], sub[ROUTE_SUB_MAX + 1];

		if (!route_table[a].pattern)
			continue;
		sample_path(route_table[a].pattern, false, path, sizeof(path), id, sub);
		for (int b = 0; b < R_KIND_COUNT; b++) {
			const struct route_def *d = &route_table[b];

			if (b == a || !d->pattern || !(d->methods & route_table[a].methods))
				continue;
			if (route_pattern_match(d->pattern, path, NULL))
				fail_msg("%s and %s both claim %s", route_kind_names[a],
					 route_kind_names[b], path);
		}
	}
}

static void test_every_row_is_whole(void **state)
{
	(void)state;
	for (int k = 0; k < R_KIND_COUNT; k++) {
		const struct route_def *d = &route_table[k];
		const char *name = route_kind_names[k];

		if (!name || !name[0])
			fail_msg("kind %d has no name", k);
		for (int o = 0; o < k; o++)
			if (!strcmp(name, route_kind_names[o]))
				fail_msg("kinds %d and %d are both \"%s\"", o, k, name);
		if (!d->right)
			fail_msg("%s: no right", name);
		if (!d->handle)
			fail_msg("%s: no handler", name);
		if (!d->body_max)
			fail_msg("%s: no body limit", name);
		if (!d->pattern != !d->methods)
			fail_msg("%s: a pattern without methods, or methods without one", name);
		/* a WebSocket route (named *_ws) takes GET alone and has its
		 * callback; no other route has one but a guest's port, whose
		 * requests are HTTP or a WebSocket's upgrade, as the guest's
		 * server takes them (api/api_ports_ws.h) */
		{
			size_t n = strlen(name);
			bool ws_named = n > 3 && !strcmp(name + n - 3, "_ws");

			if (k == R_SESSION_PORT) {
				if (!d->ws || d->methods != ROUTE_ANY)
					fail_msg("%s: any method, and its upgrade", name);
			} else if (ws_named != (d->ws != NULL))
				fail_msg("%s: %s", name,
					 ws_named
						 ? "a WebSocket route without its callback"
						 : "a WebSocket callback on a route not named _ws");
			if (ws_named && d->methods != ROUTE_GET)
				fail_msg("%s: a WebSocket route takes GET alone", name);
		}
		if (d->state_release && !d->state_size && !d->state_size_of)
			fail_msg("%s: releases a state it has not", name);
		/* the audit event of each method, or ROUTE_NO_AUDIT said */
		for (int m = M_GET; m < M_OTHER; m++)
			if ((!d->methods || (d->methods & (1u << m))) && !d->audit_of &&
			    !d->audit[m])
				fail_msg("%s: no audit event said for method %d", name, m);
		/* a right is a token's (AUTH_R_*) or one of routes.h's */
		if (d->right &
		    ~(AUTH_RIGHTS_OPERATOR | ROUTE_NO_TOKEN | ROUTE_OPERATOR_KEY | ROUTE_OWN_AUTH))
			fail_msg("%s: right 0x%x is none of auth.h's or routes.h's", name,
				 d->right);
		for (int m = M_GET; m < M_OTHER; m++)
			if (d->right_of[m] && !(d->methods & (1u << m)))
				fail_msg("%s: a right for method %d, which it does not take", name,
					 m);
	}
}

/* route_right: a PUT's own right where a row has one. */
static void test_route_right(void **state)
{
	(void)state;
	assert_int_equal(route_right(R_SESSION_EGRESS, M_GET), AUTH_R_ACT);
	assert_int_equal(route_right(R_SESSION_EGRESS, M_PUT), AUTH_R_EGRESS);
	assert_int_equal(route_right(R_SESSION_FILES, M_PUT), AUTH_R_EXEC);
	assert_int_equal(route_right(R_SESSION_SHARE, M_POST), AUTH_R_ACT);
	assert_int_equal(route_right(R_SESSION_SHARE, M_DELETE), AUTH_R_ACT | AUTH_R_SHARE);
	assert_int_equal(route_right(R_HEALTH, M_GET), ROUTE_NO_TOKEN);
	assert_true(route_names_session(R_SESSION_SCREENSHOT));
	assert_false(route_names_session(R_TEMPLATE_GET));
	assert_false(route_names_session(R_DOOR));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_pattern_parses_to_its_row),
		cmocka_unit_test(test_no_two_rows_claim_a_path),
		cmocka_unit_test(test_every_row_is_whole),
		cmocka_unit_test(test_route_right),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
