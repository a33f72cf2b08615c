/* tests/unit/test_encode_pool.c: the encoder pool (display/encode_pool.h):
 * many jobs on two workers with real stream encodes, every done exactly once
 * and on the owner thread, the bound (-EBUSY), wakes that are coalesced but
 * never lost, cancelling queued jobs, and destroy with jobs queued, running
 * and finished (it waits for the running ones and leaves no ud without its
 * done: under ASan a forgotten ud is a leak), and the screenshot pattern
 * with the encode cache. */
#include "display/encode_cache.h"
#include "display/encode_pool.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static int wake_fd = -1;
static atomic_int wakes;
static pthread_t owner;

struct job {
	int id;
	atomic_int ran; /* times work ran */
	int done_calls, status;
	bool done_off_owner, ran_on_owner, done_before_work;
	atomic_bool *gate; /* work waits until it is true */
	const struct display_frame *base, *f; /* encode base -> f in work */
	struct display_stream_msg *msg; /* written by work */
	bool heap; /* done frees the job */
	struct encode_pool *pool; /* for dones that submit */
	int chain_left; /* a done that submits a follow-up this many times */
	int resubmit_rc;
};

/* Order in which dones ran (job ids). */
static int done_log[4096];
static int n_done_log;
static int heap_alive; /* heap jobs not yet freed by their done */

static void on_wake(void *ud)
{
	uint64_t one = 1;

	(void)ud;
	atomic_fetch_add(&wakes, 1);
	if (write(wake_fd, &one, sizeof(one)) < 0)
		one = 0;
}

static void work(void *ud, void *enc) /* the worker's struct display_stream_encoder */
{
	struct job *j = ud;
	char err[128];

	/* No cmocka assertions off the test thread: record, check later. */
	j->ran_on_owner = pthread_equal(pthread_self(), owner);
	if (j->gate)
		while (!atomic_load(j->gate))
			usleep(1000);
	if (j->f &&
	    display_stream_encode(enc, j->base, j->f, 70, 0, 16, &j->msg, err, sizeof(err)) < 0)
		j->msg = NULL;
	atomic_fetch_add(&j->ran, 1);
}

static void done(void *ud, int status);

static void chain_next(struct job *j)
{
	struct job *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	n->id = j->id + 1;
	n->heap = true;
	n->pool = j->pool;
	n->chain_left = j->chain_left - 1;
	heap_alive++;
	j->resubmit_rc = encode_pool_submit(j->pool, work, done, n);
	if (j->resubmit_rc < 0) {
		heap_alive--;
		free(n);
	}
}

static void done(void *ud, int status)
{
	struct job *j = ud;

	j->done_off_owner = !pthread_equal(pthread_self(), owner);
	j->done_calls++;
	j->status = status;
	if (status == 0 && atomic_load(&j->ran) != 1)
		j->done_before_work = true;
	if (n_done_log < (int)(sizeof(done_log) / sizeof(done_log[0])))
		done_log[n_done_log++] = j->id;
	if (j->chain_left > 0)
		chain_next(j);
	if (j->heap) {
		/* Checked here: nobody sees this job after its done. */
		assert_int_equal(j->done_calls, 1);
		assert_false(j->done_off_owner);
		assert_false(j->done_before_work);
		assert_int_equal(atomic_load(&j->ran), status == 0 ? 1 : 0);
		display_stream_msg_unref(j->msg);
		heap_alive--;
		free(j);
	}
}

/* Waits up to ms for a wake, then reaps. Returns the count reaped, or -1
 * when no wake came (a lost wake would hang a loop like this). */
static int wait_and_reap(struct encode_pool *p, int ms)
{
	struct pollfd pfd = { .fd = wake_fd, .events = POLLIN };
	uint64_t v;

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	if (read(wake_fd, &v, sizeof(v)) < 0)
		return -1;
	return encode_pool_reap(p);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
	(void)state;
	owner = pthread_self();
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return wake_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	close(wake_fd);
	return 0;
}

/* Resets the per-test bookkeeping. */
static void fresh(void)
{
	uint64_t v;

	n_done_log = 0;
	heap_alive = 0;
	atomic_store(&wakes, 0);
	if (read(wake_fd, &v, sizeof(v)) < 0)
		v = 0;
}

