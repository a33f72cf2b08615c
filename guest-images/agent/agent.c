/* guest-images/agent/agent.c: vitrine-agent, the guest's side of the
 * gateway's fast path (docs/agent.md): commands with streamed output, a
 * relay to the browser's DevTools WebSocket, TCP to guest-local ports, and
 * the guest's only way out, an HTTP proxy listener on 127.0.0.1:3128 whose
 * connections go to the gateway, which applies the session's egress rules.
 * All of it multiplexed on one virtio-serial port (common/agent_proto.h). One
 * thread, one poll loop; runs as root, respawned by init.
 *
 *   vitrine-agent [--fd N] [--proxy-port P]
 *   vitrine-agent watch [--recursive] DIR
 *   vitrine-agent xwait MASK [TIMEOUT_MS]
 *
 * --fd N speaks on an inherited socket instead of the virtio port and exits
 * when it closes (tests run the agent on the host that way). `watch` is
 * the filesystem watcher the gateway runs as a command for E2B's
 * WatchDir (agent_watch.c). */
#define _GNU_SOURCE
#include "agent.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (64 * 1024)
#define HOSTQ_HIGH (2 * 1024 * 1024) /* stop reading sources above this */
#define EXIT_GRACE_MS 100 /* output still wanted after the command exited */
#define MAX_POLL 512

static struct {
	int port; /* the link: virtio port or --fd socket */
	bool test_fd; /* --fd: exit when the link closes */
	bool up; /* a host sent RESET since the link last went down */
	struct bq in, hostq;
	int listener; /* egress proxy listener, -1 when none */
	int proxy_port;
	uint32_t next_odd;
	struct chan *chans;
	int sigpipe[2];
} ag = { .port = -1, .listener = -1, .proxy_port = 3128, .next_odd = 1 };

/* ---- byte queues ---- */

int bq_put(struct bq *q, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (q->off && q->off == q->len)
		q->off = q->len = 0;
	if (q->len + n > q->cap) {
		size_t live = q->len - q->off, cap = q->cap ? q->cap : 4096;
		unsigned char *d;

		if (q->off) {
			memmove(q->data, q->data + q->off, live);
			q->off = 0;
			q->len = live;
		}
		while (cap < live + n)
			cap *= 2;
		if (cap != q->cap) {
			if (!(d = realloc(q->data, cap)))
				return -1;
			q->data = d;
			q->cap = cap;
		}
	}
	memcpy(q->data + q->len, p, n);
	q->len += n;
	return 0;
}

size_t bq_size(const struct bq *q)
{
	return q->len - q->off;
}

void bq_consume(struct bq *q, size_t n)
{
	q->off += n;
	if (q->off >= q->len)
		q->off = q->len = 0;
}

void bq_free(struct bq *q)
{
	free(q->data);
	memset(q, 0, sizeof(*q));
}

int64_t agent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- frames to the host ---- */

void agent_send(uint32_t chan, uint8_t type, uint8_t flags, const void *p, size_t n)
{
	unsigned char h[AGENT_HEADER];

	if (!ag.up)
		return;
	agent_header_put(h, chan, type, flags, (uint32_t)n);
	if (bq_put(&ag.hostq, h, sizeof h) || bq_put(&ag.hostq, p, n)) {
		fprintf(stderr, "vitrine-agent: out of memory queueing a frame\n");
		exit(1);
	}
}

void agent_send_text(uint32_t chan, uint8_t type, const char *text)
{
	agent_send(chan, type, 0, text, strlen(text));
}

/* ---- channels ---- */

