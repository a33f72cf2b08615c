/* gateway/session/job_fork.c: the job that forks a guest (its state
 * written while it is stopped, then restored as a copy while the original
 * runs on) and the two sessions that take the original and the copy. */
#include "common/fsutil.h"
#include "common/log.h"
#include "common/space.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/checkpoint.h"

#include <stdio.h>
#include <sys/stat.h>

static void run(struct job *j)
{
	struct vmm_vm_opts opts = job_guest_opts(j);

	job_phase(j, PROGRESS_SAVING);
	j->rc = vmm_checkpoint_dir_new(NULL, j->ckpt, j->err, sizeof(j->err));
	if (j->rc == 0)
		j->rc = vmm_checkpoint_save(j->vm, j->ckpt, VMM_CKPT_KEEP_RUNNING, &j->bytes,
					    j->err, sizeof(j->err));
	if (j->rc == 0)
		j->rc = vmm_checkpoint_restore(j->ckpt, &opts, &j->child, j->err, sizeof(j->err));
	if (j->rc == 0)
		job_connect_screen(j, j->child);
	if (j->ckpt[0])
		fs_rm_rf(j->ckpt);
	j->ckpt[0] = '\0';
}

int job_fork_check_space(const struct sess *s, struct api_error *e)
{
	uint64_t need = (uint64_t)s->memory_mib << 20;
	char disk[PATH_MAX], err[1024];
	struct stat st;

	/* The checkpoint takes the guest's RAM and a copy of its overlay in
	 * the run base (the copy's run dir then links that disk in). */
	if (s->vm &&
	    snprintf(disk, sizeof(disk), "%s/disk.qcow2", vmm_vm_run_dir(s->vm)) < PATH_MAX &&
	    lstat(disk, &st) == 0 && S_ISREG(st.st_mode))
		need += (uint64_t)st.st_size;
	if (space_check(vmm_run_base(NULL), need, "forking", err, sizeof(err)) < 0)
		return api_error_set(e, 507, "insufficient_storage", err);
	return 0;
}

/* The copy is running: hand it to its session (if it still exists). */
static void adopt_child(struct sess *s, struct job *j)
{
	struct sess *child = sess_find_any(s->gw, j->child_id);

	if (!child) {
		log_info("session", "%s: fork %s was deleted before it ran", s->id, j->child_id);
		return;
	}
	if (j->rc < 0) {
		sess_set_failed(child, j->err);
		sess_boot_end(child, j, false);
		return;
	}
	sess_set_vm(child, j->child);
	j->child = NULL;
	sess_mark_ready(child, j->mirror);
	j->mirror = NULL;
	sess_boot_end(child, j, child->state == SESS_READY);
	sess_event(s, "forked", json_pack("{s:s}", "into", child->id));
	log_info("session", "%s forked from %s in %lld ms (%lld MiB of state)", child->id, s->id,
		 (long long)j->ms, (long long)(j->bytes >> 20));
}

static void finish(struct sess *s, struct job *j)
{
	sess_set_vm(s, j->vm);
	j->vm = NULL;
	adopt_child(s, j);
	if (!s->vm)
		sess_set_failed(s, "the guest was lost while forking");
	/* it kept its mirror throughout */
}

const struct job_kind job_kind_fork = {
	.busy = "forking",
	.metrics_op = METRICS_OP_FORK,
	.run = run,
	.finish = finish,
};
