/* gateway/session/job.c: see job.h. */
#include "gateway/session/job_int.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "common/work_queue.h"
#include "vmm-qemu/guest_prep.h"
#include "vmm-qemu/priv.h"
#include "vmm-qemu/qga_client.h"
#include "vmm-qemu/vm_find.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int running;

/* Screenshots then need no round trip to QEMU (see action/run.c). */
#define KEEP_FRESH_MS 30

const char *job_kind_name(const struct job_kind *kind)
{
	return kind->busy;
}

/* Freeing the job is its work (job_free): never a session's. */
const struct job_kind job_kind_dispose = { .busy = "disposing", .metrics_op = -1 };

struct job_ticket {
	atomic_int refs;
	atomic_int pending; /* jobs that hold it and have not ended */
	_Atomic(struct lws_context *) wake; /* woken when pending reaches 0 (watched) */
	/* the watch, loop thread only */
	void (*done)(void *ud);
	void *ud;
	struct job_ticket *watch_next; /* watched */
};

static struct job_ticket *watched; /* each held; loop thread */

struct job_ticket *job_ticket_new(void)
{
	struct job_ticket *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	atomic_init(&t->refs, 1);
	return t;
}

bool job_ticket_done(struct job_ticket *t)
{
	return !t || atomic_load(&t->pending) == 0;
}

void job_ticket_release(struct job_ticket *t)
{
	if (t && atomic_fetch_sub(&t->refs, 1) == 1)
		free(t);
}

bool job_ticket_watch(struct job_ticket *t, struct lws_context *ctx, void (*done)(void *ud),
		      void *ud)
{
	if (!t)
		return false;
	/* wake is set before pending is read: a job that ends after this
	 * read finds it and wakes the loop */
	atomic_store(&t->wake, ctx);
	if (job_ticket_done(t))
		return false;
	atomic_fetch_add(&t->refs, 1);
	t->done = done;
	t->ud = ud;
	t->watch_next = watched;
	watched = t;
	return true;
}

/* Takes t off the watched list; true when it was on it. */
static bool unlink_watch(struct job_ticket *t)
{
	for (struct job_ticket **pp = &watched; *pp; pp = &(*pp)->watch_next)
		if (*pp == t) {
			*pp = t->watch_next;
			t->watch_next = NULL;
			t->done = NULL;
			return true;
		}
	return false;
}

void job_ticket_unwatch(struct job_ticket *t)
{
	if (t && unlink_watch(t))
		job_ticket_release(t);
}

void job_ticket_reap(void)
{
	struct job_ticket *t;

	/* from the head each time: a done may change the list */
	do {
		for (t = watched; t && !job_ticket_done(t); t = t->watch_next) {
		}
		if (t) {
			void (*done)(void *ud) = t->done;
			void *ud = t->ud;

			unlink_watch(t);
			job_ticket_release(t);
			done(ud);
		}
	} while (t);
}

/* j is to tell t when it ends. */
static void ticket_attach(struct job *j, struct job_ticket *t)
{
	if (!t || j->ticket)
		return;
	atomic_fetch_add(&t->refs, 1);
	atomic_fetch_add(&t->pending, 1);
	j->ticket = t;
}

/* The job holding t has ended (its guests are gone). */
static void ticket_end(struct job_ticket *t)
{
	struct lws_context *wake;

	if (!t)
		return;
	if (atomic_fetch_sub(&t->pending, 1) == 1 && (wake = atomic_load(&t->wake)))
		lws_cancel_service(wake); /* its watch's done is due */
	job_ticket_release(t);
}

/* Called on the mirror's worker thread: only wake the loop. */
static void on_frame(void *ud)
{
	lws_cancel_service(ud);
}

int job_start_mirror(struct vmm_vm *vm, struct lws_context *ctx, struct display_mirror **out,
		     char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	int rc;

	rc = vmm_vm_socket(vm, VMM_SOCKET_VNC, path, sizeof(path));
	if (rc < 0) {
		snprintf(err, errlen, "the guest's run dir path is too long");
		return rc;
	}
	rc = display_mirror_start(path, on_frame, ctx, out, err, errlen);
	if (rc == 0)
		display_mirror_keep_fresh(*out, KEEP_FRESH_MS);
	return rc;
}

/* One of j's handshake flags (started, done, orphaned), read under mu. */
static bool read_flag(struct job *j, const bool *flag)
{
	bool v;

	pthread_mutex_lock(&j->mu);
	v = *flag;
	pthread_mutex_unlock(&j->mu);
	return v;
}

void job_progress_begin(struct job *j, int64_t t0)
{
	pthread_mutex_lock(&j->mu);
	progress_begin(&j->progress, PROGRESS_QUEUED, t0);
	pthread_mutex_unlock(&j->mu);
}