static struct chan *chan_find(uint32_t id)
{
	for (struct chan *c = ag.chans; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static struct chan *chan_new(uint32_t id, enum chan_kind kind)
{
	struct chan *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->id = id;
	c->kind = kind;
	c->sink = c->src[0] = c->src[1] = -1;
	c->credit = AGENT_WINDOW;
	c->next = ag.chans;
	ag.chans = c;
	return c;
}

/* Signals a command's process group; just after the fork the child may
 * not have made its group yet (setsid), so then the child itself. */
static void signal_group(pid_t pid, int sig)
{
	if (kill(-pid, sig) < 0 && errno == ESRCH)
		kill(pid, sig);
}

/* True while c is still a channel (a pointer from this round of poll). */
static bool chan_live(const struct chan *c)
{
	for (struct chan *x = ag.chans; x; x = x->next)
		if (x == c)
			return true;
	return false;
}

/* Unlinks and frees c; a command still running has its group killed when
 * kill_group (the host gave up on it). */
static void chan_destroy(struct chan *c, bool kill_group)
{
	struct chan **pp = &ag.chans;

	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
	if (c->kind == CHAN_EXEC && c->pid > 0 && kill_group)
		signal_group(c->pid, SIGKILL);
	if (c->sink >= 0 && c->sink != c->src[0])
		close(c->sink);
	for (int i = 0; i < 2; i++)
		if (c->src[i] >= 0)
			close(c->src[i]);
	bq_free(&c->to_sink);
	bq_free(&c->ws_in);
	bq_free(&c->msg);
	free(c);
}

/* Ends c with CLOSE (reason for the host's log). */
static void chan_fail(struct chan *c, const char *reason)
{
	agent_send_text(c->id, AGENT_CLOSE, reason);
	chan_destroy(c, true);
}

/* Returns credit for what the sink took, once nothing is left queued. */
static void maybe_ack(struct chan *c)
{
	unsigned char p[4];

	if (c->owed && !bq_size(&c->to_sink)) {
		agent_put32(p, c->owed);
		agent_send(c->id, AGENT_WINDOW_UPDATE, 0, p, 4);
		c->owed = 0;
	}
}

/* ---- what the host asks ---- */

static int local_connect(int port, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		snprintf(err, errlen, "connect 127.0.0.1:%d: %s", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

static int parse_port(const unsigned char *p, size_t n)
{
	char b[8];
	long v;

	if (!n || n >= sizeof b)
		return -1;
	memcpy(b, p, n);
	b[n] = '\0';
	v = strtol(b, NULL, 10);
	return v > 0 && v < 65536 ? (int)v : -1;
}

static void open_chan(const struct agent_header *h, const unsigned char *p)
{
	char err[256] = "", ok[32] = "";
	struct chan *c;
	int port, fd = -1;

	if (chan_find(h->chan) || (h->chan & 1)) {
		agent_send_text(h->chan, AGENT_CLOSE, "channel id in use or not the host's");
		return;
	}
	if (!(c = chan_new(h->chan, h->type == AGENT_EXEC  ? CHAN_EXEC
				    : h->type == AGENT_TCP ? CHAN_TCP
							   : CHAN_CDP))) {
		agent_send_text(h->chan, AGENT_CLOSE, "out of memory");
		return;
	}
	if (h->type == AGENT_EXEC) {
		if (agent_exec_start(c, (const char *)p, h->len, err, sizeof err) < 0) {
			chan_fail(c, err);
			return;
		}
		snprintf(ok, sizeof ok, "pid=%d", (int)c->pid);
	} else {
		if ((port = parse_port(p, h->len)) < 0) {
			chan_fail(c, "bad port");
			return;
		}
		fd = h->type == AGENT_TCP ? local_connect(port, err, sizeof err)
					  : agent_ws_connect(port, err, sizeof err);
		if (fd < 0) {
			chan_fail(c, err);
			return;
		}
		fcntl(fd, F_SETFL, O_NONBLOCK);
		c->sink = c->src[0] = fd;
	}
	agent_send_text(c->id, AGENT_OPENED, ok);
}

static void deliver_cdp(struct chan *c, const struct agent_header *h, const unsigned char *p)
{
	if (bq_put(&c->msg, p, h->len)) {
		chan_fail(c, "out of memory");
		return;
	}
	if (h->flags & AGENT_FLAG_MORE)
		return;
	if (agent_ws_frame(&c->to_sink, c->msg.data ? c->msg.data + c->msg.off : p,
			   bq_size(&c->msg))) {
		chan_fail(c, "out of memory");
		return;
	}
	bq_free(&c->msg);
}

static bool cdp_pump(struct chan *c);

static void reset_all(void)
{
	while (ag.chans)
		chan_destroy(ag.chans, true);
	bq_free(&ag.hostq);
}

static void dispatch(const struct agent_header *h, const unsigned char *p)
{
	struct chan *c;

	if (h->type == AGENT_RESET) {
		reset_all();
		ag.up = true;
		agent_send_text(0, AGENT_RESET, AGENT_VERSION);
		return;
	}
	if (!ag.up)
		return; /* left over from an earlier host */
	if (h->type == AGENT_PING) {
		agent_send(0, AGENT_PONG, 0, p, h->len);
		return;
	}
	if (h->type == AGENT_EXEC || h->type == AGENT_TCP || h->type == AGENT_CDP) {
		open_chan(h, p);
		return;
	}
	if (!(c = chan_find(h->chan)))
		return; /* already gone: its CLOSE or EXIT is on the way */
	switch (h->type) {
	case AGENT_DATA:
		c->owed += h->len;
		if (c->sink < 0 || c->sink_eof)
			break; /* nobody reads any more: drop, but return the credit */
		if (c->kind == CHAN_CDP)
			deliver_cdp(c, h, p);
		else if (bq_put(&c->to_sink, p, h->len))
			chan_fail(c, "out of memory");
		else
			return; /* acked once written */
		break;
	case AGENT_EOF:
		c->sink_eof = true;
		break;
	case AGENT_SIGNAL: {
		int sig = parse_port(p, h->len); /* a small positive number too */

		if (c->kind == CHAN_EXEC && c->pid > 0 && sig > 0 && sig < 65)
			signal_group(c->pid, sig);
		return;
	}
	case AGENT_RESIZE:
		if (c->kind == CHAN_EXEC)
			agent_exec_resize(c, p, h->len); /* a bad one changes nothing */
		return;
	case AGENT_WINDOW_UPDATE:
		if (h->len == 4)
			c->credit += agent_get32(p);
		if (c->kind == CHAN_CDP)
			cdp_pump(c); /* the rest of what the browser sent, if any waits */
		return;
	case AGENT_CLOSE:
		chan_destroy(c, true);
		return;
	default:
		return;
	}
	if ((c = chan_find(h->chan)))
		maybe_ack(c);
}

/* ---- the link ---- */

static void link_down(void)
{
	if (ag.test_fd)
		exit(0);
	reset_all();
	bq_free(&ag.in);
	ag.up = false;
}

static void link_read(void)
{
	unsigned char buf[READ_CHUNK];
	ssize_t n = read(ag.port, buf, sizeof buf);
	struct agent_header h;
	long fl;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		link_down();
		/* The port polls as hung up until a host connects: look again
		 * soon (a restored guest's first request waits this long). */
		nanosleep(&ts, NULL);
		return;
	}
	if (bq_put(&ag.in, buf, (size_t)n)) {
		link_down();
		return;
	}
	while (bq_size(&ag.in)) {
		const unsigned char *p = ag.in.data + ag.in.off;

		fl = agent_frame_parse(p, bq_size(&ag.in), &h);
		if (fl == 0)
			break;
		if (fl < 0) {
			bq_consume(&ag.in, agent_resync(p, bq_size(&ag.in)));
			continue;
		}
		dispatch(&h, p + AGENT_HEADER);
		bq_consume(&ag.in, (size_t)fl);
	}
}

static void link_write(void)
{
	ssize_t n = write(ag.port, ag.hostq.data + ag.hostq.off, bq_size(&ag.hostq));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		link_down();
		return;
	}
	bq_consume(&ag.hostq, (size_t)n);
}

/* The virtio port named AGENT_PORT_NAME, once the host has named it. */
static int open_port(void)
{
	for (;;) {
		DIR *d = opendir("/sys/class/virtio-ports");
		struct dirent *e;
		char path[512], name[128];
		int fd = -1;

		while (d && (e = readdir(d))) {
			FILE *f;

			snprintf(path, sizeof path, "/sys/class/virtio-ports/%s/name", e->d_name);
			if (!(f = fopen(path, "re")))
				continue;
			if (fgets(name, sizeof name, f) &&
			    !strncmp(name, AGENT_PORT_NAME, strlen(AGENT_PORT_NAME))) {
				snprintf(path, sizeof path, "/dev/%s", e->d_name);
				fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
			}
			fclose(f);
		}
		if (d)
			closedir(d);
		if (fd >= 0)
			return fd;
		usleep(100 * 1000);
	}
}

static void open_listener(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)ag.proxy_port) };
	int one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ag.listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	setsockopt(ag.listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(ag.listener, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    listen(ag.listener, 64) < 0) {
		fprintf(stderr, "vitrine-agent: egress listener on port %d: %s\n", ag.proxy_port,
			strerror(errno));
		close(ag.listener);
		ag.listener = -1;
	}
}

