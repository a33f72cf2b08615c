/* tests/unit/test_e2b_api.c: the pure parts of E2B's control plane beyond
 * the bodies test_e2b.c covers: the v2 list's query (repeated and
 * comma-separated states, startedAfter as RFC 3339, template, order,
 * limit, nextToken as a cursor) and its order; the network options as
 * egress rules (all traffic, deny all with allowed addresses and names,
 * what an allowlist cannot say refused with the field named); the metrics
 * samples (CPU percentage between readings, the time range, the ring). */
#include "gateway/e2b/e2b_fork.h"
#include "gateway/e2b/e2b_list.h"
#include "gateway/e2b/e2b_metrics.h"
#include "gateway/e2b/e2b_network.h"
#include "gateway/e2b/e2b_route.h"
#include "gateway/egress/egress_rules.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int arg(struct e2b_list_query *q, const char *a)
{
	char err[200] = "";
	int rc = e2b_list_query_arg(q, a, err, sizeof(err));

	assert_true(rc == 0 || err[0]);
	return rc;
}

static void test_list_query(void **state)
{
	struct e2b_list_query q;
	int64_t ms;

	(void)state;
	e2b_list_query_init(&q);
	assert_int_equal(q.limit, 100);
	assert_false(q.asc);
	assert_int_equal(q.states, 0);
	/* the SDK's array: state=running&state=paused; or one value */
	assert_int_equal(arg(&q, "state=running"), 0);
	assert_int_equal(q.states, E2B_LIST_STATE_RUNNING);
	assert_int_equal(arg(&q, "state=paused"), 0);
	assert_int_equal(q.states, E2B_LIST_STATE_RUNNING | E2B_LIST_STATE_PAUSED);
	e2b_list_query_init(&q);
	assert_int_equal(arg(&q, "state=paused,running"), 0);
	assert_int_equal(q.states, E2B_LIST_STATE_RUNNING | E2B_LIST_STATE_PAUSED);
	assert_int_equal(arg(&q, "state=killed"), -EINVAL);
	assert_int_equal(arg(&q, "state=running,"), -EINVAL);
	assert_int_equal(arg(&q, "state="), 0); /* nothing added */
	assert_int_equal(arg(&q, "order=asc"), 0);
	assert_true(q.asc);
	assert_int_equal(arg(&q, "order=desc"), 0);
	assert_false(q.asc);
	assert_int_equal(arg(&q, "order=up"), -EINVAL);
	assert_int_equal(arg(&q, "limit=1"), 0);
	assert_int_equal(q.limit, 1);
	assert_int_equal(arg(&q, "limit=100"), 0);
	assert_int_equal(arg(&q, "limit=101"), -EINVAL);
	assert_int_equal(arg(&q, "limit=0"), -EINVAL);
	assert_int_equal(arg(&q, "limit=-1"), -EINVAL);
	assert_int_equal(arg(&q, "limit=5x"), -EINVAL);
	assert_int_equal(arg(&q, "metadata=a=b&c=d"), 0);
	assert_string_equal(q.metadata, "a=b&c=d");
	assert_int_equal(arg(&q, "template=tiny"), 0);
	assert_string_equal(q.template_id, "tiny");
	assert_int_equal(arg(&q, "startedAfter=2026-12-07T07:00:00.250Z"), 0);
	assert_int_equal(q.started_after_ms, 1796626800250LL);
	assert_int_equal(arg(&q, "startedAfter=yesterday"), -EINVAL);
	assert_int_equal(arg(&q, "unknown=1"), 0); /* ignored, as E2B's API */
	/* nextToken: a cursor this gateway gave */
	assert_int_equal(arg(&q, "nextToken=1796626800250.node0abc"), 0);
	assert_true(q.has_cursor);
	assert_int_equal(q.cursor_ms, 1796626800250LL);
	assert_string_equal(q.cursor_id, "node0abc");
	assert_int_equal(arg(&q, "nextToken=7"), -EINVAL);
	assert_int_equal(arg(&q, "nextToken=.x"), -EINVAL);
	assert_int_equal(arg(&q, "nextToken=12.a/b"), -EINVAL);
	/* RFC 3339 with offsets and fractions */
	assert_int_equal(e2b_rfc3339_ms("1970-01-01T00:00:01Z", &ms), 0);
	assert_int_equal(ms, 1000);
	assert_int_equal(e2b_rfc3339_ms("1970-01-01T01:00:00+01:00", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(e2b_rfc3339_ms("1970-01-01T00:00:00.5-00:30", &ms), 0);
	assert_int_equal(ms, 1800500);
	assert_int_equal(e2b_rfc3339_ms("1970-01-01T00:00:00.123456789z", &ms), 0);
	assert_int_equal(ms, 123);
	assert_int_equal(e2b_rfc3339_ms("1970-01-01T00:00:00", &ms), -EINVAL);
	assert_int_equal(e2b_rfc3339_ms("1970-13-01T00:00:00Z", &ms), -EINVAL);
	assert_int_equal(e2b_rfc3339_ms("1970-01-01T00:00:00.Z", &ms), -EINVAL);
	assert_int_equal(e2b_rfc3339_ms("1970-01-01T00:00:00Zjunk", &ms), -EINVAL);
}

static void test_list_order(void **state)
{
	struct e2b_list_query q;
	char tok[E2B_LIST_TOKEN_MAX];

	(void)state;
	e2b_list_query_init(&q);
	/* newest first by default; ties by id */
	assert_true(e2b_list_cmp(&q, 2000, "a", 1000, "b") < 0);
	assert_true(e2b_list_cmp(&q, 1000, "a", 1000, "b") > 0);
	assert_int_equal(e2b_list_cmp(&q, 1000, "a", 1000, "a"), 0);
	q.asc = true;
	assert_true(e2b_list_cmp(&q, 2000, "a", 1000, "b") > 0);
	/* a page's token: the next page starts right after its last one */
	e2b_list_token(1500, "node1x", tok, sizeof(tok));
	assert_string_equal(tok, "1500.node1x");
	e2b_list_query_init(&q);
	assert_true(e2b_list_after_cursor(&q, 9999, "z"));
	assert_int_equal(arg(&q, "nextToken=1500.node1x"), 0);
	assert_false(e2b_list_after_cursor(&q, 1500, "node1x"));
	assert_false(e2b_list_after_cursor(&q, 2000, "node0"));
	assert_true(e2b_list_after_cursor(&q, 1500, "node1w"));
	assert_true(e2b_list_after_cursor(&q, 1000, "node9"));
	q.asc = true;
	assert_true(e2b_list_after_cursor(&q, 2000, "node0"));
	assert_false(e2b_list_after_cursor(&q, 1000, "node9"));
}

/* The egress rules network and internet (JSON text, or NULL) make: their
 * normalized JSON text (caller frees), "none" when nothing is said, or
 * "400: reason". */
static char *rules_of(const char *network, const char *internet)
{
	json_t *n = network ? json_loads(network, JSON_DECODE_ANY, NULL) : NULL;
	json_t *i = internet ? json_loads(internet, JSON_DECODE_ANY, NULL) : NULL;
	json_t *egress = NULL, *norm;
	struct egress_rules *rules;
	char err[320] = "", *out;
	int rc = e2b_network_egress(n, i, &egress, err, sizeof(err));

	json_decref(n);
	json_decref(i);
	if (rc == -EINVAL) {
		assert_null(egress);
		assert_true(asprintf(&out, "400: %s", err) > 0);
		return out;
	}
	assert_int_equal(rc, 0);
	if (!egress)
		return strdup("none");
	assert_int_equal(egress_rules_parse(egress, &rules, err, sizeof(err)), 0);
	norm = egress_rules_json(rules);
	out = json_dumps(norm, JSON_COMPACT);
	json_decref(norm);
	json_decref(egress);
	egress_rules_destroy(rules);
	return out;
}

static void expect_rules(const char *network, const char *internet, const char *want)
{
	char *got = rules_of(network, internet);

	if (want[0] == '4')
		assert_memory_equal(got, want, strlen(want));
	else
		assert_string_equal(got, want);
	free(got);
}

static void test_network(void **state)
{
	(void)state;
	/* nothing said: Vitrine's default (no rules) */
	expect_rules(NULL, NULL, "none");
	expect_rules("null", "null", "none");
	expect_rules("{\"allowPublicTraffic\": false}", NULL, "none");
	/* E2B's open sandbox */
	expect_rules(NULL, "true", "{\"allow\":[\"*:*\"]}");
	expect_rules("{\"allowOut\": [\"1.1.1.1\"]}", NULL, "{\"allow\":[\"*:*\"]}");
	expect_rules("{\"denyOut\": [\"8.8.8.8\"], \"allowOut\": [\"0.0.0.0/0\"]}", NULL,
		     "{\"allow\":[\"*:*\"]}");
	/* deny all, allow some: the allowOut entries */
	expect_rules("{\"denyOut\": [\"0.0.0.0/0\"], \"allowOut\": [\"1.1.1.1\", \"8.8.8.8/32\", "
		     "\"Example.com\", \"*.example.org\"]}",
		     NULL,
		     "{\"allow\":[\"1.1.1.1:*\",\"8.8.8.8:*\",\"example.com\",\"*.example.org\"]}");
	expect_rules("{\"denyOut\": [\"0.0.0.0/0\"]}", NULL, "{\"allow\":[]}");
	expect_rules(NULL, "false", "{\"allow\":[]}");
	expect_rules("{\"allowOut\": [\"1.1.1.1\"]}", "false", "{\"allow\":[\"1.1.1.1:*\"]}");
	expect_rules("{\"denyOut\": [\"0.0.0.0/0\"], \"allowOut\": [\"0.0.0.0/0\"]}", NULL,
		     "{\"allow\":[\"*:*\"]}");
	/* what an allowlist cannot say */
	expect_rules("{\"denyOut\": [\"8.8.8.8\"]}", NULL, "400: network.denyOut: denying some");
	expect_rules("{\"denyOut\": [\"0.0.0.0/0\"], \"allowOut\": [\"10.0.0.0/8\"]}", NULL,
		     "400: network.allowOut[0]: '10.0.0.0/8': a range");
	expect_rules("{\"denyOut\": [\"0.0.0.0/0\"], \"allowOut\": [\"1.1.1.1\", \"::1\"]}", NULL,
		     "400: network.allowOut[1]: '::1': IPv6");
	expect_rules("{\"denyOut\": [\"0.0.0.0/0\"], \"allowOut\": [\"exa mple.com\"]}", NULL,
		     "400: network.allowOut[0]: 'exa mple.com' is not");
	expect_rules("{\"rules\": {\"api.example.com\": [{\"transform\": {}}]}}", NULL,
		     "400: network.rules:");
	expect_rules("{\"rules\": {}}", NULL, "none");
	expect_rules("{\"egressProxy\": {\"address\": \"p:1\"}}", NULL,
		     "400: network.egressProxy:");
	expect_rules("{\"allowOut\": \"1.1.1.1\"}", NULL, "400: network.allowOut:");
	expect_rules("{\"allowOut\": [1]}", NULL, "400: network.allowOut[0]:");
	expect_rules("[]", NULL, "400: network: an object");
	expect_rules(NULL, "1", "400: allow_internet_access:");
}

static struct e2b_reading reading(int64_t s, double cpu)
{
	return (struct e2b_reading){ .unix_ms = s * 1000 + 250,
				     .mono_ms = s * 1000,
				     .cpu_seconds = cpu,
				     .cpus = 2,
				     .mem_used = 100 << 20,
				     .mem_total = 512 << 20,
				     .disk_used = 5 << 20,
				     .disk_total = 1 << 30 };
}

static void test_metrics(void **state)
{
	struct e2b_metrics *m = calloc(1, sizeof(*m));
	struct e2b_reading rd;
	json_t *j;

	(void)state;
	assert_int_equal(e2b_metrics_newest_ms(m), 0);
	j = e2b_metrics_json(m, 0, 0);
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
	rd = reading(1000, 10);
	e2b_metrics_add(m, &rd);
	rd = reading(1005, 15); /* 5 s of CPU over 5 s on 2 vCPUs: 50% */
	e2b_metrics_add(m, &rd);
	rd = reading(1010, 100); /* more than the vCPUs can: clamped */
	e2b_metrics_add(m, &rd);
	assert_int_equal(e2b_metrics_newest_ms(m), 1010250);
	j = e2b_metrics_json(m, 0, 0);
	assert_int_equal(json_array_size(j), 3);
	assert_true(json_real_value(json_object_get(json_array_get(j, 0), "cpuUsedPct")) == 0);
	assert_true(json_real_value(json_object_get(json_array_get(j, 1), "cpuUsedPct")) == 50);
	assert_true(json_real_value(json_object_get(json_array_get(j, 2), "cpuUsedPct")) == 100);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(j, 1), "timestampUnix")),
			 1005);
	assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "timestamp")),
			    "1970-01-01T00:16:40.250Z");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(j, 0), "memTotal")),
			 512 << 20);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(j, 0), "cpuCount")), 2);
	assert_non_null(json_object_get(json_array_get(j, 0), "memCache"));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(j, 0), "diskTotal")),
			 1 << 30);
	json_decref(j);
	/* the range, inclusive, in seconds */
	j = e2b_metrics_json(m, 1005, 1010);
	assert_int_equal(json_array_size(j), 2);
	json_decref(j);
	j = e2b_metrics_json(m, 0, 1004);
	assert_int_equal(json_array_size(j), 1);
	json_decref(j);
	j = e2b_metrics_json(m, 2000, 0);
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
	/* the ring keeps the newest, oldest first */
	for (int i = 0; i < E2B_METRICS_KEEP + 5; i++) {
		rd = reading(2000 + 5 * i, 0);
		e2b_metrics_add(m, &rd);
	}
	j = e2b_metrics_json(m, 0, 0);
	assert_int_equal(json_array_size(j), E2B_METRICS_KEEP);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(j, 0), "timestampUnix")),
			 2000 + 5 * 5);
	json_decref(j);
	free(m);
}

