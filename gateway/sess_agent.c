/* gateway/sess_agent.c: see sess_agent.h. */
#include "gateway/sess_agent.h"

#include "common/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONNECT_TIMEOUT_MS 3000
#define RETRY_MS 250

struct sess_agent {
	atomic_int refs;
	char path[4200];
	agent_accept_fn accept;
	void *au;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop; /* under mu */
	struct agent_link *link; /* owned, under mu; NULL while not connected */
};

static struct timespec in_ms(int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static void *connector(void *arg)
{
	struct sess_agent *a = arg;
	bool said = false;

	pthread_mutex_lock(&a->mu);
	while (!a->stop) {
		struct agent_link *l = a->link;
		char err[256];
		int rc;

		if (l && agent_link_alive(l)) {
			struct timespec t = in_ms(1000);

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
			agent_link_on_accept(l, a->accept, a->au);
		else if (!said)
			log_info("agent", "%s: %s (retrying)", a->path, err);
		said |= rc != 0;
		pthread_mutex_lock(&a->mu);
		if (rc == 0 && a->stop) {
			pthread_mutex_unlock(&a->mu);
			agent_link_destroy(l);
			pthread_mutex_lock(&a->mu);
		} else if (rc == 0) {
			a->link = l;
			pthread_cond_broadcast(&a->cv);
		} else {
			struct timespec t = in_ms(RETRY_MS);

			pthread_cond_timedwait(&a->cv, &a->mu, &t);
		}
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

struct sess_agent *sess_agent_start(const char *path, agent_accept_fn accept, void *au)
{
	struct sess_agent *a = calloc(1, sizeof(*a));
	pthread_condattr_t ca;

	if (!a)
		return NULL;
	atomic_init(&a->refs, 1);
	snprintf(a->path, sizeof(a->path), "%s", path);
	a->accept = accept;
	a->au = au;
	pthread_mutex_init(&a->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&a->thread, NULL, connector, a)) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		free(a);
		return NULL;
	}
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
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	pthread_mutex_lock(&a->mu);
	l = a->link;
	a->link = NULL;
	pthread_mutex_unlock(&a->mu);
	agent_link_destroy(l);
	sess_agent_release(a);
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
	struct timespec t = in_ms(wait_ms);
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
