/* tests/integration/test_agent.c: vitrine-agent and the host's link to it,
 * without a guest: the agent built for the host runs on one end of a
 * socket pair (--fd), the link on the other. Commands (exit codes, streams
 * apart, every byte value, 1 MiB both ways through the windows, timeouts
 * that kill the whole group, uid, cwd, env), a TCP channel to a local
 * port, a connection to the agent's egress listener relayed to a socket,
 * frame resync, a fake agent's short or malformed EXIT, a link that
 * breaks under a waiting command, and the form without a waiting thread
 * (agent_exec_start: its end said once, a kill, a handle closed while its
 * command runs). */
#include "common/agent_proto.h"
#include "tests/lib/net.h"
#include "vmm-qemu/agent_exec.h"
#include "vmm-qemu/agent_link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

struct fixture {
	pid_t agent;
	struct agent_link *link;
	int proxy_port;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char dir[4096], bin[4200], err[256], fdarg[16], portarg[16];
	const char *gw = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	int sv[2];

	snprintf(dir, sizeof(dir), "%s", gw);
	snprintf(bin, sizeof(bin), "%s/vitrine-agent", dirname(dir));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->proxy_port = net_free_port();
	assert_true(f->proxy_port > 0);
	snprintf(portarg, sizeof(portarg), "%d", f->proxy_port);
	f->agent = fork();
	if (f->agent == 0) {
		int fd = dup(sv[1]); /* without CLOEXEC */

		snprintf(fdarg, sizeof(fdarg), "%d", fd);
		execl(bin, bin, "--fd", fdarg, "--proxy-port", portarg, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	assert_int_equal(agent_link_open_fd(sv[0], 5000, &f->link, err, sizeof(err)), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int status;

	agent_link_destroy(f->link);
	/* the agent exits when its socket closes */
	assert_int_equal(waitpid(f->agent, &status, 0), f->agent);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	free(f);
	return 0;
}

static int run(struct fixture *f, const char *const *argv, const void *in, size_t in_len,
	       int timeout_ms, struct agent_exec_result *r)
{
	static const char *const env[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
	struct agent_exec_spec spec = { .argv = argv,
					.env = env,
					.uid = -1,
					.gid = -1,
					.in = in,
					.in_len = in_len,
					.timeout_ms = timeout_ms,
					.max_output = 4 << 20 };
	char err[256];
	int rc = agent_exec_run(f->link, &spec, r, err, sizeof(err));

	if (rc)
		print_message("agent_exec_run: %d %s\n", rc, err);
	return rc;
}

/* agent_exec_start's end, counted (on the link's thread). */
struct ends {
	atomic_int n;
};

static void count_end(void *ud)
{
	atomic_fetch_add(&((struct ends *)ud)->n, 1);
}

/* Waits up to ms for e to reach n. */
static bool ends_reach(struct ends *e, int n, int ms)
{
	for (int i = 0; i < ms / 10 && atomic_load(&e->n) < n; i++)
		usleep(10 * 1000);
	return atomic_load(&e->n) >= n;
}

static void test_exec_start(void **state)
{
	struct fixture *f = *state;
	static const char *const env[] = { "PATH=/usr/bin:/bin", NULL };
	struct agent_exec_spec spec = {
		.argv = (const char *const[]){ "sh", "-c", "cat; echo done", NULL },
		.env = env,
		.uid = -1,
		.gid = -1,
		.in = "hi ",
		.in_len = 3,
	};
	struct ends e = { 0 };
	struct agent_exec_result r;
	struct agent_exec *x;
	char err[256];

	/* It runs, ends once, and says how. */
	assert_int_equal(agent_exec_start(f->link, &spec, count_end, &e, &x, err, sizeof(err)), 0);
	assert_true(ends_reach(&e, 1, 10000));
	assert_int_equal(agent_exec_outcome(x, &r, err, sizeof(err)), 0);
	assert_int_equal(r.exit_code, 0);
	assert_false(r.timed_out);
	assert_string_equal(r.out, "hi done\n");
	agent_exec_result_free(&r);
	agent_exec_kill(x); /* ended: nothing to kill */
	agent_exec_close(x);
	usleep(100 * 1000);
	assert_int_equal(atomic_load(&e.n), 1);

	/* Killed when its owner says the time is up: it timed out. */
	atomic_store(&e.n, 0);
	spec.argv = (const char *const[]){ "sleep", "30", NULL };
	spec.in_len = 0;
	assert_int_equal(agent_exec_start(f->link, &spec, count_end, &e, &x, err, sizeof(err)), 0);
	agent_exec_kill(x);
	assert_true(ends_reach(&e, 1, 10000));
	assert_int_equal(agent_exec_outcome(x, &r, err, sizeof(err)), 0);
	assert_true(r.timed_out);
	assert_int_equal(r.signal, 9);
	agent_exec_result_free(&r);
	agent_exec_close(x);

	/* Closed while it runs: cut, and its end is never said. */
	atomic_store(&e.n, 0);
	assert_int_equal(agent_exec_start(f->link, &spec, count_end, &e, &x, err, sizeof(err)), 0);
	usleep(100 * 1000);
	agent_exec_close(x);
	usleep(300 * 1000);
	assert_int_equal(atomic_load(&e.n), 0);
	assert_int_equal(agent_link_ping(f->link, 2000), 0); /* the link goes on */

	/* Nothing to run: refused before anything starts. */
	spec.argv = (const char *const[]){ NULL };
	spec.env = NULL;
	assert_int_equal(agent_exec_start(f->link, &spec, count_end, &e, &x, err, sizeof(err)),
			 -EINVAL);
}

static void test_ping(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < 20; i++)
		assert_int_equal(agent_link_ping(f->link, 2000), 0);
}

static void test_exec_basics(void **state)
{
	struct fixture *f = *state;
	struct agent_exec_result r;

	assert_int_equal(run(f, (const char *[]){ "true", NULL }, NULL, 0, 5000, &r), 0);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.signal, 0);
	assert_true(r.pid > 0);
	agent_exec_result_free(&r);

	assert_int_equal(run(f,
			     (const char *[]){ "sh", "-c", "echo out; echo err >&2; exit 3", NULL },
			     NULL, 0, 5000, &r),
			 0);
	assert_int_equal(r.exit_code, 3);
	assert_string_equal(r.out, "out\n");
	assert_string_equal(r.err, "err\n");
	agent_exec_result_free(&r);

	assert_int_equal(run(f, (const char *[]){ "no-such-program-here", NULL }, NULL, 0, 5000,
			     &r),
			 0);
	assert_int_equal(r.exit_code, 127);
	assert_non_null(strstr(r.err, "cannot run no-such-program-here"));
	agent_exec_result_free(&r);

	assert_int_equal(run(f, (const char *[]){ "sh", "-c", "kill -TERM $$", NULL }, NULL, 0,
			     5000, &r),
			 0);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.signal, SIGTERM);
	agent_exec_result_free(&r);
}

static void test_exec_bytes(void **state)
{
	struct fixture *f = *state;
	struct agent_exec_result r;
	size_t big = 3u << 20; /* three windows each way */
	unsigned char *in = malloc(big);

	for (size_t i = 0; i < big; i++)
		in[i] = (unsigned char)(i * 7 + i / 256);
	assert_int_equal(run(f, (const char *[]){ "cat", NULL }, in, big, 30000, &r), 0);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.out_len, big);
	assert_memory_equal(r.out, in, big);
	assert_false(r.out_truncated);
	agent_exec_result_free(&r);
	free(in);

