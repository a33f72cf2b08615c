/* common/work_queue.c: see work_queue.h.
 *
 * One lock guards the two job lists and the counts. Workers hold it only to
 * take a job and to file it as finished; work runs unlocked. A worker wakes
 * the owner when it files a job on an empty finished list: reap empties the
 * list in one step, so every non-empty list began with a push that woke. */
#include "common/work_queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

struct queued_job {
	struct queued_job *next; /* work_queue::queue or ::finished */
	const void *owner; /* whose work it is: an owner runs at most max_per_owner at once */
	work_queue_work_fn work;
	work_queue_done_fn done;
	void *ud; /* not owned */
};

struct job_list {
	struct queued_job *head, *tail;
};

struct worker {
	struct work_queue *q;
	pthread_t thread;
	const void *owner; /* of the job it runs (under the queue's lock); NULL when idle */
	bool busy;
	void *ctx; /* worker_init's; only this worker's thread uses it */
};

struct work_queue {
	pthread_mutex_t lock; /* guards the fields down to `cancelled` */
	pthread_cond_t work_cond; /* a job was queued, or the queue is stopping */
	struct job_list queue; /* owned jobs waiting for a worker, oldest first */
	struct job_list finished; /* owned jobs waiting for reap, in finishing order */
	int n_queued, n_running, n_finished;
	bool stopping;
	uint64_t submitted, rejected, cancelled;

	struct work_queue_config cfg;
	int max_per_owner; /* workers one owner may hold at once: one is always left */
	int n_workers; /* threads started */
	struct worker workers[WORK_QUEUE_MAX_THREADS];
};

static void list_push(struct job_list *l, struct queued_job *j)
{
	j->next = NULL;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
}

static struct queued_job *list_pop(struct job_list *l)
{
	struct queued_job *j = l->head;

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
static struct queued_job *take_fair(struct work_queue *p)
{
	for (struct queued_job **pp = &p->queue.head, *prev = NULL; *pp;
	     prev = *pp, pp = &(*pp)->next) {
		struct queued_job *j = *pp;
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
	struct worker *w = arg;
	struct work_queue *p = w->q;

	/* Bulk work yields: the event loop, the mirrors and the guests get
	 * the CPU first (Linux: nice is per thread). Best effort. */
	if (p->cfg.nice && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), p->cfg.nice) < 0)
		errno = 0;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct queued_job *j;
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
		j->work(j->ud, w->ctx);
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
			p->cfg.wake(p->cfg.wake_ud);
			pthread_mutex_lock(&p->lock);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Stops and joins the workers started so far; the lists are left as they are. */
static void stop_workers(struct work_queue *p)
{
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->work_cond);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->n_workers; i++)
		pthread_join(p->workers[i].thread, NULL);
	p->n_workers = 0;
}

static void free_queue(struct work_queue *p)
{
	for (int i = 0; i < WORK_QUEUE_MAX_THREADS; i++)
		if (p->workers[i].ctx && p->cfg.worker_fini)
			p->cfg.worker_fini(p->workers[i].ctx);
	pthread_cond_destroy(&p->work_cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int work_queue_create(const struct work_queue_config *cfg, struct work_queue **out)
{
	struct work_queue *p;
	int rc, threads = cfg->threads;

	*out = NULL;
	if (threads < 1 || threads > WORK_QUEUE_MAX_THREADS || cfg->max_jobs < 1 || !cfg->wake ||
	    !cfg->worker_init != !cfg->worker_fini || cfg->max_per_owner < 0 ||
	    (threads > 1 && cfg->max_per_owner >= threads))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work_cond, NULL);
	p->cfg = *cfg;
	p->max_per_owner = threads == 1 ? 1 : cfg->max_per_owner ? cfg->max_per_owner : threads - 1;
	for (int i = 0; i < threads; i++) {
		p->workers[i].q = p;
		if (cfg->worker_init && !(p->workers[i].ctx = cfg->worker_init(cfg->hooks_ud))) {
			free_queue(p);
			return -ENOMEM;
		}
	}
	for (int i = 0; i < threads; i++) {
		rc = -pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
		if (rc < 0) {
			stop_workers(p);
			free_queue(p);
			return rc;
		}
		p->n_workers++;
	}
	*out = p;
	return 0;
}

int work_queue_submit(struct work_queue *p, const void *owner, work_queue_work_fn work,
		      work_queue_done_fn done, void *ud)
{
	struct queued_job *j;

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
	if (p->stopping || p->n_queued + p->n_running + p->n_finished >= p->cfg.max_jobs) {
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

int work_queue_reap(struct work_queue *p)
{
	struct queued_job *j, *next;
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
		work_queue_done_fn done = j->done;
		void *ud = j->ud;

		next = j->next;
		free(j);
		done(ud, 0);
		n++;
	}
	return n;
}

/* Calls done(ud, -ECANCELED) for each job of the list and frees it. */
static void cancel_list(struct queued_job *j)
{
	while (j) {
		struct queued_job *next = j->next;
		work_queue_done_fn done = j->done;
		void *ud = j->ud;

		free(j);
		done(ud, -ECANCELED);
		j = next;
	}
}

/* Takes the queued jobs that match (ud, or owner when by_owner) off the
 * queue and cancels them. */
static int cancel_matching(struct work_queue *p, const void *key, bool by_owner)
{
	struct job_list gone = { NULL, NULL }, kept = { NULL, NULL };
	struct queued_job *j;
	int n = 0;

	pthread_mutex_lock(&p->lock);
	while ((j = list_pop(&p->queue))) {
		if ((by_owner ? j->owner : j->ud) == key) {
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

int work_queue_cancel(struct work_queue *p, const void *ud)
{
	return cancel_matching(p, ud, false);
}

int work_queue_cancel_owner(struct work_queue *p, const void *owner)
{
	return owner ? cancel_matching(p, owner, true) : 0;
}

void work_queue_stats(struct work_queue *p, struct work_queue_stats *out)
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

void work_queue_destroy(struct work_queue *p)
{
	struct queued_job *queued;

	if (!p)
		return;
	/* Running jobs finish and land on the finished list; no worker takes
	 * a queued one after this. */
	stop_workers(p);
	work_queue_reap(p);
	/* No lock needed from here: the workers are gone, and a done that
	 * submits is refused (-ESHUTDOWN). */
	queued = p->queue.head;
	p->cancelled += (uint64_t)p->n_queued;
	p->queue.head = p->queue.tail = NULL;
	p->n_queued = 0;
	cancel_list(queued);
	free_queue(p);
}
