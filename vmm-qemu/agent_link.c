/* vmm-qemu/agent_link.c: see agent_link.h. One mutex guards the channel
 * table and the outgoing bytes; the thread drops it around callbacks. What
 * the guest may send and when is agent_frame.c's to decide; this file
 * moves the bytes and acts on its verdicts. */
#include "vmm-qemu/agent_link.h"

#include "common/fsutil.h"
#include "common/timedwait.h"
#include "common/unixsock.h"
#include "vmm-qemu/agent_frame.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (64 * 1024)
#define OUT_HIGH (2 * 1024 * 1024) /* relays stop reading while more is queued */
/* Bytes for the guest not yet written to its socket. Above LINK_OUT_HIGH
 * the link stops reading the guest (whatever it sends may need an answer:
 * a guest that does not read must not make us queue), and senders are told
 * AGENT_SEND_FULL; above LINK_OUT_MAX they are refused. DATA gets there
 * only with credit, so only many channels' full windows come near it. */
#define LINK_OUT_HIGH (4 * 1024 * 1024)
#define LINK_OUT_MAX (64 * 1024 * 1024)
/* A channel's frames waiting for the guest's credit: a send that finds
 * AGENT_SEND_HIGH queued is refused, writable() comes below SEND_LOW. */
#define SEND_LOW (AGENT_SEND_HIGH / 4)
#define CTL_MAX (64 * 1024) /* EOF and SIGNAL frames queued behind DATA */
#define MAX_POLL 256

/* Bytes with a read offset. */
struct q {
	unsigned char *data;
	size_t off, len, cap;
};

struct pending { /* a frame waiting for the window (or behind DATA that does) */
	struct pending *next;
	uint8_t type, flags;
	size_t len;
	unsigned char data[];
};

struct chan {
	struct chan *next; /* agent_link::chans */
	uint32_t id;
	const struct agent_chan_ops *ops;
	void *u;
	struct agent_chan_state st; /* what the guest may send, both windows */
	struct pending *pend, **pend_tail; /* owned, in order */
	size_t pend_bytes; /* DATA in pend */
	size_t queued; /* all of pend, headers included */
	size_t ctl_queued; /* the frames in pend that are not DATA */
	bool want_writable; /* a send was told FULL or refused: call writable() */
	bool want_close;
	char close_reason[128];
	/* a dial (agent_chan_dial): a socket connecting for the owner */
	int dial_fd; /* owned, -1 when none */
	int64_t dial_until_ms; /* fs_now_ms() */
	/* relay */
	int fd; /* owned, -1 when not a relay */
	struct q to_fd;
	size_t no_ack; /* bytes at the head of to_fd the owner acked already */
	bool fd_eof, guest_eof, fd_wr_done;
};

struct agent_link {
	atomic_int refs; /* agent_link_hold/release; the owner's destroy is one */
	int fd; /* owned */
	int wake[2]; /* owned */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu */
	bool stop, dead, ready;
	unsigned version; /* the agent's, from its RESET answer (agent_version_parse) */
	struct q out;
	struct agent_link_stats stats;
	struct chan *chans; /* owned */
	uint32_t next_id;
	uint64_t ping_sent, pong_seen;
	agent_accept_fn accept;
	void *accept_u;
	agent_violation_fn violation;
	void *violation_u;
	agent_down_fn down; /* told once, when the link is lost (not at the owner's end) */
	void *down_u;
	/* the link's thread only */
	struct agent_rx rx;
};

static struct {
	atomic_uint_fast64_t overruns, violations, dropped;
} totals;

static int q_put(struct q *q, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (q->off == q->len)
		q->off = q->len = 0;
	if (q->len + n > q->cap) {
		size_t live = q->len - q->off, cap = q->cap ? q->cap : 4096;
		unsigned char *d;

		if (live)
			memmove(q->data, q->data + q->off, live);
		q->off = 0;
		q->len = live;
		while (cap < live + n)
			cap *= 2;
		if (cap > q->cap) {
			if (!(d = realloc(q->data, cap)))
				return -ENOMEM;
			q->data = d;
			q->cap = cap;
		}
	}
	memcpy(q->data + q->len, p, n);
	q->len += n;
	return 0;
}

static size_t q_size(const struct q *q)
{
	return q->len - q->off;
}

