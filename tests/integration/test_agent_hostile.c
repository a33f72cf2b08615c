/* tests/integration/test_agent_hostile.c: the host's link to vitrine-agent
 * (vmm-qemu/agent_link.c) against a hostile agent: the test itself plays the
 * guest on the other end of a socket pair, frame by frame. A channel whose
 * guest overruns its window dies (towards the guest and the consumer, with
 * a reason), is counted, and the other channels and the link live on; a
 * flood of junk, empty and unknown-channel frames reaches no consumer;
 * frames out of order close their channel; reused and host-side channel
 * ids are refused; a guest that does not read makes agent_chan_send say
 * FULL and then refuse, and writable() comes once it reads again; a guest
 * that sends a large body while its egress connection is still connecting
 * gets no more than the pre-connect allowance acked, and all of it arrives
 * upstream once connected; a guest that reads nothing is not read either.
 * A DevTools channel is held to its window too, unless the agent says it
 * is version 1 (images built before version 2 sent whole messages). */
#include "common/agent_proto.h"
#include "common/work_queue.h"
#include "gateway/egress/egress.h"
#include "gateway/egress/egress_rules.h"
#include "vmm-qemu/agent_link.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

/* ---- the guest's end ---- */

struct guest {
	int fd; /* blocking */
	unsigned char buf[AGENT_HEADER + AGENT_MAX_PAYLOAD + 65536];
	size_t off, have; /* buf[off..have) not parsed yet */
	uint32_t closes[64]; /* channels the host sent CLOSE for, in order */
	int n_closes;
	const char *version; /* the RESET answer; AGENT_VERSION when NULL */
};

static void put(struct guest *g, uint32_t chan, uint8_t type, uint8_t flags, const void *p,
		size_t n)
{
	unsigned char h[AGENT_HEADER];
	const unsigned char *b = p;

	agent_header_put(h, chan, type, flags, (uint32_t)n);
	assert_int_equal(send(g->fd, h, sizeof h, MSG_NOSIGNAL), (ssize_t)sizeof h);
	while (n) {
		ssize_t w = send(g->fd, b, n, MSG_NOSIGNAL);

		if (w <= 0)
			fail_msg("the host's end closed: %s", strerror(errno));
		b += w;
		n -= (size_t)w;
	}
}

/* The next frame from the host within timeout_ms: 1 with *h and its
 * payload in out (truncated to outlen), 0 on timeout. */
static int next(struct guest *g, struct agent_header *h, char *out, size_t outlen, int timeout_ms)
{
	for (;;) {
		long fl = agent_frame_parse(g->buf + g->off, g->have - g->off, h);
		struct pollfd p = { g->fd, POLLIN, 0 };
		ssize_t n;

		assert_true(fl >= 0); /* the host never sends junk */
		if (fl > 0) {
			size_t k = h->len < outlen - 1 ? h->len : outlen - 1;

			memcpy(out, g->buf + g->off + AGENT_HEADER, k);
			out[k] = '\0';
			if (h->type == AGENT_CLOSE && g->n_closes < 64)
				g->closes[g->n_closes++] = h->chan;
			g->off += (size_t)fl;
			return 1;
		}
		memmove(g->buf, g->buf + g->off, g->have - g->off);
		g->have -= g->off;
		g->off = 0;
		if (poll(&p, 1, timeout_ms) <= 0)
			return 0;
		n = read(g->fd, g->buf + g->have, sizeof(g->buf) - g->have);
		assert_true(n > 0);
		g->have += (size_t)n;
	}
}

/* True once the host sent CLOSE for chan (waits up to 5 s for it). */
static bool host_closed(struct guest *g, uint32_t chan)
{
	struct agent_header h;
	char p[64];

	do
		for (int i = 0; i < g->n_closes; i++)
			if (g->closes[i] == chan)
				return true;
	while (next(g, &h, p, sizeof p, 5000));
	return false;
}

/* Reads until a frame of type on chan (others skipped); fails after 5 s. */
static void expect(struct guest *g, uint32_t chan, uint8_t type, char *out, size_t outlen)
{
	struct agent_header h;

	while (next(g, &h, out, outlen, 5000))
		if (h.chan == chan && h.type == type)
			return;
	fail_msg("no frame of type %d on channel %u from the host", type, chan);
}

