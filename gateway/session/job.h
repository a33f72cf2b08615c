/* gateway/session/job.h: a session's slow guest operation on a worker thread, so
 * the lws loop never blocks for seconds: restoring a template (and making
 * the clone ready: clock, page, warm-up), pausing to disk, resuming from
 * disk, forking.
 *
 * Ownership: the loop fills a job (handing it the session's vm: while a
 * job runs, nothing on the loop touches that vm) and starts it. When the
 * thread is done it wakes the loop, which sees job_done() and takes the
 * results (and the job) back. A session deleted meanwhile orphans its job:
 * the thread then frees everything itself (guests, checkpoint folder). */
#ifndef VITRINE_GATEWAY_JOB_H
#define VITRINE_GATEWAY_JOB_H

#include "vmm-qemu/agent_link.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/vm.h"

#include <libwebsockets.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

enum job_kind {
	JOB_RESTORE, /* in: tpl, url, warm; out: vm (a ready clone) */
	JOB_PAUSE_DISK, /* in: vm, ckpt; out: vm NULL, ckpt holds the guest */
	JOB_RESUME_DISK, /* in: ckpt; out: vm (ckpt removed on success) */
	JOB_FORK, /* in: vm; out: vm (the original, running) and child */
};

struct job {
	enum job_kind kind;
	/* in and out, owned by the job while it runs */
	struct vmm_vm *vm;
	struct vmm_vm *child; /* JOB_FORK: the copy */
	char ckpt[PATH_MAX]; /* checkpoint folder, "" for none */
	struct vmm_template tpl; /* JOB_RESTORE */
	char url[VMM_MAX_URL + 1]; /* JOB_RESTORE: navigate here once restored, "" stays */
	bool has_agent; /* the guest runs qemu-ga (its clock can be set, its page driven) */
	char child_id[24]; /* JOB_FORK: the session that gets child */
	struct agent_link *agent; /* JOB_RESTORE, JOB_RESUME_DISK: the link to vitrine-agent the
				   * guest was prepared through, for the session */
	/* results */
	int rc;
	char err[1024];
	int64_t ms; /* how long the work took */
	int64_t bytes; /* checkpoint stream size */
	/* handshake, under mu */
	pthread_mutex_t mu;
	bool done, orphaned;
	struct lws_context *ctx;
	struct job *next; /* the queue of jobs waiting for a worker thread */
};

/* A new job of kind for the loop of ctx, or NULL (out of memory). */
struct job *job_new(enum job_kind kind, struct lws_context *ctx);
/* Queues j for one of the job threads (which live as long as the process:
 * guests they start die with the thread that spawned them). Returns 0, or
 * -errno (j is still the caller's). */
int job_start(struct job *j);
/* True once the thread has finished: j is the loop's again (free it with
 * job_free after taking its results). */
bool job_done(struct job *j);
/* The session is gone: a running job frees itself when it ends, a finished
 * one is freed now (with whatever guests it holds). */
void job_orphan(struct job *j);
/* Frees j and whatever it still holds (guests, checkpoint folder). */
void job_free(struct job *j);
/* Sets the clock of the guest whose run dir is run_dir through its agent,
 * on a detached thread that touches nothing but the agent's socket (a
 * guest gone meanwhile just fails the connect). For a guest resumed from
 * memory: it lags by the time it was stopped. Best effort. */
void job_set_clock_async(const char *run_dir);
/* Waits up to timeout_ms for every job thread to end. True when none runs. */
bool job_wait_all(int timeout_ms);
const char *job_kind_name(enum job_kind kind);

#endif
