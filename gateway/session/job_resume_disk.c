/* gateway/session/job_resume_disk.c: the job that restores a guest paused
 * to disk from its checkpoint (removed once the guest runs) and makes it
 * ready again, and the session that takes it, or keeps the checkpoint and
 * says why. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/checkpoint.h"

#include <stdio.h>

static void run(struct job *j)
{
	struct vmm_vm_opts opts = job_guest_opts(j);
	struct guest_prep prep = { .set_clock = j->has_agent,
				   .has_agent = j->has_agent,
				   .keep_agent = &j->agent };
	struct guest_prep_report rep;

	job_phase(j, PROGRESS_PREPARING);
	j->rc = vmm_checkpoint_restore(j->ckpt, &opts, &j->vm, j->err, sizeof(j->err));
	if (j->rc < 0)
		return;
	fs_rm_rf(j->ckpt);
	j->ckpt[0] = '\0';
	/* Time went on while it was saved: best effort, as a clone's. */
	job_phase(j, PROGRESS_GUEST_PREP);
	if (guest_prep_run(j->vm, &prep, &rep, j->err, sizeof(j->err)) < 0)
		log_warn("job", "resumed guest not prepared: %s", j->err);
	job_log_prep(j, &rep);
	job_connect_screen(j, j->vm);
}

static void finish(struct sess *s, struct job *j)
{
	if (j->rc < 0) {
		/* The checkpoint is intact: stay paused, say why. */
		snprintf(s->ckpt, sizeof(s->ckpt), "%s", j->ckpt);
		j->ckpt[0] = '\0';
		snprintf(s->error, sizeof(s->error), "%s", j->err);
		sess_event(s, "resume_failed", json_pack("{s:s}", "error", j->err));
		log_warn("session", "%s: resume failed: %s", s->id, j->err);
		return;
	}
	sess_set_vm(s, j->vm);
	j->vm = NULL;
	sess_start_agent(s, j->agent);
	j->agent = NULL;
	sess_mark_ready(s, j->mirror);
	j->mirror = NULL;
	log_info("session", "%s resumed from disk in %lld ms", s->id, (long long)j->ms);
}

const struct job_kind job_kind_resume_disk = {
	.busy = "resuming",
	.metrics_op = METRICS_OP_RESUME,
	.starts_guest = true,
	.run = run,
	.finish = finish,
};
