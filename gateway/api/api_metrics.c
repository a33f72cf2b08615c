/* gateway/api/api_metrics.c: GET /metrics, the Prometheus scrape
 * (operator key, or none on the --metrics-listen door, whose scrape names
 * no session: its series that would are left out): the gauges of now
 * from the sessions, the per-session list handed to the sampler
 * (core/metrics_proc.h) with each one's CPU time from its usage, and the
 * text of core/metrics.c. The loop only walks the sessions and copies
 * counts; /proc is read by the sampler's thread and the usage's tick. */
#include "common/fsutil.h"
#include "common/work_queue.h"
#include "display/encode_pool.h"
#include "gateway/api/api.h"
#include "gateway/api/api_int.h"
#include "gateway/core/metrics.h"
#include "gateway/core/metrics_proc.h"
#include "gateway/session/session.h"
#include "gateway/session/session_usage.h"
#include "gateway/stream/stream_hub.h"
#include "vmm-qemu/jail.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The scrape; the per-session series (which name each session) only
 * when per_session. */
static void scrape(struct http_req *r, bool per_session)
{
	static struct metrics_session list[512]; /* loop thread only */
	struct metrics_now now = { .no_session_series = !per_session };
	struct bytebuf out = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	struct usage_totals t;
	int n = 0;

	for (struct sess *s = sess_first(r->gw); s; s = sess_next(s)) {
		struct stream_hub *h = stream_hub_find(s);

		switch (sess_state_of(s)) {
		case SESS_STARTING:
			now.sessions_starting++;
			break;
		case SESS_READY:
			now.sessions_ready++;
			break;
		case SESS_PAUSED:
			if (sess_paused_how(s) == SESS_PAUSE_DISK)
				now.sessions_paused_disk++;
			else
				now.sessions_paused_memory++;
			break;
		case SESS_FAILED:
			now.sessions_failed++;
			break;
		}
		if (h)
			now.viewers += h->n_viewers;
		if (n < (int)(sizeof(list) / sizeof(list[0]))) {
			struct metrics_session *m = &list[n++];

			snprintf(m->id, sizeof(m->id), "%s", sess_id(s));
			m->pid = sess_qemu_pid(s);
			m->guest_memory_bytes = (uint64_t)sess_memory_mib(s) << 20;
			m->vcpus = sess_vcpus(s);
			sess_usage_totals(s, hz, &t);
			m->qemu_cpu_seconds = t.qemu_cpu_seconds;
		}
	}
	now.memory_in_use_bytes = (uint64_t)r->gw->memory_used_mib << 20;
	now.memory_budget_bytes = (uint64_t)r->gw->memory_budget_mib << 20;
	now.unconfined = vmm_jail_cgroups() == VMM_JAIL_CGROUPS_NONE;
	encode_pool_stats(r->gw->encoders, &now.queues[METRICS_QUEUE_ENCODE]);
	work_queue_stats(r->gw->guest_work, &now.queues[METRICS_QUEUE_GUEST]);
	work_queue_stats(r->gw->bulk_work, &now.queues[METRICS_QUEUE_BULK]);
	work_queue_stats(r->gw->net_work, &now.queues[METRICS_QUEUE_NET]);
	metrics_proc_sync(list, n);
	if (metrics_render(&now, &out) < 0) {
		bytebuf_free(&out);
		http_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	http_reply_bytes(r, 200, "text/plain; version=0.0.4; charset=utf-8", out.data, out.len);
	bytebuf_free(&out);
}

void api_metrics(struct http_req *r)
{
	if (api_authorise_route(r))
		scrape(r, true);
}

void api_metrics_reply(struct http_req *r)
{
	scrape(r, false);
}
