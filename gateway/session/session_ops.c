/* gateway/session/session_ops.c: pause, resume, fork and save as a
 * template, each started as a job (job.h; its kind's file does the work
 * and takes its results: job_kind.h), and what every job's end does to its
 * session. */
#include "common/fsutil.h"
#include "common/log.h"
#include "common/space.h"
#include "gateway/core/metrics.h"
#include "gateway/egress/egress.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/job_kind.h"
#include "gateway/session/session_int.h"
#include "gateway/session/session_quota.h"
#include "vmm-qemu/checkpoint.h"
#include "vmm-qemu/jail.h"
#include "vmm-qemu/snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int sess_check_resources(struct gw *gw, int vcpus, int memory_mib, struct api_error *e)
{
	return sess_check_room(gw, vcpus, memory_mib, true, e);
}

int sess_check_room(struct gw *gw, int vcpus, int memory_mib, bool may_evict, struct api_error *e)
{
	char msg[200];

	if (vmm_jail_cgroups() == VMM_JAIL_CGROUPS_REFUSED) {
		api_error_set(e, 503, "no_cgroup",
			      "no cgroup can be made for a guest on this host, and guests without "
			      "one are refused (vitrine serve --allow-no-cgroup runs them "
			      "unbounded)");
		return -ENOTSUP;
	}
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
	/* The warm pools' members go first (pool.h). */
	if (gw->memory_budget_mib && gw->memory_used_mib + memory_mib > gw->memory_budget_mib &&
	    may_evict)
		sess_pool_make_room(gw, memory_mib);
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

static struct job *start_job(struct sess *s, const struct job_kind *kind, struct api_error *e)
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

	sess_guest_unwatch(s); /* the job's to service from now on */
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
		sess_guest_watch(s);
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
		if (!(j = start_job(s, &job_kind_pause_memory, e)))
			return -ENOMEM;
		sess_guest_stopping(s, "the session was paused");
		return launch_with_guest(s, j, false, e);
	}
	s->error[0] = '\0'; /* a failed pause's reason, from before */
	s->error_status = 0;
	/* Its RAM goes into the checkpoint (its disk is moved, not copied):
	 * refused before anything stops when it cannot fit. */
	if (space_check(vmm_run_base(NULL), (uint64_t)s->memory_mib << 20, "pausing to disk", err,
			sizeof(err)) < 0)
		return api_error_set(e, 507, "insufficient_storage", err);
	if (!(j = start_job(s, &job_kind_pause_disk, e)))
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
		if (!(j = start_job(s, &job_kind_resume_memory, e)))
			return -ENOMEM;
		return launch_with_guest(s, j, false, e);
	}
	{
		struct quota_ask ask = { .vcpus = s->vcpus, .memory_mib = s->memory_mib };

		if ((rc = sess_check_quota(s->gw, s->req.project, &ask, e)) < 0)
			return rc;
	}
	if (!(j = start_job(s, &job_kind_resume_disk, e)))
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
	{
		struct quota_ask ask = { 1, s->vcpus, s->memory_mib, true };

		if ((rc = sess_check_quota(s->gw, s->req.project, &ask, e)) < 0)
			return rc;
	}
	child = sess_alloc(s->gw, &s->req, e);
	if (!child)
		return -EBUSY;
	rc = sess_check_resources(s->gw, s->vcpus, s->memory_mib, e);
	if (rc == 0)
		rc = job_fork_check_space(s, e);
	if (rc < 0) {
		sess_free_unlinked(child);
		return rc;
	}
	if (!(j = start_job(s, &job_kind_fork, e))) {
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

/* Whether saving s for a template fits: its state (RAM, its disk copied)
 * in the run base, then the template made of it (RAM file, disk) in the
 * templates' folder, both at once while the one is made from the other.
 * 0, or -EINVAL with a 507 in e. */
static int check_save_space(const struct sess *s, struct api_error *e)
{
	const char *run = vmm_run_base(NULL), *tpls = vmm_templates_dir();
	uint64_t need = (uint64_t)s->memory_mib << 20;
	char disk[PATH_MAX], err[1024];
	struct stat st, a, b;
	bool same;

	if (s->vm &&
	    snprintf(disk, sizeof(disk), "%s/disk.qcow2", vmm_vm_run_dir(s->vm)) < PATH_MAX &&
	    lstat(disk, &st) == 0 && S_ISREG(st.st_mode))
		need += (uint64_t)st.st_size;
	same = stat(run, &a) == 0 && stat(tpls, &b) == 0 && a.st_dev == b.st_dev;
	if (space_check(run, same ? 2 * need : need, "saving a template", err, sizeof(err)) < 0 ||
	    (!same && space_check(tpls, need, "saving a template", err, sizeof(err)) < 0))
		return api_error_set(e, 507, "insufficient_storage", err);
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
	if (check_save_space(s, e) < 0)
		return -ENOSPC;
	{
		struct quota_ask ask = { .disk = true };

		if ((rc = sess_check_quota(s->gw, s->req.project, &ask, e)) < 0)
			return rc;
	}
	if (!(j = start_job(s, &job_kind_save, e)))
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

bool sess_take_started_guest(struct sess *s, struct job *j)
{
	if (j->rc < 0) {
		sess_set_failed(s, j->err);
		return false;
	}
	sess_set_vm(s, j->vm);
	j->vm = NULL;
	return true;
}

bool sess_saving(const struct sess *s, const char *tpl_name)
{
	return s && s->job && s->job->kind == &job_kind_save && !strcmp(s->job->tpl_name, tpl_name);
}

void sess_job_finished(struct sess *s)
{
	struct job *j = s->job;
	const struct job_kind *k = j->kind;

	s->job = NULL;
	if (k->metrics_op >= 0)
		metrics_op((enum metrics_op)k->metrics_op, j->rc >= 0, j->ms);
	if (k->finish)
		k->finish(s, j);
	if (k->starts_guest)
		sess_boot_end(s, j, j->rc >= 0 && s->state == SESS_READY);
	job_free(j);
	sess_wake(s);
}
