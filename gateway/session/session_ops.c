/* gateway/session/session_ops.c: pause, resume and fork, and what happens when
 * their jobs (and a restore's) end. Each runs as a job (job.h): in
 * memory, QMP stop and cont; on disk, a checkpoint. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/core/metrics.h"
#include "gateway/egress/egress.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sess_check_resources(struct gw *gw, int vcpus, int memory_mib, struct api_error *e)
{
	char msg[200];

	if (gw->max_vcpus && vcpus > gw->max_vcpus) {
		snprintf(msg, sizeof(msg), "vcpus %d is over this gateway's limit of %d", vcpus,
			 gw->max_vcpus);
		return api_error_set(e, 400, "limit_exceeded", msg);
	}
	if (gw->max_memory_mib && memory_mib > gw->max_memory_mib) {
		snprintf(msg, sizeof(msg), "memory_mib %d is over this gateway's limit of %d",
			 memory_mib, gw->max_memory_mib);
		return api_error_set(e, 400, "limit_exceeded", msg);
	}
	if (gw->memory_budget_mib && gw->memory_used_mib + memory_mib > gw->memory_budget_mib) {
		snprintf(msg, sizeof(msg),
			 "not enough memory left: %d MiB of %d in use, %d MiB asked for",
			 gw->memory_used_mib, gw->memory_budget_mib, memory_mib);
		api_error_set(e, 503, "capacity", msg);
		return -EBUSY;
	}
	return 0;
}

static int busy_error(const struct sess *s, struct api_error *e)
{
	char msg[200];

	if (s->job)
		snprintf(msg, sizeof(msg), "the session is busy %s", job_kind_name(s->job->kind));
	else
		snprintf(msg, sizeof(msg), "the session is %s", sess_state_name(s->state));
	api_error_set(e, 409, s->state == SESS_PAUSED ? "session_paused" : "session_busy", msg);
	return -EBUSY;
}

static struct job *start_job(struct sess *s, enum job_kind kind, struct api_error *e)
{
	struct job *j = job_new(kind, s->gw->ctx);

	if (!j)
		api_error_set(e, 500, "internal", "out of memory");
	return j;
}

static int launch(struct sess *s, struct job *j, struct api_error *e)
{
	int rc = job_start(j);

	if (rc < 0) {
		api_error_set(e, 500, "internal", "cannot start a thread");
		return rc;
	}
	s->job = j;
	sess_event(s, "busy", json_pack("{s:s}", "busy", job_kind_name(j->kind)));
	return 0;
}

/* Hands s's guest (and, with_mirror, its mirror) to j and starts it; on
 * failure takes them back and frees j. Returns launch's result. */
static int launch_with_guest(struct sess *s, struct job *j, bool with_mirror, struct api_error *e)
{
	int rc;

	j->vm = s->vm;
	s->vm = NULL;
	if (with_mirror) {
		j->mirror = s->mirror;
		s->mirror = NULL;
	}
	rc = launch(s, j, e);
	if (rc < 0) {
		s->vm = j->vm;
		j->vm = NULL;
		if (with_mirror) {
			s->mirror = j->mirror;
			j->mirror = NULL;
		}
		job_free(j);
	}
	return rc;
}

int sess_pause(struct sess *s, enum sess_pause how, struct api_error *e)
{
	char err[1024];
	struct job *j;
	int rc;

	if (s->job || s->state != SESS_READY)
		return busy_error(s, e);
	if (how == SESS_PAUSE_MEMORY) {
		/* QMP stop on a job thread; the screen stays readable. */
		if (!(j = start_job(s, JOB_PAUSE_MEMORY, e)))
			return -ENOMEM;
		sess_guest_stopping(s, "the session was paused");
		return launch_with_guest(s, j, false, e);
	}
	if (!(j = start_job(s, JOB_PAUSE_DISK, e)))
		return -ENOMEM;
	rc = vmm_checkpoint_dir_new(NULL, j->ckpt, err, sizeof(err));
	/* Held for the session from the start: no sweep removes it whoever
	 * runs, and a gateway that dies before it is recorded finds it again
	 * (session_adopt.c). */
	if (rc == 0 && (rc = vmm_checkpoint_hold(j->ckpt, s->id)) < 0)
		snprintf(err, sizeof(err), "cannot hold checkpoint %.900s: %s", j->ckpt,
			 strerror(-rc));
	if (rc < 0) {
		job_free(j);
		return api_error_set(e, 500, "pause_failed", err);
	}
	/* The job owns the guest and its mirror from here (it stops the mirror
	 * first: nothing may watch the guest meanwhile). */
	sess_guest_stopping(s, "the session is being paused");
	sess_agent_stop(s->agent); /* QEMU exits: connect again after the resume */
	s->agent = NULL;
	rc = launch_with_guest(s, j, true, e);
	if (rc < 0)
		sess_start_agent(s, NULL);
	return rc;
}

