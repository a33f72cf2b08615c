/* tests/integration/test_gateway_flood.c: a crowd of hostile sockets does not
 * take the gateway down or away from other clients. From 127.0.0.2, a
 * thousand sockets that never send a byte; from 127.0.0.3, slowloris
 * sockets that send their request headers a byte at a time. Meanwhile a
 * client on 127.0.0.1 gets screenshots, actions and commands of a tiny
 * guest as usual; the connection caps (conn_gate.h) close what is past
 * them at once, lws's timeouts end the rest, and the gateway's RSS stays
 * within a bound. lws's header timeout (10 s) is HTTP_IDLE_S here, through
 * the test hook VITRINE_TEST_HTTP_IDLE_S (docs/vmm.md), so that the crowd
 * comes and goes in seconds. Prints the figures. */
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define IDLE_SOCKETS 1000
#define SLOW_SOCKETS 20
#define PER_IP 200 /* --max-connections-per-ip of this test's gateway */
#define RSS_BOUND_KIB (64 * 1024)
#define HTTP_IDLE_S "3" /* VITRINE_TEST_HTTP_IDLE_S of this test's gateway */

static struct gateway_proc gw;
static struct gateway_session sess;

static int setup(void **state)
{
	struct rlimit rl;

	(void)state;
	signal(SIGPIPE, SIG_IGN); /* the gateway closes what we write to */
	/* this test holds over a thousand sockets itself */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	setenv("VITRINE_TEST_HTTP_IDLE_S", HTTP_IDLE_S, 1);
	if (gateway_proc_start(&gw, (const char *const[]){ "--max-connections-per-ip", "200",
							   NULL }) < 0)
		return -1;
	unsetenv("VITRINE_TEST_HTTP_IDLE_S");
	return gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &sess);
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* A socket from source address src to the gateway, or -1. */
static int connect_from(const char *src)
{
	struct sockaddr_in from = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, src, &from.sin_addr);
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	to.sin_port = htons((uint16_t)gw.port);
	if (fd < 0 || bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0 ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Whether the server has closed fd (EOF or reset), without blocking. */
static bool closed_by_server(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, 0) <= 0)
		return false;
	return read(fd, &c, 1) <= 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Another client's work (gateway_proc_serve_calls): the slowest call in ms. */
static int64_t serve_a_client(void)
{
	int64_t slowest;

	assert_int_equal(gateway_proc_serve_calls(&gw, &sess, &slowest), 0);
	return slowest;
}

static void test_idle_crowd_and_slowloris(void **state)
{
	static int idle[IDLE_SOCKETS], slow[SLOW_SOCKETS];
	long rss0, rss_peak = 0;
	int64_t before = serve_a_client(), during = 0, t0;
	int open_idle = 0, refused = 0, slow_open = 0;
	static const char head[] = "GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";

	(void)state;
	rss0 = gateway_proc_rss_kib(&gw);
	assert_true(rss0 > 0);
	for (int i = 0; i < IDLE_SOCKETS; i++)
		idle[i] = connect_from("127.0.0.2");
	for (int i = 0; i < SLOW_SOCKETS; i++) {
		slow[i] = connect_from("127.0.0.3");
		if (slow[i] >= 0)
			fcntl(slow[i], F_SETFL, O_NONBLOCK);
	}
	usleep(1000 * 1000);
	for (int i = 0; i < IDLE_SOCKETS; i++) {
		if (idle[i] < 0 || closed_by_server(idle[i]))
			refused++;
		else
			open_idle++;
	}
	print_message("%d idle sockets from one address: %d kept, %d closed at once (cap %d)\n",
		      IDLE_SOCKETS, open_idle, refused, PER_IP);
	assert_true(open_idle <= PER_IP);
	assert_true(refused >= IDLE_SOCKETS - PER_IP);
	/* the flood goes on as long as lws lets it: slowloris bytes, the other
	 * client's calls */
	t0 = now_ms();
	for (int tick = 0; now_ms() - t0 < atoi(HTTP_IDLE_S) * 1000; tick++) {
		int64_t ms;
		long rss;

		for (int i = 0; i < SLOW_SOCKETS; i++)
			if (slow[i] >= 0 && (size_t)tick < sizeof(head) - 1 &&
			    write(slow[i], head + tick, 1) < 0 && errno != EAGAIN) {
				close(slow[i]);
				slow[i] = -1;
			}
		ms = serve_a_client();
		if (ms > during)
			during = ms;
		rss = gateway_proc_rss_kib(&gw);
		if (rss > rss_peak)
			rss_peak = rss;
		usleep(500 * 1000);
	}
	print_message("gateway RSS: %ld KiB idle, %ld KiB at most during the flood (+%ld KiB)\n",
		      rss0, rss_peak, rss_peak - rss0);
	print_message("slowest call of the other client: %lld ms before, %lld ms during\n",
		      (long long)before, (long long)during);
	assert_true(rss_peak - rss0 < RSS_BOUND_KIB);
	/* lws's timeouts (HTTP_IDLE_S s for a request's head) end what got
	 * in: nothing of the crowd is left open some 20 s after it came */
	for (int waited = 0; waited < 20000; waited += 500) {
		open_idle = slow_open = 0;
		for (int i = 0; i < IDLE_SOCKETS; i++)
			if (idle[i] >= 0 && !closed_by_server(idle[i]))
				open_idle++;
			else if (idle[i] >= 0) {
				close(idle[i]);
				idle[i] = -1;
			}
		for (int i = 0; i < SLOW_SOCKETS; i++)
			if (slow[i] >= 0 && !closed_by_server(slow[i]))
				slow_open++;
		if (!open_idle && !slow_open)
			break;
		usleep(500 * 1000);
	}
	print_message("%lld s after the flood came: %d idle and %d slowloris sockets still open\n",
		      (long long)(now_ms() - t0 + 1000) / 1000, open_idle, slow_open);
	assert_int_equal(open_idle, 0);
	assert_int_equal(slow_open, 0);
	for (int i = 0; i < SLOW_SOCKETS; i++)
		if (slow[i] >= 0)
			close(slow[i]);
	/* and the gateway still serves, from any address */
	serve_a_client();
	{
		int fd = connect_from("127.0.0.2");
		char buf[64];

		assert_true(fd >= 0);
		assert_true(write(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 34) == 34);
		assert_true(read(fd, buf, sizeof(buf)) > 12);
		assert_non_null(strstr(buf, "200"));
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_crowd_and_slowloris),
	};

	return cmocka_run_group_tests_name("a crowd of hostile sockets", tests, setup, teardown);
}
