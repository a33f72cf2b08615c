/* gateway/template/template_build.c: see template_build.h. */
#include "gateway/template/template_build.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "common/work_queue.h"
#include "gateway/session/progress.h"
#include "gateway/session/session.h"
#include "vmm-qemu/template_create.h"
#include "vmm-qemu/template_from.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEMPLATE_BUILD_READY_S 600 /* job.c BOOT_READY_TIMEOUT_MS */

struct build {
	struct build *next; /* gw::builds */
	char name[65];
	struct vmm_template_params p; /* strings below */
	char image[64], url[VMM_MAX_URL + 1], page_file[PATH_MAX];
	int memory_mib; /* counted against the budget while building */
	int64_t started_ms;
	volatile sig_atomic_t cancel; /* set by the loop: the gateway stops */
	bool queued; /* a job of the bulk queue from its submit until its done */
	bool done; /* the loop's: rc and err are in */
	int rc;
	char err[1024];
	struct gw *gw;
	pthread_mutex_t mu; /* guards progress: the worker writes, the loop reads */
	struct progress progress; /* the build's phases (progress.h) */
	/* From a session (template_build_from_session): it saves its state
	 * first (waiting), then its job makes the template of ckpt. */
	char session_id[SESS_ID_MAX];
	char parent[VMM_TEMPLATE_NAME_MAX + 1]; /* the session's template, "" for none */
	char ckpt[PATH_MAX]; /* the job's, removed when it ends */
	bool waiting; /* for the session's state (loop only) */
	bool flattened; /* set by the worker */
	int chain_max; /* gw::template_chain_max */
};

static void build_free(struct build *b)
{
	pthread_mutex_destroy(&b->mu);
	free(b);
}

/* Template builds hold at most all but one of the bulk queue's workers. */
static const char build_owner;

/* The worker: vmm_template_create's steps, as b's phases. */
static void on_step(void *ud, enum vmm_step step)
{
	struct build *b = ud;

	pthread_mutex_lock(&b->mu);
	progress_enter(&b->progress, progress_of_step(step), fs_now_ms());
	pthread_mutex_unlock(&b->mu);
}

static struct build *find(struct gw *gw, const char *name)
{
	for (struct build *b = gw->builds; b; b = b->next)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

static void build_work(void *ud, void *ctx)
{
	struct build *b = ud;

	(void)ctx;
	if (b->ckpt[0]) {
		struct vmm_template_from f = { .name = b->name,
					       .ckpt = b->ckpt,
					       .parent = b->parent[0] ? b->parent : NULL,
					       .from_session = b->session_id,
					       .max_depth = b->chain_max,
					       .on_step = on_step,
					       .step_ud = b,
					       .cancel = &b->cancel };

		b->rc = vmm_template_from_checkpoint(&f, &b->flattened, b->err, sizeof(b->err));
		fs_rm_rf(b->ckpt);
	} else {
		b->rc = vmm_template_create(b->name, &b->p, &b->cancel, b->err, sizeof(b->err));
	}
	if (b->page_file[0])
		unlink(b->page_file);
}

static void unlink_build(struct gw *gw, struct build *b)
{
	for (struct build **pp = &gw->builds; *pp; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			return;
		}
}

/* b has ended (done, rc and err in): its memory goes back to the budget;
 * a success is forgotten (the template answers for itself), a failure
 * stays to say why, unless the gateway is stopping. */
static void ended(struct build *b)
{
	struct gw *gw = b->gw;

	b->done = true;
	pthread_mutex_lock(&b->mu);
	progress_end(&b->progress, b->rc == 0, fs_now_ms());
	pthread_mutex_unlock(&b->mu);
	gw->memory_used_mib -= b->memory_mib;
	b->memory_mib = 0;
	if (b->rc == 0)
		log_info("template", "%s %s in %.1f s%s", b->name,
			 b->session_id[0] ? "saved" : "built",
			 (fs_now_ms() - b->started_ms) / 1000.0,
			 b->flattened ? " (its disk chain flattened)" : "");
	else
		log_warn("template", "%s failed: %s", b->name, b->err);
	if (b->rc == 0 || b->cancel) {
		unlink_build(gw, b);
		build_free(b);
	}
}

/* The job's done (the loop's). */
static void build_done(void *ud, int status)
{
	struct build *b = ud;

	b->queued = false;
	if (status < 0) { /* it never ran: the gateway stopped first */
		b->rc = -ECANCELED;
		snprintf(b->err, sizeof(b->err), "cancelled: the gateway stopped");
		if (b->ckpt[0])
			fs_rm_rf(b->ckpt);
		if (b->page_file[0])
			unlink(b->page_file);
	}
	ended(b);
}

/* Queues b's work. 0, or -EBUSY (the queue is full) or -ENOMEM. */
static int submit(struct build *b)
{
	int rc = work_queue_submit(b->gw->bulk_work, &build_owner, build_work, build_done, b);

	if (rc == 0)
		b->queued = true;
	return rc == -EBUSY ? rc : rc < 0 ? -ENOMEM : 0;
}

/* A build with no job (waiting for its session) fails with msg. */
static void fail_waiting(struct build *b, const char *msg)
{
	b->waiting = false;
	b->rc = -EIO;
	snprintf(b->err, sizeof(b->err), "%s", msg);
	ended(b);
}

/* Builds waiting for a session whose job ended without telling (the
 * session was deleted) fail. */
static void reap(struct gw *gw)
{
	for (struct build *b = gw->builds, *next; b; b = next) {
		struct sess *s = b->waiting ? sess_find(gw, b->session_id) : NULL;

		next = b->next; /* fail_waiting may free b */
		if (b->waiting && !sess_saving(s, b->name))
			fail_waiting(b, "the session was deleted before its state was saved");
	}
}

/* 409 when name is a template or a build under way (old: its build). */
static int name_free(const struct build *old, const char *name, struct api_error *e)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/template.json", vmm_templates_dir(), name);
	if ((old && !old->done) || stat(path, &st) == 0)
		return api_error_set(e, 409, "template_exists",
				     old && !old->done ? "that template is being built"
						       : "that template exists: delete it first");
	return 0;
}