	assert_int_equal(run(f,
			     (const char *[]){ "sh", "-c", "head -c 1048576 /dev/zero | tr '\\0' x",
					       NULL },
			     NULL, 0, 30000, &r),
			 0);
	assert_int_equal(r.out_len, 1048576);
	assert_int_equal(r.out[0], 'x');
	assert_int_equal(r.out[1048575], 'x');
	agent_exec_result_free(&r);
}

/* Processes of group pgrp not yet dead (zombies waiting for a reaper
 * that is not ours do not count). */
static int live_in_group(pid_t pgrp)
{
	FILE *p = popen("cat /proc/[0-9]*/stat 2>/dev/null", "r");
	char line[1024];
	int n = 0;

	while (p && fgets(line, sizeof(line), p)) {
		const char *rp = strrchr(line, ')');
		char st;
		int ppid, grp;

		if (rp && sscanf(rp + 1, " %c %d %d", &st, &ppid, &grp) == 3 && grp == pgrp &&
		    st != 'Z')
			n++;
	}
	if (p)
		pclose(p);
	return n;
}

static void test_exec_timeout_kills_group(void **state)
{
	struct fixture *f = *state;
	struct agent_exec_result r;

	assert_int_equal(run(f,
			     (const char *[]){ "sh", "-c", "sleep 30 & sleep 30; echo never",
					       NULL },
			     NULL, 0, 500, &r),
			 0);
	assert_true(r.timed_out);
	assert_int_equal(r.signal, SIGKILL);
	/* the background sleep was in the same group: gone too */
	for (int i = 0; i < 50 && live_in_group((pid_t)r.pid); i++)
		usleep(20 * 1000);
	assert_int_equal(live_in_group((pid_t)r.pid), 0);
	agent_exec_result_free(&r);
}

