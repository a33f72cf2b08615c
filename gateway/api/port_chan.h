/* gateway/api/port_chan.h: the guest's side of one connection to a guest's
 * port, shared by its HTTP (api_ports.c) and its WebSockets
 * (api_ports_ws.c): a TCP channel of the guest's agent whose bytes the
 * link's thread queues under a lock (at most the agent's window: the loop
 * takes them with port_chan_take, which gives them back to the window),
 * and whose end and writable() it notes, waking the loop through the
 * flags its owner looks at on the loop's wake-up.
 *
 * Embedded in its connection and held twice: by the connection and, once
 * opened, by the channel (until its closed callback); the last
 * port_chan_release frees what it holds and calls free_owner, which frees
 * the connection. */
#ifndef VITRINE_GATEWAY_API_PORT_CHAN_H
#define VITRINE_GATEWAY_API_PORT_CHAN_H

#include "common/bytebuf.h"

#include <libwebsockets.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct agent_link;

struct port_chan {
	atomic_int refs; /* the connection's + the channel's */
	struct lws_context *ctx;
	struct agent_link *link; /* held */
	uint32_t chan; /* 0: none, or closed (loop) */
	void (*free_owner)(struct port_chan *pc);
	/* shared with the link's thread, under mu */
	pthread_mutex_t mu;
	struct bytebuf in; /* the guest's bytes not taken yet (at most its window) */
	size_t in_off;
	bool ended; /* the channel is gone */
	char reason[160]; /* why, when it failed ("": the guest closed it) */
	atomic_bool pending; /* something moved: the loop looks */
	atomic_bool resume; /* the channel's queue towards the guest has room again */
};

/* Sets pc up with the connection's hold and link l (held: released with
 * pc). Can't fail. */
void port_chan_init(struct port_chan *pc, struct lws_context *ctx, struct agent_link *l,
		    void (*free_owner)(struct port_chan *pc));
/* Opens the TCP channel to the guest's port (the channel's hold taken):
 * 0, or -1 when the link is down. */
int port_chan_open(struct port_chan *pc, int port);
/* Lets a hold go; the last frees pc's buffers and link, then the owner. */
void port_chan_release(struct port_chan *pc);
/* Moves up to n of the guest's bytes into dst and gives them back to the
 * channel's window; *ended (with the reason into why) when the channel is
 * gone and nothing is left. Returns how many. Loop thread. */
size_t port_chan_take(struct port_chan *pc, void *dst, size_t n, bool *ended, char *why,
		      size_t whylen);

#endif
