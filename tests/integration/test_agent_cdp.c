/* tests/integration/test_agent_cdp.c: the real vitrine-agent (built for the
 * host, on a socket pair) relaying a DevTools WebSocket from a fake browser
 * to the host's link, which holds it to its 1 MiB window with no slack
 * (the agent says it is version 2). Messages up to 40 MiB come in parts
 * within the credit, each intact and in order, no overrun counted, while
 * the consumer returns credit for each part as it joins it (as the CDP
 * socket does while its client keeps up). The agent's memory stays small
 * whatever the message's size; and a consumer that returns nothing stops
 * the agent reading the browser, which stalls a few MiB of socket buffers
 * into a 40 MiB message until credit comes again. */
#include "common/agent_proto.h"
#include "vmm-qemu/agent_link.h"

#include <arpa/inet.h>
#include <libgen.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
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
static const size_t msg_sizes[] = { 100, 8u << 20, 300, 3u << 20, 20, 20, 20, 40u << 20, 7 };
#define N_MSGS (sizeof(msg_sizes) / sizeof(msg_sizes[0]))
static const size_t stall_sizes[] = { 40u << 20, 5 };
#define N_STALL (sizeof(stall_sizes) / sizeof(stall_sizes[0]))

static unsigned char fill_byte(size_t msg, size_t i)
{
	return (unsigned char)('a' + (msg * 7 + i) % 26);
}

struct browser {
	int lfd, port;
	const size_t *sizes;
	size_t n;
	atomic_size_t sent; /* message bytes written to the socket */
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

static void send_all(int fd, const void *p, size_t n, atomic_size_t *sent)
{
	const unsigned char *b = p;

	while (n) {
		ssize_t w = send(fd, b, n < 65536 ? n : 65536, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		b += w;
		n -= (size_t)w;
		if (sent)
			atomic_fetch_add(sent, (size_t)w);
	}
}

/* /json/version on the first connection, then the WebSocket: br->sizes
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
	send_all(fd, head, strlen(head), NULL);
	send_all(fd, body, strlen(body), NULL);
	close(fd);
	fd = accept(br->lfd, NULL, NULL);
	read_head(fd);
	snprintf(head, sizeof(head),
		 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		 "Connection: Upgrade\r\n\r\n");
	send_all(fd, head, strlen(head), NULL);
	msg = malloc(64u << 20);
	for (size_t m = 0; m < br->n; m++) {
		unsigned char h[10];
		size_t hl = 0, n = br->sizes[m];

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
		send_all(fd, h, hl, NULL);
		send_all(fd, msg, n, &br->sent);
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

/* The host's consumer: joins parts, checks each message, acks each part
 * (or holds the acks back while hold is set). */
struct cdp {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct agent_link *l;
	uint32_t chan;
	const size_t *sizes;
	size_t n;
	unsigned char *msg;
	size_t len, done, parts, held;
	bool bad, closed, hold;
	char reason[128];
};

static void on_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct cdp *c = u;
	size_t ack = 0;

	pthread_mutex_lock(&c->mu);
	c->parts++;
	if (c->len + n > (64u << 20)) {
		c->bad = true;
	} else {
		memcpy(c->msg + c->len, p, n);
		c->len += n;
	}
	if (!(flags & AGENT_FLAG_MORE)) {
		if (c->done >= c->n || c->len != c->sizes[c->done])
			c->bad = true;
		for (size_t i = 0; i < c->len && !c->bad; i++)
			if (c->msg[i] != fill_byte(c->done, i))
				c->bad = true;
		c->len = 0;
		c->done++;
	}
	c->held += n;
	if (!c->hold) {
		ack = c->held;
		c->held = 0;
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (ack)
		agent_chan_ack(c->l, c->chan, ack);
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

/* The peak of a process's resident memory, KiB (0 when unknown). */
static long peak_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* One fake browser, the agent on a socket pair, a link to it. */
struct rig {
	struct browser br;
	struct cdp c;
	pthread_t t;
	pid_t agent;
};

static void rig_start(struct rig *r, const size_t *sizes, size_t n, bool hold)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char dir[4096], bin[4200], err[256], fdarg[16], port[16];
	const char *gw = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	int sv[2];

	memset(r, 0, sizeof(*r));
	r->br.sizes = r->c.sizes = sizes;
	r->br.n = r->c.n = n;
	r->c.hold = hold;
	r->br.lfd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(r->br.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(r->br.lfd, 4), 0);
	assert_int_equal(getsockname(r->br.lfd, (struct sockaddr *)&sa, &sl), 0);
	r->br.port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&r->t, NULL, browser_thread, &r->br), 0);