static void test_bad_arguments(void **state)
{
	struct encode_pool *p = (void *)1;
	struct job j = { 0 };

	(void)state;
	assert_int_equal(encode_pool_create(0, 4, on_wake, NULL, &p), -EINVAL);
	assert_null(p);
	assert_int_equal(encode_pool_create(ENCODE_POOL_MAX_THREADS + 1, 4, on_wake, NULL, &p),
			 -EINVAL);
	assert_int_equal(encode_pool_create(1, 0, on_wake, NULL, &p), -EINVAL);
	assert_int_equal(encode_pool_create(1, 4, NULL, NULL, &p), -EINVAL);
	assert_int_equal(encode_pool_create(1, 4, on_wake, NULL, &p), 0);
	assert_int_equal(encode_pool_submit(p, NULL, done, &j), -EINVAL);
	assert_int_equal(encode_pool_submit(p, work, NULL, &j), -EINVAL);
	assert_int_equal(encode_pool_reap(p), 0);
	assert_int_equal(encode_pool_cancel(p, &j), 0);
	encode_pool_destroy(p);
	encode_pool_destroy(NULL);
	assert_int_equal(j.done_calls, 0);
}

/* Two frames that differ in one tile, for real encodes on the workers. */
static struct display_frame *frame_pair(struct display_frame **b)
{
	struct display_frame *a = display_frame_create(256, 128);

	*b = display_frame_create(256, 128);
	assert_non_null(a);
	assert_non_null(*b);
	for (size_t i = 0; i < (size_t)a->stride * a->height; i++)
		a->pixels[i] = (*b)->pixels[i] = (uint8_t)(i * 13 / 7);
	(*b)->pixels[70 * (*b)->stride + 70 * 4] ^= 0xFF;
	a->seq = 1;
	(*b)->seq = 2;
	return a;
}

static void test_many_jobs(void **state)
{
	enum { N = 2000 };
	struct display_frame *b, *a = frame_pair(&b);
	struct encode_pool *p;
	struct work_queue_stats st;
	int submitted = 0, reaped = 0, busy = 0;

	(void)state;
	fresh();
	assert_int_equal(encode_pool_create(2, 16, on_wake, NULL, &p), 0);
	while (reaped < N) {
		while (submitted < N) {
			struct job *j = calloc(1, sizeof(*j));
			int rc;

			assert_non_null(j);
			j->id = submitted;
			j->heap = true;
			/* Every third job a real encode: a delta, or a whole frame. */
			if (submitted % 3 == 0) {
				j->base = submitted % 2 ? a : NULL;
				j->f = b;
			}
			heap_alive++;
			rc = encode_pool_submit(p, work, done, j);
			if (rc == -EBUSY) {
				heap_alive--;
				free(j);
				busy++;
				break;
			}
			assert_int_equal(rc, 0);
			submitted++;
		}
		/* Only woken reaps: a lost wake fails here rather than hangs. */
		{
			int n = wait_and_reap(p, 5000);

			assert_true(n >= 0);
			reaped += n;
		}
	}
	assert_int_equal(reaped, N);
	assert_int_equal(heap_alive, 0);
	assert_true(busy > 0);
	/* The order of dones across workers is not promised; each id once is. */
	{
		static bool seen[N];

		memset(seen, 0, sizeof(seen));
		assert_int_equal(n_done_log, N);
		for (int i = 0; i < n_done_log; i++) {
			assert_false(seen[done_log[i]]);
			seen[done_log[i]] = true;
		}
	}
	encode_pool_stats(p, &st);
	assert_int_equal(st.queued + st.running + st.finished, 0);
	assert_int_equal(st.submitted, N);
	assert_int_equal(st.rejected, busy);
	assert_int_equal(st.cancelled, 0);
	assert_true(atomic_load(&wakes) >= 1 && atomic_load(&wakes) <= N);
	print_message("%d jobs, %d refused while full, %d wakes\n", N, busy, atomic_load(&wakes));
	encode_pool_destroy(p);
	display_frame_unref(a);
	display_frame_unref(b);
}

/* A job that holds the only worker until its gate opens. */
static struct job gated(int id, atomic_bool *gate)
{
	struct job j = { .id = id, .gate = gate };

	return j;
}

