/* tests/integration/test_gateway_metrics.c: GET /metrics on a gateway with a
 * tiny guest. Only the operator key may scrape; the text passes promtool
 * (Debian's prometheus package) check metrics; after a scripted run of N
 * screenshots, M actions (two dialects), K commands and a pause and
 * resume, the counters moved by exactly those amounts; the session's own
 * series (guest memory, vCPUs, its QEMU's CPU time, RSS, PSS) are there
 * while it lives and gone once it is deleted. The --metrics-listen door
 * serves the scrape without a token, and nothing else, naming no session. Usage
 * metering: a session run, paused in memory and on disk for known times
 * has usage within a second or so of them, by the documented formulas;
 * GET /v1/usage as CSV parses; a deleted session's usage is still listed
 * after the gateway restarts. */
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/net.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define N_SHOTS 3
#define M_ACTIONS 4 /* half Anthropic's dialect, half OpenAI's */
#define K_COMMANDS 2

static struct gateway_proc gw;
static struct gateway_session sess;
static int door_port;

static int setup(void **state)
{
	char door[64];

	(void)state;
	door_port = net_free_port();
	snprintf(door, sizeof(door), "127.0.0.1:%d", door_port);
	if (door_port < 0 ||
	    gateway_proc_start(&gw, (const char *const[]){ "--metrics-listen", door, NULL }) < 0)
		return -1;
	return gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &sess);
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* method path on port with token: its status, the body into *out (owned). */
static int get_at(int port, const char *method, const char *path, const char *token, char **out)
{
	struct http_resp r;
	int status;

	assert_int_equal(http_request("127.0.0.1", port, method, path, token, NULL, 0, 30, &r), 0);
	status = r.status;
	*out = r.body ? strdup(r.body) : strdup("");
	http_resp_free(&r);
	return status;
}

/* GET /metrics with token: its status, the text into *out (owned). */
static int scrape(const char *token, char **out)
{
	return get_at(gw.port, "GET", "/metrics", token, out);
}

