/* common/work_queue.h: slow work off the event loop, its end back on it.
 * A few worker threads run jobs submitted by one owner thread (in the
 * gateway, the lws service thread); each finished job's completion runs on
 * that owner thread, in work_queue_reap. This is the one shape the
 * gateway's background work takes (display/encode_pool.h is this queue
 * with an encoder per worker): submit with a completion, reap completions
 * on the loop, cancel by job or by owner, drain once at shutdown.
 *
 * Threads. The owner thread alone calls create, reap, cancel and destroy,
 * and every `done` runs on it, inside reap, cancel or destroy: a
 * done may touch loop state freely, and may submit or cancel (never
 * destroy). Workers run only `work`, the worker hooks, and, when a
 * finished job is waiting for the owner, `wake(wake_ud)`: wake must only
 * wake the owner's loop (lws_cancel_service()) and be callable until
 * destroy returns. Submit is the owner thread's too, and may also come from
 * another thread that is sure to be done submitting before destroy starts
 * (the gateway's agent links: they are joined when their sessions end).
 *
 *	loop:    work_queue_submit(q, owner, work, done, job)   0, or -EBUSY: full
 *	worker:  work(job, worker_ctx)                           the long part
 *	worker:  wake(wake_ud)                                   lws_cancel_service
 *	loop:    work_queue_reap(q) -> done(job, 0)
 *
 * Ownership. The queue never frees a job's ud. From a successful submit
 * until done(ud, status) is called, ud is the job's: work reads and fills
 * it on a worker, and the submitter must not free it nor touch what work
 * writes. done is called exactly once for every accepted job: status 0
 * when work ran, -ECANCELED when it never will (work_queue_cancel,
 * work_queue_cancel_owner, or destroy with the job still queued). A
 * submitter that goes away first cancels its queued jobs and marks the
 * rest abandoned, for their done to free.
 *
 * Fairness. Jobs with an owner (a session, say) hold at most max_per_owner
 * workers at once (threads - 1 unless configured; 1 with one thread), so
 * one owner's many jobs never keep another's waiting behind them; queued
 * jobs otherwise run oldest first. */
#ifndef VITRINE_COMMON_WORK_QUEUE_H
#define VITRINE_COMMON_WORK_QUEUE_H

#include <stdint.h>

#define WORK_QUEUE_MAX_THREADS 64

struct work_queue;

/* Runs on a worker thread; ctx is that worker's (worker_init's result). */
typedef void (*work_queue_work_fn)(void *ud, void *ctx);
/* Runs on the owner thread: status 0 (work ran) or -ECANCELED (it never will). */
typedef void (*work_queue_done_fn)(void *ud, int status);

struct work_queue_config {
	int threads; /* 1..WORK_QUEUE_MAX_THREADS workers */
	int max_jobs; /* queued, running and finished but not reaped at once; >= 1 */
	int nice; /* each worker's nice value (0: as the process): bulk work yields */
	/* Workers one owner's jobs may hold at once, 1..threads - 1 (0: threads
	 * - 1; with one thread always 1): lower for work that can stall long,
	 * so a few stalled owners leave the rest room. */
	int max_per_owner;
	/* Called from a worker when a finished job waits for reap (at least
	 * once after each job, possibly once for several). Required. */
	void (*wake)(void *wake_ud);
	void *wake_ud;
	/* Optional: a worker's own context, made on the creating thread before
	 * the worker starts (NULL fails the create: -ENOMEM) and freed by
	 * worker_fini at destroy. Without them ctx is NULL. */
	void *(*worker_init)(void *hooks_ud);
	void (*worker_fini)(void *ctx);
	void *hooks_ud;
};

struct work_queue_stats {
	int queued; /* waiting for a worker */
	int running; /* on a worker now */
	int finished; /* work done, waiting for work_queue_reap */
	uint64_t submitted, rejected, cancelled; /* so far: accepted, -EBUSY, -ECANCELED */
};

/* Starts the workers. Returns 0 with *out owning the queue, or -EINVAL
 * (bad numbers, no wake), -ENOMEM, or pthread_create's error, with nothing
 * left behind. Owner thread. */
int work_queue_create(const struct work_queue_config *cfg, struct work_queue **out);

/* Queues work(ud, ctx) for a worker on behalf of owner (NULL: none);
 * done(ud, status) follows on the owner thread (see Threads for who may
 * submit). Returns 0, or without
 * calling anything (ud stays the caller's): -EBUSY when max_jobs jobs are
 * in the queue (try again after a reap, or drop the work), -ESHUTDOWN from
 * a done run by destroy, -EINVAL (no work or done), -ENOMEM. Never blocks
 * on a job. */
int work_queue_submit(struct work_queue *q, const void *owner, work_queue_work_fn work,
		      work_queue_done_fn done, void *ud);

/* Calls done(ud, 0) for every job finished by now, in the order they
 * finished; returns how many. Never blocks on a job (jobs that finish
 * meanwhile wake again and wait for the next reap). Owner thread. */
int work_queue_reap(struct work_queue *q);

/* Takes every still-queued job whose ud is ud (work_queue_cancel) or whose
 * owner is owner (work_queue_cancel_owner; not NULL) off the queue and calls
 * done(ud, -ECANCELED) for each, now; returns how many. A job already on a
 * worker or finished is not affected: its done(ud, 0) comes from reap.
 * Owner thread. */
int work_queue_cancel(struct work_queue *q, const void *ud);
int work_queue_cancel_owner(struct work_queue *q, const void *owner);

/* The queue's counts, as of now (for metrics and tests). Any thread. */
void work_queue_stats(struct work_queue *q, struct work_queue_stats *out);

/* Drains and stops the queue, once: waits for the jobs on workers to
 * finish (their work is not interrupted), then, on this thread, calls
 * done(ud, 0) for every finished job and done(ud, -ECANCELED) for every
 * queued one, joins the workers, frees their contexts and everything else.
 * No ud is left without its done. Accepts NULL. Owner thread, not from
 * inside a done. */
void work_queue_destroy(struct work_queue *q);

#endif