static void test_exec_identity(void **state)
{
	struct fixture *f = *state;
	static const char *const env[] = { "PATH=/usr/bin:/bin", "GREETING=grüße", NULL };
	struct agent_exec_spec spec = {
		.argv = (const char *[]){ "sh", "-c",
					  "id -u; id -g; pwd; echo $GREETING; env | wc -l", NULL },
		.env = env,
		.cwd = "/tmp",
		.uid = 1000,
		.gid = 1000,
		.timeout_ms = 5000
	};
	struct agent_exec_result r;
	char err[256];

	if (geteuid() != 0)
		spec.uid = spec.gid = -1; /* only root can change them */
	assert_int_equal(agent_exec_run(f->link, &spec, &r, err, sizeof(err)), 0);
	assert_string_equal(r.out, geteuid() == 0 ? "1000\n1000\n/tmp\ngrüße\n3\n"
						  : r.out); /* PWD added by sh */
	agent_exec_result_free(&r);

	spec.cwd = "/nonexistent";
	assert_int_equal(agent_exec_run(f->link, &spec, &r, err, sizeof(err)), 0);
	assert_int_equal(r.exit_code, 127);
	assert_non_null(strstr(r.err, "cd /nonexistent"));
	agent_exec_result_free(&r);
}

/* A signal sent at once, before the child has made its process group,
 * still reaches it (the agent falls back to the child itself). */
struct sig_wait {
	pthread_mutex_t mu;
	char status[64];
	bool closed;
};

static void sig_exit(void *u, const char *status)
{
	struct sig_wait *w = u;

	pthread_mutex_lock(&w->mu);
	snprintf(w->status, sizeof(w->status), "%s", status);
	pthread_mutex_unlock(&w->mu);
}

static void sig_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct sig_wait *w = u;

	(void)reason;
	(void)in;
	(void)out;
	pthread_mutex_lock(&w->mu);
	w->closed = true;
	pthread_mutex_unlock(&w->mu);
}

static void test_exec_signal_at_once(void **state)
{
	static const struct agent_chan_ops ops = { .exit = sig_exit, .closed = sig_closed };
	static const char *const env[] = { "PATH=/usr/bin:/bin", NULL };
	struct agent_exec_spec spec = {
		.argv = (const char *[]){ "sleep", "30", NULL }, .env = env, .uid = -1, .gid = -1
	};
	struct fixture *f = *state;

	for (int round = 0; round < 10; round++) {
		struct sig_wait w = { .mu = PTHREAD_MUTEX_INITIALIZER };
		char *payload;
		size_t len;
		uint32_t ch;
		bool closed = false;

		assert_int_equal(agent_exec_payload(&spec, &payload, &len), 0);
		ch = agent_chan_open(f->link, AGENT_EXEC, payload, len, &ops, &w);
		free(payload);
		assert_true(ch > 0);
		assert_int_equal(agent_chan_send(f->link, ch, AGENT_SIGNAL, 0, "15", 2), 0);
		for (int i = 0; i < 500 && !closed; i++) {
			usleep(10 * 1000);
			pthread_mutex_lock(&w.mu);
			closed = w.closed;
			pthread_mutex_unlock(&w.mu);
		}
		assert_true(closed); /* well before sleep's 30 s */
		assert_string_equal(w.status, "signal=15");
	}
}