void job_progress(struct job *j, struct progress *out)
{
	pthread_mutex_lock(&j->mu);
	*out = j->progress;
	pthread_mutex_unlock(&j->mu);
}

void job_phase(struct job *j, enum progress_phase ph)
{
	pthread_mutex_lock(&j->mu);
	progress_enter(&j->progress, ph, fs_now_ms());
	pthread_mutex_unlock(&j->mu);
}

/* vmm_vm_start's steps (and a restore's), as j's phases. */
static void on_vmm_step(void *ud, enum vmm_step step)
{
	job_phase(ud, progress_of_step(step));
}

struct job *job_new(const struct job_kind *kind, struct lws_context *ctx)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->kind = kind;
	j->ctx = ctx;
	pthread_mutex_init(&j->mu, NULL);
	return j;
}

/* Frees j and what it holds, here and now (a job thread), then tells its
 * ticket. */
static void free_now(struct job *j)
{
	struct job_ticket *t = j->ticket;

	agent_link_destroy(j->agent);
	display_mirror_stop(j->mirror);
	if (j->terminate[0]) {
		char err[512];

		if (vmm_priv_shim_terminate(j->terminate, 10000, err, sizeof(err)) < 0)
			log_warn("job", "orphan guest %s not stopped: %s", j->terminate, err);
	}
	if (j->detach)
		vmm_vm_detach(j->vm);
	else
		vmm_vm_destroy(j->vm);
	vmm_vm_destroy(j->child);
	if (j->ckpt[0])
		fs_rm_rf(j->ckpt);
	if (j->page_path[0])
		unlink(j->page_path);
	pthread_mutex_destroy(&j->mu);
	free(j);
	ticket_end(t);
}

static bool holds_something(const struct job *j)
{
	return j->agent || j->mirror || j->vm || j->child || j->ckpt[0] || j->page_path[0] ||
	       j->terminate[0];
}

void job_free(struct job *j)
{
	if (!j)
		return;
	if (!holds_something(j)) {
		free_now(j);
		return;
	}
	/* Quitting a QEMU takes up to seconds: a job thread does it. */
	j->kind = &job_kind_dispose;
	j->orphaned = true;
	j->done = false;
	if (job_start(j) < 0)
		free_now(j); /* no thread at all: the loop must do it itself */
}

void job_dispose(struct vmm_vm *vm, struct display_mirror *mirror, const char *ckpt,
		 struct job_ticket *ticket)
{
	struct job *j;

	if (!vm && !mirror && !(ckpt && ckpt[0]))
		return;
	j = job_new(&job_kind_dispose, NULL);
	if (!j) { /* out of memory: do it here rather than leak a guest */
		display_mirror_stop(mirror);
		vmm_vm_destroy(vm);
		if (ckpt && ckpt[0])
			fs_rm_rf(ckpt);
		return;
	}
	j->vm = vm;
	j->mirror = mirror;
	if (ckpt)
		snprintf(j->ckpt, sizeof(j->ckpt), "%s", ckpt);
	ticket_attach(j, ticket);
	job_free(j);
}

void job_detach(struct vmm_vm *vm, struct display_mirror *mirror)
{
	struct job *j;

	if (!vm && !mirror)
		return;
	j = job_new(&job_kind_dispose, NULL);
	if (!j) {
		display_mirror_stop(mirror);
		vmm_vm_detach(vm);
		return;
	}
	j->vm = vm;
	j->mirror = mirror;
	j->detach = true;
	job_free(j);
}

void job_terminate(const char *run_dir)
{
	struct job *j = job_new(&job_kind_dispose, NULL);

	if (!j)
		return; /* its grace period ends it */
	snprintf(j->terminate, sizeof(j->terminate), "%s", run_dir);
	job_free(j);
}

struct vmm_vm_opts job_guest_opts(struct job *j)
{
	struct vmm_vm_opts o = { 0 };

	o.label = j->label[0] ? j->label : NULL;
	o.on_step = on_vmm_step;
	o.step_ud = j;
	if (j->shim.bin) {
		j->shim.record = j->shim_record[0] ? j->shim_record : NULL;
		o.shim = &j->shim;
	}
	return o;
}

void job_connect_screen(struct job *j, struct vmm_vm *vm)
{
	job_phase(j, PROGRESS_SCREEN);
	j->rc = job_start_mirror(vm, j->ctx, &j->mirror, j->err, sizeof(j->err));
}

bool job_orphaned(struct job *j)
{
	return read_flag(j, &j->orphaned);
}

void job_log_prep(const struct job *j, const struct guest_prep_report *rep)
{
	if (rep->notes[0])
		log_warn("prep", "%s: %s", j->label, rep->notes);
	log_info("prep", "%s: page %lld ms, warm-up and clock %lld ms%s", j->label, rep->page_ms,
		 rep->warm_ms, rep->via_agent ? " (vitrine-agent)" : "");
}

