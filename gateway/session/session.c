/* gateway/session/session.c: see session.h. A session's life in the
 * registry: alloc, link, create (booting an image or restoring a template
 * as a job), find, destroy; its guest taken, stopped or failed, its screen
 * and agent connected, ready. Between session_state.c below and
 * session_tick.c (the heartbeat) above; the operations that start jobs are
 * in session_ops.c. */
#include "gateway/session/session.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/core/metrics.h"
#include "gateway/egress/egress.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/job_kind.h"
#include "gateway/session/registry.h"
#include "gateway/session/session_int.h"
#include "gateway/session/session_quota.h"
#include "gateway/session/session_usage.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/vm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

void sess_set_vm(struct sess *s, struct vmm_vm *vm)
{
	sess_guest_unwatch(s);
	s->vm = vm;
	memset(&s->guest, 0, sizeof(s->guest));
	if (vm)
		vmm_vm_identity(vm, &s->guest);
	sess_guest_watch(s);
}

void sess_stop_guest(struct sess *s, const char *why)
{
	sess_guest_stopping(s, why);
	sess_agent_stop(s->agent);
	s->agent = NULL;
	sess_guest_unwatch(s);
	job_dispose(s->vm, s->mirror, NULL, NULL); /* QEMU quits on a job thread */
	s->mirror = NULL;
	sess_set_vm(s, NULL);
}

void sess_set_failed(struct sess *s, const char *why)
{
	log_warn("session", "%s failed: %s", s->id, why);
	snprintf(s->error, sizeof(s->error), "%.*s", (int)sizeof(s->error) - 1, why);
	sess_stop_guest(s, "the session failed");
	sess_set_state(s, SESS_FAILED);
}

int sess_adopt_mirror(struct sess *s, struct display_mirror *m)
{
	/* A new mirror numbers its frames afresh: encodings of the old one's
	 * would be served for the new one's frames of the same number. */
	display_encode_cache_destroy(s->shots);
	s->shots = display_encode_cache_create(8);
	job_dispose(NULL, s->mirror, NULL, NULL);
	s->mirror = m;
	return s->shots ? 0 : -ENOMEM;
}

/* s's agent link came up or went down: what waits on s looks again. */
static void agent_changed(void *cu, bool up)
{
	(void)up;
	sess_wake(cu);
}

/* Starts connecting to the agent at path (keeping first, a link already
 * open, when given). */
void sess_start_agent_at(struct sess *s, const char *path, struct agent_link *first)
{
	const struct sess_agent_env env = { .ctx = s->gw->ctx,
					    .q = s->gw->guest_work,
					    .accept = egress_accept,
					    .au = s->egress,
					    .changed = agent_changed,
					    .cu = s };

	if (!(s->agent = sess_agent_start(&env, path, first)))
		log_warn("session", "%s: cannot start the agent connection", s->id);
}

void sess_start_agent(struct sess *s, struct agent_link *first)
{
	char path[4200];

	if (s->agent || !s->vm) {
		agent_link_destroy(first);
		return;
	}
	vmm_vm_socket(s->vm, VMM_SOCKET_AGENT, path, sizeof(path));
	sess_start_agent_at(s, path, first);
}

void sess_mark_ready(struct sess *s, struct display_mirror *m)
{
	if (sess_adopt_mirror(s, m) < 0) {
		sess_set_failed(s, "out of memory");
		return;
	}
	/* A guest restored or resumed shows the screen it had (a template's
	 * guest saved after its resolution changed): said before "ready". */
	sess_follow_screen_now(s);
	sess_start_agent(s, NULL);
	if (!s->ready_ms)
		s->ready_ms = fs_now_ms();
	s->active_ms = fs_now_ms();
	sess_set_state(s, SESS_READY);
}

/* Starts restoring the template req->image as a job: the session is ready
 * once the clone runs and is prepared. Returns 0 or -errno with *e. */