/* ---- channels other than exec ---- */

struct got {
	pthread_mutex_t mu;
	char data[256];
	size_t len;
	bool opened, closed;
	char reason[128];
	uint64_t in, out;
	struct agent_link *l;
	uint32_t chan;
};

static void got_opened(void *u, const char *info)
{
	struct got *g = u;

	(void)info;
	pthread_mutex_lock(&g->mu);
	g->opened = true;
	pthread_mutex_unlock(&g->mu);
}

static void got_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct got *g = u;

	(void)flags;
	pthread_mutex_lock(&g->mu);
	if (g->len + n < sizeof(g->data)) {
		memcpy(g->data + g->len, p, n);
		g->len += n;
	}
	pthread_mutex_unlock(&g->mu);
	agent_chan_ack(g->l, g->chan, n);
}

static void got_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct got *g = u;

	pthread_mutex_lock(&g->mu);
	g->closed = true;
	snprintf(g->reason, sizeof(g->reason), "%s", reason);
	g->in = in;
	g->out = out;
	pthread_mutex_unlock(&g->mu);
}

static const struct agent_chan_ops got_ops = { .opened = got_opened,
					       .data = got_data,
					       .closed = got_closed };

static bool wait_for(struct got *g, bool (*cond)(struct got *), int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		bool ok;

		pthread_mutex_lock(&g->mu);
		ok = cond(g);
		pthread_mutex_unlock(&g->mu);
		if (ok)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

static bool is_closed(struct got *g)
{
	return g->closed;
}

static bool has_world(struct got *g)
{
	return g->len >= 5;
}

/* What a pty test waits for in g's output. */
static const char *want_text;

static bool has_text(struct got *g)
{
	return memmem(g->data, g->len, want_text, strlen(want_text)) != NULL;
}

/* A command on a pseudo-terminal (pty=, version 3): the terminal is its
 * stdin and stdout, of the size asked for; RESIZE changes the size; what
 * is typed comes back echoed; the channel ends with the command. */
static void test_exec_pty(void **state)
{
	struct fixture *f = *state;
	static const char *const env[] = { "PATH=/usr/bin:/bin", NULL };
	struct agent_exec_spec spec = {
		.argv = (const char *const[]){ "sh", "-c",
					       "test -t 0 && test -t 1 && stty size; read l; "
					       "echo \"got:$l\"; stty size",
					       NULL },
		.env = env,
		.uid = -1,
		.gid = -1,
		.pty_cols = 80,
		.pty_rows = 24,
	};
	struct got g = { .mu = PTHREAD_MUTEX_INITIALIZER, .l = f->link };
	char *payload;
	size_t len;

	assert_true(agent_link_version(f->link) >= AGENT_VERSION_PTY);
	assert_int_equal(agent_exec_payload(&spec, &payload, &len), 0);
	assert_non_null(memmem(payload, len, "pty=80x24", 10)); /* with its NUL */
	g.chan = agent_chan_open(f->link, AGENT_EXEC, payload, len, &got_ops, &g);
	free(payload);
	assert_true(g.chan != 0);
	want_text = "24 80";
	assert_true(wait_for(&g, has_text, 10000));
	assert_int_equal(agent_chan_send(f->link, g.chan, AGENT_RESIZE, 0, "100x30", 6), 0);
	/* a malformed size changes nothing and breaks nothing */
	assert_int_equal(agent_chan_send(f->link, g.chan, AGENT_RESIZE, 0, "0x30", 4), 0);
	assert_int_equal(agent_chan_send(f->link, g.chan, AGENT_DATA, 0, "hello\n", 6), 0);
	assert_true(wait_for(&g, is_closed, 10000));
	want_text = "hello\r\n"; /* the terminal's echo */
	assert_true(has_text(&g));
	want_text = "got:hello\r\n30 100\r\n";
	if (!has_text(&g))
		print_message("pty output: %.*s\n", (int)g.len, g.data);
	assert_true(has_text(&g));
}

static void test_winsize_parse(void **state)
{
	unsigned c = 0, r = 0;

	(void)state;
	assert_int_equal(agent_winsize_parse("80x24", 5, &c, &r), 0);
	assert_int_equal(c, 80);
	assert_int_equal(r, 24);
	assert_int_equal(agent_winsize_parse("65535x1", 7, &c, &r), 0);
	assert_int_equal(agent_winsize_parse("65536x1", 7, &c, &r), -1);
	assert_int_equal(agent_winsize_parse("0x24", 4, &c, &r), -1);
	assert_int_equal(agent_winsize_parse("80x", 3, &c, &r), -1);
	assert_int_equal(agent_winsize_parse("x24", 3, &c, &r), -1);
	assert_int_equal(agent_winsize_parse("80x24 ", 6, &c, &r), -1);
	assert_int_equal(agent_winsize_parse("80X24", 5, &c, &r), -1);
	assert_int_equal(agent_winsize_parse("0000080x24", 10, &c, &r), -1);
	assert_int_equal(agent_winsize_parse("8x024", 5, &c, &r),
			 -1); /* found by fuzz_agent_frame */
	assert_int_equal(agent_winsize_parse("", 0, &c, &r), -1);
}

static void test_tcp_channel(void **state)
{
	struct fixture *f = *state;
	struct got g = { .mu = PTHREAD_MUTEX_INITIALIZER, .l = f->link };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int ls = socket(AF_INET, SOCK_STREAM, 0), c;
	char port[16], buf[16];

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(ls, 1), 0);
	getsockname(ls, (struct sockaddr *)&sa, &len);
	snprintf(port, sizeof(port), "%d", ntohs(sa.sin_port));
	g.chan = agent_chan_open(f->link, AGENT_TCP, port, strlen(port), &got_ops, &g);
	assert_true(g.chan > 0 && g.chan % 2 == 0);
	assert_int_equal(agent_chan_send(f->link, g.chan, AGENT_DATA, 0, "hello", 5), 0);
	c = accept(ls, NULL, NULL);
	assert_true(c >= 0);
	assert_int_equal(recv(c, buf, 5, MSG_WAITALL), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(send(c, "world", 5, 0), 5);
	assert_true(wait_for(&g, has_world, 5000));
	assert_memory_equal(g.data, "world", 5);
	close(c); /* the far end goes: the channel ends after our EOF */
	assert_int_equal(agent_chan_send(f->link, g.chan, AGENT_EOF, 0, NULL, 0), 0);
	assert_true(wait_for(&g, is_closed, 5000));
	assert_true(g.opened);
	assert_int_equal(g.in, 5);
	assert_int_equal(g.out, 5);
	close(ls);

	/* nothing listens there any more */
	memset(&g, 0, sizeof(g));
	pthread_mutex_init(&g.mu, NULL);
	g.l = f->link;
	g.chan = agent_chan_open(f->link, AGENT_TCP, port, strlen(port), &got_ops, &g);
	assert_true(wait_for(&g, is_closed, 5000));
	assert_false(g.opened);
	assert_non_null(strstr(g.reason, "connect 127.0.0.1"));
}

/* The egress listener: the accept handler relays the guest's connection to
 * one end of a socket pair, the test plays the far side on the other. */
struct relay_fixture {
	int far; /* the test's end */
	struct got g;
};

static void on_accept(void *au, struct agent_link *l, uint32_t chan, const char *info)
{
	struct relay_fixture *rf = au;
	int sv[2];

	assert_int_equal(strncmp(info, "port=", 5), 0);
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	rf->far = sv[0];
	rf->g.chan = chan;
	agent_chan_bind(l, chan, &got_ops, &rf->g);
	agent_chan_relay(l, chan, sv[1], "hi guest ", 9, "first ", 6, 0);
}

static void test_egress_listener_relay(void **state)
{
	struct fixture *f = *state;
	struct relay_fixture rf = { .far = -1,
				    .g = { .mu = PTHREAD_MUTEX_INITIALIZER, .l = f->link } };
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)f->proxy_port) };
	int c = socket(AF_INET, SOCK_STREAM, 0);
	char buf[64];

	agent_link_on_accept(f->link, on_accept, &rf);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(send(c, "from guest", 10, 0), 10);
	for (int i = 0; i < 500 && rf.far < 0; i++)
		usleep(10 * 1000);
	assert_true(rf.far >= 0);
	assert_int_equal(recv(rf.far, buf, 16, MSG_WAITALL), 16);
	assert_memory_equal(buf, "first from guest", 16);
	assert_int_equal(recv(c, buf, 9, MSG_WAITALL), 9);
	assert_memory_equal(buf, "hi guest ", 9);
	assert_int_equal(send(rf.far, "answer", 6, 0), 6);
	assert_int_equal(recv(c, buf, 6, MSG_WAITALL), 6);
	assert_memory_equal(buf, "answer", 6);
	/* the guest closes its side, then the far side closes: channel over */
	shutdown(c, SHUT_WR);
	assert_int_equal(recv(rf.far, buf, sizeof(buf), 0), 0);
	close(rf.far);
	assert_int_equal(recv(c, buf, sizeof(buf), 0), 0);
	assert_true(wait_for(&rf.g, is_closed, 5000));
	assert_string_equal(rf.g.reason, "");
	assert_int_equal(rf.g.in, 10); /* from the guest */
	assert_int_equal(rf.g.out, 15); /* to the guest */
	close(c);
	agent_link_on_accept(f->link, NULL, NULL);
	/* without a handler, connections are refused (closed at once) */
	c = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(recv(c, buf, sizeof(buf), 0), 0);
	close(c);
}

