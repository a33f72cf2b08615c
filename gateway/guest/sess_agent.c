/* gateway/guest/sess_agent.c: see sess_agent.h. An attempt is a job of the
 * guest work queue (the blocking connect and RESET handshake, each bounded
 * by CONNECT_TIMEOUT_MS); between attempts a loop timer waits RETRY_MS. A
 * link's own thread says when it is lost (agent_link_on_down): that word
 * waits on a locked list for the loop's next wake-up (sess_agent_poke_all),
 * which drops the link, tells the owner and connects again. */
#include "gateway/guest/sess_agent.h"

#include "common/log.h"
#include "common/test_hook.h"
#include "common/timedwait.h"
#include "common/work_queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_MS 3000
#define RETRY_MS 250

struct sess_agent {
	/* the owner's, a queued or running attempt's, the lost list's, and
	 * those of the threads that borrow it (sess_agent_hold) */
	atomic_int refs;
	char path[4200];
	struct sess_agent_env env;
	/* loop thread only */
	lws_sorted_usec_list_t sul; /* the next attempt */
	bool attempting; /* an attempt is on the queue (its done has not run) */
	bool said; /* a failed attempt was logged: the next ones are no news */
	pthread_mutex_t mu;
	pthread_cond_t cv; /* the link came up, or the owner stopped */
	bool stop; /* set under mu, on the loop (which reads it freely) */
	struct agent_link *link; /* owned, under mu; NULL while not connected */
	/* under lost_mu */
	struct sess_agent *lost_next; /* lost */
	bool lost_listed;
};

/* One connection attempt, from submit to its done. */
struct attempt {
	struct sess_agent *a; /* held */
	struct agent_link *link; /* the worker's result, owned until installed */
	int rc;
	char err[256];
};

/* Agents whose link said it was lost, each held, for the loop. */
static pthread_mutex_t lost_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sess_agent *lost;

/* A rule the guest broke on the session's link, as the link passes it on
 * (rate-limited there). */
static void on_violation(void *vu, uint32_t chan, const char *why, bool overrun, uint64_t n)
{
	const struct sess_agent *a = vu;

	log_warn("agent", "%s: channel %u: %s: channel closed (%s %llu on this link)", a->path,
		 chan, why, overrun ? "overrun" : "violation", (unsigned long long)n);
}

/* The link's thread: the link is lost. Noted for the loop, which wakes. */
static void on_down(void *du)
{
	struct sess_agent *a = du;

	pthread_mutex_lock(&lost_mu);
	if (!a->lost_listed) {
		a->lost_listed = true;
		a->lost_next = lost;
		lost = sess_agent_hold(a);
	}
	pthread_mutex_unlock(&lost_mu);
	lws_cancel_service(a->env.ctx);
}

/* The session's handlers on link l (any thread, before l is shared). */
static void adopt_link(struct sess_agent *a, struct agent_link *l)
{
	agent_link_on_accept(l, a->env.accept, a->env.au);
	agent_link_on_violation(l, on_violation, a);
	agent_link_on_down(l, on_down, a);
}

static void attempt_now(lws_sorted_usec_list_t *sul);

/* The next attempt in ms (none while one is on the queue or after the
 * stop). Loop thread. */
static void schedule(struct sess_agent *a, long ms)
{
	if (a->stop || a->attempting)
		return;
	lws_sul_schedule(a->env.ctx, 0, &a->sul, attempt_now,
			 ms > 0 ? (lws_usec_t)ms * LWS_US_PER_MS : 1);
}

/* A worker: connects and waits for the agent's RESET answer (bounded). */
static void attempt_work(void *ud, void *ctx)
{
	struct attempt *t = ud;

	(void)ctx;
	t->rc = agent_link_open(t->a->path, CONNECT_TIMEOUT_MS, &t->link, t->err, sizeof(t->err));
	if (t->rc == 0)
		adopt_link(t->a, t->link);
}

