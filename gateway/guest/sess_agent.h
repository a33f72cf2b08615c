/* gateway/guest/sess_agent.h: a session's connection to vitrine-agent in its
 * guest. It connects once the guest runs and again whenever the link
 * breaks (the agent restarted), until stopped: each attempt (connect and
 * the RESET handshake, bounded) is a job on the gateway's guest work queue,
 * retried from a loop timer, and its completion installs the link on the
 * loop; a lost link is noticed from its own thread's word, not polled. The
 * owner hears on the loop when the link comes up or goes down; the API
 * borrows the link through sess_agent_get. Refcounted, because commands
 * (guest/exec.h) may outlive a deleted session.
 *
 * Threads: start and stop on the loop (the work queue's owner thread);
 * hold, release and sess_agent_get(a, 0) on any thread; a wait in
 * sess_agent_get only off the loop. */
#ifndef VITRINE_GATEWAY_SESS_AGENT_H
#define VITRINE_GATEWAY_SESS_AGENT_H

#include "vmm-qemu/agent_link.h"

#include <libwebsockets.h>
#include <stdbool.h>

struct sess_agent;
struct work_queue;

/* On the loop: the link came up (up) or was lost (!up). Never called from
 * inside sess_agent_start or sess_agent_stop, nor after the stop. */
typedef void (*sess_agent_changed_fn)(void *cu, bool up);

/* What a connection needs of its surroundings. */
struct sess_agent_env {
	struct lws_context *ctx; /* the loop: its timers, its wake-ups */
	struct work_queue *q; /* where attempts run (the gateway's guest_work) */
	agent_accept_fn accept; /* who takes connections from the guest's egress listener */
	void *au;
	sess_agent_changed_fn changed; /* may be NULL */
	void *cu;
};

/* Starts connecting to the agent socket at path, or keeps first (a link
 * already open, owned from now on; may be NULL) and connects again when it
 * breaks. NULL when out of memory (first is closed then). Loop thread. */
struct sess_agent *sess_agent_start(const struct sess_agent_env *env, const char *path,
				    struct agent_link *first);
/* The owner's end: stops connecting (an attempt still queued is cancelled;
 * one under way ends on its worker, bounded by its timeout, and its link
 * is closed then), closes the link, releases. Accepts NULL. Loop thread. */
void sess_agent_stop(struct sess_agent *a);
/* On the loop's wake-up: takes the word of links lost since, and connects
 * again. Loop thread. */
void sess_agent_poke_all(void);
struct sess_agent *sess_agent_hold(struct sess_agent *a);
void sess_agent_release(struct sess_agent *a);
/* How long a request waits for a link that is not up yet: a session just
 * ready, resumed or adopted connects to its agent in the background, and a
 * guest under TCG on a loaded host can take seconds to answer the RESET. */
#define SESS_AGENT_WAIT_MS 10000
/* The link, held (agent_link_release it), NULL when there is none (yet, or
 * any more). wait_ms 0 never blocks (the loop's way: wait for the owner's
 * changed instead); a thread other than the loop may wait up to wait_ms
 * for the link to come up. */
struct agent_link *sess_agent_get(struct sess_agent *a, int wait_ms);

#endif