/* The value of the series written exactly so (name and labels), or -1. */
static double value(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

static double delta(const char *before, const char *after, const char *series)
{
	double a = value(after, series), b = value(before, series);

	if (a < 0)
		fail_msg("no %s after the run", series);
	return a - (b < 0 ? 0 : b);
}

static void call(const char *method, const char *sub, const char *body, int want)
{
	char path[256];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s%s", sess.id, sub);
	assert_int_equal(http_request("127.0.0.1", gw.port, method, path, gw.key, body,
				      body ? strlen(body) : 0, 120, &r),
			 0);
	if (r.status != want)
		fail_msg("%s %s: %d %s", method, sub, r.status, r.body ? r.body : "");
	http_resp_free(&r);
}

/* promtool check metrics < text: 0 when it finds nothing wrong. */
static int promtool(const char *text)
{
	FILE *p = popen("promtool check metrics", "w");

	if (!p)
		return -1;
	fputs(text, p);
	return pclose(p);
}

static void test_scrape_rights_and_format(void **state)
{
	char *text;

	(void)state;
	assert_int_equal(scrape(NULL, &text), 401);
	free(text);
	assert_int_equal(scrape(sess.control, &text), 403);
	free(text);
	assert_int_equal(scrape(sess.view, &text), 403);
	free(text);
	assert_int_equal(scrape(gw.key, &text), 200);
	if (promtool(text) != 0)
		fail_msg("promtool check metrics refused the scrape:\n%s", text);
	free(text);
}

static void test_counters_move_exactly(void **state)
{
	char *before, *after, series[256];
	const char *anthropic = "{\"action\":\"mouse_move\",\"coordinate\":[20,20]}";
	const char *openai = "{\"type\":\"move\",\"x\":30,\"y\":30}";

	(void)state;
	assert_int_equal(scrape(gw.key, &before), 200);
	for (int i = 0; i < N_SHOTS; i++)
		call("GET", "/screenshot?format=png", NULL, 200);
	for (int i = 0; i < M_ACTIONS; i++)
		call("POST", "/actions", i % 2 ? openai : anthropic, 200);
	for (int i = 0; i < K_COMMANDS; i++)
		call("POST", "/exec", "{\"cmd\":\"true\",\"cwd\":\"/\"}", 200);
	call("POST", "/pause", NULL, 200);
	call("POST", "/resume", NULL, 200);
	assert_int_equal(scrape(gw.key, &after), 200);
	assert_int_equal(delta(before, after,
			       "vitrine_actions_total{kind=\"screenshot\",result=\"ok\"}"),
			 N_SHOTS);
	assert_int_equal(delta(before, after,
			       "vitrine_actions_total{kind=\"anthropic\",result=\"ok\"}"),
			 M_ACTIONS / 2);
	assert_int_equal(delta(before, after,
			       "vitrine_actions_total{kind=\"openai\",result=\"ok\"}"),
			 M_ACTIONS / 2);
	assert_int_equal(delta(before, after, "vitrine_commands_total{result=\"exited\"}"),
			 K_COMMANDS);
	assert_int_equal(delta(before, after, "vitrine_command_duration_seconds_count"),
			 K_COMMANDS);
	assert_int_equal(delta(before, after,
			       "vitrine_session_operations_total{op=\"pause\",result=\"ok\"}"),
			 1);
	assert_int_equal(delta(before, after,
			       "vitrine_session_operations_total{op=\"resume\",result=\"ok\"}"),
			 1);
	assert_int_equal(
		delta(before, after,
		      "vitrine_http_requests_total{route=\"session_screenshot\",code=\"200\"}"),
		N_SHOTS);
	assert_int_equal(
		delta(before, after,
		      "vitrine_http_request_duration_seconds_count{route=\"session_exec\"}"),
		K_COMMANDS);
	/* the scrape before this one counts too */
	assert_int_equal(delta(before, after,
			       "vitrine_http_requests_total{route=\"metrics\",code=\"200\"}"),
			 1);
	assert_int_equal(value(after, "vitrine_sessions{state=\"ready\"}"), 1);
	/* each screenshot of a frame not yet encoded is a job of the encoders'
	 * queue; none waits once they are answered */
	assert_true(delta(before, after,
			  "vitrine_work_jobs_total{queue=\"encode\",result=\"accepted\"}") >= 1);
	assert_int_equal(value(after, "vitrine_work_jobs{queue=\"encode\",state=\"queued\"}"), 0);
	assert_int_equal(value(after, "vitrine_work_jobs{queue=\"bulk\",state=\"running\"}"), 0);
	snprintf(series, sizeof(series), "vitrine_session_guest_memory_bytes{session=\"%s\"}",
		 sess.id);
	assert_true(value(after, series) >= 64 << 20);
	snprintf(series, sizeof(series), "vitrine_session_vcpus{session=\"%s\"}", sess.id);
	assert_true(value(after, series) >= 1);
	free(before);
	free(after);
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* GET /v1/sessions/{id}: its usage object (owned). */
static json_t *usage_now(void)
{
	char path[128], *text;
	json_t *j, *u;

	snprintf(path, sizeof(path), "/v1/sessions/%s", sess.id);
	assert_int_equal(get_at(gw.port, "GET", path, gw.key, &text), 200);
	assert_non_null(j = json_loads(text, 0, NULL));
	free(text);
	u = json_incref(json_object_get(j, "usage"));
	json_decref(j);
	assert_non_null(u);
	return u;
}

static double num(const json_t *u, const char *k)
{
	const json_t *v = json_object_get(u, k);

	if (!json_is_number(v))
		fail_msg("usage has no number %s", k);
	return json_number_value(v);
}

static void near(double got, double want, double tol, const char *what)
{
	print_message("%s: %.2f (expected %.2f +- %.2f)\n", what, got, want, tol);
	if (got < want - tol || got > want + tol)
		fail_msg("%s is %.3f, not %.3f +- %.3f", what, got, want, tol);
}

#define HOLD_MS 1000 /* each phase; the bounds below are absolute (0.2 s) */

static void test_usage_metered(void **state)
{
	json_t *u0, *u1;
	int64_t t0, t_pm0, t_pm1, t_pd0, t_pd1, t1;
	double run, pm, pd;
	char *text;
	int vcpus, mib;

	(void)state;
	u0 = usage_now();
	t0 = wall_ms();
	call("GET", "/screenshot?format=png", NULL, 200);
	usleep(HOLD_MS * 1000);
	t_pm0 = wall_ms();
	call("POST", "/pause", "{\"mode\":\"memory\"}", 200);
	usleep(HOLD_MS * 1000);
	call("POST", "/resume", NULL, 200);
	t_pm1 = wall_ms();
	t_pd0 = wall_ms();
	call("POST", "/pause", "{\"mode\":\"disk\"}", 200);
	usleep(HOLD_MS * 1000);
	call("POST", "/resume", NULL, 200);
	t_pd1 = wall_ms();
	call("POST", "/exec", "{\"cmd\":\"true\",\"cwd\":\"/\"}", 200);
	t1 = wall_ms();
	u1 = usage_now();
	run = num(u1, "seconds_running") - num(u0, "seconds_running");
	pm = num(u1, "seconds_paused_memory") - num(u0, "seconds_paused_memory");
	pd = num(u1, "seconds_paused_disk") - num(u0, "seconds_paused_disk");
	/* each pause lasted the hold and at most the calls around it */
	assert_true(pm >= HOLD_MS / 1000.0 - 0.2 && pm <= (t_pm1 - t_pm0) / 1000.0 + 0.2);
	assert_true(pd >= HOLD_MS / 1000.0 - 0.2 && pd <= (t_pd1 - t_pd0) / 1000.0 + 0.2);
	near(run + pm + pd, (t1 - t0) / 1000.0, 0.5, "seconds in all phases over the run");
	assert_true(run >= HOLD_MS / 1000.0 - 0.2);
	assert_true(num(u1, "screenshots") - num(u0, "screenshots") >= 1);
	assert_true(num(u1, "commands") - num(u0, "commands") == 1);
	json_decref(u1);
	/* the formulas, at one instant, with the session's size */
	{
		char path[128];
		json_t *sj;

		snprintf(path, sizeof(path), "/v1/sessions/%s", sess.id);
		assert_int_equal(get_at(gw.port, "GET", path, gw.key, &text), 200);
		assert_non_null(sj = json_loads(text, 0, NULL));
		free(text);
		vcpus = (int)json_integer_value(json_object_get(sj, "vcpus"));
		mib = (int)json_integer_value(json_object_get(sj, "memory_mib"));
		u1 = json_incref(
			json_object_get(sj, "usage")); /* leaks the first u1: freed below */
		json_decref(sj);
	}
	near(num(u1, "vcpu_seconds"), vcpus * num(u1, "seconds_running"), 0.01, "vcpu_seconds");
	near(num(u1, "memory_gib_seconds"),
	     mib / 1024.0 * (num(u1, "seconds_running") + num(u1, "seconds_paused_memory")), 0.01,
	     "memory_gib_seconds");
	assert_true(num(u1, "qemu_cpu_seconds") > 0);
	json_decref(u0);
	json_decref(u1);
	/* the CSV: a header and a row of as many fields, this session's */
	{
		struct http_resp r;
		char *line, *save = NULL;
		int header_fields = 0, rows = 0;

		assert_int_equal(http_request_headers("127.0.0.1", gw.port, "GET", "/v1/usage",
						      gw.key, "Accept: text/csv\r\n", NULL, 0, 30,
						      &r),
				 0);
		assert_int_equal(r.status, 200);
		for (line = strtok_r(r.body, "\r\n", &save); line;
		     line = strtok_r(NULL, "\r\n", &save)) {
			int fields = 1;

			for (char *c = line; *c; c++)
				fields += *c == ',';
			if (!header_fields) {
				header_fields = fields;
				assert_non_null(strstr(line, "vcpu_seconds"));
				continue;
			}
			assert_int_equal(fields, header_fields);
			rows += !strncmp(line, sess.id, strlen(sess.id));
		}
		assert_int_equal(header_fields, 19);
		assert_int_equal(rows, 1);
		http_resp_free(&r);
	}
}

/* The sampler reads QEMU's figures every few seconds; the session's
 * series go the moment it is deleted. */
static void test_session_series_come_and_go(void **state)
{
	char *text = NULL, series[256];
	struct http_resp r;
	char path[128];

	(void)state;
	snprintf(series, sizeof(series), "vitrine_session_qemu_resident_bytes{session=\"%s\"}",
		 sess.id);
	for (int i = 0; i < 40; i++) {
		free(text);
		assert_int_equal(scrape(gw.key, &text), 200);
		if (value(text, series) > 0)
			break;
		usleep(250 * 1000);
	}
	assert_true(value(text, series) > 16 << 20); /* a QEMU of a 256 MiB guest */
	snprintf(series, sizeof(series), "vitrine_session_qemu_cpu_seconds_total{session=\"%s\"}",
		 sess.id);
	assert_true(value(text, series) > 0);
	snprintf(series, sizeof(series), "vitrine_session_qemu_proportional_bytes{session=\"%s\"}",
		 sess.id);
	assert_true(value(text, series) > 0);
	free(text);
	snprintf(path, sizeof(path), "/v1/sessions/%s", sess.id);
	assert_int_equal(http_request("127.0.0.1", gw.port, "DELETE", path, gw.key, NULL, 0, 60,
				      &r),
			 0);
	assert_true(r.status == 200 || r.status == 204);
	http_resp_free(&r);
	assert_int_equal(scrape(gw.key, &text), 200);
	assert_null(strstr(text, sess.id));
	assert_true(value(text, "vitrine_session_operations_total{op=\"delete\",result=\"ok\"}") >=
		    1);
	assert_int_equal(value(text, "vitrine_sessions{state=\"ready\"}"), 0);
	if (promtool(text) != 0)
		fail_msg("promtool check metrics refused the scrape:\n%s", text);
	free(text);
}

/* The door answers the scrape with no token, and nothing else: not the
 * API (404), not another method (405), not a token's rights; and its
 * scrape names no session (the running one's id is nowhere in it). */
static void test_metrics_door(void **state)
{
	char *text;

	(void)state;
	assert_int_equal(get_at(door_port, "GET", "/metrics", NULL, &text), 200);
	assert_non_null(strstr(text, "# TYPE vitrine_sessions gauge"));
	assert_int_equal(value(text, "vitrine_sessions{state=\"ready\"}"), 1);
	assert_null(strstr(text, sess.id));
	assert_null(strstr(text, "session=\""));
	if (promtool(text) != 0)
		fail_msg("promtool check metrics refused the door's scrape");
	free(text);
	assert_int_equal(get_at(door_port, "GET", "/v1/sessions", gw.key, &text), 404);
	free(text);
	assert_int_equal(get_at(door_port, "GET", "/healthz", NULL, &text), 404);
	free(text);
	assert_int_equal(get_at(door_port, "DELETE", "/metrics", gw.key, &text), 405);
	free(text);
}

/* A deleted session's usage outlives it, and the gateway's restart. */
static void test_usage_survives_restart(void **state)
{
	char *text;
	json_t *j, *e;
	size_t i;
	bool found = false;

	(void)state;
	assert_int_equal(gateway_proc_restart(&gw, NULL), 0);
	assert_int_equal(get_at(gw.port, "GET", "/v1/usage", gw.key, &text), 200);
	assert_non_null(j = json_loads(text, 0, NULL));
	free(text);
	json_array_foreach(json_object_get(j, "sessions"), i,
			   e) if (!strcmp(json_string_value(json_object_get(e, "id")), sess.id))
	{
		found = true;
		assert_true(json_integer_value(json_object_get(e, "ended_unix_ms")) >
			    json_integer_value(json_object_get(e, "created_unix_ms")));
		assert_true(json_number_value(json_object_get(json_object_get(e, "usage"),
							      "seconds_paused_disk")) >=
			    HOLD_MS / 1000.0 - 0.2);
	}
	json_decref(j);
	assert_true(found);
	assert_int_equal(get_at(gw.port, "GET", "/v1/usage?from=10&to=5", gw.key, &text), 400);
	free(text);
	/* the deleted session's token is known nowhere now */
	assert_int_equal(get_at(gw.port, "GET", "/v1/usage", sess.control, &text), 401);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrape_rights_and_format),
		cmocka_unit_test(test_metrics_door),
		cmocka_unit_test(test_counters_move_exactly),
		cmocka_unit_test(test_usage_metered),
		cmocka_unit_test(test_session_series_come_and_go),
		cmocka_unit_test(test_usage_survives_restart),
	};

	return cmocka_run_group_tests_name("GET /metrics", tests, setup, teardown);
}