static void *answer_reset(void *arg)
{
	struct guest *g = arg;
	char p[64];

	const char *v = g->version ? g->version : AGENT_VERSION;

	expect(g, 0, AGENT_RESET, p, sizeof p);
	put(g, 0, AGENT_RESET, 0, v, strlen(v));
	return NULL;
}

/* ---- the host's consumers ---- */

struct consumer {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int opened, data_frames, writable;
	size_t data_bytes;
	bool closed;
	char reason[128];
};

static void c_opened(void *u, const char *info)
{
	struct consumer *c = u;

	(void)info;
	pthread_mutex_lock(&c->mu);
	c->opened++;
	pthread_mutex_unlock(&c->mu);
}

static void c_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct consumer *c = u;

	(void)flags;
	(void)p;
	pthread_mutex_lock(&c->mu);
	c->data_frames++;
	c->data_bytes += n; /* never acked: the guest gets no credit back */
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static void c_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct consumer *c = u;

	(void)in;
	(void)out;
	pthread_mutex_lock(&c->mu);
	c->closed = true;
	snprintf(c->reason, sizeof(c->reason), "%s", reason);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static void c_writable(void *u)
{
	struct consumer *c = u;

	pthread_mutex_lock(&c->mu);
	c->writable++;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static const struct agent_chan_ops ops = {
	.opened = c_opened, .data = c_data, .closed = c_closed, .writable = c_writable
};

static void consumer_init(struct consumer *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
}

/* Waits up to 5 s for what(c) to hold. */
static bool wait_for(struct consumer *c, bool (*what)(struct consumer *), size_t arg)
{
	struct timespec until;
	bool ok;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&c->mu);
	while (!(ok = what(c)) && pthread_cond_timedwait(&c->cv, &c->mu, &until) == 0) {
	}
	ok = what(c);
	pthread_mutex_unlock(&c->mu);
	return ok;
}

static bool is_closed(struct consumer *c)
{
	return c->closed;
}

static bool is_writable(struct consumer *c)
{
	return c->writable > 0;
}

static size_t bytes_of(struct consumer *c)
{
	size_t n;

	pthread_mutex_lock(&c->mu);
	n = c->data_bytes;
	pthread_mutex_unlock(&c->mu);
	return n;
}

/* ---- fixture: a link whose guest is the test ---- */

struct fixture {
	struct guest g;
	struct agent_link *l;
	struct work_queue *connects; /* an egress's, made by egress_serving */
};

static int setup_version(void **state, const char *version)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];
	pthread_t t;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->g.fd = sv[1];
	f->g.version = version;
	assert_int_equal(pthread_create(&t, NULL, answer_reset, &f->g), 0);
	assert_int_equal(agent_link_open_fd(sv[0], 5000, &f->l, err, sizeof(err)), 0);
	pthread_join(t, NULL);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_version(state, NULL);
}

static int setup_v1(void **state)
{
	return setup_version(state, "vitrine-agent 1");
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	agent_link_destroy(f->l);
	work_queue_destroy(f->connects); /* the connect jobs' dones let go of theirs */
	close(f->g.fd);
	free(f);
	return 0;
}

struct pinger {
	struct agent_link *l;
	int rc;
};

static void *pinger(void *arg)
{
	struct pinger *p = arg;

	p->rc = agent_link_ping(p->l, 5000);
	return NULL;
}

/* A PING round trip, the test answering as the guest: the link still
 * reads and writes. */
static void ping_through(struct fixture *f)
{
	struct pinger pi = { f->l, -1 };
	struct agent_header h;
	char p[64];
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, pinger, &pi), 0);
	while (next(&f->g, &h, p, sizeof p, 5000) && h.type != AGENT_PING) {
	}
	assert_int_equal(h.type, AGENT_PING);
	assert_int_equal(h.len, 8);
	put(&f->g, 0, AGENT_PONG, 0, p, 8);
	pthread_join(t, NULL);
	assert_int_equal(pi.rc, 0);
}

/* Opens an exec channel and answers it with OPENED. */
static uint32_t open_exec(struct fixture *f, struct consumer *c)
{
	char p[64];
	uint32_t id = agent_chan_open(f->l, AGENT_EXEC, "arg=true", 8, &ops, c);

	assert_true(id != 0);
	expect(&f->g, id, AGENT_EXEC, p, sizeof p);
	put(&f->g, id, AGENT_OPENED, 0, "pid=1", 5);
	return id;
}

