/* gateway/session/job_pause_disk.c: the job that pauses a guest to disk
 * (its state written to a checkpoint, then QEMU quits) and the session that
 * keeps the checkpoint. */
#include "common/log.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/checkpoint.h"

#include <stdio.h>

static void run(struct job *j)
{
	display_mirror_stop(j->mirror); /* nothing may watch the guest meanwhile */
	j->mirror = NULL;
	j->rc = vmm_checkpoint_save(j->vm, j->ckpt, VMM_CKPT_QUIT, &j->bytes, j->err,
				    sizeof(j->err));
	if (j->rc == 0) {
		vmm_vm_destroy(j->vm);
		j->vm = NULL;
	}
}

static void finish(struct sess *s, struct job *j)
{
	if (j->rc < 0) {
		/* The guest may be stopped or gone: say so rather than guess. */
		sess_set_failed(s, j->err);
		return; /* job_free hands j->vm to a job thread */
	}
	snprintf(s->ckpt, sizeof(s->ckpt), "%s", j->ckpt);
	j->ckpt[0] = '\0';
	sess_set_vm(s, NULL); /* QEMU quit: the checkpoint holds the guest */
	s->pause = SESS_PAUSE_DISK;
	sess_set_state(s, SESS_PAUSED);
	log_info("session", "%s paused to disk in %lld ms (%lld MiB)", s->id, (long long)j->ms,
		 (long long)(j->bytes >> 20));
}

const struct job_kind job_kind_pause_disk = {
	.busy = "pausing",
	.metrics_op = METRICS_OP_PAUSE,
	.run = run,
	.finish = finish,
};
