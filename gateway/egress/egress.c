/* gateway/egress/egress.c: see egress.h. A connection reads the proxy request
 * head on the link's thread; the verdict on the name is immediate. The name
 * is resolved on a worker of the gateway's connect queue (getaddrinfo
 * blocks; one session's lookups hold a few workers at most), and each
 * address is dialled without a thread: a non-blocking connect that the
 * agent link's own poll watches (agent_chan_dial), so a guest's 128 dials
 * into black holes cost 128 sockets and no waiting worker. */
#include "gateway/egress/egress.h"

#include "common/bytebuf.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "common/work_queue.h"
#include "gateway/egress/egress_addr.h"
#include "gateway/egress/egress_log.h"
#include "gateway/egress/proxy_req.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CONNECT_TIMEOUT_MS 10000
/* Bytes after the request head held while the upstream connect is pending
 * (up to 8 addresses x the timeout): a program may send its request body at
 * once. Past this the guest's bytes are not acked, so its window stalls
 * the sender; what it still had in flight (at most the window) waits in
 * head too. */
#define PRECONNECT_MAX (64 * 1024)
/* ... and over all connections of every session: past this a guest's
 * pending connection that gets more is refused (503), so a crowd of them
 * holds at most this much, not a window each. */
#define PRECONNECT_TOTAL (16 * 1024 * 1024)

/* Over every session's egress: connections connecting or relaying
 * (each a descriptor once it dials; egress_open_total)
 * and the bytes connections hold before their upstream connects. */
static atomic_int open_total;
static atomic_size_t preconnect_total;
/* Connections ended over all sessions, by their log's reason, and bytes
 * relayed (egress_totals, for the metrics). */
static atomic_ullong ended[EGRESS_REASON_COUNT], bytes_up_total, bytes_down_total;

static void count_ended(enum egress_reason why, uint64_t up, uint64_t down)
{
	if ((unsigned)why < EGRESS_REASON_COUNT)
		atomic_fetch_add(&ended[why], 1);
	atomic_fetch_add(&bytes_up_total, up);
	atomic_fetch_add(&bytes_down_total, down);
}

void egress_totals(struct egress_totals *out)
{
	for (int i = 0; i < EGRESS_REASON_COUNT; i++)
		out->ended[i] = atomic_load(&ended[i]);
	out->bytes_up = atomic_load(&bytes_up_total);
	out->bytes_down = atomic_load(&bytes_down_total);
	out->open = atomic_load(&open_total);
}

struct egress {
	atomic_int refs;
	atomic_int connections; /* open now */
	struct egress_config cfg;
	struct work_queue *connects; /* the gateway's: where connections resolve and connect */
	pthread_mutex_t mu;
	struct egress_rules *rules; /* owned, under mu */
	struct egress_log *log; /* owned; has its own lock */
	atomic_ullong bytes_up, bytes_down; /* of its connections that ended */
};

enum conn_state { CONN_HEAD, CONN_CONNECTING, CONN_RELAYING, CONN_REFUSED };

#define MAX_ADDRS 8

/* One guest connection to the proxy. Held by the link (until closed) and
 * by its resolve job (until its done). */
struct conn {
	atomic_int refs;
	struct egress *e; /* held */
	struct agent_link *l; /* held */
	uint32_t chan;
	pthread_mutex_t mu;
	enum conn_state state;
	struct bytebuf head; /* the request so far, then bytes after it; freed once relayed */
	size_t unacked; /* at the end of head: guest bytes not returned to its window */
	size_t preconnect; /* bytes after the head while connecting, in preconnect_total */
	bool holds_place; /* counted in open_total */
	struct proxy_req req;
	uint64_t seq; /* its log entry */
	struct egress_log_entry entry;
	int64_t t0;
	/* The addresses to dial, in order (the resolve job writes them before
	 * the first dial; then under mu), and why the last one failed. */
	struct sockaddr_storage addrs[MAX_ADDRS];
	socklen_t lens[MAX_ADDRS];
	int n_addrs, next_addr;
	enum egress_reason why;
};