/* The loop: the attempt's link becomes a's, or the next attempt is timed. */
static void attempt_done(void *ud, int status)
{
	struct attempt *t = ud;
	struct sess_agent *a = t->a;

	a->attempting = false;
	if (status == 0 && t->rc == 0 && !a->stop && !agent_link_alive(t->link)) {
		t->rc = -EPIPE; /* lost before it was ours: its word may come too */
		snprintf(t->err, sizeof(t->err), "the agent's connection closed at once");
	}
	if (t->link && (t->rc < 0 || a->stop)) {
		agent_link_destroy(t->link);
		t->link = NULL;
	}
	if (t->link) {
		pthread_mutex_lock(&a->mu);
		a->link = t->link;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (a->env.changed)
			a->env.changed(a->env.cu, true);
	} else if (!a->stop) {
		if (status == 0 && !a->said) /* a guest still booting is no news after that */
			log_info("agent", "%s: %s (retrying)", a->path, t->err);
		a->said |= status == 0;
		schedule(a, RETRY_MS);
	}
	sess_agent_release(a);
	free(t);
}

static void attempt_now(lws_sorted_usec_list_t *sul)
{
	struct sess_agent *a = lws_container_of(sul, struct sess_agent, sul);
	struct attempt *t;

	if (a->stop || a->attempting)
		return;
	if (!(t = calloc(1, sizeof(*t)))) {
		schedule(a, RETRY_MS);
		return;
	}
	t->a = sess_agent_hold(a);
	if (work_queue_submit(a->env.q, a, attempt_work, attempt_done, t) < 0) {
		sess_agent_release(a); /* the queue is full: later */
		free(t);
		schedule(a, RETRY_MS);
		return;
	}
	a->attempting = true;
}

struct sess_agent *sess_agent_start(const struct sess_agent_env *env, const char *path,
				    struct agent_link *first)
{
	struct sess_agent *a = calloc(1, sizeof(*a));

	if (!a) {
		agent_link_destroy(first);
		return NULL;
	}
	atomic_init(&a->refs, 1);
	snprintf(a->path, sizeof(a->path), "%s", path);
	a->env = *env;
	pthread_mutex_init(&a->mu, NULL);
	timedwait_cond_init(&a->cv);
	a->link = first;
	if (first)
		adopt_link(a, first);
	else
		/* The test hook VITRINE_TEST_AGENT_LATE_MS=N (docs/vmm.md): the
		 * first attempt waits N ms (at most a minute), so that tests can
		 * show that nothing counts on the link being up at once (a
		 * gateway just started adopts its guests with none). */
		schedule(a, test_hook_get("VITRINE_TEST_AGENT_LATE_MS", 60000));
	return a;
}

void sess_agent_stop(struct sess_agent *a)
{
	struct agent_link *l;

	if (!a)
		return;
	lws_sul_cancel(&a->sul);
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	l = a->link;
	a->link = NULL;
	pthread_mutex_unlock(&a->mu);
	/* a queued attempt's done runs now; a running one's closes its link */
	work_queue_cancel_owner(a->env.q, a);
	agent_link_destroy(l);
	sess_agent_release(a);
}

void sess_agent_poke_all(void)
{
	struct sess_agent *list, *next;

	pthread_mutex_lock(&lost_mu);
	list = lost;
	lost = NULL;
	for (struct sess_agent *a = list; a; a = a->lost_next)
		a->lost_listed = false;
	pthread_mutex_unlock(&lost_mu);
	for (struct sess_agent *a = list; a; a = next) {
		struct agent_link *l = NULL;

		next = a->lost_next;
		pthread_mutex_lock(&a->mu);
		if (!a->stop && a->link && !agent_link_alive(a->link)) {
			l = a->link;
			a->link = NULL;
		}
		pthread_mutex_unlock(&a->mu);
		if (l) {
			log_warn("agent", "%s: link lost; connecting again", a->path);
			agent_link_destroy(l);
			if (a->env.changed)
				a->env.changed(a->env.cu, false);
			schedule(a, 0);
		}
		sess_agent_release(a);
	}
}

struct sess_agent *sess_agent_hold(struct sess_agent *a)
{
	if (a)
		atomic_fetch_add(&a->refs, 1);
	return a;
}

void sess_agent_release(struct sess_agent *a)
{
	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

struct agent_link *sess_agent_get(struct sess_agent *a, int wait_ms)
{
	struct timespec t = timedwait_deadline(wait_ms);
	struct agent_link *l;

	if (!a)
		return NULL;
	pthread_mutex_lock(&a->mu);
	while (wait_ms > 0 && !a->stop && !(a->link && agent_link_alive(a->link)) &&
	       pthread_cond_timedwait(&a->cv, &a->mu, &t) == 0) {
	}
	l = !a->stop && a->link && agent_link_alive(a->link) ? agent_link_hold(a->link) : NULL;
	pthread_mutex_unlock(&a->mu);
	return l;
}