/* Jobs run on threads that live as long as the process: QEMU is spawned
 * with PR_SET_PDEATHSIG, which fires when the spawning *thread* exits, so
 * a guest started by a job must not outlive its thread. A boot holds its
 * thread for as long as the guest boots, so threads are added while every
 * one is busy (up to MAX_WORKERS): a delete never queues behind boots. */
#define MAX_WORKERS 64

static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cv = PTHREAD_COND_INITIALIZER;
static struct job *queue_head, *queue_tail; /* linked by job::next */
static int workers, busy, queued; /* under queue_mu */

static void run_job(struct job *j)
{
	int64_t t0 = fs_now_ms();
	bool orphaned;

	/* Compiled here, not on the loop: the session's actions find it cached. */
	if (j->keyboard_layout[0] && strcmp(j->keyboard_layout, VMM_KEYMAP_DEFAULT) &&
	    !vmm_keymap_get(j->keyboard_layout, j->err, sizeof(j->err)))
		log_warn("job", "%s", j->err);
	if (j->kind->run)
		j->kind->run(j);
	j->ms = fs_now_ms() - t0;
	pthread_mutex_lock(&j->mu);
	j->done = true;
	orphaned = j->orphaned;
	if (!orphaned)
		lws_cancel_service(j->ctx); /* the context outlives us: job_wait_all */
	pthread_mutex_unlock(&j->mu);
	if (orphaned)
		free_now(j);
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct job *j;

		pthread_mutex_lock(&queue_mu);
		while (!queue_head)
			pthread_cond_wait(&queue_cv, &queue_mu);
		busy++;
		j = queue_head;
		queue_head = j->next;
		if (!queue_head)
			queue_tail = NULL;
		queued--;
		pthread_mutex_unlock(&queue_mu);
		run_job(j);
		pthread_mutex_lock(&queue_mu);
		busy--;
		pthread_mutex_unlock(&queue_mu);
		atomic_fetch_sub(&running, 1);
	}
	return NULL;
}

int job_start(struct job *j)
{
	int rc = 0;

	pthread_mutex_lock(&queue_mu);
	/* Idle threads (workers - busy) must outnumber the jobs waiting. */
	while (workers < MAX_WORKERS && workers - busy <= queued) {
		pthread_attr_t attr;
		pthread_t t;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &attr, worker, NULL);
		pthread_attr_destroy(&attr);
		if (rc)
			break;
		workers++;
	}
	if (workers == 0) {
		pthread_mutex_unlock(&queue_mu);
		return -rc;
	}
	j->next = NULL;
	if (queue_tail)
		queue_tail->next = j;
	else
		queue_head = j;
	queue_tail = j;
	queued++;
	atomic_fetch_add(&running, 1);
	pthread_cond_signal(&queue_cv);
	pthread_mutex_unlock(&queue_mu);
	return 0;
}

/* On a worker: the agent's socket and nothing else (a guest gone meanwhile
 * just fails the connect). */
static void clock_work(void *ud, void *ctx)
{
	char *path = ud, err[512];
	struct qga_client *c = NULL;

	(void)ctx;
	if (qga_client_connect(path, 5000, &c, err, sizeof(err)) == 0 &&
	    guest_prep_set_clock(c, 10000, err, sizeof(err)) < 0)
		log_warn("job", "guest clock not set after resume: %s", err);
	qga_client_destroy(c);
}

static void clock_done(void *ud, int status)
{
	(void)status; /* not set when the gateway stopped first: best effort */
	free(ud);
}

void job_set_clock_async(struct work_queue *q, const struct vmm_vm *vm)
{
	char *path = malloc(PATH_MAX);

	if (!path || vmm_vm_socket(vm, VMM_SOCKET_QGA, path, PATH_MAX) < 0 ||
	    work_queue_submit(q, NULL, clock_work, clock_done, path) < 0)
		free(path);
}

bool job_started(struct job *j)
{
	return read_flag(j, &j->started);
}

bool job_done(struct job *j)
{
	return read_flag(j, &j->done);
}

void job_orphan(struct job *j, struct job_ticket *ticket)
{
	bool done;

	pthread_mutex_lock(&j->mu);
	done = j->done;
	ticket_attach(j, ticket); /* under mu: the thread reads it only once done */
	j->orphaned = true;
	pthread_mutex_unlock(&j->mu);
	if (done)
		job_free(j);
}

bool job_wait_all(int timeout_ms)
{
	int64_t until = fs_now_ms() + timeout_ms;

	while (atomic_load(&running) > 0 && fs_now_ms() < until)
		usleep(20 * 1000);
	return atomic_load(&running) == 0;
}
