/* gateway/guest/sess_agent.c: see sess_agent.h. */
#include "gateway/guest/sess_agent.h"

#include "common/log.h"
#include "common/test_hook.h"
#include "common/timedwait.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONNECT_TIMEOUT_MS 3000
#define RETRY_MS 250

static atomic_int connectors; /* connector threads still running */

struct sess_agent {
	atomic_int refs; /* the owner's and the connector thread's */
	char path[4200];
	agent_accept_fn accept;
	void *au;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop; /* under mu */
	struct agent_link *link; /* owned, under mu; NULL while not connected */
};

/* A rule the guest broke on the session's link, as the link passes it on
 * (rate-limited there). */
static void on_violation(void *vu, uint32_t chan, const char *why, bool overrun, uint64_t n)
{
	const struct sess_agent *a = vu;

	log_warn("agent", "%s: channel %u: %s: channel closed (%s %llu on this link)", a->path,
		 chan, why, overrun ? "overrun" : "violation", (unsigned long long)n);
}

/* The session's handlers on link l (a's path, accept and au set). */
static void adopt_link(struct sess_agent *a, struct agent_link *l)
{
	agent_link_on_accept(l, a->accept, a->au);
	agent_link_on_violation(l, on_violation, a);
}

/* The test hook VITRINE_TEST_AGENT_LATE_MS=N (docs/vmm.md): a connector
 * with no link yet waits N ms (at most a minute) before its first attempt,
 * so that tests can show that nothing counts on the link being up at once
 * (a gateway just started adopts its guests with none). Called under mu. */
static void late_hook(struct sess_agent *a)
{
	long ms = test_hook_get("VITRINE_TEST_AGENT_LATE_MS", 60000);
	struct timespec t = timedwait_deadline((int)ms);

	while (ms && !a->stop && !a->link && pthread_cond_timedwait(&a->cv, &a->mu, &t) == 0) {
	}
}

static void *connector(void *arg)
{
	struct sess_agent *a = arg;
	bool said = false;

	pthread_mutex_lock(&a->mu);
	late_hook(a);
	while (!a->stop) {
		struct agent_link *l = a->link;
		char err[256];
		int rc;

		if (l && agent_link_alive(l)) {
			struct timespec t = timedwait_deadline(1000);

			pthread_cond_timedwait(&a->cv, &a->mu, &t);
			continue;
		}
		a->link = NULL;
		pthread_mutex_unlock(&a->mu);
		if (l) {
			log_warn("agent", "%s: link lost; connecting again", a->path);
			agent_link_destroy(l);
		}
		rc = agent_link_open(a->path, CONNECT_TIMEOUT_MS, &l, err, sizeof(err));
		if (rc == 0)
			adopt_link(a, l);
		pthread_mutex_lock(&a->mu);
		if (rc < 0 && !said && !a->stop) /* a guest going away is no news */
			log_info("agent", "%s: %s (retrying)", a->path, err);
		said |= rc != 0;
		if (rc == 0 && a->stop) {
			pthread_mutex_unlock(&a->mu);
			agent_link_destroy(l);
			pthread_mutex_lock(&a->mu);
		} else if (rc == 0) {
			a->link = l;
			pthread_cond_broadcast(&a->cv);
		} else {
			struct timespec t = timedwait_deadline(RETRY_MS);

			pthread_cond_timedwait(&a->cv, &a->mu, &t);
		}
	}
	pthread_mutex_unlock(&a->mu);
	sess_agent_release(a);
	atomic_fetch_sub(&connectors, 1);
	return NULL;
}

struct sess_agent *sess_agent_start(const char *path, struct agent_link *first,
				    agent_accept_fn accept, void *au)
{
	struct sess_agent *a = calloc(1, sizeof(*a));

	if (!a) {
		agent_link_destroy(first);
		return NULL;
	}
	atomic_init(&a->refs, 2);
	snprintf(a->path, sizeof(a->path), "%s", path);
	a->accept = accept;
	a->au = au;
	if (first)
		adopt_link(a, first);
	a->link = first;
	pthread_mutex_init(&a->mu, NULL);
	timedwait_cond_init(&a->cv);
	atomic_fetch_add(&connectors, 1);
	if (pthread_create(&a->thread, NULL, connector, a)) {
		atomic_fetch_sub(&connectors, 1);
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		agent_link_destroy(first);
		free(a);
		return NULL;
	}
	/* Not joined: a stop must not wait out a connection attempt (up to
	 * CONNECT_TIMEOUT_MS) on the event loop; the thread lets go of its
	 * reference when it ends. */
	pthread_detach(a->thread);
	return a;
}

void sess_agent_stop(struct sess_agent *a)
{
	struct agent_link *l;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	l = a->link;
	a->link = NULL;
	pthread_mutex_unlock(&a->mu);
	agent_link_destroy(l);
	sess_agent_release(a);
}

bool sess_agent_wait_threads(int timeout_ms)
{
	struct timespec t = { 0, 20 * 1000 * 1000 };

	for (int waited = 0; atomic_load(&connectors) > 0 && waited < timeout_ms; waited += 20)
		nanosleep(&t, NULL);
	return atomic_load(&connectors) == 0;
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
	while (!a->stop && !(a->link && agent_link_alive(a->link)) &&
	       pthread_cond_timedwait(&a->cv, &a->mu, &t) == 0) {
	}
	l = !a->stop && a->link && agent_link_alive(a->link) ? agent_link_hold(a->link) : NULL;
	pthread_mutex_unlock(&a->mu);
	return l;
}
