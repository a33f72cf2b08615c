/* gateway/session/job_save.c: the job that writes a session's state for a
 * template, as a fork does (the guest is stopped while its RAM and devices
 * are written and its disk copied, then runs on), and the session that
 * hands that state to whoever asked (template_build.h makes it one). */
#include "common/log.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/checkpoint.h"

static void run(struct job *j)
{
	j->rc = vmm_checkpoint_dir_new(NULL, j->ckpt, j->err, sizeof(j->err));
	if (j->rc == 0)
		j->rc = vmm_checkpoint_save(j->vm, j->ckpt, VMM_CKPT_KEEP_RUNNING, &j->bytes,
					    j->err, sizeof(j->err));
}

/* The state is written: the guest runs on, the template is made. */
static void finish(struct sess *s, struct job *j)
{
	sess_set_vm(s, j->vm);
	j->vm = NULL;
	if (j->rc < 0)
		j->saved(s->gw, j->tpl_name, NULL, j->err);
	else if (j->saved(s->gw, j->tpl_name, j->ckpt, NULL) == 0)
		j->ckpt[0] = '\0'; /* the saver's now; else job_free removes it */
	sess_event(s, "saved",
		   json_pack("{s:s, s:b, s:I, s:I, s:s*}", "template", j->tpl_name, "ok",
			     j->rc == 0, "ms", (json_int_t)j->ms, "bytes", (json_int_t)j->bytes,
			     "error", j->rc < 0 ? j->err : NULL));
	if (!s->vm)
		sess_set_failed(s, "the guest was lost while saving");
	else
		log_info("session", "%s: state for template %s saved in %lld ms (%lld MiB)", s->id,
			 j->tpl_name, (long long)j->ms, (long long)(j->bytes >> 20));
	/* it kept its mirror throughout */
}

const struct job_kind job_kind_save = {
	.busy = "saving",
	.metrics_op = -1,
	.run = run,
	.finish = finish,
};