int egress_config_add_map(struct egress_config *cfg, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	struct egress_map *m;
	size_t n = eq ? (size_t)(eq - arg) : 0;

	if (cfg->n_maps >= EGRESS_MAX_MAPS) {
		snprintf(err, errlen, "at most %d --egress-map", EGRESS_MAX_MAPS);
		return -EINVAL;
	}
	m = &cfg->maps[cfg->n_maps];
	memset(m, 0, sizeof(*m));
	if (!eq || n == 0 || n >= sizeof(m->name)) {
		snprintf(err, errlen, "--egress-map wants NAME=ADDRESS, not '%s'", arg);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		m->name[i] = (char)((arg[i] >= 'A' && arg[i] <= 'Z') ? arg[i] + 32 : arg[i]);
	m->name[n] = '\0';
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)&m->addr;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&m->addr;

		if (inet_pton(AF_INET, eq + 1, &a4->sin_addr) == 1) {
			a4->sin_family = AF_INET;
			m->len = sizeof(*a4);
		} else if (inet_pton(AF_INET6, eq + 1, &a6->sin6_addr) == 1) {
			a6->sin6_family = AF_INET6;
			m->len = sizeof(*a6);
		} else {
			snprintf(err, errlen, "--egress-map %s: '%s' is not an IP address", m->name,
				 eq + 1);
			return -EINVAL;
		}
	}
	cfg->n_maps++;
	return 0;
}

struct egress *egress_create(const struct egress_config *cfg, struct work_queue *connects,
			     struct egress_rules *rules)
{
	struct egress *e = calloc(1, sizeof(*e));

	if (!e || !(e->log = egress_log_create(EGRESS_LOG_DEFAULT_CAPACITY))) {
		free(e);
		egress_rules_destroy(rules);
		return NULL;
	}
	atomic_init(&e->refs, 1);
	e->cfg = *cfg;
	e->connects = connects;
	if (!e->cfg.connect_timeout_ms)
		e->cfg.connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
	e->rules = rules;
	pthread_mutex_init(&e->mu, NULL);
	return e;
}

struct egress *egress_hold(struct egress *e)
{
	if (e)
		atomic_fetch_add(&e->refs, 1);
	return e;
}