static void accept_one(void)
{
	int fd = accept4(ag.listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), one = 1;
	char what[32];
	struct chan *c;

	if (fd < 0)
		return;
	if (!ag.up || !(c = chan_new(ag.next_odd, CHAN_TCP))) {
		close(fd); /* no host: no way out */
		return;
	}
	ag.next_odd += 2;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->sink = c->src[0] = fd;
	snprintf(what, sizeof what, "port=%d", ag.proxy_port);
	agent_send_text(c->id, AGENT_ACCEPT, what);
}

/* ---- sources and sinks ---- */

/* Passes on what the browser sent, as DATA within the host's credit: a
 * message larger than the credit goes in parts as credit comes back
 * (WINDOW_UPDATE calls this again), and the browser's socket is not read
 * meanwhile. False when c was destroyed. */
static bool cdp_pump(struct chan *c)
{
	for (;;) {
		size_t max = c->credit <= 0			      ? 0
			     : c->credit < (int64_t)AGENT_MAX_PAYLOAD ? (size_t)c->credit
								      : AGENT_MAX_PAYLOAD;
		const unsigned char *p;
		size_t n;
		bool end;
		int rc = agent_ws_next(&c->ws, &c->ws_in, &c->to_sink, max, &p, &n, &end);

		if (rc == 0)
			return true;
		if (rc < 0 || rc > 1) {
			chan_fail(c, rc > 1 ? "the browser closed the connection"
					    : "bad WebSocket frame");
			return false;
		}
		agent_send(c->id, AGENT_DATA, end ? 0 : AGENT_FLAG_MORE, p, n);
		c->credit -= (int64_t)n;
	}
}

