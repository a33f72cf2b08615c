/* gateway/session/job_memory.c: the two jobs that pause and resume a guest
 * in memory (QMP stop and cont: its screen stays readable), mirror images
 * of each other, and the session that takes the guest back. */
#include "common/fsutil.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"

static void run_pause(struct job *j)
{
	j->rc = vmm_vm_qmp(j->vm, "stop", NULL, NULL, 10000, j->err, sizeof(j->err));
}

static void run_resume(struct job *j)
{
	j->rc = vmm_vm_qmp(j->vm, "cont", NULL, NULL, 10000, j->err, sizeof(j->err));
}

static void finish(struct sess *s, struct job *j)
{
	sess_set_vm(s, j->vm);
	j->vm = NULL;
	if (j->rc < 0) {
		/* The monitor failed: the guest cannot be trusted to run on. */
		sess_set_failed(s, j->err);
		return;
	}
	if (j->kind == &job_kind_pause_memory) {
		s->pause = SESS_PAUSE_MEMORY;
		sess_set_state(s, SESS_PAUSED);
		return;
	}
	s->active_ms = fs_now_ms();
	if (s->has_agent) /* it lags by the time it was stopped */
		job_set_clock_async(s->gw->guest_work, s->vm);
	sess_set_state(s, SESS_READY);
}

const struct job_kind job_kind_pause_memory = {
	.busy = "pausing",
	.metrics_op = METRICS_OP_PAUSE,
	.run = run_pause,
	.finish = finish,
};

const struct job_kind job_kind_resume_memory = {
	.busy = "resuming",
	.metrics_op = METRICS_OP_RESUME,
	.run = run_resume,
	.finish = finish,
};