void egress_release(struct egress *e)
{
	if (!e || atomic_fetch_sub(&e->refs, 1) != 1)
		return;
	egress_rules_destroy(e->rules);
	egress_log_destroy(e->log);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

void egress_set_rules(struct egress *e, struct egress_rules *rules)
{
	struct egress_rules *old;

	pthread_mutex_lock(&e->mu);
	old = e->rules;
	e->rules = rules;
	pthread_mutex_unlock(&e->mu);
	egress_rules_destroy(old);
}

json_t *egress_rules_now(struct egress *e)
{
	json_t *j;

	pthread_mutex_lock(&e->mu);
	j = egress_rules_json(e->rules);
	pthread_mutex_unlock(&e->mu);
	return j;
}

struct egress_rules *egress_rules_dup(const struct egress_rules *rules)
{
	json_t *j = rules ? egress_rules_json(rules) : NULL;
	struct egress_rules *r = NULL;
	char err[256];

	if (j && egress_rules_parse(j, &r, err, sizeof(err)) < 0)
		r = NULL;
	json_decref(j);
	return r;
}

struct egress_rules *egress_rules_copy(struct egress *e)
{
	struct egress_rules *r;

	pthread_mutex_lock(&e->mu);
	r = egress_rules_dup(e->rules);
	pthread_mutex_unlock(&e->mu);
	return r;
}

bool egress_rules_now_empty(struct egress *e)
{
	bool empty;

	pthread_mutex_lock(&e->mu);
	empty = egress_rules_empty(e->rules);
	pthread_mutex_unlock(&e->mu);
	return empty;
}

json_t *egress_log_get(struct egress *e, uint64_t after, size_t limit)
{
	return egress_log_json(e->log, after, limit);
}

/* ---- one connection ---- */

/* Gives c's place among the connecting and relaying back (its thread
 * and upstream descriptor are gone). */
static void release_place(struct conn *c)
{
	if (c->holds_place)
		atomic_fetch_sub(&open_total, 1);
	c->holds_place = false;
}

/* c's bytes held before its upstream connects are no longer held. */
static void drop_preconnect(struct conn *c)
{
	atomic_fetch_sub(&preconnect_total, c->preconnect);
	c->preconnect = 0;
}

static void conn_release(struct conn *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	atomic_fetch_sub(&c->e->connections, 1);
	release_place(c); /* a relay's descriptor is closed by now */
	drop_preconnect(c);
	agent_link_release(c->l);
	egress_release(c->e);
	bytebuf_free(&c->head);
	proxy_req_free(&c->req);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* Under c->mu: answers the guest with status, logs the refusal. */
static void refuse(struct conn *c, int status, enum egress_reason why)
{
	const char *reply = proxy_reply(status);

	c->state = CONN_REFUSED;
	drop_preconnect(c);
	bytebuf_free(&c->head); /* nothing of it goes anywhere now */
	c->entry.allowed = false;
	c->entry.reason = why;
	egress_log_update(c->e->log, c->seq, &c->entry);
	log_info("egress", "refused %s:%d (%s)", c->entry.host, c->entry.port,
		 egress_reason_name(why));
	agent_chan_send(c->l, c->chan, AGENT_DATA, 0, reply, strlen(reply));
	agent_chan_send(c->l, c->chan, AGENT_EOF, 0, NULL, 0);
}

/* True when addr is one of this host's own addresses (or loopback). */
static bool is_own_address(const struct sockaddr *sa)
{
	struct ifaddrs *ifs = NULL;
	bool own;

	if (getifaddrs(&ifs) < 0)
		ifs = NULL;
	own = egress_addr_is_own(sa, ifs);
	if (ifs)
		freeifaddrs(ifs);
	return own;
}

/* Starts a non-blocking connect to ss:port. The connecting socket, or
 * -errno when it failed at once. */
static int dial_start(struct sockaddr_storage *ss, socklen_t len, int port)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;

	if (fd < 0)
		return -errno;
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)ss, len) < 0 && errno != EINPROGRESS) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

/* The addresses host stands for: the operator's map first (mapped), a
 * literal, else DNS. Up to max; returns how many (0: none). */
static int resolve(const struct egress_config *cfg, const char *host, struct sockaddr_storage *out,
		   socklen_t *lens, int max, bool *mapped)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char lower[256];
	size_t n = strlen(host);
	int k = 0;

	*mapped = false;
	snprintf(lower, sizeof(lower), "%s", host);
	for (char *p = lower; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p + 32);
	if (n && lower[n - 1] == '.')
		lower[n - 1] = '\0';
	for (int i = 0; i < cfg->n_maps; i++)
		if (!strcmp(cfg->maps[i].name, lower)) {
			out[0] = cfg->maps[i].addr;
			lens[0] = cfg->maps[i].len;
			*mapped = true;
			return 1;
		}
	if (getaddrinfo(lower, NULL, &hints, &res) != 0)
		return 0;
	for (ai = res; ai && k < max; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(out[0]))
			continue;
		memcpy(&out[k], ai->ai_addr, ai->ai_addrlen);
		lens[k++] = ai->ai_addrlen;
	}
	freeaddrinfo(res);
	return k;
}

/* Under c->mu: the upstream is connected (fd): the reply, then the bytes
 * both ways through the link. */
