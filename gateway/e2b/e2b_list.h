/* gateway/e2b/e2b_list.h: GET /v2/sandboxes as E2B's SDKs send it, read
 * into a query: metadata (every k=v), state (repeated, state=running&
 * state=paused as the SDK's query serializer writes an array, or one
 * comma-separated value), startedAfter (RFC 3339), template, order (asc or
 * desc by start time, desc by default: newest first), limit and nextToken
 * (a cursor: the start time and id of the last sandbox of the page before,
 * so a page does not shift when sandboxes come or go). And the order and
 * cursor themselves. Pure: unit-tested (tests/unit/test_e2b_api.c) and
 * fuzzed (tests/fuzz/fuzz_e2b_api.c). */
#ifndef VITRINE_GATEWAY_E2B_LIST_H
#define VITRINE_GATEWAY_E2B_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define E2B_LIST_DEFAULT_LIMIT 100
#define E2B_LIST_MAX_LIMIT 100 /* E2B's paginationLimit maximum */
#define E2B_LIST_STATE_RUNNING 1u
#define E2B_LIST_STATE_PAUSED 2u
#define E2B_LIST_TOKEN_MAX 96

struct e2b_list_query {
	char metadata[1024]; /* "k=v&k2=v2" (e2b_metadata_match), "" for any */
	unsigned states; /* E2B_LIST_STATE_* bits; 0: any */
	int64_t started_after_ms; /* unix ms; 0: any */
	char template_id[64]; /* "" for any */
	bool asc; /* oldest first; E2B's default is newest first */
	int limit;
	bool has_cursor; /* nextToken: the page starts after this one */
	int64_t cursor_ms;
	char cursor_id[48];
};

/* The defaults: any sandbox, newest first, E2B_LIST_DEFAULT_LIMIT. */
void e2b_list_query_init(struct e2b_list_query *q);
/* Takes one query argument as lws decodes it ("state=paused"); arguments
 * of other names are ignored (as E2B's API ignores them). Returns 0, or
 * -EINVAL with a sentence naming the argument in err: a state, order,
 * limit (1..E2B_LIST_MAX_LIMIT), startedAfter or nextToken of the wrong
 * shape, a value too long. */
int e2b_list_query_arg(struct e2b_list_query *q, const char *arg, char *err, size_t errlen);

/* Unix ms of an RFC 3339 time ("2026-12-07T07:00:00Z", fractions and
 * "+01:00" offsets taken), or -EINVAL. */
int e2b_rfc3339_ms(const char *s, int64_t *out_ms);

/* <0, 0, >0 as sandbox a (started a_ms, id a_id) goes before, with or
 * after b in q's order (start time, then id, so the order is total). */
int e2b_list_cmp(const struct e2b_list_query *q, int64_t a_ms, const char *a_id, int64_t b_ms,
		 const char *b_id);
/* Whether a sandbox passes q's cursor (goes after it); true without one. */
bool e2b_list_after_cursor(const struct e2b_list_query *q, int64_t ms, const char *id);
/* The nextToken of a page whose last sandbox is (ms, id): "ms.id" into
 * out (E2B_LIST_TOKEN_MAX). */
void e2b_list_token(int64_t ms, const char *id, char *out, size_t len);

#endif
