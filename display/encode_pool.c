/* display/encode_pool.c: see encode_pool.h.
 *
 * One lock guards the two job lists and the counts. Workers hold it only to
 * take a job and to file it as finished; work runs unlocked. A worker wakes
 * the owner when it files a job on an empty finished list: reap empties the
 * list in one step, so every non-empty list began with a push that woke. */
#include "display/encode_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ENCODE_POOL_NICE 10

struct pool_job {
	struct pool_job *next; /* encode_pool::queue or ::finished */
	const void *owner; /* whose work it is: an owner runs at most max_per_owner at once */
	encode_pool_work_fn work;
	encode_pool_done_fn done;
	void *ud; /* not owned */
};

struct job_list {
	struct pool_job *head, *tail;
};

struct pool_worker {
	struct encode_pool *pool;
	pthread_t thread;
	const void *owner; /* of the job it runs (under the pool's lock); NULL when idle */
	bool busy;
	struct display_stream_encoder *enc; /* owned; only this worker's thread uses it */
};

struct encode_pool {
	pthread_mutex_t lock; /* guards the fields down to `cancelled` */
	pthread_cond_t work_cond; /* a job was queued, or the pool is stopping */
	struct job_list queue; /* owned jobs waiting for a worker, oldest first */
	struct job_list finished; /* owned jobs waiting for reap, in finishing order */
	int n_queued, n_running, n_finished;
	bool stopping;
	uint64_t submitted, rejected, cancelled;

	int max_jobs;
	int max_per_owner; /* workers one owner may hold at once: one is always left */
	void (*wake)(void *wake_ud);
	void *wake_ud;
	int n_workers; /* threads started */
	struct pool_worker workers[ENCODE_POOL_MAX_THREADS];
};

static void list_push(struct job_list *l, struct pool_job *j)
{
	j->next = NULL;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
}

static struct pool_job *list_pop(struct job_list *l)
{
	struct pool_job *j = l->head;

	if (j) {
		l->head = j->next;
		if (!l->head)
			l->tail = NULL;
	}
	return j;
}

/* Under the lock: the oldest queued job without an owner or whose owner
 * holds fewer than max_per_owner workers, unlinked from the queue; NULL when there is none.
 * So one session's many encodings never keep another's waiting behind
 * them: a worker is always left for the others. */
static struct pool_job *take_fair(struct encode_pool *p)
{
	for (struct pool_job **pp = &p->queue.head, *prev = NULL; *pp;
	     prev = *pp, pp = &(*pp)->next) {
		struct pool_job *j = *pp;
		int held = 0;

		for (int i = 0; j->owner && i < p->n_workers; i++)
			held += p->workers[i].busy && p->workers[i].owner == j->owner;
		if (held >= p->max_per_owner)
			continue;
		*pp = j->next;
		if (p->queue.tail == j)
			p->queue.tail = prev;
		return j;
	}
	return NULL;
}

static void *worker_main(void *arg)
{
	struct pool_worker *w = arg;
	struct encode_pool *p = w->pool;

	/* Encoding is bulk work: the event loop, the mirrors and the guests
	 * get the CPU first, so a busy pool never makes a screen stale or a
	 * request wait for the loop (Linux: nice is per thread). Best effort. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), ENCODE_POOL_NICE) < 0)
		errno = 0;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct pool_job *j;
		bool was_empty;

		while (!p->stopping && !(j = take_fair(p)))
			pthread_cond_wait(&p->work_cond, &p->lock);
		/* Stopping: queued jobs are left for destroy to cancel. */
		if (p->stopping)
			break;
		p->n_queued--;
		p->n_running++;
		w->busy = true;
		w->owner = j->owner;
		pthread_mutex_unlock(&p->lock);
		j->work(j->ud, w->enc);
		pthread_mutex_lock(&p->lock);
		w->busy = false;
		w->owner = NULL;
		/* A job its owner's share held back may run now. */
		if (p->queue.head)
			pthread_cond_broadcast(&p->work_cond);
		was_empty = !p->finished.head;
		list_push(&p->finished, j);
		p->n_running--;
		p->n_finished++;
		if (was_empty) {
			pthread_mutex_unlock(&p->lock);
			p->wake(p->wake_ud);
			pthread_mutex_lock(&p->lock);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Stops and joins the workers started so far; the lists are left as they are. */
static void stop_workers(struct encode_pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->work_cond);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->n_workers; i++)
		pthread_join(p->workers[i].thread, NULL);
	p->n_workers = 0;
}