int sess_resume(struct sess *s, struct api_error *e)
{
	struct job *j;
	int rc;

	s->error[0] = '\0'; /* a failed resume's reason, from before */
	if (s->job || s->state != SESS_PAUSED) {
		if (!s->job && s->state == SESS_READY)
			return 0; /* already running: resuming is idempotent */
		return busy_error(s, e);
	}
	if (s->pause == SESS_PAUSE_MEMORY) {
		/* QMP cont on a job thread. */
		if (!(j = start_job(s, JOB_RESUME_MEMORY, e)))
			return -ENOMEM;
		return launch_with_guest(s, j, false, e);
	}
	if (!(j = start_job(s, JOB_RESUME_DISK, e)))
		return -ENOMEM;
	snprintf(j->ckpt, sizeof(j->ckpt), "%s", s->ckpt);
	j->has_agent = s->has_agent;
	sess_supervise(s->gw, j, s->id);
	job_progress_begin(j, fs_now_ms());
	rc = launch(s, j, e);
	if (rc < 0) {
		j->ckpt[0] = '\0'; /* still the session's */
		job_free(j);
		return rc;
	}
	s->ckpt[0] = '\0'; /* the job's now; it removes it once restored */
	return 0;
}

int sess_fork(struct sess *s, struct sess **out, struct api_error *e)
{
	struct sess *child;
	struct job *j;
	int rc;

	if (s->job ||
	    (s->state != SESS_READY && !(s->state == SESS_PAUSED && s->pause == SESS_PAUSE_MEMORY)))
		return busy_error(s, e);
	child = sess_alloc(s->gw, &s->req, e);
	if (!child)
		return -EBUSY;
	rc = sess_check_resources(s->gw, s->vcpus, s->memory_mib, e);
	if (rc < 0) {
		sess_free_unlinked(child);
		return rc;
	}
	if (!(j = start_job(s, JOB_FORK, e))) {
		sess_free_unlinked(child);
		return -ENOMEM;
	}
	child->width = s->width;
	child->height = s->height;
	child->vcpus = s->vcpus;
	child->memory_mib = s->memory_mib;
	child->has_agent = s->has_agent;
	egress_set_rules(child->egress, egress_rules_copy(s->egress));
	child->image = s->image;
	snprintf(child->template_name, sizeof(child->template_name), "%s", s->template_name);
	snprintf(child->keyboard_layout, sizeof(child->keyboard_layout), "%s", s->keyboard_layout);
	snprintf(child->parent_id, sizeof(child->parent_id), "%s", s->id);
	snprintf(j->child_id, sizeof(j->child_id), "%s", child->id);
	sess_supervise(s->gw, j, child->id);
	job_progress_begin(j, child->created_ms);
	/* The original keeps its mirror: its screen stays readable, but no
	 * action runs while the job holds the guest (the session is busy). */
	sess_guest_stopping(s, "the session is being forked");
	rc = launch_with_guest(s, j, false, e);
	if (rc < 0) {
		sess_free_unlinked(child);
		return rc;
	}
	sess_link(child);
	sess_event(child, "forked", json_pack("{s:s}", "from", s->id));
	log_info("session", "%s forking into %s", s->id, child->id);
	*out = child;
	return 0;
}

int sess_save_template(struct sess *s, const char *tpl_name, sess_saved_fn saved,
		       struct api_error *e)
{
	char msg[200];
	struct job *j;
	int rc;

	if (s->job)
		return busy_error(s, e);
	if (s->state != SESS_READY && !(s->state == SESS_PAUSED && s->pause == SESS_PAUSE_MEMORY)) {
		snprintf(msg, sizeof(msg), "the session is %s%s: only a running session is saved",
			 sess_state_name(s->state), s->state == SESS_PAUSED ? " on disk" : "");
		api_error_set(e, 409, "session_not_running", msg);
		return -EBUSY;
	}
	if (!(j = start_job(s, JOB_SAVE, e)))
		return -ENOMEM;
	snprintf(j->tpl_name, sizeof(j->tpl_name), "%s", tpl_name);
	j->saved = saved;
	/* As a fork: the screen stays readable, actions wait (busy). */
	sess_guest_stopping(s, "the session is being saved as a template");
	rc = launch_with_guest(s, j, false, e);
	if (rc == 0)
		log_info("session", "%s: saving as template %s", s->id, tpl_name);
	return rc;
}

/* A save's state is written: the guest runs on, the template is made. */
static void saved(struct sess *s, struct job *j)
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
}

