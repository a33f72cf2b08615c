/* gateway/session/session_adopt.c: a starting gateway serves again what
 * the registry on disk knows (docs/durability.md). Each record becomes a
 * session under its id and tokens; a running or memory-paused guest is
 * adopted from its supervisor on a job thread (job_adopt.c), a disk-paused
 * session comes back paused, and whatever cannot be served (a torn or
 * unknown record, a guest that is gone or whose pid now belongs to another
 * process, a missing checkpoint or template) becomes a failed session that
 * says why: start-up never stops at one bad record, and never signals a
 * process it has not verified. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/session/job_kind.h"
#include "gateway/session/registry.h"
#include "gateway/session/session_int.h"
#include "gateway/session/session_record.h"
#include "vmm-qemu/checkpoint.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/sweep.h"
#include "vmm-qemu/vm.h"
#include "vmm-qemu/vm_find.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void sess_supervise(struct gw *gw, struct job *j, const char *id)
{
	if (!gw->self_bin[0])
		return;
	j->shim.bin = gw->self_bin;
	j->shim.grace_s = gw->adopt_grace_s;
	j->shim.abandon_pause = gw->abandon_pause;
	/* A guest that gets as far as running is found again by this label if
	 * the gateway dies before its record names it (a boot's, still
	 * booting, could not be adopted: it has none). */
	if (j->kind != &job_kind_boot && j->kind != &job_kind_adopt)
		snprintf(j->label, sizeof(j->label), "%s", id);
	if (gw->registry)
		registry_path(gw->registry, id, j->shim_record, sizeof(j->shim_record));
}

/* A session that stands for a record that cannot be served: failed, with
 * why; only the operator can see or delete it (it has no tokens). The
 * record itself is kept beside as ID.json.unreadable for a person. */
static void add_unreadable(struct gw *gw, const char *id, const char *why)
{
	struct session_request req = { .image = "desktop" };
	char from[PATH_MAX], to[PATH_MAX + 16];
	struct api_error e;
	struct sess *s;

	log_error("adopt", "session %s cannot be served: %s", id, why);
	if (registry_path(gw->registry, id, from, sizeof(from)) == 0) {
		snprintf(to, sizeof(to), "%s.unreadable", from);
		if (rename(from, to) < 0)
			log_warn("adopt", "cannot move %s aside: %s", from, strerror(errno));
	}
	if (!(s = sess_alloc(gw, &req, &e))) {
		log_error("adopt", "session %s dropped: %s", id, e.message);
		return;
	}
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->control_token[0] = s->view_token[0] = '\0';
	s->control_hash[0] = s->view_hash[0] = '\0';
	s->state = SESS_FAILED;
	snprintf(s->error, sizeof(s->error), "not adopted after a restart: %s", why);
	sess_link(s);
}

/* Fails s (already linked) with why, logged. */
static void fail_adopted(struct sess *s, const char *why)
{
	char msg[1100];

	snprintf(msg, sizeof(msg), "not adopted after a restart: %s", why);
	sess_set_failed(s, msg);
}

static bool template_gone(const struct sess *s, char *why, size_t len)
{
	struct vmm_template t;
	char err[512];

	if (!s->template_name[0] ||
	    vmm_template_load(s->template_name, &t, err, sizeof(err)) != -ENOENT)
		return false;
	snprintf(why, len, "its template %s was deleted", s->template_name);
	return true;
}

/* Starts adopting the guest id for s (linked) on a job thread. */
static void start_adopt(struct gw *gw, struct sess *s, const struct vmm_identity *id, bool paused)
{
	struct job *j = job_new(&job_kind_adopt, gw->ctx);

	if (!j) {
		fail_adopted(s, "out of memory");
		return;
	}
	j->adopt = *id;
	j->adopt_paused = paused;
	sess_supervise(gw, j, s->id);
	if (job_start(j) < 0) {
		job_free(j);
		fail_adopted(s, "cannot start a thread");
		return;
	}
	s->job = j;
}

/* Brings s (just made from its record) back as the record says. */
static void adopt_one(struct gw *gw, struct sess *s)
{
	char why[600], state_file[PATH_MAX + 8];

	sess_link(s);
	if (s->state == SESS_FAILED)
		return;
	if (template_gone(s, why, sizeof(why))) {
		fail_adopted(s, why);
		return;
	}
	if (s->state == SESS_STARTING) {
		/* Its guest may have got as far as running: claim_labelled(). */
		s->adopt_pending = true;
		return;
	}
	if (s->state == SESS_PAUSED && s->pause == SESS_PAUSE_DISK) {
		snprintf(state_file, sizeof(state_file), "%s/state", s->ckpt);
		if (!s->ckpt[0] || access(state_file, R_OK) < 0)
			s->adopt_pending = true; /* a resume that got under way */
		return; /* it resumes as before */
	}
	if (!s->guest.run_dir[0]) {
		fail_adopted(s, "no guest was recorded for it");
		return;
	}
	start_adopt(gw, s, &s->guest, s->state == SESS_PAUSED);
}

