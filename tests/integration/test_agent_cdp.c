/* tests/integration/test_agent_cdp.c: the real vitrine-agent (built for the
 * host, on a socket pair) relaying a DevTools WebSocket from a fake browser
 * to the host's link, which now enforces windows. The agent sends whole
 * messages, past its 1 MiB window when a message is bigger: the link must
 * let that through on a CDP channel (AGENT_CDP_SLACK), every message intact
 * and in order, no overrun counted, while the consumer returns credit only
 * once it has a whole message (as the CDP socket does). */
#include "common/agent_proto.h"
#include "vmm-qemu/agent_link.h"

#include <arpa/inet.h>
#include <libgen.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

/* The messages the fake browser sends: sizes (bytes), in order. */
static const size_t sizes[] = { 100, 8u << 20, 300, 3u << 20, 20, 20, 20, 40u << 20, 7 };
#define N_MSGS (sizeof(sizes) / sizeof(sizes[0]))

static unsigned char fill_byte(size_t msg, size_t i)
{
	return (unsigned char)('a' + (msg * 7 + i) % 26);
}

struct browser {
	int lfd, port;
};

static void read_head(int fd)
{
	char b[4];
	size_t n = 0;

	while (read(fd, b + (n % 4), 1) == 1) {
		n++;
		if (n >= 4 && b[(n - 4) % 4] == '\r' && b[(n - 3) % 4] == '\n' &&
		    b[(n - 2) % 4] == '\r' && b[(n - 1) % 4] == '\n')
			return;
	}
}

static void send_all(int fd, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		b += w;
		n -= (size_t)w;
	}
}

/* /json/version on the first connection, then the WebSocket: sizes[]
 * as unmasked text frames, then it waits for the agent to close. */
static void *browser_thread(void *arg)
{
	struct browser *br = arg;
	char body[256], head[256];
	int fd = accept(br->lfd, NULL, NULL);
	unsigned char *msg;

	read_head(fd);
	snprintf(body, sizeof(body),
		 "{\"webSocketDebuggerUrl\":\"ws://127.0.0.1:%d/devtools/browser/fake\"}",
		 br->port);
	snprintf(head, sizeof(head),
		 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		 strlen(body));
	send_all(fd, head, strlen(head));
	send_all(fd, body, strlen(body));
	close(fd);
	fd = accept(br->lfd, NULL, NULL);
	read_head(fd);
	snprintf(head, sizeof(head),
		 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		 "Connection: Upgrade\r\n\r\n");
	send_all(fd, head, strlen(head));
	msg = malloc(64u << 20);
	for (size_t m = 0; m < N_MSGS; m++) {
		unsigned char h[10];
		size_t hl = 0, n = sizes[m];

		h[hl++] = 0x81;
		if (n < 126) {
			h[hl++] = (unsigned char)n;
		} else if (n < 65536) {
			h[hl++] = 126;
			h[hl++] = (unsigned char)(n >> 8);
			h[hl++] = (unsigned char)n;
		} else {
			h[hl++] = 127;
			for (int i = 7; i >= 0; i--)
				h[hl++] = (unsigned char)((uint64_t)n >> (8 * i));
		}
		for (size_t i = 0; i < n; i++)
			msg[i] = fill_byte(m, i);
		send_all(fd, h, hl);
		send_all(fd, msg, n);
	}
	free(msg);
	{
		char b[4096];

		while (read(fd, b, sizeof b) > 0) {
		}
	}
	close(fd);
	return NULL;
}

/* The host's consumer: joins parts, checks each message, acks it whole. */
struct cdp {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct agent_link *l;
	uint32_t chan;
	unsigned char *msg;
	size_t len, done;
	bool bad, closed;
	char reason[128];
};

static void on_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct cdp *c = u;
	size_t whole = 0;

	pthread_mutex_lock(&c->mu);
	if (c->len + n > (64u << 20)) {
		c->bad = true;
	} else {
		memcpy(c->msg + c->len, p, n);
		c->len += n;
	}
	if (!(flags & AGENT_FLAG_MORE)) {
		if (c->done >= N_MSGS || c->len != sizes[c->done])
			c->bad = true;
		for (size_t i = 0; i < c->len && !c->bad; i++)
			if (c->msg[i] != fill_byte(c->done, i))
				c->bad = true;
		whole = c->len;
		c->len = 0;
		c->done++;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	if (whole)
		agent_chan_ack(c->l, c->chan, whole);
}

static void on_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct cdp *c = u;

	(void)in;
	(void)out;
	pthread_mutex_lock(&c->mu);
	c->closed = true;
	snprintf(c->reason, sizeof(c->reason), "%s", reason);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static const struct agent_chan_ops ops = { .data = on_data, .closed = on_closed };

static void test_cdp_message_past_window(void **state)
{
	static struct cdp c;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct browser br;
	struct agent_link_stats st;
	struct timespec until;
	char dir[4096], bin[4200], err[256], fdarg[16], port[16];
	const char *gw = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	pthread_t t;
	pid_t agent;
	int sv[2], status;

	(void)state;
	br.lfd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(br.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(br.lfd, 4), 0);
	assert_int_equal(getsockname(br.lfd, (struct sockaddr *)&sa, &sl), 0);
	br.port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&t, NULL, browser_thread, &br), 0);

	snprintf(dir, sizeof(dir), "%s", gw);
	snprintf(bin, sizeof(bin), "%s/vitrine-agent", dirname(dir));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	if ((agent = fork()) == 0) {
		snprintf(fdarg, sizeof(fdarg), "%d", dup(sv[1]));
		execl(bin, bin, "--fd", fdarg, "--proxy-port", "0", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	assert_non_null(c.msg = malloc(64u << 20));
	assert_int_equal(agent_link_open_fd(sv[0], 5000, &c.l, err, sizeof(err)), 0);
	snprintf(port, sizeof(port), "%d", br.port);
	pthread_mutex_lock(&c.mu); /* chan is set before the first data */
	assert_true((c.chan = agent_chan_open(c.l, AGENT_CDP, port, strlen(port), &ops, &c)));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	while (c.done < N_MSGS && !c.closed && pthread_cond_timedwait(&c.cv, &c.mu, &until) == 0) {
	}
	if (c.done != N_MSGS || c.bad || c.closed)
		fail_msg("%zu of %zu messages, bad %d, closed %d (%s)", c.done, N_MSGS, c.bad,
			 c.closed, c.reason);
	pthread_mutex_unlock(&c.mu);
	agent_link_stats(c.l, &st);
	assert_int_equal(st.overruns, 0);
	assert_int_equal(st.violations, 0);
	agent_link_destroy(c.l);
	assert_int_equal(waitpid(agent, &status, 0), agent);
	pthread_join(t, NULL);
	close(br.lfd);
	free(c.msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdp_message_past_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