	snprintf(dir, sizeof(dir), "%s", gw);
	snprintf(bin, sizeof(bin), "%s/vitrine-agent", dirname(dir));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	if ((r->agent = fork()) == 0) {
		snprintf(fdarg, sizeof(fdarg), "%d", dup(sv[1]));
		execl(bin, bin, "--fd", fdarg, "--proxy-port", "0", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	pthread_mutex_init(&r->c.mu, NULL);
	pthread_cond_init(&r->c.cv, NULL);
	assert_non_null(r->c.msg = malloc(64u << 20));
	assert_int_equal(agent_link_open_fd(sv[0], 5000, &r->c.l, err, sizeof(err)), 0);
	/* this agent keeps to the window: the link gives it no slack */
	assert_int_equal(agent_link_version(r->c.l), AGENT_VERSION_NUM);
	snprintf(port, sizeof(port), "%d", r->br.port);
	pthread_mutex_lock(&r->c.mu); /* chan is set before the first data */
	assert_true(
		(r->c.chan = agent_chan_open(r->c.l, AGENT_CDP, port, strlen(port), &ops, &r->c)));
	pthread_mutex_unlock(&r->c.mu);
}

/* Waits (under c->mu) until done reaches want or the channel closes. */
static void rig_wait(struct rig *r, size_t want, int seconds)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += seconds;
	while (r->c.done < want && !r->c.closed &&
	       pthread_cond_timedwait(&r->c.cv, &r->c.mu, &until) == 0) {
	}
	if (r->c.done != want || r->c.bad || r->c.closed)
		fail_msg("%zu of %zu messages, bad %d, closed %d (%s)", r->c.done, want, r->c.bad,
			 r->c.closed, r->c.reason);
}

static void rig_stop(struct rig *r)
{
	struct agent_link_stats st;
	int status;

	agent_link_stats(r->c.l, &st);
	assert_int_equal(st.overruns, 0);
	assert_int_equal(st.violations, 0);
	agent_link_destroy(r->c.l);
	assert_int_equal(waitpid(r->agent, &status, 0), r->agent);
	pthread_join(r->t, NULL);
	close(r->br.lfd);
	free(r->c.msg);
}

static void test_cdp_messages_past_window(void **state)
{
	static struct rig r;
	struct timespec t0, t1;
	long rss;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rig_start(&r, msg_sizes, N_MSGS, false);
	pthread_mutex_lock(&r.c.mu);
	rig_wait(&r, N_MSGS, 60);
	pthread_mutex_unlock(&r.c.mu);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rss = peak_rss_kib(r.agent);
	printf("# %zu messages (51 MiB) in %zu parts, %.0f ms; the agent's peak RSS %ld KiB\n",
	       N_MSGS, r.c.parts,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
	       rss);
	/* Nothing near a message's size is held (version 1 held a 40 MiB
	 * message twice); sanitizers' own memory included. */
	if (rss > 48 * 1024)
		fail_msg("the agent's peak RSS is %ld KiB", rss);
	rig_stop(&r);
}

static void test_cdp_backpressure(void **state)
{
	static struct rig r;
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	size_t sent = 0, before;

	(void)state;
	rig_start(&r, stall_sizes, N_STALL, true);
	/* No credit comes back: the agent sends its window and stops reading
	 * the browser, whose writes stop once the sockets' buffers are full. */
	for (int i = 0; i < 100; i++) {
		before = sent;
		nanosleep(&nap, NULL);
		sent = atomic_load(&r.br.sent);
		if (i >= 10 && sent == before)
			break;
	}
	pthread_mutex_lock(&r.c.mu);
	printf("# stalled: the browser wrote %zu KiB of 40 MiB, the host holds %zu KiB\n",
	       sent / 1024, r.c.held / 1024);
	assert_int_equal(r.c.held, AGENT_WINDOW);
	assert_int_equal(r.c.done, 0);
	if (sent >= (24u << 20))
		fail_msg("the browser wrote %zu bytes with the window shut", sent);
	/* Credit again: the rest comes, whole. */
	r.c.hold = false;
	r.c.held = 0;
	pthread_mutex_unlock(&r.c.mu);
	agent_chan_ack(r.c.l, r.c.chan, AGENT_WINDOW);
	pthread_mutex_lock(&r.c.mu);
	rig_wait(&r, N_STALL, 60);
	pthread_mutex_unlock(&r.c.mu);
	rig_stop(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cdp_messages_past_window),
		cmocka_unit_test(test_cdp_backpressure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
