/* gateway/session/job_restore.c: the job that restores a template's clone
 * and makes it ready (clock, page, warm-up, the screen), and the session
 * that takes it. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"

static void run(struct job *j)
{
	struct vmm_vm_opts opts = job_guest_opts(j);
	struct guest_prep prep = { .set_clock = j->has_agent,
				   .warm = true,
				   .keep_agent = &j->agent };
	struct guest_prep_report rep;

	job_phase(j, PROGRESS_PREPARING);
	j->rc = vmm_template_restore(&j->tpl, &opts, &j->vm, NULL, j->err, sizeof(j->err));
	if (j->rc < 0)
		return;
	if (j->has_agent && j->url[0])
		prep.url = j->url;
	if (j->set_layout)
		prep.keyboard_layout = j->keyboard_layout;
	prep.has_agent = j->has_agent;
	job_phase(j, PROGRESS_GUEST_PREP);
	j->rc = guest_prep_run(j->vm, &prep, &rep, j->err, sizeof(j->err));
	job_log_prep(j, &rep);
	if (j->rc == 0)
		job_connect_screen(j, j->vm);
}

static void finish(struct sess *s, struct job *j)
{
	if (!sess_take_started_guest(s, j))
		return;
	sess_start_agent(s, j->agent); /* the link the guest was prepared through */
	j->agent = NULL;
	sess_mark_ready(s, j->mirror);
	j->mirror = NULL;
	log_info("session", "%s restored from %s, ready in %lld ms", s->id, s->template_name,
		 (long long)(fs_now_ms() - s->created_ms));
}

const struct job_kind job_kind_restore = {
	.busy = "restoring",
	.metrics_op = METRICS_OP_RESTORE,
	.starts_guest = true,
	.run = run,
	.finish = finish,
};