/* The session whose id is label, if a guest of its may have been under
 * way when the old gateway died: a start or fork (no guest recorded yet)
 * or a resume from disk (the record still says paused). */
static struct sess *pending(struct gw *gw, const char *label)
{
	struct sess *s = sess_find_any(gw, label);

	if (!s || s->job)
		return NULL;
	return s->adopt_pending || (s->state == SESS_PAUSED && s->pause == SESS_PAUSE_DISK) ? s
											    : NULL;
}

static bool guest_of_some_session(struct gw *gw, const char *run_dir)
{
	for (struct sess *s = gw->sessions; s; s = s->next)
		if (!strcmp(s->guest.run_dir, run_dir))
			return true;
	return false;
}

/* A live guest in the run base: the one a pending session's interrupted
 * job made (its run dir's label names the session: the job got as far as
 * a running guest), or an orphan no record names, which is stopped. */
static void claim_labelled(void *ud, const struct vmm_sweep_entry *e)
{
	struct gw *gw = ud;
	struct vmm_identity id;
	char label[SESS_ID_MAX], err[512];
	struct sess *s;

	if (e->kind != VMM_SWEEP_RUN_DIR || !e->owner_alive || guest_of_some_session(gw, e->path))
		return;
	if (e->foreign) { /* vmm-qemu/run_owner.h: another state dir's gateway */
		log_info("adopt", "leaving guest %s: another gateway's (%s)", e->path, e->gateway);
		return;
	}
	if (vmm_run_dir_label(e->path, label, sizeof(label)) == 0 && (s = pending(gw, label)) &&
	    vmm_vm_identity_read(e->path, &id, err, sizeof(err)) == 0) {
		log_info("adopt", "%s: its interrupted %s had a running guest: adopting %s", s->id,
			 s->state == SESS_STARTING ? "start" : "resume", e->path);
		s->adopt_pending = false;
		s->state = SESS_READY; /* a checkpoint it came from goes once it is adopted */
		s->guest = id;
		start_adopt(gw, s, &id, false);
		return;
	}
	log_warn("adopt", "stopping guest %s: no session record names it", e->path);
	job_terminate(e->path);
}

static void on_record(void *ud, const char *id, json_t *rec, const char *why)
{
	struct gw *gw = ud;
	char err[600];
	struct sess *s;

	if (sess_find_any(gw, id))
		return; /* seen already */
	if (!registry_id_ok(id)) {
		/* Not a name this gateway makes (ids from before the registry). */
		log_warn("adopt", "skipping %s.json in the state dir: not a session id", id);
		return;
	}
	if (!rec) {
		add_unreadable(gw, id, why);
		return;
	}
	if (!(s = sess_from_record(gw, id, rec, err, sizeof(err)))) {
		add_unreadable(gw, id, err);
		return;
	}
	adopt_one(gw, s);
}

int sess_adopt_all(struct gw *gw)
{
	int n;

	if (!gw->registry)
		return 0;
	n = registry_each(gw->registry, on_record, gw);
	if (n < 0)
		log_error("adopt", "cannot read the state dir %s: %s", gw->registry->dir,
			  strerror(-n));
	else if (n > 0)
		log_info("adopt", "%d session records found; adopting their guests", n);
	vmm_sweep_list(vmm_run_base(NULL), claim_labelled, gw);
	/* What no guest claimed was cut short before it had one. */
	for (struct sess *s = gw->sessions; s; s = s->next) {
		if (!s->adopt_pending)
			continue;
		s->adopt_pending = false;
		if (s->state == SESS_STARTING)
			fail_adopted(s, s->parent_id[0]
						? "the gateway stopped while it was being forked"
						: "the gateway stopped while it was starting");
		else {
			char why[700];

			snprintf(why, sizeof(why), "its checkpoint %.500s is missing",
				 s->ckpt[0] ? s->ckpt : "(none recorded)");
			s->ckpt[0] = '\0';
			fail_adopted(s, why);
		}
	}
	return n;
}

/* A pause to disk under way when the old gateway died may have finished
 * its checkpoint (held for id from the start) after QEMU quit: dir is the
 * complete one, if any. Partial ones are removed. */
struct held_scan {
	const char *id;
	const char *run_dir; /* the gone guest's, or NULL */
	char found[PATH_MAX];
};

static void on_held(void *ud, const struct vmm_sweep_entry *e)
{
	struct held_scan *h = ud;

	if (e->kind != VMM_SWEEP_CHECKPOINT || !e->held_by || strcmp(e->held_by, h->id))
		return;
	if (!h->found[0] && vmm_checkpoint_complete(e->path, h->run_dir)) {
		snprintf(h->found, sizeof(h->found), "%s", e->path);
		return;
	}
	log_info("adopt", "removing %s: an interrupted pause's checkpoint", e->path);
	fs_rm_rf(e->path);
}

