/* gateway/e2b/e2b_metrics.h: a sandbox's metrics as E2B shapes them
 * (GET /sandboxes/{id}/metrics, the SDK's getMetrics: timestamp,
 * timestampUnix, cpuCount, cpuUsedPct, memUsed, memTotal, memCache,
 * diskUsed, diskTotal), kept as a ring of samples, one every
 * E2B_METRICS_INTERVAL_MS while the sandbox runs, for the last
 * E2B_METRICS_KEEP of them. A sample's CPU percentage is QEMU's CPU time
 * over the wall time since the sample before, over its vCPUs. The figures
 * come from the gateway (gateway/e2b/sandbox_metrics.c: the session's
 * usage and QEMU's resident memory), not from inside the guest. Pure:
 * tests/unit/test_e2b_api.c. */
#ifndef VITRINE_GATEWAY_E2B_METRICS_H
#define VITRINE_GATEWAY_E2B_METRICS_H

#include <jansson.h>

#include <stdint.h>

#define E2B_METRICS_INTERVAL_MS 5000
#define E2B_METRICS_KEEP 360 /* 30 minutes */

/* What the gateway reads of a sandbox at one moment. */
struct e2b_reading {
	int64_t unix_ms, mono_ms;
	double cpu_seconds; /* QEMU's, over the session's life (usage.h) */
	int cpus;
	uint64_t mem_used, mem_total, disk_used, disk_total; /* bytes */
};

struct e2b_metric {
	int64_t unix_ms;
	float cpu_pct;
	int cpus;
	uint64_t mem_used, mem_total, disk_used, disk_total;
};

struct e2b_metrics {
	struct e2b_metric ring[E2B_METRICS_KEEP];
	int n, next; /* samples kept; where the next goes */
	struct e2b_reading last; /* the reading before (mono_ms 0: none) */
};

/* Adds a sample from rd; its CPU percentage against the reading before
 * (0 for the first, clamped to 0..100). This function can't fail. */
void e2b_metrics_add(struct e2b_metrics *m, const struct e2b_reading *rd);
/* The unix ms of the newest sample, 0 when none. */
int64_t e2b_metrics_newest_ms(const struct e2b_metrics *m);
/* The samples from start_s to end_s (unix seconds, inclusive; 0: open),
 * oldest first, as E2B's SandboxMetric list. NULL when out of memory. */
json_t *e2b_metrics_json(const struct e2b_metrics *m, int64_t start_s, int64_t end_s);

#endif