static void relay(struct conn *c, int fd)
{
	const char *ok = proxy_reply(200);
	struct bytebuf to_fd = { 0 };
	size_t extra = c->head.len - c->req.head_len;

	if (!c->req.connect)
		bytebuf_append(&to_fd, c->req.forward, c->req.forward_len);
	bytebuf_append(&to_fd, c->head.data + c->req.head_len, extra);
	c->state = CONN_RELAYING;
	drop_preconnect(c);
	c->entry.allowed = true;
	c->entry.reason = EGRESS_REASON_ALLOWED;
	egress_log_update(c->e->log, c->seq, &c->entry);
	agent_chan_relay(c->l, c->chan, fd, c->req.connect ? ok : NULL,
			 c->req.connect ? strlen(ok) : 0, to_fd.data, to_fd.len, c->unacked);
	bytebuf_free(&to_fd);
	bytebuf_free(&c->head); /* the link has its copy */
}

/* Under c->mu, while c connects: dials its next address (the link watches
 * the connect and calls on_dialed), or, with none left, refuses with the
 * last reason. A connection refused meanwhile (too much pending) stops. */
static void dial_next(struct conn *c)
{
	if (c->state == CONN_REFUSED) {
		release_place(c);
		return;
	}
	while (c->next_addr < c->n_addrs) {
		int i = c->next_addr++, fd;

		egress_addr_format((struct sockaddr *)&c->addrs[i], c->entry.address,
				   sizeof(c->entry.address));
		fd = dial_start(&c->addrs[i], c->lens[i], c->req.port);
		if (fd >= 0) {
			/* -ENOENT: the channel is gone (its close lets go of c) */
			agent_chan_dial(c->l, c->chan, fd, c->e->cfg.connect_timeout_ms);
			return;
		}
		c->why = EGRESS_REASON_CONNECT_FAILED;
	}
	{
		enum egress_reason why = c->why;
		bool policy = why != EGRESS_REASON_CONNECT_FAILED && why != EGRESS_REASON_TIMEOUT &&
			      why != EGRESS_REASON_RESOLVE_FAILED;

		refuse(c, policy ? 403 : why == EGRESS_REASON_TIMEOUT ? 504 : 502, why);
		release_place(c);
	}
}

/* Link thread: a dial ended (connected: fd; else err). */
static void on_dialed(void *u, int fd, int err)
{
	struct conn *c = u;

	pthread_mutex_lock(&c->mu);
	if (fd >= 0 && c->state == CONN_CONNECTING) {
		relay(c, fd);
	} else {
		if (fd >= 0)
			close(fd); /* refused meanwhile */
		if (err < 0)
			c->why = err == -ETIMEDOUT ? EGRESS_REASON_TIMEOUT
						   : EGRESS_REASON_CONNECT_FAILED;
		dial_next(c);
	}
	pthread_mutex_unlock(&c->mu);
}

/* On a worker of the connect queue: the addresses c's host stands for,
 * those the rules let it reach (not the gateway's own port, not private
 * ones unless mapped or allowed), then the first dial. */
static void resolve_work(void *ud, void *ctx)
{
	struct conn *c = ud;
	const struct egress_config *cfg = &c->e->cfg;
	struct sockaddr_storage addrs[MAX_ADDRS];
	socklen_t lens[MAX_ADDRS];
	bool mapped;
	int n = resolve(cfg, c->req.host, addrs, lens, MAX_ADDRS, &mapped), k = 0;
	enum egress_reason why = n ? EGRESS_REASON_CONNECT_FAILED : EGRESS_REASON_RESOLVE_FAILED;

	(void)ctx;
	for (int i = 0; i < n; i++) {
		enum egress_addr_class cls = egress_addr_classify((struct sockaddr *)&addrs[i]);

		if (c->req.port == cfg->gateway_port &&
		    is_own_address((struct sockaddr *)&addrs[i])) {
			why = EGRESS_REASON_GATEWAY_PORT;
			continue;
		}
		if (cls != EGRESS_ADDR_PUBLIC && !mapped && !cfg->allow_private) {
			why = egress_reason_for_addr(cls);
			continue;
		}
		addrs[k] = addrs[i];
		lens[k++] = lens[i];
	}
	pthread_mutex_lock(&c->mu);
	memcpy(c->addrs, addrs, sizeof(addrs));
	memcpy(c->lens, lens, sizeof(lens));
	c->n_addrs = k;
	c->next_addr = 0;
	c->why = why;
	if (!k && n) /* the last address skipped says why */
		egress_addr_format((struct sockaddr *)&addrs[n - 1], c->entry.address,
				   sizeof(c->entry.address));
	dial_next(c);
	pthread_mutex_unlock(&c->mu);
}