static void q_free(struct q *q)
{
	free(q->data);
	memset(q, 0, sizeof(*q));
}

static void wake(struct agent_link *l)
{
	if (write(l->wake[1], "w", 1) < 0) {
		/* full: a wake-up is pending already */
	}
}

/* Under mu: one frame into out. */
static void put_frame(struct agent_link *l, uint32_t chan, uint8_t type, uint8_t flags,
		      const void *p, size_t n)
{
	unsigned char h[AGENT_HEADER];

	agent_header_put(h, chan, type, flags, (uint32_t)n);
	if (q_put(&l->out, h, sizeof h) || q_put(&l->out, p, n))
		l->dead = true; /* out of memory: give the link up */
}

static struct chan *find(struct agent_link *l, uint32_t id)
{
	for (struct chan *c = l->chans; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/* Under mu: moves pending frames into out while the guest's window
 * allows (never past it: a part that does not fit is split). */
static void flush_pending(struct agent_link *l, struct chan *c)
{
	struct pending *p;

	while ((p = c->pend)) {
		size_t n = p->len;

		if (p->type == AGENT_DATA) {
			if (c->st.tx_credit <= 0)
				break;
			if ((int64_t)n > c->st.tx_credit)
				n = (size_t)c->st.tx_credit;
		}
		put_frame(l, c->id, p->type, n < p->len ? p->flags | AGENT_FLAG_MORE : p->flags,
			  p->data, n);
		c->queued -= n;
		if (p->type == AGENT_DATA) {
			agent_chan_sent(&c->st, n);
			c->pend_bytes -= n;
		} else {
			c->ctl_queued -= AGENT_HEADER + n;
		}
		if (n < p->len) { /* the rest waits for more credit */
			memmove(p->data, p->data + n, p->len - n);
			p->len -= n;
			break;
		}
		c->queued -= AGENT_HEADER;
		if (!(c->pend = p->next))
			c->pend_tail = &c->pend;
		free(p);
	}
}

static void chan_free(struct chan *c)
{
	while (c->pend) {
		struct pending *p = c->pend;

		c->pend = p->next;
		free(p);
	}
	if (c->fd >= 0)
		close(c->fd);
	if (c->dial_fd >= 0)
		close(c->dial_fd);
	q_free(&c->to_fd);
	free(c);
}

/* Under mu: unlinks c. */
static void unlink_chan(struct agent_link *l, struct chan *c)
{
	for (struct chan **pp = &l->chans; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

/* Called with mu held; returns with it held. Unlinks c, runs closed
 * without the lock, frees. */
static void finish(struct agent_link *l, struct chan *c, const char *reason)
{
	unlink_chan(l, c);
	pthread_mutex_unlock(&l->mu);
	if (c->ops && c->ops->closed)
		c->ops->closed(c->u, reason, c->st.bytes_in, c->st.bytes_out);
	chan_free(c);
	pthread_mutex_lock(&l->mu);
}

static struct chan *chan_add(struct agent_link *l, uint32_t id, enum agent_chan_kind kind,
			     const struct agent_chan_ops *ops, void *u)
{
	struct chan *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->id = id;
	c->ops = ops;
	c->u = u;
	agent_chan_state_init(&c->st, kind, l->version);
	c->pend_tail = &c->pend;
	c->fd = c->dial_fd = -1;
	c->next = l->chans;
	l->chans = c;
	return c;
}

/* ---- frames from the agent (link thread, mu held) ---- */

/* Returns n bytes of the guest's credit (never more than it used). */
static void ack_locked(struct agent_link *l, struct chan *c, size_t n)
{
	unsigned char p[4];
	int64_t used = c->st.rx_max - c->st.rx_room;

	if ((int64_t)n > used)
		n = (size_t)used;
	if (!n)
		return;
	agent_chan_returned(&c->st, n);
	agent_put32(p, (uint32_t)n);
	put_frame(l, c->id, AGENT_WINDOW_UPDATE, 0, p, 4);
}

/* Counts a broken rule and tells the owner (the first few, then at
 * powers of two: a guest that keeps at it must not fill its log). */
static void count(struct agent_link *l, enum agent_verdict v, uint32_t chan, const char *why)
{
	uint64_t n = v == AGENT_OVERRUN ? ++l->stats.overruns : ++l->stats.violations;

	atomic_fetch_add(v == AGENT_OVERRUN ? &totals.overruns : &totals.violations, 1);
	if (l->violation && (n <= 8 || !(n & (n - 1))))
		l->violation(l->violation_u, chan, why, v == AGENT_OVERRUN, n);
}

/* The guest broke the rules on c: it loses the channel, both ways. */
static void give_up(struct agent_link *l, struct chan *c, enum agent_verdict v, const char *why)
{
	char reason[128];

	count(l, v, c->id, why);
	snprintf(reason, sizeof(reason), "protocol violation: %s", why);
	put_frame(l, c->id, AGENT_CLOSE, 0, reason, strlen(reason));
	finish(l, c, reason);
}

/* Frames for the link itself: RESET's answer, PONG, ACCEPT. True when
 * h was one of them. */
static bool on_link_frame(struct agent_link *l, const struct agent_header *h,
			  const unsigned char *p, const char *text)
{
	if (h->type == AGENT_RESET) {
		if (!l->ready) /* a later answer changes nothing: channels are open */
			l->version = agent_version_parse(p, h->len);
		l->ready = true;
		pthread_cond_broadcast(&l->cv);
		return true;
	}
	if (h->type == AGENT_PONG) {
		if (h->len == 8) {
			uint64_t seq = agent_get32(p) | (uint64_t)agent_get32(p + 4) << 32;

			if (seq > l->pong_seen && seq <= l->ping_sent)
				l->pong_seen = seq;
			pthread_cond_broadcast(&l->cv);
		}
		return true;
	}
	if (h->type == AGENT_ACCEPT) {
		agent_accept_fn fn = l->accept;
		void *au = l->accept_u;

		bool bad = !(h->chan & 1) || find(l, h->chan);

		if (bad || !fn || !chan_add(l, h->chan, AGENT_CHAN_ACCEPTED, NULL, NULL)) {
			if (bad)
				count(l, AGENT_VIOLATION, h->chan,
				      "ACCEPT with a host id or one in use");
			put_frame(l, h->chan, AGENT_CLOSE, 0, "refused", 7);
			return true;
		}
		pthread_mutex_unlock(&l->mu);
		fn(au, l, h->chan, text);
		pthread_mutex_lock(&l->mu);
		return true;
	}
	return false;
}

static void on_frame(struct agent_link *l, const struct agent_header *h, const unsigned char *p)
{
	char text[256];
	size_t tn = h->len < sizeof(text) - 1 ? h->len : sizeof(text) - 1;
	struct chan *c;
	enum agent_verdict v;
	const char *why;

	memcpy(text, p, tn);
	text[tn] = '\0';
	if (!l->ready && h->type != AGENT_RESET)
		return; /* before our RESET was answered: left over from earlier */
	if (on_link_frame(l, h, p, text))
		return;
	if (!(c = find(l, h->chan)))
		return; /* gone: the guest's frames crossed our CLOSE */
	v = agent_chan_rx(&c->st, h, p, &why);
	if (v == AGENT_OVERRUN || v == AGENT_VIOLATION) {
		give_up(l, c, v, why);
		return;
	}
	if (v == AGENT_IGNORE)
		return;
	switch (h->type) {
	case AGENT_OPENED:
		if (c->ops && c->ops->opened) {
			pthread_mutex_unlock(&l->mu);
			c->ops->opened(c->u, text);
			pthread_mutex_lock(&l->mu);
		}
		break;
	case AGENT_DATA:
		if (c->fd >= 0) {
			if (q_put(&c->to_fd, p, h->len))
				l->dead = true;
		} else if (c->ops && c->ops->data) {
			pthread_mutex_unlock(&l->mu);
			c->ops->data(c->u, h->flags, p, h->len);
			pthread_mutex_lock(&l->mu);
		} else {
			ack_locked(l, c, h->len); /* nobody wants it */
		}
		break;
	case AGENT_EOF:
		if (c->fd >= 0) {
			c->guest_eof = true;
		} else if (c->ops && c->ops->eof) {
			pthread_mutex_unlock(&l->mu);
			c->ops->eof(c->u, h->flags & AGENT_STREAM_MASK);
			pthread_mutex_lock(&l->mu);
		}
		break;
	case AGENT_EXIT:
		if (c->ops && c->ops->exit) {
			pthread_mutex_unlock(&l->mu);
			c->ops->exit(c->u, text);
			pthread_mutex_lock(&l->mu);
		}
		if ((c = find(l, h->chan)))
			finish(l, c, "");
		break;
	case AGENT_WINDOW_UPDATE:
		flush_pending(l, c);
		break;
	case AGENT_CLOSE:
		finish(l, c, text);
		break;
	default:
		break;
	}
}

/* ---- the thread ---- */

static void read_link(struct agent_link *l)
{
	unsigned char buf[READ_CHUNK];
	ssize_t n = read(l->fd, buf, sizeof buf);
	struct agent_header h;
	const unsigned char *payload;
	uint64_t dropped = l->rx.dropped;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	pthread_mutex_lock(&l->mu);
	if (n <= 0 || agent_rx_feed(&l->rx, buf, (size_t)n)) {
		l->dead = true;
		pthread_mutex_unlock(&l->mu);
		return;
	}
	/* Only this thread feeds rx: a payload stays put while callbacks run
	 * without the lock. */
	while (!l->dead && agent_rx_next(&l->rx, &h, &payload))
		on_frame(l, &h, payload);
	l->stats.frames = l->rx.frames;
	l->stats.dropped_bytes = l->rx.dropped;
	atomic_fetch_add(&totals.dropped, l->rx.dropped - dropped);
	pthread_mutex_unlock(&l->mu);
}

static void write_link(struct agent_link *l)
{
	ssize_t n;

	pthread_mutex_lock(&l->mu);
	n = send(l->fd, l->out.data + l->out.off, q_size(&l->out), MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n > 0)
		l->out.off += (size_t)n;
	else if (n < 0 && errno != EAGAIN && errno != EINTR)
		l->dead = true;
	pthread_mutex_unlock(&l->mu);
}

/* Under mu: a relay's fd is readable. */
static void relay_read(struct agent_link *l, struct chan *c)
{
	unsigned char buf[READ_CHUNK];
	size_t want = c->st.tx_credit <= 0		      ? 0
		      : c->st.tx_credit < (int64_t)sizeof buf ? (size_t)c->st.tx_credit
							      : sizeof buf;
	ssize_t n;

	pthread_mutex_unlock(&l->mu);
	n = want ? read(c->fd, buf, want) : -1;
	pthread_mutex_lock(&l->mu);
	if (!want || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	if (n < 0) {
		put_frame(l, c->id, AGENT_CLOSE, 0, "upstream error", 14);
		finish(l, c, "upstream error");
		return;
	}
	if (n == 0) {
		c->fd_eof = true;
		put_frame(l, c->id, AGENT_EOF, 0, NULL, 0);
		shutdown(c->fd, SHUT_RD);
		return;
	}
	put_frame(l, c->id, AGENT_DATA, 0, buf, (size_t)n);
	agent_chan_sent(&c->st, (size_t)n);
}

/* Under mu: a relay's fd is writable. */
static void relay_write(struct agent_link *l, struct chan *c)
{
	ssize_t n = send(c->fd, c->to_fd.data + c->to_fd.off, q_size(&c->to_fd),
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		put_frame(l, c->id, AGENT_CLOSE, 0, "upstream error", 14);
		finish(l, c, "upstream error");
		return;
	}
	c->to_fd.off += (size_t)n;
	{
		size_t skip = c->no_ack < (size_t)n ? c->no_ack : (size_t)n;

		c->no_ack -= skip;
		if ((size_t)n > skip)
			ack_locked(l, c, (size_t)n - skip);
	}
}

/* Under mu: closes what was asked, ends relays done both ways. */
static void housekeeping(struct agent_link *l)
{
	for (bool again = true; again;) {
		again = false;
		for (struct chan *c = l->chans; c; c = c->next) {
			if (c->want_close) {
				put_frame(l, c->id, AGENT_CLOSE, 0, c->close_reason,
					  strlen(c->close_reason));
				finish(l, c, c->close_reason[0] ? c->close_reason : "closed");
				again = true;
				break;
			}
			if (c->fd >= 0 && c->guest_eof && !c->fd_wr_done && !q_size(&c->to_fd)) {
				shutdown(c->fd, SHUT_WR);
				c->fd_wr_done = true;
			}
			if (c->fd >= 0 && c->fd_eof && c->fd_wr_done && !c->pend) {
				put_frame(l, c->id, AGENT_CLOSE, 0, NULL, 0);
				finish(l, c, "");
				again = true;
				break;
			}
			if (c->want_writable && c->queued < SEND_LOW &&
			    q_size(&l->out) < LINK_OUT_HIGH / 2) {
				c->want_writable = false;
				if (c->ops && c->ops->writable) {
					pthread_mutex_unlock(&l->mu);
					c->ops->writable(c->u);
					pthread_mutex_lock(&l->mu);
					again = true; /* the table may have changed */
					break;
				}
			}
		}
	}
}

/* Under mu: a dial's end (its socket writable or in error: revents; or
 * its time up: 0). The socket goes back to the owner, connected or not. */
static void dial_end(struct agent_link *l, struct chan *c, short revents)
{
	int fd = c->dial_fd, err = 0;
	socklen_t sl = sizeof(err);

	c->dial_fd = -1;
	if (!revents)
		err = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0)
		err = errno;
	else if (!err && !(revents & POLLOUT))
		err = ECONNREFUSED; /* hung up without an error said */
	if (err) {
		close(fd);
		fd = -1;
	}
	if (c->ops && c->ops->dialed) {
		pthread_mutex_unlock(&l->mu);
		c->ops->dialed(c->u, fd, -err);
		pthread_mutex_lock(&l->mu);
	} else if (fd >= 0) {
		close(fd);
	}
}

/* Under mu: the dials whose time is up end; returns the poll timeout until
 * the next one's (at most 1000 ms). */
static int dials_due(struct agent_link *l)
{
	int64_t now = fs_now_ms(), next = now + 1000;

	for (bool again = true; again;) {
		again = false;
		for (struct chan *c = l->chans; c; c = c->next) {
			if (c->dial_fd < 0)
				continue;
			if (c->dial_until_ms <= now) {
				dial_end(l, c, 0);
				again = true; /* the table may have changed */
				break;
			}
			if (c->dial_until_ms < next)
				next = c->dial_until_ms;
		}
	}
	return (int)(next - now);
}

static void *link_thread(void *arg)
{
	struct agent_link *l = arg;
	struct pollfd pfd[MAX_POLL];
	uint32_t ids[MAX_POLL];
	bool dial[MAX_POLL];

	pthread_mutex_lock(&l->mu);
	while (!l->stop && !l->dead) {
		int n = 0, timeout;

		housekeeping(l);
		timeout = dials_due(l);
		/* A guest that does not read what we owe it is not read either. */
		pfd[n++] = (struct pollfd){ l->fd,
					    (short)((q_size(&l->out) < LINK_OUT_HIGH ? POLLIN : 0) |
						    (q_size(&l->out) ? POLLOUT : 0)),
					    0 };
		pfd[n++] = (struct pollfd){ l->wake[0], POLLIN, 0 };
		for (struct chan *c = l->chans; c && n < MAX_POLL; c = c->next) {
			short ev = 0;

			if (c->dial_fd >= 0) {
				ids[n] = c->id;
				dial[n] = true;
				pfd[n++] = (struct pollfd){ c->dial_fd, POLLOUT, 0 };
				if (n == MAX_POLL)
					break;
			}
			if (c->fd < 0)
				continue;
			if (!c->fd_eof && c->st.tx_credit > 0 && q_size(&l->out) < OUT_HIGH)
				ev |= POLLIN;
			if (q_size(&c->to_fd))
				ev |= POLLOUT;
			if (!ev)
				continue;
			ids[n] = c->id;
			dial[n] = false;
			pfd[n++] = (struct pollfd){ c->fd, ev, 0 };
		}
		pthread_mutex_unlock(&l->mu);
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR) {
			pthread_mutex_lock(&l->mu);
			l->dead = true;
			break;
		}
		if (pfd[1].revents) {
			char b[64];

			while (read(l->wake[0], b, sizeof b) > 0) {
			}
		}
		if (pfd[0].revents & POLLOUT)
			write_link(l);
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))
			read_link(l);
		pthread_mutex_lock(&l->mu);
		for (int i = 2; i < n && !l->dead; i++) {
			struct chan *c = find(l, ids[i]);

			if (c && dial[i] && c->dial_fd >= 0 && pfd[i].revents) {
				dial_end(l, c, pfd[i].revents);
				continue;
			}
			if (!c || dial[i] || c->fd < 0 || !pfd[i].revents)
				continue;
			if (pfd[i].revents & POLLOUT)
				relay_write(l, c);
			if ((c = find(l, ids[i])) &&
			    (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) && !c->fd_eof)
				relay_read(l, c);
		}
	}
	if (l->dead)
		while (l->chans)
			finish(l, l->chans, "agent link lost");
	if (l->dead && l->down)
		l->down(l->down_u);
	l->down = NULL;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* ---- the API ---- */

int agent_link_open_fd(int fd, int timeout_ms, struct agent_link **out, char *err, size_t errlen)
{
	struct agent_link *l = calloc(1, sizeof(*l));
	struct timespec until;
	int rc = 0;

	*out = NULL;
	if (!l) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	atomic_init(&l->refs, 1);
	l->fd = fd;
	l->next_id = 2;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	pthread_mutex_init(&l->mu, NULL);
	timedwait_cond_init(&l->cv);
	if (pipe2(l->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		l->wake[0] = l->wake[1] = -1;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		agent_link_destroy(l);
		return -EMFILE;
	}
	/* Whatever the agent still had from an earlier host is cut off by this. */
	put_frame(l, 0, AGENT_RESET, 0, NULL, 0);
	if ((rc = pthread_create(&l->thread, NULL, link_thread, l))) {
		snprintf(err, errlen, "pthread_create: %s", strerror(rc));
		agent_link_destroy(l);
		return -rc;
	}
	l->started = true;
	until = timedwait_deadline(timeout_ms);
	pthread_mutex_lock(&l->mu);
	while (!l->ready && !l->dead && rc == 0)
		rc = pthread_cond_timedwait(&l->cv, &l->mu, &until);
	rc = l->ready ? 0 : l->dead ? -EPIPE : -ETIMEDOUT;
	pthread_mutex_unlock(&l->mu);
	if (rc < 0) {
		snprintf(err, errlen,
			 rc == -EPIPE ? "the agent's connection closed"
				      : "no answer from vitrine-agent");
		agent_link_destroy(l);
		return rc;
	}
	*out = l;
	return 0;
}

unsigned agent_link_version(struct agent_link *l)
{
	unsigned v;

	pthread_mutex_lock(&l->mu);
	v = l->version;
	pthread_mutex_unlock(&l->mu);
	return v;
}

int agent_link_open(const char *path, int timeout_ms, struct agent_link **out, char *err,
		    size_t errlen)
{
	int fd = unixsock_connect(path, timeout_ms, err, errlen);

	*out = NULL;
	if (fd < 0)
		return fd;
	return agent_link_open_fd(fd, timeout_ms, out, err, errlen);
}

struct agent_link *agent_link_hold(struct agent_link *l)
{
	if (l)
		atomic_fetch_add(&l->refs, 1);
	return l;
}

void agent_link_release(struct agent_link *l)
{
	if (!l || atomic_fetch_sub(&l->refs, 1) != 1)
		return;
	if (l->wake[0] >= 0) {
		close(l->wake[0]);
		close(l->wake[1]);
	}
	q_free(&l->out);
	agent_rx_free(&l->rx);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

void agent_link_destroy(struct agent_link *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	if (l->started) {
		wake(l);
		pthread_join(l->thread, NULL);
		l->started = false;
	}
	pthread_mutex_lock(&l->mu);
	while (l->chans)
		finish(l, l->chans, "agent link closed");
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	pthread_mutex_unlock(&l->mu);
	agent_link_release(l);
}

bool agent_link_alive(struct agent_link *l)
{
	bool alive;

	pthread_mutex_lock(&l->mu);
	alive = !l->dead && !l->stop;
	pthread_mutex_unlock(&l->mu);
	return alive;
}

void agent_link_stats(struct agent_link *l, struct agent_link_stats *out)
{
	pthread_mutex_lock(&l->mu);
	*out = l->stats;
	pthread_mutex_unlock(&l->mu);
}

void agent_link_stats_total(struct agent_link_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->overruns = atomic_load(&totals.overruns);
	out->violations = atomic_load(&totals.violations);
	out->dropped_bytes = atomic_load(&totals.dropped);
}

void agent_link_on_violation(struct agent_link *l, agent_violation_fn fn, void *vu)
{
	pthread_mutex_lock(&l->mu);
	l->violation = fn;
	l->violation_u = vu;
	pthread_mutex_unlock(&l->mu);
}

void agent_link_on_down(struct agent_link *l, agent_down_fn fn, void *du)
{
	pthread_mutex_lock(&l->mu);
	if (l->dead && !l->stop) { /* lost already: its thread has ended or will not tell */
		fn(du);
		fn = NULL;
	}
	l->down = fn;
	l->down_u = du;
	pthread_mutex_unlock(&l->mu);
}

void agent_link_on_accept(struct agent_link *l, agent_accept_fn fn, void *au)
{
	pthread_mutex_lock(&l->mu);
	l->accept = fn;
	l->accept_u = au;
	pthread_mutex_unlock(&l->mu);
}

int agent_link_ping(struct agent_link *l, int timeout_ms)
{
	unsigned char p[8];
	struct timespec until;
	uint64_t seq;
	int rc = 0;

	until = timedwait_deadline(timeout_ms);
	pthread_mutex_lock(&l->mu);
	seq = ++l->ping_sent;
	agent_put32(p, (uint32_t)seq);
	agent_put32(p + 4, (uint32_t)(seq >> 32));
	put_frame(l, 0, AGENT_PING, 0, p, sizeof p);
	wake(l);
	while (l->pong_seen < seq && !l->dead && !l->stop && rc == 0)
		rc = pthread_cond_timedwait(&l->cv, &l->mu, &until);
	rc = l->pong_seen >= seq ? 0 : (l->dead || l->stop) ? -EPIPE : -ETIMEDOUT;
	pthread_mutex_unlock(&l->mu);
	return rc;
}

uint32_t agent_chan_open(struct agent_link *l, uint8_t type, const void *payload, size_t len,
			 const struct agent_chan_ops *ops, void *u)
{
	enum agent_chan_kind kind = type == AGENT_EXEC	? AGENT_CHAN_EXEC
				    : type == AGENT_TCP ? AGENT_CHAN_TCP
							: AGENT_CHAN_CDP;
	uint32_t id = 0;

	pthread_mutex_lock(&l->mu);
	/* After 2^31 channels the ids wrap: skip those still open. */
	for (int tries = 0; find(l, l->next_id) && tries < 1024; tries++)
		l->next_id = l->next_id + 2 ? l->next_id + 2 : 2;
	if (!l->dead && !l->stop && len <= AGENT_MAX_PAYLOAD && !find(l, l->next_id) &&
	    (type == AGENT_EXEC || type == AGENT_TCP || type == AGENT_CDP) &&
	    chan_add(l, l->next_id, kind, ops, u)) {
		id = l->next_id;
		l->next_id = l->next_id + 2 ? l->next_id + 2 : 2;
		put_frame(l, id, type, 0, payload, len);
	}
	pthread_mutex_unlock(&l->mu);
	if (id)
		wake(l);
	return id;
}

int agent_chan_bind(struct agent_link *l, uint32_t chan, const struct agent_chan_ops *ops, void *u)
{
	struct chan *c;
	int rc = -ENOENT;

	pthread_mutex_lock(&l->mu);
	if ((c = find(l, chan))) {
		c->ops = ops;
		c->u = u;
		rc = 0;
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* Under mu: appends one frame to c's queue. 0 or -ENOMEM. */
static int enqueue(struct chan *c, uint8_t type, uint8_t flags, const unsigned char *b, size_t n)
{
	struct pending *pe = malloc(sizeof(*pe) + (n ? n : 1));

	if (!pe)
		return -ENOMEM;
	pe->next = NULL;
	pe->type = type;
	pe->flags = flags;
	pe->len = n;
	if (n)
		memcpy(pe->data, b, n);
	*c->pend_tail = pe;
	c->pend_tail = &pe->next;
	c->queued += AGENT_HEADER + n;
	if (type == AGENT_DATA)
		c->pend_bytes += n;
	else
		c->ctl_queued += AGENT_HEADER + n;
	return 0;
}

int agent_chan_send(struct agent_link *l, uint32_t chan, uint8_t type, uint8_t flags, const void *p,
		    size_t n)
{
	const unsigned char *b = p;
	struct chan *c;
	int rc = 0;

	pthread_mutex_lock(&l->mu);
	if (!(c = find(l, chan)) || c->want_close) {
		rc = -ENOENT;
	} else if (type != AGENT_DATA && n > AGENT_MAX_PAYLOAD) {
		rc = -EINVAL;
	} else if (q_size(&l->out) >= LINK_OUT_MAX ||
		   (type == AGENT_DATA ? c->queued >= AGENT_SEND_HIGH : c->ctl_queued >= CTL_MAX)) {
		c->want_writable = true; /* the caller did not wait for writable() */
		rc = -ENOBUFS;
	} else if (type != AGENT_DATA && (!c->pend || type == AGENT_SIGNAL)) {
		put_frame(l, chan, type, flags, p, n); /* a signal never waits behind stdin */
	} else {
		do {
			size_t part = n > AGENT_MAX_PAYLOAD ? AGENT_MAX_PAYLOAD : n;

			if ((rc = enqueue(c, type,
					  (uint8_t)(flags | (type == AGENT_DATA && n > part
								     ? AGENT_FLAG_MORE
								     : 0)),
					  b, part)) < 0)
				break;
			b += part;
			n -= part;
		} while (n);
		flush_pending(l, c);
	}
	if (!rc && c && (c->queued >= AGENT_SEND_HIGH || q_size(&l->out) >= LINK_OUT_HIGH)) {
		c->want_writable = true;
		rc = AGENT_SEND_FULL;
	}
	pthread_mutex_unlock(&l->mu);
	if (rc >= 0)
		wake(l);
	return rc;
}

size_t agent_chan_pending(struct agent_link *l, uint32_t chan)
{
	struct chan *c;
	size_t n = 0;

	pthread_mutex_lock(&l->mu);
	if ((c = find(l, chan)))
		n = c->pend_bytes;
	pthread_mutex_unlock(&l->mu);
	return n;
}

void agent_chan_ack(struct agent_link *l, uint32_t chan, size_t n)
{
	struct chan *c;

	if (!n)
		return;
	pthread_mutex_lock(&l->mu);
	if ((c = find(l, chan)))
		ack_locked(l, c, n);
	pthread_mutex_unlock(&l->mu);
	wake(l);
}

int agent_chan_relay(struct agent_link *l, uint32_t chan, int fd, const void *to_guest,
		     size_t to_guest_len, const void *to_fd, size_t to_fd_len, size_t unacked)
{
	struct chan *c;
	int rc = 0;

	pthread_mutex_lock(&l->mu);
	if (!(c = find(l, chan)) || c->fd >= 0) {
		close(fd);
		rc = -ENOENT;
	} else {
		c->fd = fd;
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		if (q_put(&c->to_fd, to_fd, to_fd_len))
			c->want_close = true;
		c->no_ack = unacked < to_fd_len ? to_fd_len - unacked : 0;
		if (to_guest_len) {
			put_frame(l, chan, AGENT_DATA, 0, to_guest, to_guest_len);
			agent_chan_sent(&c->st, to_guest_len);
		}
	}
	pthread_mutex_unlock(&l->mu);
	wake(l);
	return rc;
}

int agent_chan_dial(struct agent_link *l, uint32_t chan, int fd, int timeout_ms)
{
	struct chan *c;
	int rc = 0;

	pthread_mutex_lock(&l->mu);
	if (!(c = find(l, chan)) || c->dial_fd >= 0 || c->fd >= 0) {
		close(fd);
		rc = -ENOENT;
	} else {
		c->dial_fd = fd;
		c->dial_until_ms = fs_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	}
	pthread_mutex_unlock(&l->mu);
	wake(l);
	return rc;
}

int agent_chan_relay_feed(struct agent_link *l, uint32_t chan, const void *p, size_t n)
{
	struct chan *c;
	int rc = -ENOENT;

	pthread_mutex_lock(&l->mu);
	if ((c = find(l, chan)) && c->fd >= 0)
		rc = q_put(&c->to_fd, p, n);
	pthread_mutex_unlock(&l->mu);
	wake(l);
	return rc;
}

void agent_chan_close(struct agent_link *l, uint32_t chan, const char *reason)
{
	struct chan *c;

	pthread_mutex_lock(&l->mu);
	if ((c = find(l, chan)) && !c->want_close) {
		c->want_close = true;
		snprintf(c->close_reason, sizeof(c->close_reason), "%s", reason ? reason : "");
	}
	pthread_mutex_unlock(&l->mu);
	wake(l);
}
