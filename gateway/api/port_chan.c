/* gateway/api/port_chan.c: see port_chan.h. */
#include "gateway/api/port_chan.h"

#include "gateway/guest/sess_agent.h"

#include <stdio.h>
#include <string.h>

static void wake(struct port_chan *pc)
{
	atomic_store(&pc->pending, true);
	lws_cancel_service(pc->ctx);
}

/* ---- the channel's side (link thread) ---- */

static void on_opened(void *u, const char *info)
{
	(void)u;
	(void)info;
}

static void on_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct port_chan *pc = u;

	(void)flags;
	pthread_mutex_lock(&pc->mu);
	/* At most the window is here: the loop returns credit as it takes. */
	if (!pc->ended && bytebuf_append(&pc->in, p, n) < 0) {
		pc->ended = true;
		snprintf(pc->reason, sizeof(pc->reason), "out of memory");
	}
	pthread_mutex_unlock(&pc->mu);
	wake(pc);
}

static void on_eof(void *u, uint8_t stream)
{
	(void)u;
	(void)stream; /* the guest's server is done sending: its close follows */
}

static void on_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct port_chan *pc = u;

	(void)in;
	(void)out;
	pthread_mutex_lock(&pc->mu);
	if (!pc->ended && reason[0])
		snprintf(pc->reason, sizeof(pc->reason), "%s", reason);
	pc->ended = true;
	pthread_mutex_unlock(&pc->mu);
	wake(pc);
	port_chan_release(pc);
}

static void on_writable(void *u)
{
	struct port_chan *pc = u;

	atomic_store(&pc->resume, true);
	wake(pc);
}

static const struct agent_chan_ops port_ops = {
	.opened = on_opened,
	.data = on_data,
	.eof = on_eof,
	.closed = on_closed,
	.writable = on_writable,
};

/* ---- the loop's side ---- */

void port_chan_init(struct port_chan *pc, struct lws_context *ctx, struct agent_link *l,
		    void (*free_owner)(struct port_chan *pc))
{
	atomic_init(&pc->refs, 1);
	atomic_init(&pc->pending, false);
	atomic_init(&pc->resume, false);
	pthread_mutex_init(&pc->mu, NULL);
	pc->ctx = ctx;
	pc->link = l;
	pc->free_owner = free_owner;
}

int port_chan_open(struct port_chan *pc, int port)
{
	char ps[16];

	snprintf(ps, sizeof(ps), "%d", port);
	atomic_fetch_add(&pc->refs, 1);
	if (!(pc->chan = agent_chan_open(pc->link, AGENT_TCP, ps, strlen(ps), &port_ops, pc))) {
		atomic_fetch_sub(&pc->refs, 1); /* no channel: no closed() */
		return -1;
	}
	return 0;
}

void port_chan_release(struct port_chan *pc)
{
	if (atomic_fetch_sub(&pc->refs, 1) != 1)
		return;
	bytebuf_free(&pc->in);
	agent_link_release(pc->link);
	pthread_mutex_destroy(&pc->mu);
	pc->free_owner(pc);
}

size_t port_chan_take(struct port_chan *pc, void *dst, size_t n, bool *ended, char *why,
		      size_t whylen)
{
	size_t got;

	pthread_mutex_lock(&pc->mu);
	got = pc->in.len - pc->in_off;
	if (got > n)
		got = n;
	if (got)
		memcpy(dst, pc->in.data + pc->in_off, got);
	pc->in_off += got;
	if (pc->in_off == pc->in.len)
		pc->in.len = pc->in_off = 0;
	*ended = pc->ended && !pc->in.len;
	snprintf(why, whylen, "%s", pc->reason);
	pthread_mutex_unlock(&pc->mu);
	if (got && pc->chan)
		agent_chan_ack(pc->link, pc->chan, got);
	return got;
}
