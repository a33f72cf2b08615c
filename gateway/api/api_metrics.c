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
#include "gateway/session/pool.h"
#include "gateway/session/session.h"
#include "gateway/session/session_quota.h"
#include "gateway/session/session_usage.h"
#include "gateway/stream/stream_hub.h"
#include "vmm-qemu/jail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The series of each project (per_session scrapes alone: they name the
 * tenants): its sessions, the vCPUs and memory its guests hold, the CPU
 * time of its live guests' QEMUs, and its quotas. 0, or -ENOMEM. */
static int render_projects(struct gw *gw, struct bytebuf *out)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "vitrine_project_sessions", "Sessions of the project, in every state." },
		{ "vitrine_project_vcpus", "vCPUs its guests hold (running or paused in memory)." },
		{ "vitrine_project_memory_bytes", "Guest memory its guests hold." },
		{ "vitrine_project_qemu_cpu_seconds", "CPU time of its live guests' QEMUs." },
	};
	long hz = sysconf(_SC_CLK_TCK);
	int rc = 0;

	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]) && !rc; f++) {
		rc = bytebuf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", fam[f].name,
				    fam[f].help, fam[f].name);
		for (int i = 0; i < gw->projects.n && !rc; i++) {
			const char *p = gw->projects.p[i].name;
			struct project_tally t;
			double cpu = 0;

			sess_project_tally(gw, p, false, &t);
			if (f == 3)
				for (struct sess *s = sess_first(gw); s; s = sess_next(s))
					if (!strcmp(sess_project(s), p)) {
						struct usage_totals u;

						sess_usage_totals(s, hz, &u);
						cpu += u.qemu_cpu_seconds;
					}
			rc = f == 3 ? bytebuf_printf(out, "%s{project=\"%s\"} %.3f\n", fam[f].name,
						     p, cpu)
				    : bytebuf_printf(out, "%s{project=\"%s\"} %lld\n", fam[f].name,
						     p,
						     (long long)(f == 0	  ? t.sessions
								 : f == 1 ? t.vcpus
									  : t.memory_mib << 20));
		}
	}
	if (!rc)
		rc = bytebuf_printf(out, "# HELP vitrine_project_quota A project's quota (absent: "
					 "none).\n# TYPE vitrine_project_quota gauge\n");
	for (int i = 0; i < gw->projects.n && !rc; i++)
		for (int k = 0; k < QUOTA_N && !rc; k++) {
			int64_t v = project_quota_get(&gw->projects.p[i].quota, k);

			if (v != PROJECT_NO_LIMIT)
				rc = bytebuf_printf(
					out,
					"vitrine_project_quota{project=\"%s\",quota=\"%s\"} "
					"%lld\n",
					gw->projects.p[i].name, project_quota_names[k],
					(long long)v);
		}
	return rc;
}

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
	sess_pool_totals(r->gw, &now.pool_ready, &now.pool_refilling);
	now.unconfined = vmm_jail_cgroups() == VMM_JAIL_CGROUPS_NONE;
	encode_pool_stats(r->gw->encoders, &now.queues[METRICS_QUEUE_ENCODE]);
	work_queue_stats(r->gw->guest_work, &now.queues[METRICS_QUEUE_GUEST]);
	work_queue_stats(r->gw->bulk_work, &now.queues[METRICS_QUEUE_BULK]);
	work_queue_stats(r->gw->net_work, &now.queues[METRICS_QUEUE_NET]);
	metrics_proc_sync(list, n);
	if (metrics_render(&now, &out) < 0 || (per_session && render_projects(r->gw, &out) < 0)) {
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