static void test_overrun_kills_only_that_channel(void **state)
{
	struct fixture *f = *state;
	static unsigned char chunk[AGENT_MAX_PAYLOAD];
	static struct consumer a, b;
	struct agent_link_stats st, total0, total1;
	uint32_t ca, cb;
	char p[256];

	agent_link_stats_total(&total0);
	consumer_init(&a);
	consumer_init(&b);
	ca = open_exec(f, &a);
	cb = open_exec(f, &b);
	memset(chunk, 'x', sizeof chunk);
	for (int i = 0; i < AGENT_WINDOW / AGENT_MAX_PAYLOAD; i++)
		put(&f->g, ca, AGENT_DATA, 0, chunk, sizeof chunk);
	put(&f->g, cb, AGENT_DATA, 0, "b-ok", 4);
	put(&f->g, ca, AGENT_DATA, 0, "!", 1); /* one byte past the window */
	put(&f->g, ca, AGENT_DATA, 0, chunk, sizeof chunk); /* and on */
	assert_true(wait_for(&a, is_closed, 0));
	assert_non_null(strstr(a.reason, "window"));
	assert_int_equal(bytes_of(&a), AGENT_WINDOW); /* nothing past it reached us */
	expect(&f->g, ca, AGENT_CLOSE, p, sizeof p);
	assert_non_null(strstr(p, "window"));
	/* the other channel and the link are fine */
	put(&f->g, cb, AGENT_DATA, 0, "more", 4);
	ping_through(f);
	assert_true(agent_link_alive(f->l));
	assert_false(b.closed);
	agent_link_stats(f->l, &st);
	assert_int_equal(st.overruns, 1);
	assert_int_equal(st.violations, 0);
	agent_link_stats_total(&total1);
	assert_int_equal(total1.overruns, total0.overruns + 1);
	agent_chan_close(f->l, cb, "done");
	assert_true(wait_for(&b, is_closed, 0));
	assert_int_equal(bytes_of(&b), 8);
}

/* Junk between frames, frames for channels that do not exist, PONGs nobody
 * asked for, empty DATA: nothing reaches a consumer, the link lives. */
static void test_flood(void **state)
{
	struct fixture *f = *state;
	static unsigned char burst[1 << 20];
	static struct consumer a;
	struct agent_link_stats st;
	size_t n = 0;
	uint32_t ca;
	char p[64];

	consumer_init(&a);
	ca = open_exec(f, &a);
	while (n + 3 * AGENT_HEADER + 16 < sizeof burst) {
		memcpy(burst + n, "VTAjunk", 7);
		n += 7;
		agent_header_put(burst + n, ca, AGENT_DATA, 0, 0); /* empty */
		n += AGENT_HEADER;
		agent_header_put(burst + n, 1001, AGENT_DATA, 0, 0); /* no such channel */
		n += AGENT_HEADER;
		agent_header_put(burst + n, 0, AGENT_PONG, 0, 8);
		memset(burst + n + AGENT_HEADER, 0xff, 8); /* a ping never sent */
		n += AGENT_HEADER + 8;
	}
	for (int round = 0; round < 4; round++) {
		size_t off = 0;

		while (off < n) {
			ssize_t w = send(f->g.fd, burst + off, n - off, MSG_NOSIGNAL);

			assert_true(w > 0);
			off += (size_t)w;
		}
	}
	put(&f->g, ca, AGENT_DATA, 0, "real", 4);
	ping_through(f); /* a forged PONG did not answer it */
	agent_link_stats(f->l, &st);
	assert_true(st.dropped_bytes >= 4u * 7 * (n / (7 + 3 * AGENT_HEADER + 8)));
	assert_true(st.frames > 4u * 3 * (n / (7 + 3 * AGENT_HEADER + 8)));
	pthread_mutex_lock(&a.mu);
	assert_int_equal(a.data_frames, 1);
	assert_int_equal(a.data_bytes, 4);
	assert_false(a.closed);
	pthread_mutex_unlock(&a.mu);
	agent_chan_close(f->l, ca, "done");
	expect(&f->g, ca, AGENT_CLOSE, p, sizeof p);
	printf("# flood: %llu frames, %llu junk bytes dropped\n", (unsigned long long)st.frames,
	       (unsigned long long)st.dropped_bytes);
}