static int restore_template(struct sess *s, const struct session_request *req, struct api_error *e)
{
	char err[2048];
	struct job *j = job_new(&job_kind_restore, s->gw->ctx);
	int rc;

	if (!j)
		return api_error_set(e, 500, "internal", "out of memory");
	/* Another project's template is answered as one that is not there. */
	if (!project_sees_template(&s->gw->projects, req->project[0] ? req->project : NULL,
				   req->image)) {
		snprintf(err, sizeof(err), "no template %s (no %s/%s/template.json)", req->image,
			 vmm_templates_dir(), req->image);
		rc = -ENOENT;
	} else
		rc = vmm_template_load(req->image, &j->tpl, err, sizeof(err));
	if (rc < 0) {
		job_free(j);
		api_error_set(e,
			      rc == -ENOENT   ? 404
			      : rc == -ESTALE ? 409
					      : 500,
			      rc == -ENOENT   ? "unknown_template"
			      : rc == -ESTALE ? "template_stale"
					      : "internal",
			      err);
		return rc;
	}
	if ((req->width && req->width != j->tpl.width) ||
	    (req->height && req->height != j->tpl.height) ||
	    (req->vcpus && req->vcpus != j->tpl.vcpus) ||
	    (req->memory_mib && req->memory_mib != j->tpl.memory_mib) || req->page) {
		job_free(j);
		return api_error_set(
			e, 400, "invalid_argument",
			"a template fixes screen, vcpus, memory and page; give none of them");
	}
	if (!strncmp(req->url, "data:", 5)) {
		job_free(j);
		/* Chromium does not let a page script open a data: URL. */
		return api_error_set(
			e, 400, "invalid_argument",
			"a restored session cannot be sent to a data: url; use a page");
	}
	if (req->url[0] && !j->tpl.has_disk) {
		job_free(j);
		return api_error_set(e, 400, "invalid_argument",
				     "this template's guest has no browser to open a url in");
	}
	if (req->keyboard_layout[0] && !j->tpl.has_disk &&
	    strcmp(req->keyboard_layout, j->tpl.keyboard_layout)) {
		job_free(j);
		return api_error_set(e, 400, "invalid_argument",
				     "this template's guest has no X display to set a keyboard "
				     "layout on");
	}
	{
		struct quota_ask ask = { 1, j->tpl.vcpus, j->tpl.memory_mib, true };

		rc = sess_check_quota(s->gw, req->project, &ask, e);
	}
	/* A pool's member never makes room by dropping another. */
	if (rc == 0)
		rc = sess_check_room(s->gw, j->tpl.vcpus, j->tpl.memory_mib, !s->pool_of[0], e);
	if (rc < 0) {
		job_free(j);
		return rc;
	}
	/* A template keeps its layout unless the create asks for another. */
	snprintf(s->keyboard_layout, sizeof(s->keyboard_layout), "%s",
		 req->keyboard_layout[0] ? req->keyboard_layout : j->tpl.keyboard_layout);
	snprintf(j->keyboard_layout, sizeof(j->keyboard_layout), "%s", s->keyboard_layout);
	j->set_layout = strcmp(s->keyboard_layout, j->tpl.keyboard_layout) != 0;
	snprintf(j->url, sizeof(j->url), "%s", req->url);
	j->has_agent = j->tpl.has_disk;
	s->has_agent = j->tpl.has_disk;
	s->width = j->tpl.width;
	s->height = j->tpl.height;
	s->vcpus = j->tpl.vcpus;
	s->memory_mib = j->tpl.memory_mib;
	snprintf(s->template_name, sizeof(s->template_name), "%s", req->image);
	sess_supervise(s->gw, j, s->id);
	job_progress_begin(j, s->created_ms);
	rc = job_start(j);
	if (rc < 0) {
		job_free(j);
		return api_error_set(e, 500, "internal", "cannot start a thread");
	}
	s->job = j;
	return 0;
}

/* Starts booting req->image as a job: the session is ready once the
 * guest says so and its screen is connected. Returns 0 or -errno with *e. */
