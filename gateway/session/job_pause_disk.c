/* gateway/session/job_pause_disk.c: the job that pauses a guest to disk
 * (its state written to a checkpoint, then QEMU quits) and the session that
 * keeps the checkpoint; or, when the save fails (a full disk, any error of
 * the migration), the session that keeps its guest running: a failed pause
 * loses nothing. */
#include "common/fsutil.h"
#include "common/log.h"
#include "common/space.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Whether the save that failed with rc and err ran out of space in the
 * checkpoint's filesystem: QEMU reports a failed write as a failed
 * migration, so a filesystem left (nearly) full says it too. */
static bool out_of_space(int rc, const char *err, const char *ckpt)
{
	uint64_t avail;

	return rc == -ENOSPC || strstr(err, strerror(ENOSPC)) ||
	       (space_free(ckpt, &avail) == 0 && avail < (4u << 20));
}

/* After a failed save: the partial checkpoint goes, and the guest runs on
 * with its screen connected again (j->kept), or is lost (QEMU quit, or
 * neither runs nor shows its screen). */
static void keep_guest(struct job *j)
{
	char why[512];

	if (out_of_space(j->rc, j->err, j->ckpt)) {
		size_t n = strlen(j->err);

		if (!strstr(j->err, strerror(ENOSPC)))
			snprintf(j->err + n, sizeof(j->err) - n, " (%s: %s)", vmm_run_base(NULL),
				 strerror(ENOSPC));
		j->rc = -ENOSPC;
	}
	fs_rm_rf(j->ckpt);
	j->ckpt[0] = '\0';
	/* The save continued the guest; cont again to know it runs (a no-op if so). */
	if (vmm_vm_proc(j->vm)->exited ||
	    vmm_vm_qmp(j->vm, "cont", NULL, NULL, 10000, why, sizeof(why)) < 0 ||
	    job_start_mirror(j->vm, j->ctx, &j->mirror, why, sizeof(why)) < 0) {
		log_warn("job", "%s: the guest did not run on after a failed pause: %s",
			 vmm_vm_run_dir(j->vm), why);
		return;
	}
	j->kept = true;
}

static void run(struct job *j)
{
	display_mirror_stop(j->mirror); /* nothing may watch the guest meanwhile */
	j->mirror = NULL;
	j->rc = vmm_checkpoint_save(j->vm, j->ckpt, VMM_CKPT_QUIT, &j->bytes, j->err,
				    sizeof(j->err));
	if (j->rc < 0) {
		keep_guest(j);
		return;
	}
	vmm_vm_destroy(j->vm);
	j->vm = NULL;
}

/* The save failed and the guest runs on: s is ready again, and the pause's
 * answer says why it failed (sess_pause_error). */
static void pause_failed(struct sess *s, struct job *j)
{
	snprintf(s->error, sizeof(s->error), "pause to disk failed: %.990s", j->err);
	s->error_status = j->rc == -ENOSPC ? 507 : 500;
	log_warn("session", "%s: %s; the guest runs on", s->id, s->error);
	sess_set_vm(s, j->vm);
	j->vm = NULL;
	sess_event(s, "pause_failed",
		   json_pack("{s:s, s:b}", "error", s->error, "out_of_space", j->rc == -ENOSPC));
	sess_mark_ready(s, j->mirror); /* its agent connects again */
	j->mirror = NULL;
	sess_expiry_pause_failed(s);
}

static void finish(struct sess *s, struct job *j)
{
	if (j->rc < 0 && j->kept) {
		pause_failed(s, j);
		return;
	}
	s->expiry_pausing = NULL;
	if (j->rc < 0) {
		/* QEMU quit or cannot run on: say so rather than guess. */
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
