/* gateway/guest/sess_agent.h: a session's connection to vitrine-agent in its
 * guest. A thread of its own connects once the guest runs and connects
 * again whenever the link breaks (the agent restarted), until stopped; the
 * API borrows the link through sess_agent_get. Refcounted, because
 * commands (guest/exec.h) may outlive a deleted session. */
#ifndef VITRINE_GATEWAY_SESS_AGENT_H
#define VITRINE_GATEWAY_SESS_AGENT_H

#include "vmm-qemu/agent_link.h"

#include <stdbool.h>

struct sess_agent;

/* Starts connecting to the agent socket at path, or keeps first (a link
 * already open, owned from now on; may be NULL) and connects again when it
 * breaks; connections from the guest's egress listener go to accept(au).
 * NULL when out of memory or threads (first is closed then). */
struct sess_agent *sess_agent_start(const char *path, struct agent_link *first,
				    agent_accept_fn accept, void *au);
/* The owner's end: stops connecting, closes the link, releases. Does not
 * wait for a connection attempt under way (its thread ends on its own).
 * Accepts NULL. */
void sess_agent_stop(struct sess_agent *a);
/* Waits up to timeout_ms for the connector threads of stopped sessions to
 * end (shutdown). True when none is left. */
bool sess_agent_wait_threads(int timeout_ms);
struct sess_agent *sess_agent_hold(struct sess_agent *a);
void sess_agent_release(struct sess_agent *a);
/* How long a request waits for a link that is not up yet: a session just
 * ready, resumed or adopted connects to its agent on its own thread, and a
 * guest under TCG on a loaded host can take seconds to answer the RESET. */
#define SESS_AGENT_WAIT_MS 10000
/* The link, held (agent_link_release it), waiting up to wait_ms for one;
 * NULL when there is none (yet, or any more). */
struct agent_link *sess_agent_get(struct sess_agent *a, int wait_ms);

#endif