static void free_pool(struct encode_pool *p)
{
	for (int i = 0; i < ENCODE_POOL_MAX_THREADS; i++)
		display_stream_encoder_destroy(p->workers[i].enc);
	pthread_cond_destroy(&p->work_cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int encode_pool_create(int threads, int max_jobs, void (*wake)(void *wake_ud), void *wake_ud,
		       struct encode_pool **out)
{
	struct encode_pool *p;
	int rc;

	*out = NULL;
	if (threads < 1 || threads > ENCODE_POOL_MAX_THREADS || max_jobs < 1 || !wake)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work_cond, NULL);
	p->max_jobs = max_jobs;
	p->max_per_owner = threads > 1 ? threads - 1 : 1;
	p->wake = wake;
	p->wake_ud = wake_ud;
	for (int i = 0; i < threads; i++) {
		p->workers[i].pool = p;
		if (!(p->workers[i].enc = display_stream_encoder_create())) {
			free_pool(p);
			return -ENOMEM;
		}
	}
	for (int i = 0; i < threads; i++) {
		rc = -pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
		if (rc < 0) {
			stop_workers(p);
			free_pool(p);
			return rc;
		}
		p->n_workers++;
	}
	*out = p;
	return 0;
}

int encode_pool_submit(struct encode_pool *p, encode_pool_work_fn work, encode_pool_done_fn done,
		       void *ud)
{
	return encode_pool_submit_for(p, NULL, work, done, ud);
}

int encode_pool_submit_for(struct encode_pool *p, const void *owner, encode_pool_work_fn work,
			   encode_pool_done_fn done, void *ud)
{
	struct pool_job *j;

	if (!work || !done)
		return -EINVAL;
	j = malloc(sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->owner = owner;
	j->work = work;
	j->done = done;
	j->ud = ud;
	pthread_mutex_lock(&p->lock);
	if (p->stopping || p->n_queued + p->n_running + p->n_finished >= p->max_jobs) {
		int rc = p->stopping ? -ESHUTDOWN : -EBUSY;

		if (rc == -EBUSY)
			p->rejected++;
		pthread_mutex_unlock(&p->lock);
		free(j);
		return rc;
	}
	list_push(&p->queue, j);
	p->n_queued++;
	p->submitted++;
	/* Not signal: the worker woken might find the job held back for its
	 * owner while another could take it. */
	pthread_cond_broadcast(&p->work_cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int encode_pool_reap(struct encode_pool *p)
{
	struct pool_job *j, *next;
	int n = 0;

	/* Take the whole list: jobs that finish from now on start a new one
	 * (and wake again). Their slots are free before any done runs, so a
	 * done may submit. */
	pthread_mutex_lock(&p->lock);
	j = p->finished.head;
	p->finished.head = p->finished.tail = NULL;
	p->n_finished = 0;
	pthread_mutex_unlock(&p->lock);
	for (; j; j = next) {
		encode_pool_done_fn done = j->done;
		void *ud = j->ud;

		next = j->next;
		free(j);
		done(ud, 0);
		n++;
	}
	return n;
}

/* Calls done(ud, -ECANCELED) for each job of the list and frees it. */
static void cancel_list(struct pool_job *j)
{
	while (j) {
		struct pool_job *next = j->next;
		encode_pool_done_fn done = j->done;
		void *ud = j->ud;

		free(j);
		done(ud, -ECANCELED);
		j = next;
	}
}

int encode_pool_cancel(struct encode_pool *p, void *ud)
{
	struct job_list gone = { NULL, NULL }, kept = { NULL, NULL };
	struct pool_job *j;
	int n = 0;

	pthread_mutex_lock(&p->lock);
	while ((j = list_pop(&p->queue))) {
		if (j->ud == ud) {
			list_push(&gone, j);
			n++;
		} else {
			list_push(&kept, j);
		}
	}
	p->queue = kept;
	p->n_queued -= n;
	p->cancelled += (uint64_t)n;
	pthread_mutex_unlock(&p->lock);
	cancel_list(gone.head);
	return n;
}

void encode_pool_stats(struct encode_pool *p, struct encode_pool_stats *out)
{
	pthread_mutex_lock(&p->lock);
	out->queued = p->n_queued;
	out->running = p->n_running;
	out->finished = p->n_finished;
	out->submitted = p->submitted;
	out->rejected = p->rejected;
	out->cancelled = p->cancelled;
	pthread_mutex_unlock(&p->lock);
}

void encode_pool_destroy(struct encode_pool *p)
{
	struct pool_job *queued;

	if (!p)
		return;
	/* Running jobs finish and land on the finished list; no worker takes
	 * a queued one after this. */
	stop_workers(p);
	encode_pool_reap(p);
	/* No lock needed from here: the workers are gone, and a done that
	 * submits is refused (-ESHUTDOWN). */
	queued = p->queue.head;
	p->cancelled += (uint64_t)p->n_queued;
	p->queue.head = p->queue.tail = NULL;
	p->n_queued = 0;
	cancel_list(queued);
	free_pool(p);
}