static int boot_image(struct sess *s, const struct session_request *req, struct api_error *e)
{
	struct vmm_spec *spec;
	char err[2048];
	struct job *j;
	int rc = vmm_image_load(req->image, &s->image, err, sizeof(err));

	if (rc < 0) {
		api_error_set(e, rc == -ENOENT ? 404 : 500,
			      rc == -ENOENT ? "unknown_image" : "internal", err);
		return rc;
	}
	if (!(j = job_new(&job_kind_boot, s->gw->ctx)))
		return api_error_set(e, 500, "internal", "out of memory");
	spec = &j->spec;
	vmm_spec_defaults(spec);
	j->image = s->image;
	spec->image = &j->image;
	if (req->width)
		spec->width = req->width;
	if (req->height)
		spec->height = req->height;
	if (req->vcpus)
		spec->vcpus = req->vcpus;
	spec->memory_mib = req->memory_mib ? req->memory_mib : s->image.rootfs[0] ? 2048 : 256;
	snprintf(j->url, sizeof(j->url), "%s", req->url);
	/* What vmm_vm_start would refuse, refused now with a 400. */
	spec->url = j->url[0] ? j->url : NULL;
	{
		struct vmm_spec chk = *spec;

		chk.accel = VMM_ACCEL_TCG; /* resolved by the job: the probe never runs here */
		rc = vmm_spec_check(&chk, err, sizeof(err));
	}
	if (rc < 0) {
		job_free(j);
		return api_error_set(e, 400, "invalid_argument", err);
	}
	if (req->keyboard_layout[0] && !s->image.rootfs[0] &&
	    strcmp(req->keyboard_layout, VMM_KEYMAP_DEFAULT)) {
		job_free(j);
		return api_error_set(e, 400, "invalid_argument",
				     "this image's guest has no X display to set a keyboard layout "
				     "on");
	}
	{
		struct quota_ask ask = { 1, spec->vcpus, spec->memory_mib, true };

		rc = sess_check_quota(s->gw, req->project, &ask, e);
	}
	if (rc == 0)
		rc = sess_check_resources(s->gw, spec->vcpus, spec->memory_mib, e);
	if (rc < 0) {
		job_free(j);
		return rc;
	}
	/* The image's X starts with a US layout. */
	snprintf(s->keyboard_layout, sizeof(s->keyboard_layout), "%s",
		 req->keyboard_layout[0] ? req->keyboard_layout : VMM_KEYMAP_DEFAULT);
	snprintf(j->keyboard_layout, sizeof(j->keyboard_layout), "%s", s->keyboard_layout);
	j->set_layout = strcmp(s->keyboard_layout, VMM_KEYMAP_DEFAULT) != 0;
	if (req->page) {
		/* The guest gets the page over fw_cfg (see docs/images.md); until
		 * the boot copies it into the run dir it waits where only we can
		 * write, in a new file that nothing there can redirect. */
		if ((size_t)snprintf(j->page_path, sizeof(j->page_path), "%s/pages/page-%s.html",
				     vmm_run_base(NULL), s->id) >= sizeof(j->page_path) ||
		    fs_write_file_private(j->page_path, req->page, strlen(req->page)) < 0) {
			j->page_path[0] = '\0';
			job_free(j);
			return api_error_set(e, 500, "internal", "cannot stage the page");
		}
	}
	s->width = spec->width;
	s->height = spec->height;
	s->vcpus = spec->vcpus;
	s->memory_mib = spec->memory_mib;
	s->has_agent = s->image.rootfs[0] != '\0';
	sess_supervise(s->gw, j, s->id);
	job_progress_begin(j, s->created_ms);
	if (job_start(j) < 0) {
		job_free(j);
		return api_error_set(e, 500, "internal", "cannot start a thread");
	}
	s->job = j;
	return 0;
}

