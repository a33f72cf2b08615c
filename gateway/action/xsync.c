/* gateway/action/xsync.c: see xsync.h. */
#include "gateway/action/xsync.h"

#include "common/work_queue.h"
#include "gateway/core/gw.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/session.h"
#include "vmm-qemu/agent_exec.h"

#include <stdio.h>
#include <stdlib.h>

#define XSYNC_GRACE_MS 3000 /* over the wait itself: the command's start */

struct xsync_job {
	struct work_queue *q; /* whose job it is */
	xsync_done_fn done; /* the loop's; NULL once abandoned */
	void *ud;
	int status; /* the worker's, then done's */
	char mask[16], ms[16]; /* mask "": a ping */
	int timeout_ms;
	struct sess_agent *agent; /* held until the job's done */
};

/* The guest queue's work (a worker's): the blocking call to the agent. */
static void xsync_work(void *ud, void *ctx)
{
	struct xsync_job *j = ud;
	const char *argv[] = { XSYNC_AGENT, "xwait", j->mask, j->ms, NULL };
	const char *env[] = { "DISPLAY=:0", "PATH=/usr/bin:/bin", NULL };
	struct agent_exec_spec spec = {
		.argv = argv,
		.env = env,
		.uid = -1,
		.gid = -1,
		.timeout_ms = j->timeout_ms + XSYNC_GRACE_MS,
		.max_output = 1024,
	};
	struct agent_exec_result res;
	struct agent_link *l = sess_agent_get(j->agent, 0);
	char err[256];

	(void)ctx;
	if (l && !j->mask[0] && agent_link_ping(l, j->timeout_ms) == 0)
		j->status = 0;
	else if (l && j->mask[0] && agent_exec_run(l, &spec, &res, err, sizeof(err)) == 0) {
		if (!res.timed_out)
			j->status = res.exit_code;
		agent_exec_result_free(&res);
	}
	agent_link_release(l);
}

/* The job's done (the loop's): the run hears, unless it went. */
static void xsync_job_done(void *ud, int status)
{
	struct xsync_job *j = ud;

	if (status < 0)
		j->status = -1;
	if (j->done)
		j->done(j->ud, j->status);
	sess_agent_release(j->agent);
	free(j);
}

struct xsync_job *xsync_start(struct sess *s, unsigned mask, int ms, xsync_done_fn done, void *ud)
{
	struct xsync_job *j;

	/* Only guests with a root file system run a desktop (and qemu-ga). */
	if (!sess_agent_of(s) || (mask && !sess_has_guest_agent(s)) || !(j = calloc(1, sizeof(*j))))
		return NULL;
	if (mask) /* else "": a ping */
		snprintf(j->mask, sizeof(j->mask), "%u", mask);
	snprintf(j->ms, sizeof(j->ms), "%d", ms);
	j->timeout_ms = ms;
	j->status = -1;
	j->q = sess_gw(s)->guest_work;
	j->done = done;
	j->ud = ud;
	j->agent = sess_agent_hold(sess_agent_of(s));
	if (work_queue_submit(j->q, s, xsync_work, xsync_job_done, j) < 0) {
		sess_agent_release(j->agent);
		free(j);
		return NULL;
	}
	return j;
}

void xsync_abandon(struct xsync_job *j)
{
	if (!j)
		return;
	j->done = NULL;
	/* Still queued: its done comes now and frees it; else once it ran. */
	work_queue_cancel(j->q, j);
}
