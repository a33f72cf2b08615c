/* gateway/action/xsync.c: see xsync.h. */
#include "gateway/action/xsync.h"

#include "gateway/core/gw.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/session.h"
#include "vmm-qemu/agent_exec.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define XSYNC_GRACE_MS 3000 /* over the wait itself: the command's start */

struct xsync_job {
	atomic_int refs;
	atomic_int done; /* set by the thread once status is in */
	int status;
	char mask[16], ms[16]; /* mask "": a ping */
	int timeout_ms;
	struct sess_agent *agent; /* held until the thread ends */
	struct lws_context *ctx;
};

static atomic_int threads;

void xsync_unref(struct xsync_job *j)
{
	if (j && atomic_fetch_sub(&j->refs, 1) == 1) {
		sess_agent_release(j->agent);
		free(j);
	}
}

static void *xsync_thread(void *arg)
{
	struct xsync_job *j = arg;
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

	j->status = -1;
	if (l && !j->mask[0] && agent_link_ping(l, j->timeout_ms) == 0)
		j->status = 0;
	else if (l && j->mask[0] && agent_exec_run(l, &spec, &res, err, sizeof(err)) == 0) {
		if (!res.timed_out)
			j->status = res.exit_code;
		agent_exec_result_free(&res);
	}
	agent_link_release(l);
	atomic_store(&j->done, 1);
	lws_cancel_service(j->ctx);
	xsync_unref(j);
	atomic_fetch_sub(&threads, 1);
	return NULL;
}

struct xsync_job *xsync_start(struct sess *s, unsigned mask, int ms)
{
	struct xsync_job *j;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	/* Only guests with a root file system run a desktop (and qemu-ga). */
	if (!s->agent || (mask && !s->has_agent) || !(j = calloc(1, sizeof(*j))))
		return NULL;
	atomic_init(&j->refs, 2);
	if (mask) /* else "": a ping */
		snprintf(j->mask, sizeof(j->mask), "%u", mask);
	snprintf(j->ms, sizeof(j->ms), "%d", ms);
	j->timeout_ms = ms;
	j->agent = sess_agent_hold(s->agent);
	j->ctx = s->gw->ctx;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	atomic_fetch_add(&threads, 1);
	rc = pthread_create(&t, &attr, xsync_thread, j);
	pthread_attr_destroy(&attr);
	if (rc) {
		atomic_fetch_sub(&threads, 1);
		sess_agent_release(j->agent);
		free(j);
		return NULL;
	}
	return j;
}

bool xsync_done(struct xsync_job *j)
{
	return atomic_load(&j->done);
}

int xsync_status(const struct xsync_job *j)
{
	return j->status;
}

int xsync_threads_left(void)
{
	return atomic_load(&threads);
}
