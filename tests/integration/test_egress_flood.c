/* tests/integration/test_egress_flood.c: guests that flood their egress
 * proxy with connections do not take the gateway down or away from other
 * sessions. Two tiny guests (a and b) each start a crowd of programs that
 * ask for a tunnel to a server whose listen queue is full (so every
 * upstream connect hangs until the connect timeout) and send 1 MiB
 * straight after the request, as a big upload would, before the tunnel
 * is up. The caps hold: a's 200 get at most EGRESS_MAX_PER_SESSION open
 * (the rest are closed at once and logged as too_many_connections), a and
 * b together never have more than --egress-max-connections connecting at
 * once (the gateway's sockets say so); the gateway's RSS stays within a
 * bound; a third session (c) keeps answering
 * screenshots, actions and commands. Prints the figures. */
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define PER_SESSION 128 /* EGRESS_MAX_PER_SESSION */
#define MAX_TOTAL 160 /* this test's --egress-max-connections */
#define FLOOD_A 200
#define FLOOD_B 100
#define BODY_BYTES (1024 * 1024)
/* What the gateway may hold for the crowd: before its upstream connects a
 * connection keeps 64 KiB past the request head acked and at most one
 * window (1 MiB) more in flight, and what all of them hold is capped at
 * 16 MiB (PRECONNECT_TOTAL in egress.c); beside that each connection is
 * a thread while it connects (the pages of its stack it touched, its
 * share of malloc's arenas, which keep what the busiest moment needed)
 * and a few KiB of state. Measured here: 160 of them sending nothing
 * cost 21 MiB (130 KiB each), sending a window each 36 to 54 MiB. The
 * bound: the cap and 512 KiB a connection. */
#define RSS_BOUND_KIB (SAN_FACTOR * (16 * 1024 + MAX_TOTAL * 512))
/* Under ASan the gateway's RSS also holds the quarantine it keeps freed
 * memory in, redzones and shadow (a run here: +77 MiB where the plain
 * build took +36 MiB). */
#ifdef __SANITIZE_ADDRESS__
#define SAN_FACTOR 3
#else
#define SAN_FACTOR 1
#endif

static struct gateway_proc gw;
static struct gateway_session sa, sb, sc;
static int sink_fd = -1, sink_port;

/* A listener that never accepts, with the shortest queue: once a
 * connection or two wait in it, the kernel drops further SYNs, so the
 * gateway's connects hang until their timeout. */
static int sink_start(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	sink_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sink_fd < 0 || bind(sink_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(sink_fd, 0) < 0 || getsockname(sink_fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	sink_port = ntohs(a.sin_port);
	return 0;
}

static int setup(void **state)
{
	char body[256];

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	if (sink_start() < 0)
		return -1;
	if (gateway_proc_start(&gw, (const char *const[]){ "--egress-map", "sink.test=127.0.0.1",
							   "--egress-max-connections", "160",
							   NULL }) < 0)
		return -1;
	snprintf(body, sizeof(body),
		 "{\"image\":\"tiny\",\"egress\":{\"allow\":[\"sink.test:%d\"]}}", sink_port);
	if (gateway_proc_create_session(&gw, body, 180, &sa) < 0 ||
	    gateway_proc_create_session(&gw, body, 180, &sb) < 0)
		return -1;
	return gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &sc);
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	if (sink_fd >= 0)
		close(sink_fd);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* method path on session s with its control token; the answer's JSON
 * (NULL when it is none) after checking its status. */
static json_t *call(const struct gateway_session *s, const char *method, const char *sub,
		    const char *body, int want)
{
	char path[512];
	struct http_resp r;
	json_t *j;

	snprintf(path, sizeof(path), "/v1/sessions/%s%s", s->id, sub);
	assert_int_equal(http_request("127.0.0.1", gw.port, method, path, s->control, body,
				      body ? strlen(body) : 0, 90, &r),
			 0);
	if (r.status != want)
		fail_msg("%s %s: %d %s", method, sub, r.status, r.body ? r.body : "");
	j = r.body ? json_loads(r.body, 0, NULL) : NULL;
	http_resp_free(&r);
	return j;
}

/* Starts n programs in s's guest, each asking the proxy for a tunnel to
 * the sink and sending BODY_BYTES at once; they stay 60 s, detached from
 * the command (which returns once they are started). */
static void flood(const struct gateway_session *s, int n)
{
	char cmd[1024], body[1400];
	json_t *j, *code;

	snprintf(cmd, sizeof(cmd),
		 "printf '#!/bin/sh\\nprintf \"CONNECT sink.test:%d HTTP/1.1\\\\r\\\\n"
		 "Host: sink.test\\\\r\\\\n\\\\r\\\\n\"\\nhead -c %d /dev/zero\\nexec sleep 60\\n' "
		 ">/tmp/tunnel.sh && chmod +x /tmp/tunnel.sh && i=0 && "
		 "while [ $i -lt %d ]; do setsid nc 127.0.0.1 3128 -e /tmp/tunnel.sh "
		 "</dev/null >/dev/null 2>&1 & i=$((i+1)); done; echo started $i",
		 sink_port, BODY_BYTES, n);
	{
		json_t *b = json_pack("{s:s, s:s, s:i}", "cmd", cmd, "cwd", "/tmp", "timeout", 60);
		char *text = json_dumps(b, JSON_COMPACT);

		snprintf(body, sizeof(body), "%s", text);
		free(text);
		json_decref(b);
	}
	j = call(s, "POST", "/exec", body, 200);
	code = json_object_get(j, "exit_code");
	if (!json_is_integer(code) || json_integer_value(code) != 0)
		fail_msg("the flood did not start: %s",
			 json_string_value(json_object_get(j, "stderr")));
	json_decref(j);
}

/* Another client's work (gateway_proc_serve_calls): the slowest call in ms. */
static int64_t serve_c(void)
{
	int64_t slowest;

	assert_int_equal(gateway_proc_serve_calls(&gw, &sc, &slowest), 0);
	return slowest;
}

/* The gateway's open descriptors that are sockets. */
static int gateway_sockets(void)
{
	char dir[64], path[320], target[64];
	struct dirent *d;
	DIR *dp;
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)gw.pid);
	if (!(dp = opendir(dir)))
		return -1;
	while ((d = readdir(dp))) {
		ssize_t k;

		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		k = readlink(path, target, sizeof(target) - 1);
		if (k > 0) {
			target[k] = '\0';
			n += !strncmp(target, "socket:", 7);
		}
	}
	closedir(dp);
	return n;
}

