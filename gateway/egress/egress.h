/* gateway/egress/egress.h: a session's way out. The guest has no network device;
 * its programs use vitrine-agent's HTTP proxy on 127.0.0.1:3128, whose
 * connections arrive here as agent channels (agent_accept_fn). Each is
 * decided against the session's rules (egress_rules.h) and the operator's
 * configuration: names the operator maps to addresses, whether private
 * addresses may be reached, and never the gateway's own port. Allowed
 * connections are relayed by the agent link; every connection, allowed or
 * not, goes into the session's log (egress_log.h). Refcounted: connection
 * threads may outlive the session. */
#ifndef VITRINE_GATEWAY_EGRESS_H
#define VITRINE_GATEWAY_EGRESS_H

#include "gateway/egress/egress_log.h"
#include "gateway/egress/egress_rules.h"
#include "vmm-qemu/agent_link.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define EGRESS_MAX_MAPS 64
/* Connections one session's guest may have open at once (the link polls
 * at most 256 descriptors). */
#define EGRESS_MAX_PER_SESSION 128
/* Connections that connect or relay (past the rules) over all sessions
 * together, unless --egress-max-connections says otherwise: each is a
 * descriptor of the gateway (and a thread while it connects), and the
 * gateway keeps its descriptors below FD_SETSIZE (cli/gw_start.c), so these
 * are part of that budget. Past it a request is answered 503 and logged
 * too_many_connections. */
#define EGRESS_DEFAULT_MAX_TOTAL 256

/* The operator's part (serve flags), copied into each session's egress. */
struct egress_config {
	struct egress_map {
		char name[254]; /* lowercase */
		struct sockaddr_storage addr;
		socklen_t len;
	} maps[EGRESS_MAX_MAPS];
	int n_maps;
	bool allow_private; /* names resolving to private/loopback/link-local may be reached */
	int gateway_port; /* refused on the gateway's own addresses, whatever the rules */
	int connect_timeout_ms;
	int max_total; /* connections over all sessions; 0: EGRESS_DEFAULT_MAX_TOTAL */
};

/* Egress connections connecting or relaying now, over all sessions. */
int egress_open_total(void);

/* Over all sessions since the start: connections ended by their log's
 * reason, bytes relayed each way, and egress_open_total. */
struct egress_totals {
	uint64_t ended[EGRESS_REASON_COUNT];
	uint64_t bytes_up, bytes_down;
	int open;
};
void egress_totals(struct egress_totals *out);

/* Parses "NAME=ADDRESS" (an IPv4 or IPv6 literal) into the next map of
 * cfg. 0, or -EINVAL with a reason in err. */
int egress_config_add_map(struct egress_config *cfg, const char *arg, char *err, size_t errlen);

struct egress;
struct work_queue;

/* A session's egress with rules (owned from now on; NULL: no network),
 * whose connections' names are resolved on connects (the gateway's queue
 * for it, which outlives every session's agent link; its jobs are owned by
 * e, so one session's lookups hold at most the queue's max_per_owner
 * workers). NULL when out of memory. */
struct egress *egress_create(const struct egress_config *cfg, struct work_queue *connects,
			     struct egress_rules *rules);

struct egress *egress_hold(struct egress *e);
/* Bytes e's connections relayed each way, counted as each ends (e may be
 * NULL: none). */
void egress_bytes(struct egress *e, uint64_t *up, uint64_t *down);
void egress_release(struct egress *e);
/* Replaces the rules (owned from now on); connections already made stay. */
void egress_set_rules(struct egress *e, struct egress_rules *rules);
/* {"allow": [...]} as in force now. */
json_t *egress_rules_now(struct egress *e);
/* A copy of the rules in force (for a fork). NULL when out of memory
 * (or when r is NULL, for dup). */
struct egress_rules *egress_rules_copy(struct egress *e);
struct egress_rules *egress_rules_dup(const struct egress_rules *r);
bool egress_rules_now_empty(struct egress *e);
/* The connection log: {"entries": [...], "next", "dropped"}. */
json_t *egress_log_get(struct egress *e, uint64_t after, size_t limit);
/* agent_accept_fn for the session's link; au is the struct egress. */
void egress_accept(void *au, struct agent_link *l, uint32_t chan, const char *info);

#endif
