/* display/encode_pool.h: a few worker threads that run encodings (a
 * screenshot's display_encode, a stream message's display_stream_encode)
 * off the event loop, and hand each finished one back to the loop: a
 * common/work_queue.h queue whose workers each own a stream encoder.
 *
 * Threads. One thread owns the pool: in the gateway, the lws service
 * thread. It alone calls create, submit, reap, cancel and destroy,
 * and every `done` runs on it, inside reap, cancel or destroy: a done may
 * touch loop state, caches and lws freely, and may submit or cancel (never
 * destroy). The workers run only `work` and, when a finished job is waiting
 * for the owner, `wake(wake_ud)`: wake must only wake the owner's loop
 * (lws_cancel_service()) and be callable until destroy returns. Nothing
 * else happens on a worker.
 *
 *	loop:    encode_pool_submit(pool, work, done, job)      0, or -EBUSY: full
 *	worker:  work(job, enc)                                  the long part
 *	worker:  wake(wake_ud)                                   lws_cancel_service
 *	loop:    LWS_CALLBACK_EVENT_WAIT_CANCELLED -> encode_pool_reap(pool)
 *	         -> done(job, 0)
 *
 * Ownership. The pool never frees a job's ud. From a successful submit
 * until done(ud, status) is called, ud is the job's: work reads and fills
 * it on a worker, and the submitter must not free it nor touch what work
 * writes. done is called exactly once for every accepted job: status 0
 * when work ran, -ECANCELED when it never will (encode_pool_cancel, or
 * destroy with the job still queued). A submitter that goes away first
 * (a viewer disconnects, a session is deleted) cancels its queued jobs and
 * marks the rest abandoned, for their done to free.
 *
 * work gets the worker's own stream encoder (TurboJPEG handle and scratch
 * space; display_stream_encoder is not thread-safe, so one per worker);
 * frames are immutable and refcounted, so work may read a frame the job
 * holds a reference to. */
#ifndef VITRINE_DISPLAY_ENCODE_POOL_H
#define VITRINE_DISPLAY_ENCODE_POOL_H

#include "common/work_queue.h"
#include "display/stream_encode.h"

#define ENCODE_POOL_MAX_THREADS WORK_QUEUE_MAX_THREADS

struct encode_pool;

/* Runs on a worker thread. enc is that worker's struct
 * display_stream_encoder (owned by the pool): a work_queue_work_fn. */
typedef work_queue_work_fn encode_pool_work_fn;
/* Runs on the owner thread: status 0 (work ran) or -ECANCELED (it never will). */
typedef work_queue_done_fn encode_pool_done_fn;

/* Starts threads (1..ENCODE_POOL_MAX_THREADS) workers taking at most
 * max_jobs jobs at once (queued, running and finished but not reaped;
 * >= 1). wake is called from a worker when a finished job waits for reap
 * (at least once after each job, possibly once for several). Returns 0 with
 * *out owning the pool, or -EINVAL (bad numbers, no wake), -ENOMEM, or
 * pthread_create's error, with nothing left behind. Owner thread. */
int encode_pool_create(int threads, int max_jobs, void (*wake)(void *wake_ud), void *wake_ud,
		       struct encode_pool **out);

/* Queues work(ud, enc) for a worker; done(ud, status) follows on the owner
 * thread. Returns 0, or without calling anything (ud stays the caller's):
 * -EBUSY when max_jobs jobs are in the pool (try again after a reap, or
 * drop the work), -ESHUTDOWN from a done run by destroy, -EINVAL (no work
 * or done), -ENOMEM. Never blocks on an encoding. Owner thread. */
int encode_pool_submit(struct encode_pool *p, encode_pool_work_fn work, encode_pool_done_fn done,
		       void *ud);

/* encode_pool_submit for owner (e.g. a session; NULL: none): the jobs of one
 * owner hold at most threads - 1 workers at once (1 with one thread), so a
 * client asking one session for many encodings never keeps another
 * session's waiting behind them; queued jobs otherwise run oldest first. */
int encode_pool_submit_for(struct encode_pool *p, const void *owner, encode_pool_work_fn work,
			   encode_pool_done_fn done, void *ud);

/* Calls done(ud, 0) for every job finished by now, in the order they
 * finished; returns how many. Never blocks on an encoding (jobs that finish
 * meanwhile wake again and wait for the next reap). Owner thread. */
int encode_pool_reap(struct encode_pool *p);

/* Takes every still-queued job whose ud is ud off the queue and calls
 * done(ud, -ECANCELED) for each, now; returns how many. A job already on a
 * worker or finished is not affected: its done(ud, 0) comes from reap.
 * Owner thread. */
int encode_pool_cancel(struct encode_pool *p, void *ud);

/* The pool's counts (work_queue.h's), as of now (for metrics and tests).
 * Any thread. */
void encode_pool_stats(struct encode_pool *p, struct work_queue_stats *out);

/* Stops the pool: waits for the jobs on workers to finish (their work is
 * not interrupted), then, on this thread, calls done(ud, 0) for every
 * finished job and done(ud, -ECANCELED) for every queued one, joins the
 * workers and frees everything. No ud is left without its done. Accepts
 * NULL. Owner thread, not from inside a done. */
void encode_pool_destroy(struct encode_pool *p);

#endif