int template_build_start(struct gw *gw, const char *name, const struct session_request *req,
			 struct api_error *e)
{
	char err[256];
	struct vmm_image img;
	struct build *b, *old;
	int rc, memory;

	reap(gw);
	old = find(gw, name);
	if ((rc = name_free(old, name, e)) < 0)
		return rc;
	rc = vmm_image_load(req->image, &img, err, sizeof(err));
	if (rc < 0) {
		api_error_set(e, rc == -ENOENT ? 404 : 500,
			      rc == -ENOENT ? "unknown_image" : "internal", err);
		return rc;
	}
	memory = req->memory_mib ? req->memory_mib : img.rootfs[0] ? 2048 : 256;
	rc = sess_check_resources(gw, req->vcpus ? req->vcpus : 2, memory, e);
	if (rc < 0)
		return rc;
	if (old) { /* a failed build of the same name: forget it */
		template_build_forget(gw, name);
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return api_error_set(e, 500, "internal", "out of memory");
	pthread_mutex_init(&b->mu, NULL);
	snprintf(b->name, sizeof(b->name), "%s", name);
	snprintf(b->image, sizeof(b->image), "%s", req->image);
	snprintf(b->url, sizeof(b->url), "%s", req->url);
	b->p.image = b->image;
	b->p.url = b->url[0] ? b->url : NULL;
	b->p.width = req->width;
	b->p.height = req->height;
	b->p.vcpus = req->vcpus;
	b->p.memory_mib = req->memory_mib;
	b->p.settle_s = -1;
	/* as long as a session's boot may take (job.c): a busy host slows
	 * the guest's first Chromium start several times over */
	b->p.timeout_s = TEMPLATE_BUILD_READY_S;
	b->p.on_step = on_step;
	b->p.step_ud = b;
	if (req->page) {
		/* Where only we can write (as a session's page: session.c), not
		 * under a name in /tmp that anyone could have linked elsewhere;
		 * a failed build's leftover of the same name goes first. */
		if ((size_t)snprintf(b->page_file, sizeof(b->page_file), "%s/pages/tpl-%s.html",
				     vmm_run_base(NULL), name) >= sizeof(b->page_file) ||
		    (unlink(b->page_file) < 0 && errno != ENOENT) ||
		    fs_write_file_private(b->page_file, req->page, strlen(req->page)) < 0) {
			build_free(b);
			return api_error_set(e, 500, "internal", "cannot stage the page");
		}
		b->p.page_file = b->page_file;
	}
	b->memory_mib = memory;
	b->started_ms = fs_now_ms();
	progress_begin(&b->progress, PROGRESS_PREPARING, b->started_ms);
	b->gw = gw;
	if ((rc = submit(b)) < 0) {
		if (b->page_file[0])
			unlink(b->page_file);
		build_free(b);
		return rc == -EBUSY ? api_error_set(e, 503, "busy",
						    "too many templates and videos are being "
						    "made: try again")
				    : api_error_set(e, 500, "internal", "out of memory");
	}
	gw->memory_used_mib += memory;
	b->next = gw->builds;
	gw->builds = b;
	log_info("template", "%s: building from %s", name, req->image);
	return 0;
}

int template_build_from_session(struct gw *gw, const char *name, struct sess *s,
				struct api_error *e)
{
	struct build *b, *old;
	int rc;