/* On the loop: the job's hold on c ends; a job that never ran (the gateway
 * stopped first) refuses the connection it was for. */
static void resolve_done(void *ud, int status)
{
	struct conn *c = ud;

	if (status < 0) {
		pthread_mutex_lock(&c->mu);
		if (c->state == CONN_CONNECTING) {
			refuse(c, 502, EGRESS_REASON_CONNECT_FAILED);
			release_place(c);
		}
		pthread_mutex_unlock(&c->mu);
	}
	conn_release(c);
}

/* Under c->mu, before c connects: a place among the gateway's connections
 * that connect or relay, or false when they are all taken. */
static bool take_place(struct conn *c)
{
	int max = c->e->cfg.max_total > 0 ? c->e->cfg.max_total : EGRESS_DEFAULT_MAX_TOTAL;

	if (atomic_fetch_add(&open_total, 1) >= max) {
		atomic_fetch_sub(&open_total, 1);
		return false;
	}
	c->holds_place = true;
	return true;
}

static void on_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct conn *c = u;
	struct egress_rules *rules;
	int rc;

	(void)flags;
	pthread_mutex_lock(&c->mu);
	if (c->state == CONN_RELAYING) {
		/* raced the relay's start: the link writes (and acks) these */
		agent_chan_relay_feed(c->l, c->chan, p, n);
		pthread_mutex_unlock(&c->mu);
		return;
	}
	if (c->state == CONN_CONNECTING) {
		/* The unacked bytes are the last ones: ack none once there are any. */
		size_t extra = c->head.len - c->req.head_len, ack = 0;

		if (!c->unacked && extra < PRECONNECT_MAX)
			ack = n < PRECONNECT_MAX - extra ? n : PRECONNECT_MAX - extra;
		if (atomic_fetch_add(&preconnect_total, n) + n > PRECONNECT_TOTAL) {
			atomic_fetch_sub(&preconnect_total, n);
			refuse(c, 503, EGRESS_REASON_PENDING_FULL);
			agent_chan_ack(c->l, c->chan, n + c->unacked); /* dropped */
			c->unacked = 0;
			pthread_mutex_unlock(&c->mu);
			return;
		}
		c->preconnect += n;
		if (bytebuf_append(&c->head, p, n) < 0) {
			pthread_mutex_unlock(&c->mu);
			agent_chan_close(c->l, c->chan, "out of memory");
			return;
		}
		c->unacked += n - ack;
		agent_chan_ack(c->l, c->chan, ack);
		pthread_mutex_unlock(&c->mu);
		return;
	}
	agent_chan_ack(c->l, c->chan, n);
	if (c->state == CONN_REFUSED || bytebuf_append(&c->head, p, n) < 0 ||
	    c->state != CONN_HEAD) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	rc = proxy_req_parse(c->head.data, c->head.len, &c->req);
	if (rc == -EAGAIN) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	if (rc == 0) {
		snprintf(c->entry.host, sizeof(c->entry.host), "%s", c->req.host);
		c->entry.port = c->req.port;
	}
	c->seq = egress_log_add(c->e->log, &c->entry);
	if (rc < 0) {
		refuse(c, 400, EGRESS_REASON_BAD_REQUEST);
		pthread_mutex_unlock(&c->mu);
		return;
	}
	pthread_mutex_lock(&c->e->mu);
	rules = c->e->rules;
	if (egress_rules_empty(rules))
		rc = EGRESS_REASON_NO_NETWORK;
	else if (!egress_rules_allows(rules, c->req.host, c->req.port))
		rc = EGRESS_REASON_NOT_IN_ALLOWLIST;
	else
		rc = EGRESS_REASON_ALLOWED;
	pthread_mutex_unlock(&c->e->mu);
	if (rc != EGRESS_REASON_ALLOWED) {
		refuse(c, 403, (enum egress_reason)rc);
	} else if (!take_place(c)) {
		refuse(c, 503, EGRESS_REASON_TOO_MANY_CONNECTIONS);
	} else {
		c->state = CONN_CONNECTING;
		atomic_fetch_add(&c->refs, 1);
		if (work_queue_submit(c->e->connects, c->e, resolve_work, resolve_done, c) < 0) {
			atomic_fetch_sub(&c->refs, 1);
			refuse(c, 502, EGRESS_REASON_CONNECT_FAILED);
			release_place(c);
		}
	}
	pthread_mutex_unlock(&c->mu);
}