static void test_frame_parse_and_resync(void **state)
{
	unsigned char buf[64], junk[80];
	struct agent_header h;
	size_t off;

	(void)state;
	agent_header_put(buf, 6, AGENT_DATA, AGENT_FLAG_MORE, 3);
	memcpy(buf + AGENT_HEADER, "abc", 3);
	for (size_t n = 0; n < AGENT_HEADER + 3; n++)
		assert_int_equal(agent_frame_parse(buf, n, &h), 0);
	assert_int_equal(agent_frame_parse(buf, AGENT_HEADER + 3, &h), AGENT_HEADER + 3);
	assert_int_equal(h.chan, 6);
	assert_int_equal(h.type, AGENT_DATA);
	assert_int_equal(h.flags, AGENT_FLAG_MORE);
	/* half a frame and junk before a good one: found after resyncing */
	memcpy(junk, "xxVTyy", 6);
	memcpy(junk + 6, buf, AGENT_HEADER + 3);
	off = 0;
	while (agent_frame_parse(junk + off, 6 + AGENT_HEADER + 3 - off, &h) < 0)
		off += agent_resync(junk + off, 6 + AGENT_HEADER + 3 - off);
	assert_int_equal(off, 6);
	/* a length over the limit, an unknown type, nonzero padding */
	agent_header_put(buf, 2, AGENT_DATA, 0, AGENT_MAX_PAYLOAD + 1);
	assert_int_equal(agent_frame_parse(buf, AGENT_HEADER, &h), -1);
	agent_header_put(buf, 2, 99, 0, 0);
	assert_int_equal(agent_frame_parse(buf, AGENT_HEADER, &h), -1);
	agent_header_put(buf, 2, AGENT_DATA, 0, 0);
	buf[15] = 1;
	assert_int_equal(agent_frame_parse(buf, AGENT_HEADER, &h), -1);
}