/* What the link told its owner of broken rules (agent_link_on_violation);
 * the link's thread writes, the test reads after a round trip. */
static int told;
static uint64_t told_last_n;
static char told_why[128];

static void on_violation(void *vu, uint32_t chan, const char *why, bool overrun, uint64_t n)
{
	(void)vu;
	(void)chan;
	told += !overrun;
	told_last_n = n;
	snprintf(told_why, sizeof(told_why), "%s", why);
}

/* Frames a channel cannot have at that point close it, with the reason;
 * the owner hears of each (the link itself logs nothing). */
static void test_bad_frames(void **state)
{
	struct fixture *f = *state;
	static struct consumer c[4];
	struct agent_link_stats st;
	uint32_t id[4];
	char p[256];

	for (int i = 0; i < 4; i++)
		consumer_init(&c[i]);
	told = 0;
	agent_link_on_violation(f->l, on_violation, NULL);
	id[0] = open_exec(f, &c[0]);
	put(&f->g, id[0], AGENT_OPENED, 0, "pid=2", 5); /* twice */
	id[1] = open_exec(f, &c[1]);
	put(&f->g, id[1], AGENT_EXEC, 0, "arg=sh", 6); /* the host's to send */
	id[2] = agent_chan_open(f->l, AGENT_TCP, "80", 2, &ops, &c[2]);
	expect(&f->g, id[2], AGENT_TCP, p, sizeof p);
	put(&f->g, id[2], AGENT_DATA, 0, "early", 5); /* before OPENED */
	id[3] = agent_chan_open(f->l, AGENT_TCP, "81", 2, &ops, &c[3]);
	expect(&f->g, id[3], AGENT_TCP, p, sizeof p);
	put(&f->g, id[3], AGENT_OPENED, 0, "", 0);
	put(&f->g, id[3], AGENT_EXIT, 0, "exit=0", 6); /* not a command */
	for (int i = 0; i < 4; i++) {
		assert_true(wait_for(&c[i], is_closed, 0));
		if (!strstr(c[i].reason, "protocol violation"))
			fail_msg("channel %d: closed with \"%s\"", i, c[i].reason);
		assert_true(host_closed(&f->g, id[i]));
	}
	assert_int_equal(c[0].opened, 1);
	agent_link_stats(f->l, &st);
	assert_int_equal(st.violations, 4);
	assert_int_equal(st.overruns, 0);
	assert_true(agent_link_alive(f->l));
	ping_through(f); /* the hook ran on the link's thread before its PONG */
	agent_link_on_violation(f->l, NULL, NULL);
	assert_int_equal(told, 4);
	assert_int_equal(told_last_n, 4);
	assert_true(told_why[0] != '\0');
}

static int accepted;

static void on_accept(void *au, struct agent_link *l, uint32_t chan, const char *info)
{
	struct consumer *c = au;

	(void)info;
	accepted++;
	assert_int_equal(agent_chan_bind(l, chan, &ops, c), 0);
}

/* ACCEPT must use a fresh odd id: an even one (the host's) or one in use
 * is refused, and the channel already there is untouched. */
static void test_channel_id_reuse(void **state)
{
	struct fixture *f = *state;
	static struct consumer a, g1;
	struct agent_link_stats st;
	uint32_t ca;
	char p[64];

	consumer_init(&a);
	consumer_init(&g1);
	agent_link_on_accept(f->l, on_accept, &g1);
	ca = open_exec(f, &a);
	put(&f->g, ca, AGENT_ACCEPT, 0, "port=3128", 9); /* the host's id, in use */
	expect(&f->g, ca, AGENT_CLOSE, p, sizeof p);
	assert_string_equal(p, "refused");
	put(&f->g, 5, AGENT_ACCEPT, 0, "port=3128", 9);
	put(&f->g, 5, AGENT_ACCEPT, 0, "port=3128", 9); /* again */
	expect(&f->g, 5, AGENT_CLOSE, p, sizeof p);
	put(&f->g, 5, AGENT_DATA, 0, "GET", 3);
	put(&f->g, ca, AGENT_DATA, 0, "out", 3);
	ping_through(f);
	assert_int_equal(accepted, 1);
	assert_int_equal(bytes_of(&g1), 3);
	assert_int_equal(bytes_of(&a), 3);
	assert_false(a.closed);
	agent_link_stats(f->l, &st);
	assert_int_equal(st.violations, 2);
	agent_link_on_accept(f->l, NULL, NULL);
}

