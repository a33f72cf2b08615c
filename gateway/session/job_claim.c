/* gateway/session/job_claim.c: the job that hands a warm pool's member
 * (pool.h) to its creator: the guest paused in memory runs again (QMP
 * cont), its clock is set, the URL asked for is opened; then the session
 * is ready. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/qga_client.h"

#include <limits.h>

static void run(struct job *j)
{
	struct guest_prep prep = { .has_agent = true, .set_clock = true, .keep_agent = &j->agent };
	struct guest_prep_report rep;
	struct qga_client *c = NULL;
	char path[PATH_MAX];

	job_phase(j, PROGRESS_GUEST_PREP);
	j->rc = vmm_vm_qmp(j->vm, "cont", NULL, NULL, 10000, j->err, sizeof(j->err));
	if (j->rc < 0 || !j->has_agent)
		return;
	if (j->url[0]) { /* the clock first, then the page, over the job's own link */
		prep.url = j->url;
		j->rc = guest_prep_run(j->vm, &prep, &rep, j->err, sizeof(j->err));
		job_log_prep(j, &rep);
		return;
	}
	/* It lags by the time it was in the pool: set before it is ready. */
	if (vmm_vm_socket(j->vm, VMM_SOCKET_QGA, path, sizeof(path)) == 0 &&
	    (qga_client_connect(path, 5000, &c, j->err, sizeof(j->err)) < 0 ||
	     guest_prep_set_clock(c, 5000, j->err, sizeof(j->err)) < 0))
		log_warn("job", "a claimed member's clock not set: %s", j->err);
	j->err[0] = '\0';
	qga_client_destroy(c);
}

static void finish(struct sess *s, struct job *j)
{
	if (!sess_take_started_guest(s, j))
		return;
	if (j->agent) { /* the link the page was opened through */
		sess_start_agent(s, j->agent);
		j->agent = NULL;
	}
	s->ready_ms = s->active_ms = fs_now_ms();
	sess_set_state(s, SESS_READY);
	log_info("session", "%s claimed from %s's pool, ready in %lld ms", s->id, s->template_name,
		 (long long)(fs_now_ms() - s->created_ms));
}

const struct job_kind job_kind_claim = {
	.busy = "resuming",
	.metrics_op = METRICS_OP_RESUME,
	.starts_guest = true,
	.run = run,
	.finish = finish,
};