/* A fake agent on the other end: answers RESET, then every EXEC with
 * OPENED and an EXIT whose payload is the test's (short or malformed). */
struct fake_agent {
	int fd;
	const char *exit_payload;
};

static void *fake_agent_thread(void *arg)
{
	struct fake_agent *fa = arg;
	unsigned char buf[4096], out[AGENT_HEADER + 64];
	size_t have = 0;
	ssize_t n;

	while ((n = read(fa->fd, buf + have, sizeof(buf) - have)) > 0) {
		struct agent_header h;
		long used;

		have += (size_t)n;
		while ((used = agent_frame_parse(buf, have, &h)) > 0) {
			size_t plen = strlen(fa->exit_payload);

			if (h.type == AGENT_RESET) {
				agent_header_put(out, 0, AGENT_RESET, 0, strlen(AGENT_VERSION));
				memcpy(out + AGENT_HEADER, AGENT_VERSION, strlen(AGENT_VERSION));
				assert_true(write(fa->fd, out,
						  AGENT_HEADER + strlen(AGENT_VERSION)) > 0);
			} else if (h.type == AGENT_EXEC) {
				agent_header_put(out, h.chan, AGENT_OPENED, 0, 5);
				memcpy(out + AGENT_HEADER, "pid=7", 5);
				assert_true(write(fa->fd, out, AGENT_HEADER + 5) > 0);
				agent_header_put(out, h.chan, AGENT_EXIT, 0, (uint32_t)plen);
				memcpy(out + AGENT_HEADER, fa->exit_payload, plen);
				assert_true(write(fa->fd, out, AGENT_HEADER + plen) > 0);
			}
			memmove(buf, buf + used, have - (size_t)used);
			have -= (size_t)used;
		}
		assert_true(used == 0);
	}
	close(fa->fd);
	return NULL;
}