/* A guest that takes nothing: the sender is told to stop, then refused;
 * once the guest reads and returns credit, writable() says go on. */
static void test_send_backpressure(void **state)
{
	struct fixture *f = *state;
	static unsigned char chunk[AGENT_WINDOW];
	static struct consumer a;
	struct agent_header h;
	unsigned char w[4];
	char p[64];
	size_t got = 0;
	uint32_t ca;
	int rc = 0, sends = 0;

	consumer_init(&a);
	ca = open_exec(f, &a);
	while (sends < 16 &&
	       (rc = agent_chan_send(f->l, ca, AGENT_DATA, 0, chunk, sizeof chunk)) == 0)
		sends++;
	assert_int_equal(rc, AGENT_SEND_FULL);
	assert_true(sends <= 1); /* the window's worth goes out, the next waits */
	assert_int_equal(agent_chan_send(f->l, ca, AGENT_DATA, 0, chunk, 10), -ENOBUFS);
	assert_true(agent_chan_pending(f->l, ca) <= 2u * AGENT_SEND_HIGH);
	assert_int_equal(a.writable, 0);
	/* the guest reads what came and returns it */
	while (got < AGENT_WINDOW && next(&f->g, &h, p, sizeof p, 5000))
		if (h.chan == ca && h.type == AGENT_DATA)
			got += h.len;
	assert_int_equal(got, AGENT_WINDOW); /* never past the window */
	agent_put32(w, AGENT_WINDOW);
	put(&f->g, ca, AGENT_WINDOW_UPDATE, 0, w, 4);
	assert_true(wait_for(&a, is_writable, 0));
	assert_int_equal(agent_chan_send(f->l, ca, AGENT_DATA, 0, "x", 1) >= 0, 1);
	agent_chan_close(f->l, ca, "done");
}

/* The total of WINDOW_UPDATEs for chan the host sent within ms (and
 * whether DATA containing what came for it). */
static size_t credit_within(struct guest *g, uint32_t chan, int ms, char *data, size_t datalen)
{
	struct agent_header h;
	char p[256];
	size_t total = 0;

	while (next(g, &h, p, sizeof p, ms)) {
		if (h.chan == chan && h.type == AGENT_WINDOW_UPDATE)
			total += agent_get32((const unsigned char *)p);
		if (h.chan == chan && h.type == AGENT_DATA && data)
			snprintf(data, datalen, "%s", p);
	}
	return total;
}

/* Nobody reaps the connect queue while a test runs: its dones (which
 * only let go) run at teardown's destroy. */
static void no_wake(void *ud)
{
	(void)ud;
}

/* An egress with cfg that allows everywhere, taking f's link's accepted
 * connections (the caller releases it). */
static struct egress *egress_serving(struct fixture *f, const struct egress_config *cfg)
{
	json_t *j = json_pack("{s:[s]}", "allow", "*:*");
	struct egress_rules *rules;
	struct egress *e;
	char err[256];

	assert_int_equal(egress_rules_parse(j, &rules, err, sizeof(err)), 0);
	json_decref(j);
	static const struct work_queue_config qc = { .threads = 4,
						     .max_jobs = 64,
						     .wake = no_wake };

	assert_int_equal(work_queue_create(&qc, &f->connects), 0);
	assert_non_null(e = egress_create(cfg, f->connects, rules));
	agent_link_on_accept(f->l, egress_accept, e);
	return e;
}

/* A loopback listener whose accept queue is full (fill holds the sockets
 * that filled it): a connect to *sa waits for a SYN retry. */
static int full_listener(struct sockaddr_in *sa, int fill[4])
{
	socklen_t sl = sizeof(*sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)sa, sizeof(*sa)), 0);
	assert_int_equal(listen(lfd, 0), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)sa, &sl), 0);
	for (int i = 0; i < 4; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fill[i], (struct sockaddr *)sa, sizeof(*sa));
	}
	usleep(100 * 1000);
	return lfd;
}