/* A fork's copy is running: hand it to its session (if it still exists). */
static void adopt_child(struct sess *s, struct job *j)
{
	struct sess *child = sess_find(s->gw, j->child_id);

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

/* The operation a finished job was, for the metrics. */
static int op_of(const struct job *j)
{
	switch (j->kind) {
	case JOB_BOOT:
		return METRICS_OP_CREATE;
	case JOB_RESTORE:
		return METRICS_OP_RESTORE;
	case JOB_PAUSE_MEMORY:
	case JOB_PAUSE_DISK:
		return METRICS_OP_PAUSE;
	case JOB_RESUME_MEMORY:
	case JOB_RESUME_DISK:
		return METRICS_OP_RESUME;
	case JOB_FORK:
		return METRICS_OP_FORK;
	case JOB_ADOPT:
		return METRICS_OP_ADOPT;
	case JOB_DISPOSE:
	case JOB_SAVE:
		break;
	}
	return -1;
}

void sess_job_finished(struct sess *s)
{
	struct job *j = s->job;
	int op = op_of(j);

	s->job = NULL;
	if (op >= 0)
		metrics_op((enum metrics_op)op, j->rc >= 0, j->ms);
	switch (j->kind) {
	case JOB_BOOT:
		if (j->rc < 0) {
			sess_set_failed(s, j->err);
			break;
		}
		sess_set_vm(s, j->vm);
		j->vm = NULL;
		sess_mark_ready(s, j->mirror);
		j->mirror = NULL;
		if (s->state == SESS_READY)
			log_info("session", "%s ready in %.2f s", s->id,
				 (s->ready_ms - s->created_ms) / 1000.0);
		break;
	case JOB_PAUSE_MEMORY:
	case JOB_RESUME_MEMORY:
		sess_set_vm(s, j->vm);
		j->vm = NULL;
		if (j->rc < 0) {
			/* The monitor failed: the guest cannot be trusted to run on. */
			sess_set_failed(s, j->err);
			break;
		}
		if (j->kind == JOB_PAUSE_MEMORY) {
			s->pause = SESS_PAUSE_MEMORY;
			sess_set_state(s, SESS_PAUSED);
			break;
		}
		s->active_ms = fs_now_ms();
		if (s->has_agent) /* it lags by the time it was stopped */
			job_set_clock_async(s->vm);
		sess_set_state(s, SESS_READY);
		break;
	case JOB_DISPOSE:
		break; /* never a session's */
	case JOB_ADOPT:
		sess_adopt_finished(s, j);
		break;
	case JOB_RESTORE:
		if (j->rc < 0) {
			sess_set_failed(s, j->err);
			break;
		}
		sess_set_vm(s, j->vm);
		j->vm = NULL;
		sess_start_agent(s, j->agent); /* the link the guest was prepared through */
		j->agent = NULL;
		sess_mark_ready(s, j->mirror);
		j->mirror = NULL;
		log_info("session", "%s restored from %s, ready in %lld ms", s->id,
			 s->template_name, (long long)(fs_now_ms() - s->created_ms));
		break;
	case JOB_PAUSE_DISK:
		if (j->rc < 0) {
			/* The guest may be stopped or gone: say so rather than guess. */
			sess_set_failed(s, j->err);
			break; /* job_free hands j->vm to a job thread */
		}
		snprintf(s->ckpt, sizeof(s->ckpt), "%s", j->ckpt);
		j->ckpt[0] = '\0';
		sess_set_vm(s, NULL); /* QEMU quit: the checkpoint holds the guest */
		s->pause = SESS_PAUSE_DISK;
		sess_set_state(s, SESS_PAUSED);
		log_info("session", "%s paused to disk in %lld ms (%lld MiB)", s->id,
			 (long long)j->ms, (long long)(j->bytes >> 20));
		break;
	case JOB_RESUME_DISK:
		if (j->rc < 0) {
			/* The checkpoint is intact: stay paused, say why. */
			snprintf(s->ckpt, sizeof(s->ckpt), "%s", j->ckpt);
			j->ckpt[0] = '\0';
			snprintf(s->error, sizeof(s->error), "%s", j->err);
			sess_event(s, "resume_failed", json_pack("{s:s}", "error", j->err));
			log_warn("session", "%s: resume failed: %s", s->id, j->err);
			break;
		}
		sess_set_vm(s, j->vm);
		j->vm = NULL;
		sess_start_agent(s, j->agent);
		j->agent = NULL;
		sess_mark_ready(s, j->mirror);
		j->mirror = NULL;
		log_info("session", "%s resumed from disk in %lld ms", s->id, (long long)j->ms);
		break;
	case JOB_SAVE:
		saved(s, j);
		break; /* it kept its mirror throughout */
	case JOB_FORK:
		sess_set_vm(s, j->vm);
		j->vm = NULL;
		adopt_child(s, j);
		if (!s->vm)
			sess_set_failed(s, "the guest was lost while forking");
		break; /* it kept its mirror throughout */
	}
	if (j->kind == JOB_BOOT || j->kind == JOB_RESTORE || j->kind == JOB_RESUME_DISK)
		sess_boot_end(s, j, j->rc >= 0 && s->state == SESS_READY);
	job_free(j);
	sess_wake(s);
}