/* An EXIT too short to hold a status, or malformed, is an error that says
 * so; a good one from the same fake is read as before. */
static void test_exec_short_exit(void **state)
{
	static const char *const bad[] = { "", "e", "exit", "exit=", "signal=", "exit=x", "ex=1" };
	static const char *const env[] = { "PATH=/usr/bin:/bin", NULL };
	struct agent_exec_spec spec = { .argv = (const char *[]){ "true", NULL },
					.env = env,
					.uid = -1,
					.gid = -1,
					.timeout_ms = 5000 };

	(void)state;
	for (size_t i = 0; i <= sizeof(bad) / sizeof(bad[0]); i++) {
		struct fake_agent fa = { .exit_payload = i < sizeof(bad) / sizeof(bad[0])
								 ? bad[i]
								 : "exit=3" };
		struct agent_link *l;
		struct agent_exec_result r;
		char err[256] = "";
		pthread_t t;
		int sv[2], rc;

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		fa.fd = sv[1];
		assert_int_equal(pthread_create(&t, NULL, fake_agent_thread, &fa), 0);
		assert_int_equal(agent_link_open_fd(sv[0], 5000, &l, err, sizeof(err)), 0);
		rc = agent_exec_run(l, &spec, &r, err, sizeof(err));
		if (i < sizeof(bad) / sizeof(bad[0])) {
			if (rc != -EPROTO || !strstr(err, "exit status is malformed"))
				fail_msg("EXIT \"%s\": %d %s", bad[i], rc, err);
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(r.exit_code, 3);
			assert_int_equal(r.pid, 7);
			agent_exec_result_free(&r);
		}
		agent_link_destroy(l);
		pthread_join(t, NULL);
	}
}

/* Last: kills the agent under a running command. */
static void test_link_lost(void **state)
{
	struct fixture *f = *state;
	static const char *const env[] = { "PATH=/usr/bin:/bin", NULL };
	struct agent_exec_spec spec = { .argv = (const char *[]){ "sleep", "30", NULL },
					.env = env,
					.uid = -1,
					.gid = -1,
					.timeout_ms = 20000 };
	struct agent_exec_result r;
	char err[256];
	pid_t agent = f->agent;

	if (fork() == 0) {
		usleep(300 * 1000);
		kill(agent, SIGKILL);
		_exit(0);
	}
	assert_int_equal(agent_exec_run(f->link, &spec, &r, err, sizeof(err)), -EPIPE);
	assert_string_equal(err, "agent link lost");
	assert_false(agent_link_alive(f->link));
	assert_int_equal(agent_link_ping(f->link, 1000), -EPIPE);
	assert_int_equal(agent_chan_open(f->link, AGENT_TCP, "1", 1, &got_ops, NULL), 0);
	agent_link_destroy(f->link);
	f->link = NULL;
	waitpid(agent, NULL, 0);
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
	free(f);
	*state = NULL;
}

static int teardown_lost(void **state)
{
	(void)state;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_parse_and_resync),
		cmocka_unit_test(test_exec_short_exit),
		cmocka_unit_test_setup_teardown(test_ping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_basics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_timeout_kills_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_signal_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_pty, setup, teardown),
		cmocka_unit_test(test_winsize_parse),
		cmocka_unit_test_setup_teardown(test_tcp_channel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_egress_listener_relay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_lost, setup, teardown_lost),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
