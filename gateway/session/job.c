/* gateway/session/job.c: see job.h. */
#include "gateway/session/job.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "vmm-qemu/checkpoint.h"
#include "vmm-qemu/guest_prep.h"
#include "vmm-qemu/qga_client.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int running;

const char *job_kind_name(enum job_kind kind)
{
	switch (kind) {
	case JOB_RESTORE:
		return "restoring";
	case JOB_PAUSE_DISK:
		return "pausing";
	case JOB_RESUME_DISK:
		return "resuming";
	case JOB_FORK:
		return "forking";
	}
	return "busy";
}

struct job *job_new(enum job_kind kind, struct lws_context *ctx)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->kind = kind;
	j->ctx = ctx;
	pthread_mutex_init(&j->mu, NULL);
	return j;
}

void job_free(struct job *j)
{
	if (!j)
		return;
	agent_link_destroy(j->agent);
	vmm_vm_destroy(j->vm);
	vmm_vm_destroy(j->child);
	if (j->ckpt[0])
		fs_rm_rf(j->ckpt);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

static void do_restore(struct job *j)
{
	struct vmm_vm_opts opts = { 0 };
	struct guest_prep prep = { .set_clock = j->has_agent, .warm = true, .keep_agent = &j->agent };

	j->rc = vmm_template_restore(&j->tpl, &opts, &j->vm, NULL, j->err, sizeof(j->err));
	if (j->rc < 0)
		return;
	if (j->has_agent && j->url[0])
		prep.url = j->url;
	prep.has_agent = j->has_agent;
	j->rc = guest_prep_run(j->vm, &prep, j->err, sizeof(j->err));
}

static void do_pause(struct job *j)
{
	j->rc = vmm_checkpoint_save(j->vm, j->ckpt, VMM_CKPT_QUIT, &j->bytes, j->err,
				    sizeof(j->err));
	if (j->rc == 0) {
		vmm_vm_destroy(j->vm);
		j->vm = NULL;
	}
}

static void do_resume(struct job *j)
{
	struct vmm_vm_opts opts = { 0 };
	struct guest_prep prep = { .set_clock = j->has_agent, .has_agent = j->has_agent,
				   .keep_agent = &j->agent };

	j->rc = vmm_checkpoint_restore(j->ckpt, &opts, &j->vm, j->err, sizeof(j->err));
	if (j->rc < 0)
		return;
	fs_rm_rf(j->ckpt);
	j->ckpt[0] = '\0';
	/* Time went on while it was saved: best effort, as a clone's. */
	if (guest_prep_run(j->vm, &prep, j->err, sizeof(j->err)) < 0)
		log_warn("job", "resumed guest not prepared: %s", j->err);
}

static void do_fork(struct job *j)
{
	struct vmm_vm_opts opts = { 0 };

	j->rc = vmm_checkpoint_dir_new(NULL, j->ckpt, j->err, sizeof(j->err));
	if (j->rc == 0)
		j->rc = vmm_checkpoint_save(j->vm, j->ckpt, VMM_CKPT_KEEP_RUNNING, &j->bytes, j->err,
					    sizeof(j->err));
	if (j->rc == 0)
		j->rc = vmm_checkpoint_restore(j->ckpt, &opts, &j->child, j->err, sizeof(j->err));
	if (j->ckpt[0])
		fs_rm_rf(j->ckpt);
	j->ckpt[0] = '\0';
}

/* Jobs run on a few threads that live as long as the process: QEMU is
 * spawned with PR_SET_PDEATHSIG, which fires when the spawning *thread*
 * exits, so a guest started by a job must not outlive its thread. */
#define WORKERS 4

static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cv = PTHREAD_COND_INITIALIZER;
static struct job *queue_head, *queue_tail; /* linked by job::next */
static int workers;

static void run_job(struct job *j)
{
	int64_t t0 = fs_now_ms();
	bool orphaned;

	switch (j->kind) {
	case JOB_RESTORE:
		do_restore(j);
		break;
	case JOB_PAUSE_DISK:
		do_pause(j);
		break;
	case JOB_RESUME_DISK:
		do_resume(j);
		break;
	case JOB_FORK:
		do_fork(j);
		break;
	}
	j->ms = fs_now_ms() - t0;
	pthread_mutex_lock(&j->mu);
	j->done = true;
	orphaned = j->orphaned;
	if (!orphaned)
		lws_cancel_service(j->ctx); /* the context outlives us: job_wait_all */
	pthread_mutex_unlock(&j->mu);
	if (orphaned)
		job_free(j);
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct job *j;

		pthread_mutex_lock(&queue_mu);
		while (!queue_head)
			pthread_cond_wait(&queue_cv, &queue_mu);
		j = queue_head;
		queue_head = j->next;
		if (!queue_head)
			queue_tail = NULL;
		pthread_mutex_unlock(&queue_mu);
		run_job(j);
		atomic_fetch_sub(&running, 1);
	}
	return NULL;
}

int job_start(struct job *j)
{
	int rc = 0;

	pthread_mutex_lock(&queue_mu);
	while (workers < WORKERS) {
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
	atomic_fetch_add(&running, 1);
	pthread_cond_signal(&queue_cv);
	pthread_mutex_unlock(&queue_mu);
	return 0;
}

static void *clock_thread(void *arg)
{
	char *path = arg, err[512];
	struct qga_client *c = NULL;

	if (qga_client_connect(path, 5000, &c, err, sizeof(err)) == 0 &&
	    guest_prep_set_clock(c, 10000, err, sizeof(err)) < 0)
		log_warn("job", "guest clock not set after resume: %s", err);
	qga_client_destroy(c);
	free(path);
	atomic_fetch_sub(&running, 1);
	return NULL;
}

void job_set_clock_async(const char *run_dir)
{
	pthread_attr_t attr;
	pthread_t t;
	char *path;

	if (asprintf(&path, "%s/qga.sock", run_dir) < 0)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	atomic_fetch_add(&running, 1);
	if (pthread_create(&t, &attr, clock_thread, path)) {
		atomic_fetch_sub(&running, 1);
		free(path);
	}
	pthread_attr_destroy(&attr);
}

bool job_done(struct job *j)
{
	bool done;

	pthread_mutex_lock(&j->mu);
	done = j->done;
	pthread_mutex_unlock(&j->mu);
	return done;
}

void job_orphan(struct job *j)
{
	bool done;

	pthread_mutex_lock(&j->mu);
	done = j->done;
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
