/* gateway/core/metrics.h: what the gateway counts for GET /metrics, in
 * Prometheus's terms: counters and latency histograms with small, fixed
 * label sets (no session ids), moved from any thread with atomics, and
 * rendered in the text exposition format (version 0.0.4) together with
 * the gauges of the moment the caller passes in, egress's own totals
 * (egress.h) and the per-session samples of metrics_proc.h. The names follow Prometheus's conventions:
 * base units, _total for counters, _seconds and _bytes. */
#ifndef VITRINE_GATEWAY_METRICS_H
#define VITRINE_GATEWAY_METRICS_H

#include "common/bytebuf.h"
#include "common/work_queue.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A session's operations (one per job kind that changes its state). */
enum metrics_op {
	METRICS_OP_CREATE, /* booted from an image */
	METRICS_OP_RESTORE, /* restored from a template */
	METRICS_OP_PAUSE, /* in memory or to disk */
	METRICS_OP_RESUME,
	METRICS_OP_FORK,
	METRICS_OP_ADOPT, /* a guest an earlier gateway left */
	METRICS_OP_DELETE,
	METRICS_OP_COUNT
};

/* An action's dialect (actions.h), or a screenshot. */
enum metrics_act {
	METRICS_ACT_VITRINE,
	METRICS_ACT_ANTHROPIC,
	METRICS_ACT_OPENAI,
	METRICS_ACT_SCREENSHOT,
	METRICS_ACT_COUNT
};

enum metrics_cmd {
	METRICS_CMD_EXITED,
	METRICS_CMD_TIMED_OUT,
	METRICS_CMD_FAILED,
	METRICS_CMD_COUNT
};

#define METRICS_MAX_ROUTES 64

/* The names of the API's routes (label values), index = route kind. Set
 * once before any request; names must live as long as the process. */
void metrics_set_routes(const char *const *names, int n);

void metrics_http(int route, int status, int64_t micros);
void metrics_op(enum metrics_op op, bool ok, int64_t millis);
void metrics_act(enum metrics_act kind, bool ok, int64_t micros);
void metrics_cmd(enum metrics_cmd how, int64_t millis);
void metrics_stream_frame(uint64_t bytes);
/* The warm pools (session/pool.h): a create served by a member; one that
 * found none fitting (why: "empty", "keyboard_layout"; any other counts as
 * "other"); a member dropped for a real session's room; a refill ended
 * (ok: the member is ready, after millis). */
void metrics_pool_hit(void);
void metrics_pool_miss(const char *why);
void metrics_pool_evicted(void);
void metrics_pool_refill(bool ok, int64_t millis);

/* The gauges of now, which the caller (the loop) knows. */
/* The queues metrics_now counts, in its order, as their label says them. */
enum {
	METRICS_QUEUE_ENCODE,
	METRICS_QUEUE_GUEST,
	METRICS_QUEUE_BULK,
	METRICS_QUEUE_NET,
	METRICS_QUEUES
};

struct metrics_now {
	int sessions_starting, sessions_ready, sessions_paused_memory, sessions_paused_disk,
		sessions_failed;
	int viewers;
	uint64_t memory_budget_bytes, memory_in_use_bytes; /* budget 0: none */
	int pool_ready, pool_refilling; /* the warm pools' members (session/pool.h) */
	bool unconfined; /* guests run without a cgroup (vmm-qemu/jail.h) */
	/* The gateway's background queues (common/work_queue.h): the
	 * encoders', the guest round trips', the bulk work's. */
	struct work_queue_stats queues[METRICS_QUEUES];
	/* Leave out the per-session series (metrics_proc.h): a scrape for
	 * anyone (the token-less door) names no session. */
	bool no_session_series;
};

/* Appends everything to out (the per-session series too, unless
 * now->no_session_series): 0, or -ENOMEM. */
int metrics_render(const struct metrics_now *now, struct bytebuf *out);

/* For tests: forget every count. */
void metrics_reset(void);

/* Text exposition helpers (pure): a label value escaped (\\, \", \n). */
void metrics_escape(const char *in, char *out, size_t outlen);

#endif