/* While the upstream connect is pending (here: a listener whose accept
 * queue is full, so the SYN waits for a retry) the guest's bytes past
 * the request are acked up to 64 KiB only; once connected, all of them
 * go upstream and are acked. */
static void test_egress_preconnect_bound(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct egress_config cfg = { .allow_private = true, .connect_timeout_ms = 8000 };
	struct egress *e;
	static unsigned char body[300 * 1024];
	char head[128], reply[256] = "";
	int lfd, fill[4], up;
	size_t hlen, acked, got = 0;
	json_t *log;

	e = egress_serving(f, &cfg);
	lfd = full_listener(&sa, fill);
	hlen = (size_t)snprintf(head, sizeof(head), "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n",
				ntohs(sa.sin_port));
	put(&f->g, 7, AGENT_ACCEPT, 0, "port=3128", 9);
	put(&f->g, 7, AGENT_DATA, 0, head, hlen);
	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (unsigned char)(i * 31 + 7);
	for (size_t off = 0; off < sizeof(body); off += 30 * 1024)
		put(&f->g, 7, AGENT_DATA, 0, body + off, 30 * 1024);
	acked = credit_within(&f->g, 7, 700, NULL, 0);
	printf("# egress: %zu of %zu bytes acked while connecting\n", acked, hlen + sizeof(body));
	assert_true(acked >= hlen);
	assert_true(acked <= hlen + 64 * 1024);
	/* let the connect through: take the filler that got in (without
	 * waiting: our SYN may be next), drop the others' */
	fcntl(lfd, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 4; i++) {
		int a = accept(lfd, NULL, NULL);

		if (a >= 0)
			close(a);
	}
	for (int i = 0; i < 4; i++)
		close(fill[i]);
	for (;;) {
		struct pollfd p = { lfd, POLLIN, 0 };

		assert_true(poll(&p, 1, 8000) == 1);
		up = accept(lfd, NULL, NULL);
		assert_true(up >= 0);
		{ /* a filler's late SYN may come first: the one that sends is ours */
			struct pollfd q = { up, POLLIN, 0 };

			if (poll(&q, 1, 3000) == 1)
				break;
		}
		close(up);
	}
	while (got < sizeof(body)) {
		unsigned char buf[65536];
		ssize_t n = read(up, buf, sizeof(buf));

		assert_true(n > 0);
		assert_memory_equal(buf, body + got, (size_t)n);
		got += (size_t)n;
	}
	acked += credit_within(&f->g, 7, 500, reply, sizeof(reply));
	assert_non_null(strstr(reply, "200"));
	assert_int_equal(acked, hlen + sizeof(body));
	log = egress_log_get(e, 0, 10);
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(json_object_get(log, "entries"),
								   0),
						    "verdict")),
			    "allowed");
	json_decref(log);
	close(up);
	close(lfd);
	agent_chan_close(f->l, 7, "done");
	ping_through(f);
	agent_link_on_accept(f->l, NULL, NULL);
	egress_release(e);
}

/* Counts the egress log's entries refused for reason. */
static int log_reasons(struct egress *e, const char *reason)
{
	json_t *log = egress_log_get(e, 0, 1000), *en;
	size_t i;
	int n = 0;

	json_array_foreach(json_object_get(log, "entries"), i, en)
		n += !strcmp(json_string_value(json_object_get(en, "reason")), reason);
	json_decref(log);
	return n;
}

/* The caps over many connections, all pending on a full accept queue:
 * what they hold before connecting is capped over all (16 MiB: 20
 * connections that each send a whole window leave 4 refused with 503
 * pending_full), places among connecting connections are capped by the
 * gateway's max_total (a 21st gets 503 too_many_connections, even though
 * 4 of the 20 were refused: their connects still run), and a session's
 * guest may have EGRESS_MAX_PER_SESSION connections at all (the ones past
 * it are closed at once). */
