/* tests/unit/test_work_queue.c: the work queue (common/work_queue.h) in
 * what its encoder pool does not show (tests/unit/test_encode_pool.c runs
 * the rest through it): a bad configuration is refused, each worker gets
 * its own context made before it starts and freed at destroy (a failed
 * one fails the create with nothing left), work sees its worker's context,
 * cancelling by owner takes that owner's queued jobs and no one else's,
 * one owner never holds every worker, and destroy drains: every job's
 * done, once. */
#include "common/work_queue.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

static atomic_int contexts_alive, contexts_made, fail_after = -1;

struct ctx {
	int id;
};

static void *make_ctx(void *ud)
{
	struct ctx *c;
	int n = atomic_fetch_add(&contexts_made, 1);

	(void)ud;
	if (atomic_load(&fail_after) >= 0 && n >= atomic_load(&fail_after))
		return NULL;
	c = malloc(sizeof(*c));
	c->id = n + 1;
	atomic_fetch_add(&contexts_alive, 1);
	return c;
}

static void free_ctx(void *p)
{
	free(p);
	atomic_fetch_sub(&contexts_alive, 1);
}

static void wake(void *ud)
{
	(void)ud;
}

struct job {
	atomic_bool *gate; /* work waits until it is true */
	atomic_int *running_of_owner; /* counts this owner's jobs on workers */
	atomic_int *most_of_owner; /* the most seen at once */
	int ctx_id; /* the worker's context, seen by work */
	int dones, status;
};

static void work(void *ud, void *ctx)
{
	struct job *j = ud;
	int now;

	j->ctx_id = ctx ? ((struct ctx *)ctx)->id : -1;
	if (j->running_of_owner) {
		now = atomic_fetch_add(j->running_of_owner, 1) + 1;
		for (int most = atomic_load(j->most_of_owner);
		     now > most && !atomic_compare_exchange_weak(j->most_of_owner, &most, now);)
			;
	}
	while (j->gate && !atomic_load(j->gate))
		usleep(1000);
	if (j->running_of_owner) {
		usleep(2000);
		atomic_fetch_sub(j->running_of_owner, 1);
	}
}

static void done(void *ud, int status)
{
	struct job *j = ud;

	j->dones++;
	j->status = status;
}

static struct work_queue_config config(int threads, int max_jobs)
{
	return (struct work_queue_config){ .threads = threads,
					   .max_jobs = max_jobs,
					   .wake = wake,
					   .worker_init = make_ctx,
					   .worker_fini = free_ctx };
}

/* Reaps until every job of js (n) has had its done, 10 s at most. */
static void reap_all(struct work_queue *q, struct job *js, int n)
{
	for (int tries = 0; tries < 10000; tries++) {
		int left = 0;

		work_queue_reap(q);
		for (int i = 0; i < n; i++)
			left += js[i].dones == 0;
		if (!left)
			return;
		usleep(1000);
	}
	fail_msg("jobs still without their done after 10 s");
}

static void test_bad_config_and_failed_context(void **state)
{
	struct work_queue_config c = config(2, 4);
	struct work_queue *q = (struct work_queue *)&c;

	(void)state;
	c.threads = 0;
	assert_int_equal(work_queue_create(&c, &q), -EINVAL);
	assert_null(q);
	c.threads = WORK_QUEUE_MAX_THREADS + 1;
	assert_int_equal(work_queue_create(&c, &q), -EINVAL);
	c = config(2, 0);
	assert_int_equal(work_queue_create(&c, &q), -EINVAL);
	c = config(2, 4);
	c.wake = NULL;
	assert_int_equal(work_queue_create(&c, &q), -EINVAL);
	c = config(2, 4);
	c.worker_fini = NULL; /* a context nobody would free */
	assert_int_equal(work_queue_create(&c, &q), -EINVAL);
	/* The third of three contexts fails: the first two are freed. */
	c = config(3, 4);
	atomic_store(&contexts_made, 0);
	atomic_store(&fail_after, 2);
	assert_int_equal(work_queue_create(&c, &q), -ENOMEM);
	assert_null(q);
	assert_int_equal(atomic_load(&contexts_alive), 0);
	atomic_store(&fail_after, -1);
}

static void test_each_worker_its_context(void **state)
{
	struct work_queue_config c = config(2, 64);
	struct work_queue *q;
	struct job js[40] = { 0 };

	(void)state;
	atomic_store(&contexts_made, 0);
	assert_int_equal(work_queue_create(&c, &q), 0);
	assert_int_equal(atomic_load(&contexts_alive), 2);
	for (int i = 0; i < 40; i++)
		assert_int_equal(work_queue_submit(q, NULL, work, done, &js[i]), 0);
	reap_all(q, js, 40);
	for (int i = 0; i < 40; i++) {
		assert_int_equal(js[i].dones, 1);
		assert_int_equal(js[i].status, 0);
		assert_in_range(js[i].ctx_id, 1, 2); /* one of the two workers' */
	}
	work_queue_destroy(q);
	assert_int_equal(atomic_load(&contexts_alive), 0);

	/* Without hooks, ctx is NULL. */
	c = (struct work_queue_config){ .threads = 1, .max_jobs = 2, .wake = wake };
	assert_int_equal(work_queue_create(&c, &q), 0);
	js[0] = (struct job){ 0 };
	assert_int_equal(work_queue_submit(q, NULL, work, done, &js[0]), 0);
	reap_all(q, js, 1);
	assert_int_equal(js[0].ctx_id, -1);
	work_queue_destroy(q);
}