/* In s's egress log: entries refused for too many connections, and the
 * tunnels to the sink that were let through to connect. */
static void count_log(const struct gateway_session *s, int *capped, int *tried, int *full)
{
	json_t *j = call(s, "GET", "/egress/log?limit=1000", NULL, 200), *e;
	size_t i;

	*capped = *tried = *full = 0;
	json_array_foreach(json_object_get(j, "entries"), i, e)
	{
		const char *reason = json_string_value(json_object_get(e, "reason"));

		if (reason && !strcmp(reason, "too_many_connections"))
			(*capped)++;
		else if (reason && !strcmp(reason, "pending_full"))
			(*full)++, (*tried)++;
		else if (json_integer_value(json_object_get(e, "port")) == sink_port)
			(*tried)++;
	}
	json_decref(j);
}

static void test_connect_flood(void **state)
{
	long rss0 = gateway_proc_rss_kib(&gw), rss_peak = 0;
	int socks0 = gateway_sockets(), socks_peak = 0, a_capped, a_tried, a_full, b_capped,
	    b_tried, b_full;
	int64_t before = serve_c(), during = 0, t0;

	(void)state;
	assert_true(rss0 > 0 && socks0 > 0);
	flood(&sa, FLOOD_A);
	flood(&sb, FLOOD_B);
	t0 = now_ms();
	while (now_ms() - t0 < 15000) {
		int64_t ms = serve_c();
		long rss = gateway_proc_rss_kib(&gw);
		int socks = gateway_sockets();

		if (ms > during)
			during = ms;
		if (rss > rss_peak)
			rss_peak = rss;
		if (socks > socks_peak)
			socks_peak = socks;
		usleep(300 * 1000);
	}
	count_log(&sa, &a_capped, &a_tried, &a_full);
	count_log(&sb, &b_capped, &b_tried, &b_full);
	print_message("a: %d tunnels asked for, %d let through (%d of them then refused for "
		      "sending too much while connecting), %d refused at once (cap %d)\n",
		      FLOOD_A, a_tried, a_full, a_capped, PER_SESSION);
	print_message("b: %d tunnels asked for, %d let through (%d then refused), %d refused at "
		      "once (cap %d over all)\n",
		      FLOOD_B, b_tried, b_full, b_capped, MAX_TOTAL);
	print_message("gateway RSS: %ld KiB idle, %ld KiB at most during the flood (+%ld KiB, "
		      "bound %d)\n",
		      rss0, rss_peak, rss_peak - rss0, RSS_BOUND_KIB);
	print_message("gateway sockets: %d idle, %d at most during the flood\n", socks0,
		      socks_peak);
	print_message("slowest call of session c: %lld ms before, %lld ms during\n",
		      (long long)before, (long long)during);
	/* a's programs keep their connections: its cap holds them at 128 */
	assert_int_equal(a_capped, FLOOD_A - PER_SESSION);
	assert_int_equal(a_tried, PER_SESSION);
	/* b's got places as a's connects timed out (10 s) and gave theirs
	 * back, but never more than the gateway's cap at once */
	assert_int_equal(b_tried + b_capped, FLOOD_B);
	assert_true(socks_peak - socks0 <= MAX_TOTAL + 8);
	assert_true(rss_peak - rss0 < RSS_BOUND_KIB);
	/* the connects time out (10 s) and the places come back: b gets a
	 * tunnel attempt through again */
	for (int waited = 0;; waited += 1000) {
		json_t *h = call(&sc, "GET", "", NULL, 200);

		json_decref(h);
		if (gateway_sockets() - socks0 <= 8 || waited > 30000)
			break;
		sleep(1);
	}
	print_message("gateway sockets after the connects timed out: %d\n", gateway_sockets());
	assert_true(gateway_sockets() - socks0 <= 8);
	serve_c();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_flood),
	};

	return cmocka_run_group_tests_name("a flood of egress connections", tests, setup, teardown);
}