static void test_fork_body(void **state)
{
	int t, n;
	char err[160];

	(void)state;
	assert_int_equal(e2b_fork_parse("", 0, &t, &n, err, sizeof(err)), 0);
	assert_int_equal(t, 15);
	assert_int_equal(n, 1);
#define FORK(b) e2b_fork_parse(b, strlen(b), &t, &n, err, sizeof(err))
	assert_int_equal(FORK("{}"), 0);
	assert_int_equal(FORK("{\"timeout\": 60, \"count\": 2}"), 0);
	assert_int_equal(t, 60);
	assert_int_equal(n, 2);
	assert_int_equal(FORK("{\"timeout\": 0, \"count\": null}"), 0);
	assert_int_equal(t, 15);
	assert_int_equal(n, 1);
	assert_int_equal(FORK("{\"count\": 100}"), 0);
	assert_int_equal(FORK("{\"count\": 0}"), -EINVAL);
	assert_non_null(strstr(err, "count"));
	assert_int_equal(FORK("{\"count\": 101}"), -EINVAL);
	assert_int_equal(FORK("{\"count\": 1.5}"), -EINVAL);
	assert_int_equal(FORK("{\"timeout\": -1}"), -EINVAL);
	assert_int_equal(FORK("{\"timeout\": 86401}"), -EINVAL);
	assert_int_equal(FORK("[]"), -EINVAL);
	assert_int_equal(FORK("{"), -EINVAL);
#undef FORK
}

