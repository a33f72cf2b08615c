/* gateway/e2b/e2b_metrics.c: see e2b_metrics.h. */
#include "gateway/e2b/e2b_metrics.h"

#include "common/fsutil.h"

#include <stdio.h>
#include <time.h>

void e2b_metrics_add(struct e2b_metrics *m, const struct e2b_reading *rd)
{
	struct e2b_metric *x = &m->ring[m->next];
	double pct = 0;

	if (m->last.mono_ms && rd->mono_ms > m->last.mono_ms && rd->cpus > 0) {
		pct = (rd->cpu_seconds - m->last.cpu_seconds) * 1000.0 * 100.0 /
		      ((double)(rd->mono_ms - m->last.mono_ms) * rd->cpus);
		pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
	}
	*x = (struct e2b_metric){ .unix_ms = rd->unix_ms,
				  .cpu_pct = (float)pct,
				  .cpus = rd->cpus,
				  .mem_used = rd->mem_used,
				  .mem_total = rd->mem_total,
				  .disk_used = rd->disk_used,
				  .disk_total = rd->disk_total };
	m->last = *rd;
	m->next = (m->next + 1) % E2B_METRICS_KEEP;
	if (m->n < E2B_METRICS_KEEP)
		m->n++;
}

int64_t e2b_metrics_newest_ms(const struct e2b_metrics *m)
{
	return m->n ? m->ring[(m->next + E2B_METRICS_KEEP - 1) % E2B_METRICS_KEEP].unix_ms : 0;
}

json_t *e2b_metrics_json(const struct e2b_metrics *m, int64_t start_s, int64_t end_s)
{
	json_t *arr = json_array();

	for (int i = 0; arr && i < m->n; i++) {
		const struct e2b_metric *x =
			&m->ring[(m->next + E2B_METRICS_KEEP - m->n + i) % E2B_METRICS_KEEP];
		int64_t s = x->unix_ms / 1000;
		char when[96];

		if ((start_s && s < start_s) || (end_s && s > end_s))
			continue;
		fs_utc_time(x->unix_ms, when, sizeof(when));
		if (json_array_append_new(arr,
					  json_pack("{s:s, s:I, s:i, s:f, s:I, s:I, s:I, s:I, s:I}",
						    "timestamp", when, "timestampUnix",
						    (json_int_t)s, "cpuCount", x->cpus,
						    "cpuUsedPct", (double)x->cpu_pct, "memUsed",
						    (json_int_t)x->mem_used, "memTotal",
						    (json_int_t)x->mem_total, "memCache",
						    (json_int_t)0, "diskUsed",
						    (json_int_t)x->disk_used, "diskTotal",
						    (json_int_t)x->disk_total)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}