const struct vmm_keymap *sess_keymap(const struct sess *s)
{
	const struct vmm_keymap *km;
	char err[256];

	if (!s->keyboard_layout[0] || !strcmp(s->keyboard_layout, VMM_KEYMAP_DEFAULT))
		return NULL;
	if ((km = vmm_keymap_cached(s->keyboard_layout)))
		return km;
	/* The jobs that start a guest compile it, and so does adoption before
	 * the loop runs: this is a fallback, a few ms once. */
	log_warn("session", "%s: keyboard layout %s compiled on the loop", s->id,
		 s->keyboard_layout);
	if (!(km = vmm_keymap_get(s->keyboard_layout, err, sizeof(err))))
		log_warn("session", "%s: %s; keys go as on a US layout", s->id, err);
	return km;
}

struct sess *sess_alloc(struct gw *gw, const struct session_request *req, struct api_error *e)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[SESS_ID_RANDOM];
	char suffix[sizeof(rnd) + 1];
	struct sess *s;

	if (gw->n_sessions >= gw->max_sessions) {
		api_error_set(e, 429, "too_many_sessions",
			      "the gateway runs its maximum of sessions");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s || getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd) ||
	    auth_new_token(s->control_token) < 0 || auth_new_token(s->view_token) < 0) {
		free(s);
		api_error_set(e, 500, "internal", "out of memory or randomness");
		return NULL;
	}
	/* 16 of 36 symbols (a slight bias of 256 % 36 is harmless in an id):
	 * ~82 bits, after the node name a front proxy routes by. */
	for (size_t i = 0; i < sizeof(rnd); i++)
		suffix[i] = alnum[rnd[i] % 36];
	suffix[sizeof(rnd)] = '\0';
	snprintf(s->id, sizeof(s->id), "%s%s", gw->node[0] ? gw->node : "node", suffix);
	auth_token_hash(s->control_token, s->control_hash);
	auth_token_hash(s->view_token, s->view_hash);
	s->gw = gw;
	s->req = *req;
	s->req.page = NULL; /* the page is handed over at start, not kept */
	s->req.egress = NULL; /* the rules live in s->egress */
	if (!(s->egress = egress_create(&gw->egress_cfg, gw->net_work,
					egress_rules_dup(req->egress))) ||
	    (req->egress && egress_rules_empty(req->egress) != egress_rules_now_empty(s->egress))) {
		egress_release(s->egress);
		free(s);
		api_error_set(e, 500, "internal", "out of memory");
		return NULL;
	}
	s->created_ms = fs_now_ms();
	usage_enter(&s->usage, USAGE_RUNNING, s->created_ms); /* booting runs too */
	s->active_ms = s->created_ms;
	if (req->timeout_s)
		s->expires_ms = s->created_ms + (int64_t)req->timeout_s * 1000;
	return s;
}

void sess_free_unlinked(struct sess *s)
{
	if (!s)
		return;
	egress_release(s->egress);
	json_decref(s->ext);
	free(s);
}

void sess_link(struct sess *s)
{
	struct gw *gw = s->gw;

	s->pointer_x = s->width / 2;
	s->pointer_y = s->height / 2;
	s->next = gw->sessions;
	gw->sessions = s;
	gw->n_sessions++;
	gw->vcpus_used += s->vcpus;
	gw->memory_used_mib += s->memory_mib;
	events_add(&s->events, "state", json_pack("{s:s}", "status", sess_state_name(s->state)));
	sess_save(s);
	sess_tick_start(s);
}

int sess_create(struct gw *gw, const struct session_request *req, struct sess **out,
		struct api_error *e)
{
	char miss[32];
	struct sess *s;
	int rc = sess_pool_claim(gw, req, out, miss, sizeof(miss), e);

	if (rc != 0) /* a warm member taken, or the creator's quota refused it */
		return rc < 0 ? rc : 0;
	/* A slot held by a pool's member is the creator's. */
	sess_pool_make_room(gw, 0);
	if (!(s = sess_alloc(gw, req, e)))
		return -EBUSY;
	snprintf(s->pool_note, sizeof(s->pool_note), "%s", miss);
	rc = req->from_template ? restore_template(s, req, e) : boot_image(s, req, e);
	if (rc < 0) {
		sess_free_unlinked(s);
		return rc;
	}
	sess_link(s);
	log_info("session", "%s starting: %s %s %dx%d%s%s", s->id,
		 req->from_template ? "template" : "image", req->image, s->width, s->height,
		 miss[0] ? ", pool miss: " : "", miss);
	*out = s;
	return 0;
}