/* Reads what src i has; false when c was destroyed. */
static bool source_read(struct chan *c, int i)
{
	unsigned char buf[READ_CHUNK];
	size_t want = c->credit < (int64_t)sizeof buf ? (size_t)c->credit : sizeof buf;
	ssize_t n;

	if (c->credit <= 0)
		return true; /* no credit: the host has not caught up */
	/* DevTools bytes wait in ws_in for credit; anything else is read
	 * only as far as the credit goes. */
	n = read(c->src[i], buf, c->kind == CHAN_CDP ? sizeof buf : want);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		if (c->kind == CHAN_EXEC) {
			agent_send(c->id, AGENT_EOF, (uint8_t)i, NULL, 0);
			close(c->src[i]);
			c->src[i] = -1;
			return true;
		}
		if (n == 0 && c->kind == CHAN_TCP && !c->sink_eof) {
			/* half close: the host may still write */
			agent_send(c->id, AGENT_EOF, 0, NULL, 0);
			shutdown(c->src[0], SHUT_RD);
			c->src[0] = -1; /* sink keeps the fd */
			return true;
		}
		chan_fail(c, n == 0 ? "closed" : strerror(errno));
		return false;
	}
	if (c->kind != CHAN_CDP) {
		agent_send(c->id, AGENT_DATA, (uint8_t)i, buf, (size_t)n);
		c->credit -= n;
		return true;
	}
	if (bq_put(&c->ws_in, buf, (size_t)n)) {
		chan_fail(c, "out of memory");
		return false;
	}
	return cdp_pump(c);
}

static bool sink_write(struct chan *c)
{
	ssize_t n = write(c->sink, c->to_sink.data + c->to_sink.off, bq_size(&c->to_sink));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n < 0) {
		if (c->kind == CHAN_EXEC) { /* the command closed its stdin: drop the rest */
			bq_free(&c->to_sink);
			close(c->sink);
			c->sink = -1;
			maybe_ack(c);
			return true;
		}
		chan_fail(c, strerror(errno));
		return false;
	}
	bq_consume(&c->to_sink, (size_t)n);
	maybe_ack(c);
	return true;
}

/* Closes or half-closes a sink the host finished with. */
static void sink_finish(struct chan *c)
{
	if (!c->sink_eof || c->sink < 0 || bq_size(&c->to_sink))
		return;
	if (c->kind == CHAN_EXEC) {
		close(c->sink);
		c->sink = -1;
	} else if (c->kind == CHAN_TCP) {
		shutdown(c->sink, SHUT_WR);
		if (c->src[0] < 0) { /* both directions done */
			close(c->sink);
			c->sink = -1;
			agent_send_text(c->id, AGENT_CLOSE, "");
			chan_destroy(c, false);
		}
	}
}

static void reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (struct chan *c = ag.chans; c; c = c->next)
			if (c->kind == CHAN_EXEC && c->pid == pid) {
				c->reaped = true;
				c->status = status;
				c->reaped_ms = agent_now_ms();
			}
}

/* A command that exited ends once its output has (or the grace passed:
 * something it started in the background may hold the pipes open). */