static void test_egress_caps(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct egress_config cfg = { .allow_private = true,
				     .connect_timeout_ms = 8000,
				     .max_total = 20 };
	struct egress *e;
	static unsigned char chunk[32 * 1024];
	char head[128], p[256];
	int lfd, fill[4], n503 = 0, closes = 0;
	struct agent_header h;
	size_t hlen;

	e = egress_serving(f, &cfg);
	lfd = full_listener(&sa, fill);
	hlen = (size_t)snprintf(head, sizeof(head), "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n",
				ntohs(sa.sin_port));
	for (uint32_t i = 0; i < 20; i++) {
		uint32_t c = 101 + 2 * i;
		size_t left = AGENT_WINDOW - hlen; /* a whole window, no more */

		put(&f->g, c, AGENT_ACCEPT, 0, "port=3128", 9);
		put(&f->g, c, AGENT_DATA, 0, head, hlen);
		usleep(20 * 1000); /* its connect starts */
		while (left) {
			size_t k = left < sizeof(chunk) ? left : sizeof(chunk);

			put(&f->g, c, AGENT_DATA, 0, chunk, k);
			left -= k;
		}
	}
	put(&f->g, 141, AGENT_ACCEPT, 0, "port=3128", 9);
	put(&f->g, 141, AGENT_DATA, 0, head, hlen);
	for (uint32_t i = 0; i < 120; i++)
		put(&f->g, 143 + 2 * i, AGENT_ACCEPT, 0, "port=3128", 9);
	while (next(&f->g, &h, p, sizeof p, 1000)) {
		if (h.type == AGENT_DATA && strstr(p, "503 Service Unavailable"))
			n503++;
		if (h.type == AGENT_CLOSE && h.chan >= 143)
			closes++;
	}
	printf("# egress caps: %d answered 503, %d closed at once; log: %d pending_full, %d "
	       "too_many_connections\n",
	       n503, closes, log_reasons(e, "pending_full"),
	       log_reasons(e, "too_many_connections"));
	assert_int_equal(log_reasons(e, "pending_full"), 4);
	assert_int_equal(n503, 5);
	/* 21 connections were open when the 120 came: 107 more fit */
	assert_int_equal(closes, 120 - (EGRESS_MAX_PER_SESSION - 21));
	assert_int_equal(log_reasons(e, "too_many_connections"), 1 + closes);
	assert_int_equal(egress_open_total(), 20);
	for (uint32_t c = 101; c < 143 + 2 * 120; c += 2)
		agent_chan_close(f->l, c, "done");
	for (int i = 0; i < 4; i++)
		close(fill[i]);
	close(lfd);
	ping_through(f);
	agent_link_on_accept(f->l, NULL, NULL);
	egress_release(e);
}

/* The reason the log gives the connection to port ("" when none). */
static const char *reason_for_port(struct egress *e, int port, char *out, size_t len)
{
	json_t *log = egress_log_get(e, 0, 100), *en;
	size_t i;

	out[0] = '\0';
	json_array_foreach(json_object_get(log, "entries"), i,
			   en) if (json_integer_value(json_object_get(en, "port")) == port)
		snprintf(out, len, "%s", json_string_value(json_object_get(en, "reason")));
	json_decref(log);
	return out;
}

/* Dials that fail come back through the link (no thread waits on them):
 * a port nobody listens on is refused with 502 connect_failed, a connect
 * that hangs (a full accept queue drops the SYN) past the connect timeout
 * with 504 timeout; either way the connection's place is given back. */
static void test_egress_dial_failures(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_in sa = { .sin_family = AF_INET }, closed = { .sin_family = AF_INET };
	struct egress_config cfg = { .allow_private = true, .connect_timeout_ms = 300 };
	socklen_t sl = sizeof(closed);
	struct egress *e;
	char head[128], reply[256] = "", why[64];
	int lfd, fill[4], s = socket(AF_INET, SOCK_STREAM, 0), open0 = egress_open_total();
	size_t hlen;

	e = egress_serving(f, &cfg);
	/* a port that was just free: nobody listens there */
	closed.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&closed, sizeof(closed)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&closed, &sl), 0);
	close(s);
	hlen = (size_t)snprintf(head, sizeof(head), "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n",
				ntohs(closed.sin_port));
	put(&f->g, 9, AGENT_ACCEPT, 0, "port=3128", 9);
	put(&f->g, 9, AGENT_DATA, 0, head, hlen);
	credit_within(&f->g, 9, 1000, reply, sizeof(reply));
	assert_non_null(strstr(reply, "502"));
	assert_string_equal(reason_for_port(e, ntohs(closed.sin_port), why, sizeof(why)),
			    "connect_failed");

	lfd = full_listener(&sa, fill);
	hlen = (size_t)snprintf(head, sizeof(head), "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n",
				ntohs(sa.sin_port));
	reply[0] = '\0';
	put(&f->g, 11, AGENT_ACCEPT, 0, "port=3128", 9);
	put(&f->g, 11, AGENT_DATA, 0, head, hlen);
	credit_within(&f->g, 11, 1500, reply, sizeof(reply));
	assert_non_null(strstr(reply, "504"));
	assert_string_equal(reason_for_port(e, ntohs(sa.sin_port), why, sizeof(why)), "timeout");
	assert_int_equal(egress_open_total(), open0);
	for (int i = 0; i < 4; i++)
		close(fill[i]);
	close(lfd);
	agent_chan_close(f->l, 9, "done");
	agent_chan_close(f->l, 11, "done");
	ping_through(f);
	agent_link_on_accept(f->l, NULL, NULL);
	egress_release(e);
}