static void test_routes(void **state)
{
	(void)state;
	assert_int_equal(e2b_route_parse("POST", "/sandboxes/abc/fork", false).kind, E2B_FORK);
	assert_int_equal(e2b_route_parse("POST", "/sandboxes/abc/snapshots", false).kind,
			 E2B_SNAPSHOT_CREATE);
	assert_int_equal(e2b_route_parse("GET", "/snapshots", false).kind, E2B_SNAPSHOT_LIST);
	assert_int_equal(e2b_route_parse("POST", "/snapshots", false).kind, E2B_BAD_METHOD);
	assert_int_equal(e2b_route_parse("DELETE", "/templates/snap-abc-1x", false).kind,
			 E2B_SNAPSHOT_DELETE);
	assert_string_equal(e2b_route_parse("DELETE", "/templates/snap-abc-1x", false).id,
			    "snap-abc-1x");
	/* E2B's other template calls are not served: the native API's 404 */
	assert_int_equal(e2b_route_parse("GET", "/templates/x", false).kind, E2B_NONE);
	assert_int_equal(e2b_route_parse("DELETE", "/templates/x/y", false).kind, E2B_NONE);
	assert_int_equal(e2b_route_parse("DELETE", "/templates/a:b", false).kind, E2B_NONE);
	assert_int_equal(e2b_route_parse("GET", "/sandboxes/abc/fork", false).kind, E2B_BAD_METHOD);
	assert_int_equal(e2b_route_parse("GET", "/sandboxes/abc/metrics", false).kind, E2B_METRICS);
	assert_string_equal(e2b_route_parse("GET", "/sandboxes/abc/metrics", false).id, "abc");
	assert_int_equal(e2b_route_parse("POST", "/sandboxes/abc/metrics", false).kind,
			 E2B_BAD_METHOD);
	assert_int_equal(e2b_route_parse("PUT", "/sandboxes/abc/network", false).kind, E2B_NETWORK);
	assert_int_equal(e2b_route_parse("GET", "/sandboxes/abc/network", false).kind,
			 E2B_BAD_METHOD);
	assert_int_equal(e2b_route_parse("GET", "/v2/sandboxes/abc/metrics", false).kind, E2B_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_query), cmocka_unit_test(test_list_order),
		cmocka_unit_test(test_network),	   cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_fork_body),  cmocka_unit_test(test_routes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