static void on_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct conn *c = u;

	(void)reason;
	pthread_mutex_lock(&c->mu);
	if (c->seq) {
		/* what went through: after the request head, both ways */
		c->entry.bytes_up = c->state == CONN_RELAYING && in > c->req.head_len
					    ? in - c->req.head_len
					    : 0;
		c->entry.bytes_down = c->state == CONN_RELAYING ? out : 0;
		c->entry.duration_ms = fs_now_ms() - c->t0;
		c->entry.ended = true;
		egress_log_update(c->e->log, c->seq, &c->entry);
		count_ended(c->entry.reason, c->entry.bytes_up, c->entry.bytes_down);
		atomic_fetch_add(&c->e->bytes_up, c->entry.bytes_up);
		atomic_fetch_add(&c->e->bytes_down, c->entry.bytes_down);
	}
	pthread_mutex_unlock(&c->mu);
	conn_release(c);
}

static const struct agent_chan_ops conn_ops = { .data = on_data,
						.closed = on_closed,
						.dialed = on_dialed };

void egress_bytes(struct egress *e, uint64_t *up, uint64_t *down)
{
	*up = e ? atomic_load(&e->bytes_up) : 0;
	*down = e ? atomic_load(&e->bytes_down) : 0;
}

int egress_open_total(void)
{
	return atomic_load(&open_total);
}

void egress_accept(void *au, struct agent_link *l, uint32_t chan, const char *info)
{
	struct egress *e = au;
	struct conn *c;

	(void)info;
	if (atomic_fetch_add(&e->connections, 1) >= EGRESS_MAX_PER_SESSION) {
		/* The program sees its connection closed at once; the log says
		 * why (before the request is read: no host). */
		struct egress_log_entry entry = { .start_ms = fs_unix_ms(),
						  .reason = EGRESS_REASON_TOO_MANY_CONNECTIONS,
						  .ended = true };

		atomic_fetch_sub(&e->connections, 1);
		egress_log_add(e->log, &entry);
		count_ended(entry.reason, 0, 0);
		agent_chan_close(l, chan, "too many connections");
		return;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		atomic_fetch_sub(&e->connections, 1);
		agent_chan_close(l, chan, "out of memory");
		return;
	}
	atomic_init(&c->refs, 1);
	c->e = egress_hold(e);
	c->l = agent_link_hold(l);
	c->chan = chan;
	c->t0 = fs_now_ms();
	c->entry.start_ms = fs_unix_ms();
	pthread_mutex_init(&c->mu, NULL);
	if (agent_chan_bind(l, chan, &conn_ops, c) < 0)
		conn_release(c);
}