/* A guest that sends frames needing an answer (ACCEPTs nobody takes: each
 * gets a CLOSE) and reads nothing: the host stops reading it once it owes
 * a few MiB, so the guest's sends block instead of the host's queue
 * growing; once the guest reads, the link works again. */
static void test_nonreader_is_not_read(void **state)
{
	struct fixture *f = *state;
	static unsigned char burst[AGENT_HEADER * 4096];
	struct timeval tv = { 1, 0 };
	size_t sent = 0;
	uint32_t id = 1;

	setsockopt(f->g.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (sent < (256u << 20)) {
		ssize_t w;

		for (size_t i = 0; i < sizeof(burst); i += AGENT_HEADER, id += 2)
			agent_header_put(burst + i, id, AGENT_ACCEPT, 0, 0);
		if ((w = send(f->g.fd, burst, sizeof(burst), MSG_NOSIGNAL)) <= 0)
			break;
		sent += (size_t)w;
		if ((size_t)w < sizeof(burst))
			break; /* the rest of a frame is cut off: fine, resync */
	}
	printf("# a guest that does not read got %zu KiB in before the host stopped reading\n",
	       sent >> 10);
	assert_true(sent < (32u << 20));
	tv.tv_sec = 0;
	setsockopt(f->g.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ping_through(f); /* reads what the host owed on the way */
	assert_true(agent_link_alive(f->l));
}

/* A DevTools message past the window: an overrun from this agent (version
 * 2), let through from a version 1 agent (one message's slack). */
static void test_cdp_window_by_version(void **state)
{
	struct fixture *f = *state;
	static unsigned char chunk[AGENT_MAX_PAYLOAD];
	static struct consumer c;
	struct agent_link_stats st;
	unsigned v = agent_link_version(f->l);
	char p[256];
	uint32_t id;

	assert_true(v == 1 || v == AGENT_VERSION_NUM);
	consumer_init(&c);
	memset(chunk, '"', sizeof chunk);
	assert_true((id = agent_chan_open(f->l, AGENT_CDP, "9222", 4, &ops, &c)) != 0);
	expect(&f->g, id, AGENT_CDP, p, sizeof p);
	put(&f->g, id, AGENT_OPENED, 0, "", 0);
	for (int i = 0; i < AGENT_WINDOW / AGENT_MAX_PAYLOAD + 2; i++)
		put(&f->g, id, AGENT_DATA, AGENT_FLAG_MORE, chunk, sizeof chunk);
	put(&f->g, id, AGENT_DATA, 0, "", 0);
	ping_through(f); /* the link has read all of it */
	agent_link_stats(f->l, &st);
	if (v == 1) {
		assert_int_equal(st.overruns, 0);
		assert_int_equal(bytes_of(&c), AGENT_WINDOW + 2 * AGENT_MAX_PAYLOAD);
		agent_chan_close(f->l, id, "done");
	} else {
		assert_true(host_closed(&f->g, id));
		assert_true(wait_for(&c, is_closed, 0));
		assert_non_null(strstr(c.reason, "overran"));
		assert_int_equal(st.overruns, 1);
		assert_int_equal(bytes_of(&c), AGENT_WINDOW);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_overrun_kills_only_that_channel, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_channel_id_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_egress_preconnect_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_egress_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_egress_dial_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nonreader_is_not_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cdp_window_by_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cdp_window_by_version, setup_v1, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