/* Waits until the pool's counts say running == n. */
static void wait_running(struct encode_pool *p, int n)
{
	struct work_queue_stats st;
	int64_t until = now_ms() + 5000;

	do {
		encode_pool_stats(p, &st);
		if (st.running == n)
			return;
		usleep(1000);
	} while (now_ms() < until);
	fail_msg("running is %d, want %d", st.running, n);
}

static void test_busy_when_full(void **state)
{
	atomic_bool gate = false;
	struct job j[4] = { gated(0, &gate), { .id = 1 }, { .id = 2 }, { .id = 3 } };
	struct encode_pool *p;
	int got = 0;

	(void)state;
	fresh();
	assert_int_equal(encode_pool_create(1, 3, on_wake, NULL, &p), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(encode_pool_submit(p, work, done, &j[i]), 0);
	wait_running(p, 1);
	/* Full: refused, and nothing is ever called for it. */
	assert_int_equal(encode_pool_submit(p, work, done, &j[3]), -EBUSY);
	atomic_store(&gate, true);
	while (got < 3) {
		int n = wait_and_reap(p, 5000);

		assert_true(n >= 0);
		got += n;
	}
	for (int i = 0; i < 3; i++) {
		assert_int_equal(j[i].done_calls, 1);
		assert_int_equal(j[i].status, 0);
		assert_false(j[i].done_off_owner);
		assert_false(j[i].ran_on_owner);
	}
	assert_int_equal(j[3].done_calls, 0);
	assert_int_equal(atomic_load(&j[3].ran), 0);
	/* Finished jobs count until reaped; after the reap there is room. */
	assert_int_equal(encode_pool_submit(p, work, done, &j[3]), 0);
	assert_true(wait_and_reap(p, 5000) == 1);
	assert_int_equal(j[3].done_calls, 1);
	encode_pool_destroy(p);
}

static void test_cancel_queued_only(void **state)
{
	atomic_bool gate = false;
	struct job run = gated(100, &gate), a = { .id = 1 }, b = { .id = 2 };
	struct encode_pool *p;
	int got = 0;

	(void)state;
	fresh();
	assert_int_equal(encode_pool_create(1, 16, on_wake, NULL, &p), 0);
	assert_int_equal(encode_pool_submit(p, work, done, &run), 0);
	wait_running(p, 1);
	/* a three times, b twice, interleaved; all queued behind run. */
	for (int i = 0; i < 5; i++)
		assert_int_equal(encode_pool_submit(p, work, done, i % 2 ? &b : &a), 0);
	assert_int_equal(encode_pool_cancel(p, &a), 3);
	/* The dones came at once, on this thread, with -ECANCELED. */
	assert_int_equal(a.done_calls, 3);
	assert_int_equal(a.status, -ECANCELED);
	assert_int_equal(atomic_load(&a.ran), 0);
	assert_false(a.done_off_owner);
	/* A running job cannot be cancelled: its done comes from reap. */
	assert_int_equal(encode_pool_cancel(p, &run), 0);
	assert_int_equal(run.done_calls, 0);
	atomic_store(&gate, true);
	while (got < 3) {
		int n = wait_and_reap(p, 5000);

		assert_true(n >= 0);
		got += n;
	}
	assert_int_equal(run.done_calls, 1);
	assert_int_equal(run.status, 0);
	assert_int_equal(b.done_calls, 2);
	assert_int_equal(b.status, 0);
	assert_int_equal(atomic_load(&b.ran), 2);
	assert_int_equal(a.done_calls, 3);
	{
		struct work_queue_stats st;

		encode_pool_stats(p, &st);
		assert_int_equal(st.cancelled, 3);
		assert_int_equal(st.submitted, 6);
	}
	encode_pool_destroy(p);
}

static void *open_gate_later(void *arg)
{
	usleep(150 * 1000);
	atomic_store((atomic_bool *)arg, true);
	return NULL;
}

static void test_destroy_with_jobs_everywhere(void **state)
{
	atomic_bool gate = false;
	struct encode_pool *p;
	struct work_queue_stats st;
	pthread_t opener;
	struct job *fin[3], *run[2], *queued[10];
	int64_t t0;

	(void)state;
	fresh();
	assert_int_equal(encode_pool_create(2, 32, on_wake, NULL, &p), 0);
	/* Three finished and not reaped... */
	for (int i = 0; i < 3; i++) {
		fin[i] = calloc(1, sizeof(struct job));
		fin[i]->id = i;
		assert_int_equal(encode_pool_submit(p, work, done, fin[i]), 0);
	}
	for (int64_t until = now_ms() + 5000; now_ms() < until; usleep(1000)) {
		encode_pool_stats(p, &st);
		if (st.finished == 3)
			break;
	}
	assert_int_equal(st.finished, 3);
	/* ...two on the workers, held there... */
	for (int i = 0; i < 2; i++) {
		run[i] = calloc(1, sizeof(struct job));
		run[i]->id = 10 + i;
		run[i]->gate = &gate;
		assert_int_equal(encode_pool_submit(p, work, done, run[i]), 0);
	}
	wait_running(p, 2);
	/* ...and ten queued behind them. */
	for (int i = 0; i < 10; i++) {
		queued[i] = calloc(1, sizeof(struct job));
		queued[i]->id = 20 + i;
		assert_int_equal(encode_pool_submit(p, work, done, queued[i]), 0);
	}
	/* Set the heap flag only now: done frees them, checking as it goes. */
	for (int i = 0; i < 3; i++)
		fin[i]->heap = true;
	for (int i = 0; i < 2; i++)
		run[i]->heap = true;
	for (int i = 0; i < 10; i++)
		queued[i]->heap = true;
	heap_alive = 15;
	assert_int_equal(pthread_create(&opener, NULL, open_gate_later, &gate), 0);
	t0 = now_ms();
	encode_pool_destroy(p);
	/* It waited for the running jobs (the gate opened after ~150 ms)... */
	assert_true(now_ms() - t0 >= 100);
	pthread_join(opener, NULL);
	/* ...and every job got its done (the heap jobs freed themselves). */
	assert_int_equal(heap_alive, 0);
	assert_int_equal(n_done_log, 15);
	/* Finished and running ones first (status 0), then the queued ones
	 * cancelled in their order. */
	for (int i = 0; i < 5; i++)
		assert_true(done_log[i] < 20);
	for (int i = 0; i < 10; i++)
		assert_int_equal(done_log[5 + i], 20 + i);
	print_message("destroy waited %lld ms for the running jobs\n", (long long)(now_ms() - t0));
}

static void test_done_may_submit(void **state)
{
	struct encode_pool *p;
	struct job *first = calloc(1, sizeof(*first));
	int got = 0;

	(void)state;
	fresh();
	assert_int_equal(encode_pool_create(2, 1, on_wake, NULL, &p), 0);
	/* max_jobs 1: each done's follow-up only fits because reap frees the
	 * slot before calling done. */
	first->heap = true;
	first->pool = p;
	first->chain_left = 50;
	heap_alive = 1;
	assert_int_equal(encode_pool_submit(p, work, done, first), 0);
	while (got < 51) {
		int n = wait_and_reap(p, 5000);

		assert_true(n >= 0);
		got += n;
	}
	assert_int_equal(heap_alive, 0);
	for (int i = 0; i < 51; i++)
		assert_int_equal(done_log[i], i);
	encode_pool_destroy(p);
}

/* A done run by destroy cannot queue more work: it is told -ESHUTDOWN. */
static void test_submit_during_destroy(void **state)
{
	struct encode_pool *p;
	struct job j = { .id = 7, .chain_left = 1 };
	struct work_queue_stats st;

	(void)state;
	fresh();
	assert_int_equal(encode_pool_create(1, 4, on_wake, NULL, &p), 0);
	j.pool = p;
	assert_int_equal(encode_pool_submit(p, work, done, &j), 0);
	for (int64_t until = now_ms() + 5000; now_ms() < until; usleep(1000)) {
		encode_pool_stats(p, &st);
		if (st.finished == 1)
			break;
	}
	encode_pool_destroy(p);
	assert_int_equal(j.done_calls, 1);
	assert_int_equal(j.status, 0);
	assert_int_equal(j.resubmit_rc, -ESHUTDOWN);
	assert_int_equal(heap_alive, 0);
}

/* The gateway's screenshot pattern: the loop looks up, a worker encodes,
 * the done (on the loop) stores the image and answers. */
struct shot_job {
	struct display_encode_cache *cache; /* the loop's; touched only in done */
	struct display_frame *f; /* owned reference, read by the worker */
	struct display_encode_opts opts;
	struct display_image *img; /* written by the worker */
	int rc;
	char err[128];
	struct display_image *answer; /* what the loop hands out */
	bool done;
};

static void shot_work(void *ud, void *enc) /* the worker's struct display_stream_encoder */
{
	struct shot_job *j = ud;

	(void)enc;
	j->rc = display_encode(j->f, &j->opts, &j->img, j->err, sizeof(j->err));
}

static void shot_done(void *ud, int status)
{
	struct shot_job *j = ud;

	assert_true(pthread_equal(pthread_self(), owner));
	assert_int_equal(status, 0);
	assert_int_equal(j->rc, 0);
	j->answer = display_encode_cache_put(j->cache, j->f, &j->opts, j->img);
	display_image_unref(j->img);
	display_frame_unref(j->f);
	j->done = true;
}

static void test_screenshot_pattern(void **state)
{
	struct display_encode_cache *c = display_encode_cache_create(4);
	struct display_frame *b, *a = frame_pair(&b);
	struct shot_job j = { .cache = c, .opts = { .format = DISPLAY_FORMAT_PNG } };
	struct display_image *hit;
	struct encode_pool *p;

	(void)state;
	fresh();
	assert_int_equal(encode_pool_create(2, 4, on_wake, NULL, &p), 0);
	assert_int_equal(display_encode_cache_find(c, a, &j.opts, &hit), -ENOENT);
	j.f = display_frame_ref(a);
	assert_int_equal(encode_pool_submit(p, shot_work, shot_done, &j), 0);
	while (!j.done)
		assert_true(wait_and_reap(p, 5000) >= 0);
	assert_non_null(j.answer);
	assert_int_equal(j.answer->width, 256);
	assert_int_equal(display_encode_cache_find(c, a, &j.opts, &hit), 0);
	assert_ptr_equal(hit, j.answer);
	display_image_unref(hit);
	display_image_unref(j.answer);
	encode_pool_destroy(p);
	display_encode_cache_destroy(c);
	display_frame_unref(a);
	display_frame_unref(b);
}

/* One owner's queue of held-up encodings never keeps another owner's job
 * waiting: with two workers, owner B holds at most one, so A's job runs
 * (and is done) while every job of B is still held at its gate. */
static void test_owner_share(void **state)
{
	static const char b_owner, a_owner;
	struct encode_pool *p;
	atomic_bool gate = false;
	struct job b[4], a;
	int64_t until;

	(void)state;
	fresh();
	assert_int_equal(encode_pool_create(2, 16, on_wake, NULL, &p), 0);
	for (int i = 0; i < 4; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].id = i;
		b[i].gate = &gate;
		assert_int_equal(encode_pool_submit_for(p, &b_owner, work, done, &b[i]), 0);
	}
	memset(&a, 0, sizeof(a));
	a.id = 100;
	assert_int_equal(encode_pool_submit_for(p, &a_owner, work, done, &a), 0);
	until = now_ms() + 5000;
	while (a.done_calls == 0 && now_ms() < until)
		wait_and_reap(p, 100);
	assert_int_equal(a.done_calls, 1);
	assert_int_equal(a.status, 0);
	/* Only one of B's ran at all, and it is still at its gate. */
	{
		int started = 0;
		struct work_queue_stats st;

		for (int i = 0; i < 4; i++)
			started += b[i].done_calls;
		assert_int_equal(started, 0);
		encode_pool_stats(p, &st);
		assert_int_equal(st.running, 1);
		assert_int_equal(st.queued, 3);
	}
	atomic_store(&gate, true);
	encode_pool_destroy(p); /* waits for B's running one, cancels the queued ones */
	for (int i = 0; i < 4; i++)
		assert_int_equal(b[i].done_calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_many_jobs),
		cmocka_unit_test(test_busy_when_full),
		cmocka_unit_test(test_cancel_queued_only),
		cmocka_unit_test(test_destroy_with_jobs_everywhere),
		cmocka_unit_test(test_done_may_submit),
		cmocka_unit_test(test_submit_during_destroy),
		cmocka_unit_test(test_screenshot_pattern),
		cmocka_unit_test(test_owner_share),
	};

	return cmocka_run_group_tests_name("encoder pool", tests, setup, teardown);
}