/* The checkpoint an interrupted pause of s left (removes partial ones;
 * keep, the session's own, stays; gone_run_dir: the run dir of s's guest,
 * known to be gone, or NULL). Returns true with it in out. */
static bool held_checkpoint(struct sess *s, const char *keep, const char *gone_run_dir, char *out,
			    size_t len)
{
	struct held_scan h = { .id = s->id, .run_dir = gone_run_dir };

	if (keep && keep[0])
		snprintf(h.found, sizeof(h.found), "%s", keep);
	vmm_sweep_list(vmm_run_base(NULL), on_held, &h);
	if (!h.found[0] || (keep && !strcmp(h.found, keep)))
		return false;
	snprintf(out, len, "%s", h.found);
	return true;
}

/* An adoption (job_adopt.c) ended: the guest is the session's again, or the record says
 * what became of it, or it is lost. */
void sess_adopt_finished(struct sess *s, struct job *j)
{
	char path[PATH_MAX], *text = NULL, err[600];
	json_t *rec = NULL;

	if (j->rc == 0) {
		char stray[PATH_MAX];

		/* A pause under way was undone: its checkpoint goes; so does
		 * the one an interrupted resume had restored this guest from. */
		if (held_checkpoint(s, s->ckpt, NULL, stray, sizeof(stray)))
			fs_rm_rf(stray);
		if (s->ckpt[0]) {
			job_dispose(NULL, NULL, s->ckpt, NULL);
			s->ckpt[0] = '\0';
		}
		sess_set_vm(s, j->vm);
		j->vm = NULL;
		if (s->state == SESS_PAUSED) {
			if (sess_adopt_mirror(s, j->mirror) < 0)
				display_mirror_stop(j->mirror);
			j->mirror = NULL;
			sess_start_agent(s, NULL);
			sess_save(s);
		} else {
			s->state = SESS_STARTING; /* ready once more, with an event */
			sess_mark_ready(s, j->mirror);
			j->mirror = NULL;
			/* A guest stopped by an interrupted pause, or restored and
			 * not yet prepared, lags: its clock is set again. */
			if (s->vm && s->has_agent)
				job_set_clock_async(s->gw->guest_work, s->vm);
		}
		log_info("adopt", "%s adopted (%s) in %lld ms", s->id, sess_record_state(s),
			 (long long)j->ms);
		return;
	}
	if (j->rc == -EAGAIN && registry_path(s->gw->registry, s->id, path, sizeof(path)) == 0 &&
	    fs_read_file(path, 1 << 20, &text, NULL) == 0 && (rec = json_loads(text, 0, NULL))) {
		const char *st = json_string_value(json_object_get(rec, "state"));
		const char *ck = json_string_value(json_object_get(rec, "checkpoint"));
		const char *er = json_string_value(json_object_get(rec, "error"));

		memset(&s->guest, 0, sizeof(s->guest));
		if (st && !strcmp(st, "paused_disk") && ck) {
			snprintf(s->ckpt, sizeof(s->ckpt), "%s", ck);
			s->pause = SESS_PAUSE_DISK;
			s->state = SESS_STARTING;
			sess_set_state(s, SESS_PAUSED);
			log_info("adopt", "%s was paused to disk by its supervisor", s->id);
		} else {
			snprintf(err, sizeof(err), "%s", er ? er : "its supervisor stopped it");
			sess_set_failed(s, err);
		}
		json_decref(rec);
		free(text);
		return;
	}
	free(text);
	if (j->rc == -EINPROGRESS && s->ckpt[0] && s->pause == SESS_PAUSE_DISK) {
		/* A resume's guest that had not finished loading: the
		 * checkpoint is intact (the guest never ran), it is discarded. */
		memset(&s->guest, 0, sizeof(s->guest));
		s->state = SESS_STARTING;
		sess_set_state(s, SESS_PAUSED);
		log_info("adopt", "%s: its interrupted resume is undone: paused on disk", s->id);
		return;
	}
	if ((j->rc == -ESRCH || j->rc == -ENOENT) &&
	    held_checkpoint(s, NULL, s->guest.run_dir, s->ckpt, sizeof(s->ckpt))) {
		/* QEMU had quit into its checkpoint when the old gateway died. */
		memset(&s->guest, 0, sizeof(s->guest));
		s->pause = SESS_PAUSE_DISK;
		s->state = SESS_STARTING;
		sess_set_state(s, SESS_PAUSED);
		log_info("adopt", "%s: its pause to disk had finished: %s", s->id, s->ckpt);
		return;
	}
	fail_adopted(s, j->err);
}