static void test_cancel_by_owner(void **state)
{
	struct work_queue_config c = config(1, 64);
	struct work_queue *q;
	atomic_bool gate = false;
	struct job blocker = { .gate = &gate }, a[5] = { 0 }, b[5] = { 0 };
	struct work_queue_stats st;
	int owner_a, owner_b;

	(void)state;
	assert_int_equal(work_queue_create(&c, &q), 0);
	/* The one worker is held, so everything after it stays queued. */
	assert_int_equal(work_queue_submit(q, NULL, work, done, &blocker), 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(work_queue_submit(q, &owner_a, work, done, &a[i]), 0);
		assert_int_equal(work_queue_submit(q, &owner_b, work, done, &b[i]), 0);
	}
	assert_int_equal(work_queue_cancel_owner(q, NULL), 0);
	assert_int_equal(work_queue_cancel_owner(q, &owner_a), 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(a[i].dones, 1); /* at once, on this thread */
		assert_int_equal(a[i].status, -ECANCELED);
		assert_int_equal(b[i].dones, 0);
	}
	assert_int_equal(work_queue_cancel_owner(q, &owner_a), 0);
	atomic_store(&gate, true);
	reap_all(q, b, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(b[i].status, 0);
	reap_all(q, &blocker, 1);
	work_queue_stats(q, &st);
	assert_int_equal(st.cancelled, 5);
	assert_int_equal(st.submitted, 11);
	work_queue_destroy(q);
}

static void test_one_owner_leaves_a_worker(void **state)
{
	struct work_queue_config c = config(3, 64);
	struct work_queue *q;
	atomic_int running = 0, most = 0;
	struct job js[30];
	int owner;

	(void)state;
	assert_int_equal(work_queue_create(&c, &q), 0);
	for (int i = 0; i < 30; i++) {
		js[i] = (struct job){ .running_of_owner = &running, .most_of_owner = &most };
		assert_int_equal(work_queue_submit(q, &owner, work, done, &js[i]), 0);
	}
	reap_all(q, js, 30);
	assert_in_range(atomic_load(&most), 1, 2); /* threads - 1 */
	work_queue_destroy(q);
}

/* A lower share: an owner holds at most max_per_owner workers, and a
 * share as large as the pool is refused (one worker is always left). */
static void test_owner_share_configured(void **state)
{
	struct work_queue_config c = config(4, 64);
	struct work_queue *q;
	atomic_int running = 0, most = 0;
	struct job js[24];
	int owner;

	(void)state;
	c.max_per_owner = 4;
	assert_int_equal(work_queue_create(&c, &q), -EINVAL);
	c.max_per_owner = -1;
	assert_int_equal(work_queue_create(&c, &q), -EINVAL);
	c.max_per_owner = 2;
	assert_int_equal(work_queue_create(&c, &q), 0);
	for (int i = 0; i < 24; i++) {
		js[i] = (struct job){ .running_of_owner = &running, .most_of_owner = &most };
		assert_int_equal(work_queue_submit(q, &owner, work, done, &js[i]), 0);
	}
	reap_all(q, js, 24);
	assert_in_range(atomic_load(&most), 1, 2);
	work_queue_destroy(q);
}

static void test_destroy_drains(void **state)
{
	struct work_queue_config c = config(1, 64);
	struct work_queue *q;
	atomic_bool gate = false;
	struct job running = { .gate = &gate }, queued[4] = { 0 };

	(void)state;
	assert_int_equal(work_queue_create(&c, &q), 0);
	assert_int_equal(work_queue_submit(q, NULL, work, done, &running), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(work_queue_submit(q, NULL, work, done, &queued[i]), 0);
	usleep(20 * 1000); /* the first is on the worker (or about to be) */
	atomic_store(&gate, true);
	work_queue_destroy(q);
	assert_int_equal(running.dones, 1);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(queued[i].dones, 1);
		/* each either ran before the stop or was cancelled by it */
		assert_true(queued[i].status == 0 || queued[i].status == -ECANCELED);
	}
	assert_int_equal(atomic_load(&contexts_alive), 0);
	work_queue_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_config_and_failed_context),
		cmocka_unit_test(test_each_worker_its_context),
		cmocka_unit_test(test_cancel_by_owner),
		cmocka_unit_test(test_one_owner_leaves_a_worker),
		cmocka_unit_test(test_owner_share_configured),
		cmocka_unit_test(test_destroy_drains),
	};

	return cmocka_run_group_tests_name("work queue", tests, NULL, NULL);
}
