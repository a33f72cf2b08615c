/* tests/integration/test_gateway_metrics.c: GET /metrics on a gateway with a
 * tiny guest. Only the operator key may scrape; the text passes promtool
 * (Debian's prometheus package) check metrics; after a scripted run of N
 * screenshots, M actions (two dialects), K commands and a pause and
 * resume, the counters moved by exactly those amounts; the session's own
 * series (guest memory, vCPUs, its QEMU's CPU time, RSS, PSS) are there
 * while it lives and gone once it is deleted. The --metrics-listen door
 * serves the same scrape without a token, and nothing else. */
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define N_SHOTS 3
#define M_ACTIONS 4 /* half Anthropic's dialect, half OpenAI's */
#define K_COMMANDS 2

static struct gateway_proc gw;
static struct gateway_session sess;
static int door_port;

/* A port free now on 127.0.0.1 (the kernel's pick, let go again). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static int setup(void **state)
{
	char door[64];

	(void)state;
	door_port = free_port();
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
	snprintf(series, sizeof(series), "vitrine_session_guest_memory_bytes{session=\"%s\"}",
		 sess.id);
	assert_true(value(after, series) >= 64 << 20);
	snprintf(series, sizeof(series), "vitrine_session_vcpus{session=\"%s\"}", sess.id);
	assert_true(value(after, series) >= 1);
	free(before);
	free(after);
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
 * API (404), not another method (405), not a token's rights. */
static void test_metrics_door(void **state)
{
	char *text;

	(void)state;
	assert_int_equal(get_at(door_port, "GET", "/metrics", NULL, &text), 200);
	assert_non_null(strstr(text, "# TYPE vitrine_sessions gauge"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrape_rights_and_format),
		cmocka_unit_test(test_metrics_door),
		cmocka_unit_test(test_counters_move_exactly),
		cmocka_unit_test(test_session_series_come_and_go),
	};

	return cmocka_run_group_tests_name("GET /metrics", tests, setup, teardown);
}
