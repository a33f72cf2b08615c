/* gateway/core/metrics_proc.h: per-session figures for GET /metrics. Its
 * QEMU's RSS and PSS are read from /proc by a sampler thread of its own
 * every few seconds, since reading smaps_rollup walks QEMU's page tables
 * and must not hold the loop. The loop tells it which sessions there are,
 * with what it knows of each (size; CPU time, from the session's usage,
 * which reads /proc/PID/stat itself), at each scrape (metrics_proc_sync);
 * a session's series disappear with it. */
#ifndef VITRINE_GATEWAY_METRICS_PROC_H
#define VITRINE_GATEWAY_METRICS_PROC_H

#include "common/bytebuf.h"

#include <stdint.h>
#include <sys/types.h>

#define METRICS_PROC_INTERVAL_MS 5000

struct metrics_session {
	char id[72]; /* a session id (SESS_ID_MAX) */
	pid_t pid; /* its QEMU, 0 when none runs (paused to disk, starting) */
	uint64_t guest_memory_bytes;
	int vcpus;
	double qemu_cpu_seconds; /* over all its QEMUs (its usage: session/usage.h) */
};

/* Starts the sampler (idempotent). 0, or -errno. */
int metrics_proc_start(void);
/* Stops it and forgets every session. */
void metrics_proc_stop(void);
/* The sessions now (copied); samples of sessions not in the list are
 * dropped, a new pid is sampled at once. */
void metrics_proc_sync(const struct metrics_session *list, int n);
/* Appends the per-session families. 0, or -ENOMEM. */
int metrics_proc_render(struct bytebuf *out);

/* Pure parsers of /proc text. */
/* /proc/PID/stat: utime + stime in clock ticks. 0, or -EINVAL. */
int metrics_proc_stat_ticks(const char *text, uint64_t *ticks);
/* /proc/PID/smaps_rollup: Rss and Pss in bytes. 0, or -EINVAL when either is missing. */
int metrics_proc_rollup(const char *text, uint64_t *rss, uint64_t *pss);

#endif