static void exec_finish(struct chan *c, int64_t now)
{
	char what[32];

	if (!c->reaped ||
	    ((c->src[0] >= 0 || c->src[1] >= 0) && now - c->reaped_ms < EXIT_GRACE_MS))
		return;
	for (int i = 0; i < 2; i++) {
		if (c->src[i] < 0)
			continue;
		for (int k = 0; k < 16 && c->src[i] >= 0; k++) /* what is already there */
			if (!source_read(c, i))
				return;
		if (c->src[i] >= 0) {
			agent_send(c->id, AGENT_EOF, (uint8_t)i, NULL, 0);
			close(c->src[i]);
			c->src[i] = -1;
		}
	}
	if (WIFSIGNALED(c->status))
		snprintf(what, sizeof what, "signal=%d", WTERMSIG(c->status));
	else
		snprintf(what, sizeof what, "exit=%d", WEXITSTATUS(c->status));
	agent_send_text(c->id, AGENT_EXIT, what);
	chan_destroy(c, false);
}

static void on_sigchld(int sig)
{
	int e = errno;

	(void)sig;
	if (write(ag.sigpipe[1], "c", 1) < 0) {
		/* full: a wake-up is already pending */
	}
	errno = e;
}

int main(int argc, char **argv)
{
	struct pollfd pfd[MAX_POLL];
	struct chan *owner[MAX_POLL];
	int slot[MAX_POLL];

	if (argc > 1 && !strcmp(argv[1], "watch"))
		return agent_watch_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "xwait"))
		return agent_xwait_main(argc - 1, argv + 1);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fd") && i + 1 < argc) {
			ag.port = atoi(argv[++i]);
			ag.test_fd = true;
			fcntl(ag.port, F_SETFL, O_NONBLOCK);
		} else if (!strcmp(argv[i], "--proxy-port") && i + 1 < argc) {
			ag.proxy_port = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: vitrine-agent [--fd N] [--proxy-port P]\n"
					"       vitrine-agent watch [--recursive] DIR\n"
					"       vitrine-agent xwait MASK [TIMEOUT_MS]\n");
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(ag.sigpipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return 1;
	{
		struct sigaction sa = { .sa_handler = on_sigchld,
					.sa_flags = SA_RESTART | SA_NOCLDSTOP };

		sigaction(SIGCHLD, &sa, NULL);
	}
	if (ag.port < 0)
		ag.port = open_port();
	if (ag.proxy_port > 0)
		open_listener();
	for (;;) {
		int n = 0, timeout = -1;
		int64_t now = agent_now_ms();

		for (struct chan *c = ag.chans, *next; c; c = next) {
			next = c->next;
			if (c->kind == CHAN_EXEC)
				exec_finish(c, now);
			if (chan_live(c))
				sink_finish(c);
		}
		pfd[n] = (struct pollfd){ ag.port,
					  (short)(POLLIN | (bq_size(&ag.hostq) ? POLLOUT : 0)), 0 };
		owner[n++] = NULL;
		pfd[n] = (struct pollfd){ ag.sigpipe[0], POLLIN, 0 };
		owner[n++] = NULL;
		if (ag.listener >= 0) {
			pfd[n] = (struct pollfd){ ag.listener, POLLIN, 0 };
			owner[n++] = NULL;
		}
		for (struct chan *c = ag.chans; c && n + 3 < MAX_POLL; c = c->next) {
			if (c->reaped)
				timeout = EXIT_GRACE_MS / 2;
			if (c->sink >= 0 && bq_size(&c->to_sink)) {
				pfd[n] = (struct pollfd){ c->sink, POLLOUT, 0 };
				slot[n] = -1;
				owner[n++] = c;
			}
			/* Backpressure: a source is read only while the host has
			 * credit for it and (DevTools) what it sent before is gone. */
			for (int i = 0; i < 2; i++)
				if (c->src[i] >= 0 && c->credit > 0 &&
				    bq_size(&ag.hostq) < HOSTQ_HIGH &&
				    (c->kind != CHAN_CDP || bq_size(&c->ws_in) < READ_CHUNK)) {
					pfd[n] = (struct pollfd){ c->src[i], POLLIN, 0 };
					slot[n] = i;
					owner[n++] = c;
				}
		}
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
			return 1;
		if (pfd[1].revents) {
			char b[64];

			while (read(ag.sigpipe[0], b, sizeof b) > 0) {
			}
			reap();
		}
		if (pfd[0].revents & POLLOUT)
			link_write();
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			link_read();
			continue; /* channels may have gone: rebuild the poll set */
		}
		if (ag.listener >= 0 && pfd[2].revents)
			accept_one();
		for (int i = ag.listener >= 0 ? 3 : 2; i < n; i++) {
			struct chan *c = owner[i];

			if (!pfd[i].revents || !chan_live(c))
				continue;
			if (slot[i] < 0)
				sink_write(c);
			else
				source_read(c, slot[i]);
		}
	}
}