	reap(gw);
	old = find(gw, name);
	if ((rc = name_free(old, name, e)) < 0)
		return rc;
	/* The helper guest that loads the state holds the session's memory. */
	rc = sess_check_resources(gw, sess_vcpus(s), sess_memory_mib(s), e);
	if (rc < 0)
		return rc;
	b = calloc(1, sizeof(*b));
	if (!b)
		return api_error_set(e, 500, "internal", "out of memory");
	pthread_mutex_init(&b->mu, NULL);
	snprintf(b->name, sizeof(b->name), "%s", name);
	snprintf(b->image, sizeof(b->image), "%s", sess_image(s));
	if (!b->image[0] && sess_template(s)[0]) { /* restored: the image is its template's */
		struct vmm_template t;
		char err[256];

		if (vmm_template_load(sess_template(s), &t, err, sizeof(err)) == 0)
			snprintf(b->image, sizeof(b->image), "%s", t.image);
	}
	snprintf(b->session_id, sizeof(b->session_id), "%s", sess_id(s));
	snprintf(b->parent, sizeof(b->parent), "%s", sess_template(s));
	b->started_ms = fs_now_ms();
	progress_begin(&b->progress, PROGRESS_SAVING, b->started_ms);
	b->gw = gw;
	b->waiting = true;
	b->chain_max = gw->template_chain_max;
	rc = sess_save_template(s, name, template_build_saved, e);
	if (rc < 0) {
		build_free(b);
		return rc;
	}
	if (old) /* a failed build of the same name: forget it */
		template_build_forget(gw, name);
	b->memory_mib = sess_memory_mib(s);
	gw->memory_used_mib += b->memory_mib;
	b->next = gw->builds;
	gw->builds = b;
	return 0;
}

int template_build_saved(struct gw *gw, const char *name, const char *ckpt, const char *err)
{
	struct build *b = find(gw, name);

	/* A failed build of that name may be older: the waiting one is first. */
	if (!b || !b->waiting)
		return -ENOENT;
	if (!ckpt) {
		fail_waiting(b, err && err[0] ? err : "the session's state was not saved");
		return 0;
	}
	b->waiting = false;
	snprintf(b->ckpt, sizeof(b->ckpt), "%s", ckpt);
	pthread_mutex_lock(&b->mu);
	progress_enter(&b->progress, PROGRESS_PREPARING, fs_now_ms());
	pthread_mutex_unlock(&b->mu);
	if (submit(b) < 0) {
		b->ckpt[0] = '\0';
		fail_waiting(b, "too many templates and videos are being made: try again");
		return -EAGAIN;
	}
	return 0;
}

bool template_build_uses(struct gw *gw, const char *name, char *who, size_t len)
{
	reap(gw);
	for (struct build *b = gw->builds; b; b = b->next)
		if (!b->done && !strcmp(b->parent, name)) {
			snprintf(who, len,
				 "template %s is being saved from session %s, restored from it",
				 b->name, b->session_id);
			return true;
		}
	return false;
}

json_t *template_build_json(struct gw *gw, const char *name)
{
	struct progress p;
	struct build *b;

	reap(gw);
	b = find(gw, name);
	if (!b)
		return NULL;
	pthread_mutex_lock(&b->mu);
	p = b->progress;
	pthread_mutex_unlock(&b->mu);
	return json_pack("{s:s, s:s, s:s, s:s*, s:I, s:o*, s:s*, s:s*}", "name", b->name, "image",
			 b->image, "status", b->done ? "failed" : "building", "error",
			 b->done ? b->err : NULL, "age_ms",
			 (json_int_t)(fs_now_ms() - b->started_ms), "build",
			 progress_json(&p, fs_now_ms()), "from_session",
			 b->session_id[0] ? b->session_id : NULL, "parent",
			 b->parent[0] ? b->parent : NULL);
}

void template_build_list(struct gw *gw, json_t *a)
{
	reap(gw);
	for (struct build *b = gw->builds; b; b = b->next)
		json_array_append_new(a, template_build_json(gw, b->name));
}

void template_build_forget(struct gw *gw, const char *name)
{
	for (struct build **pp = &gw->builds; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, name) && (*pp)->done) {
			struct build *b = *pp;

			*pp = b->next;
			if (b->memory_mib)
				gw->memory_used_mib -= b->memory_mib;
			build_free(b);
			return;
		}
}

void template_build_stop_all(struct gw *gw)
{
	for (struct build *b = gw->builds, *next; b; b = next) {
		next = b->next;
		b->cancel = 1;
		if (b->waiting)
			fail_waiting(b, "cancelled: the gateway stopped"); /* frees b */
		else if (!b->queued) {
			unlink_build(gw, b);
			build_free(b);
		}
	}
}
