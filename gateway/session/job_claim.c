/* gateway/session/job_claim.c: the job that hands a warm pool's member
 * (pool.h) to its creator: the guest paused in memory runs again (QMP
 * cont); with a URL its clock is set and the page opened before it is
 * ready, without one its clock is set beside (as a resume from memory's). */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"

#include <unistd.h>

/* How long a claim with a URL keeps asking for its page. */
#define CLAIM_NAV_MS 60000

static void run(struct job *j)
{
	struct guest_prep prep = { .has_agent = true, .set_clock = true, .keep_agent = &j->agent };
	struct guest_prep_report rep;

	job_phase(j, PROGRESS_GUEST_PREP);
	j->rc = vmm_vm_qmp(j->vm, "cont", NULL, NULL, 10000, j->err, sizeof(j->err));
	if (j->rc < 0 || !j->has_agent || !j->url[0])
		return;
	/* The clock first, then the page, over the job's own link. A guest
	 * just resumed under TCG re-translates its code: its Chromium has been
	 * seen to leave DevTools unanswered for a while on a loaded host, so
	 * the page is asked for again until CLAIM_NAV_MS have gone by. */
	prep.url = j->url;
	for (int64_t until = fs_now_ms() + CLAIM_NAV_MS;;) {
		j->rc = guest_prep_run(j->vm, &prep, &rep, j->err, sizeof(j->err));
		job_log_prep(j, &rep);
		if (j->rc == 0 || fs_now_ms() > until || job_orphaned(j))
			return;
		log_info("job", "a claimed member's page not opened (%s): trying again", j->err);
		agent_link_destroy(j->agent);
		j->agent = NULL;
		prep.set_clock = false; /* set already */
		usleep(500 * 1000);
	}
}

static void finish(struct sess *s, struct job *j)
{
	if (!sess_take_started_guest(s, j))
		return;
	if (j->agent) { /* the link the page was opened through */
		sess_start_agent(s, j->agent);
		j->agent = NULL;
	} else if (s->has_agent) {
		/* It lags by its time in the pool: set as a resume from memory
		 * sets it, beside the first actions (a round trip through
		 * qemu-ga of a guest just resumed is seconds under TCG). */
		job_set_clock_async(s->gw->guest_work, s->vm);
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