int sess_create_member(struct gw *gw, const char *tpl, struct sess **out, struct api_error *e)
{
	struct session_request req = { .from_template = true };
	struct sess *s;
	int rc;

	snprintf(req.image, sizeof(req.image), "%s", tpl);
	if (!(s = sess_alloc(gw, &req, e)))
		return -EBUSY;
	snprintf(s->pool_of, sizeof(s->pool_of), "%s", tpl);
	if ((rc = restore_template(s, &req, e)) < 0) {
		sess_free_unlinked(s);
		return rc;
	}
	sess_link(s);
	log_info("session", "%s starting: a member of %s's pool", s->id, tpl);
	*out = s;
	return 0;
}

struct sess *sess_find_any(struct gw *gw, const char *id)
{
	for (struct sess *s = gw->sessions; s; s = s->next)
		if (!strcmp(s->id, id))
			return s;
	return NULL;
}

struct sess *sess_find(struct gw *gw, const char *id)
{
	struct sess *s = sess_find_any(gw, id);

	return s && !s->pool_of[0] ? s : NULL; /* a member is no one's yet */
}

/* Takes s out of the registry in memory and tells its listeners. */
static void unlink_session(struct sess *s)
{
	struct sess **pp;

	for (pp = &s->gw->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			s->gw->n_sessions--;
			s->gw->vcpus_used -= s->vcpus;
			s->gw->memory_used_mib -= s->memory_mib;
			break;
		}
	lws_sul_cancel(&s->sul);
	sess_emit(s, SESS_SIGNAL_DESTROY, NULL);
	if (s->listeners)
		log_warn("session", "%s: a listener stayed past destroy", s->id);
	s->listeners = NULL;
	/* Waiters look the session up again by id and find it gone. */
	sess_wake(s);
}

/* Frees s (unlinked): its job is orphaned (it frees its own guests), its
 * guest stops on a job thread, or, keep, is let go to run on under its
 * supervisor with its checkpoint kept; ticket (may be NULL) is done once
 * what it held is gone. */
static void free_session(struct sess *s, struct job_ticket *ticket, bool keep)
{
	if (s->job)
		job_orphan(s->job, ticket);
	s->job = NULL;
	sess_agent_stop(s->agent);
	s->agent = NULL;
	sess_guest_unwatch(s);
	if (keep)
		job_detach(s->vm, s->mirror);
	else
		job_dispose(s->vm, s->mirror, s->ckpt, ticket);
	s->vm = NULL;
	s->mirror = NULL;
	display_encode_cache_destroy(s->shots);
	events_clear(&s->events);
	log_info("session", "%s %s", s->id, keep ? "left to the next gateway" : "destroyed");
	sess_free_unlinked(s);
}

void sess_destroy(struct sess *s, struct job_ticket *ticket)
{
	int rc;

	if (!s)
		return;
	/* A pool's member was no one's session: nothing to bill or count. */
	if (!s->pool_of[0]) {
		metrics_op(METRICS_OP_DELETE, true, 0);
		sess_usage_ended(s);
	}
	/* First: a crash from here on must not bring the session back. */
	if (s->gw->registry && (rc = registry_remove(s->gw->registry, s->id)) < 0)
		log_error("session", "%s: cannot remove its record: %s", s->id, strerror(-rc));
	unlink_session(s);
	if (s->job && s->job->kind == &job_kind_fork) {
		struct sess *child = sess_find_any(s->gw, s->job->child_id);

		if (child)
			sess_set_failed(child, "the session it was forked from was deleted");
	}
	free_session(s, ticket, false);
}

void sess_destroy_all(struct gw *gw)
{
	while (gw->sessions)
		sess_destroy(gw->sessions, NULL);
}

void sess_release_all(struct gw *gw)
{
	while (gw->sessions) {
		struct sess *s = gw->sessions;

		unlink_session(s);
		free_session(s, NULL, true);
	}
}
