/* tests/integration/test_sess_agent.c: a session's agent connection
 * (gateway/guest/sess_agent.h) without a guest and without a thread of its
 * own: the socket it connects to is a listener of this test's that runs
 * vitrine-agent built for the host (--fd) on each connection it takes,
 * attempts run on a work queue and end on a loop this test turns. The
 * link comes up once something listens and the owner hears it on the
 * loop; a thread blocked in sess_agent_get gets it then; a lost link is
 * said, and connected again, without anyone polling it; the test hook
 * VITRINE_TEST_AGENT_LATE_MS holds the first attempt back; a stop with an
 * attempt under way leaves nothing behind (the queue's drain). */
#include "common/fsutil.h"
#include "common/work_queue.h"
#include "gateway/guest/sess_agent.h"

#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define MAX_AGENTS 8

struct fixture {
	char dir[32], path[64], bin[4200];
	struct lws_context *ctx;
	struct work_queue *q;
	int lfd; /* the listener, -1 until listen_now */
	pthread_t acceptor;
	atomic_bool stop_accepting;
	pid_t agents[MAX_AGENTS]; /* one vitrine-agent per connection taken */
	atomic_int n_agents;
	int ups, downs; /* what the owner heard, on the loop */
	lws_sorted_usec_list_t tick; /* keeps lws_service from sleeping long */
};

static void on_tick(lws_sorted_usec_list_t *sul)
{
	(void)sul;
}

static void wake_loop(void *ud)
{
	lws_cancel_service(ud);
}

static void changed(void *cu, bool up)
{
	struct fixture *f = cu;

	if (up)
		f->ups++;
	else
		f->downs++;
}

/* Takes connections and hands each to a vitrine-agent of its own. */
static void *accept_loop(void *arg)
{
	struct fixture *f = arg;

	while (!atomic_load(&f->stop_accepting)) {
		int fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
		char fdarg[16];
		pid_t pid;

		if (fd < 0) {
			usleep(10 * 1000);
			continue;
		}
		if (atomic_load(&f->n_agents) == MAX_AGENTS) {
			close(fd);
			continue;
		}
		pid = fork();
		if (pid == 0) {
			int keep = dup(fd); /* without CLOEXEC */

			snprintf(fdarg, sizeof(fdarg), "%d", keep);
			execl(f->bin, f->bin, "--fd", fdarg, (char *)NULL);
			_exit(127);
		}
		close(fd);
		f->agents[atomic_fetch_add(&f->n_agents, 1)] = pid;
	}
	return NULL;
}

/* Something listens at f->path from now on. */
static void listen_now(struct fixture *f)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 8), 0);
	assert_int_equal(pthread_create(&f->acceptor, NULL, accept_loop, f), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct lws_context_creation_info info = { .port = CONTEXT_PORT_NO_LISTEN };
	const char *gw = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char dir[4096];
	struct work_queue_config qc = { .threads = 2, .max_jobs = 8, .wake = wake_loop };

	assert_non_null(f);
	snprintf(dir, sizeof(dir), "%s", gw);
	snprintf(f->bin, sizeof(f->bin), "%s/vitrine-agent", dirname(dir));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_sess_agent.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/agent.sock", f->dir);
	f->lfd = -1;
	lws_set_log_level(0, NULL);
	f->ctx = lws_create_context(&info);
	assert_non_null(f->ctx);
	qc.wake_ud = f->ctx;
	assert_int_equal(work_queue_create(&qc, &f->q), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	lws_sul_cancel(&f->tick);
	work_queue_destroy(f->q); /* the one wait for attempts under way */
	sess_agent_poke_all(); /* the word of links lost meanwhile lets go */
	if (f->lfd >= 0) {
		atomic_store(&f->stop_accepting, true);
		pthread_join(f->acceptor, NULL);
		close(f->lfd);
	}
	for (int i = 0; i < atomic_load(&f->n_agents); i++) {
		kill(f->agents[i], SIGKILL);
		waitpid(f->agents[i], NULL, 0);
	}
	lws_context_destroy(f->ctx);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	unsetenv("VITRINE_TEST_AGENT_LATE_MS");
	return 0;
}

static struct sess_agent *start(struct fixture *f)
{
	const struct sess_agent_env env = { .ctx = f->ctx, .q = f->q, .changed = changed, .cu = f };
	struct sess_agent *a = sess_agent_start(&env, f->path, NULL);

	assert_non_null(a);
	return a;
}

/* Turns the loop, as the gateway's does on each wake-up, until *n
 * reaches want or ms have passed. */
static void turn_until(struct fixture *f, const int *n, int want, int ms)
{
	int64_t until = fs_now_ms() + ms;

	while (*n < want && fs_now_ms() < until) {
		lws_sul_schedule(f->ctx, 0, &f->tick, on_tick, 20 * LWS_US_PER_MS);
		lws_service(f->ctx, 0);
		work_queue_reap(f->q);
		sess_agent_poke_all();
	}
}

/* A link, held, now (the loop's way: no wait). */
static bool up_now(struct sess_agent *a)
{
	struct agent_link *l = sess_agent_get(a, 0);

	agent_link_release(l);
	return l != NULL;
}

static void test_comes_up_once_something_listens(void **state)
{
	struct fixture *f = *state;
	struct sess_agent *a = start(f);
	struct agent_link *l;

	turn_until(f, &f->ups, 1, 300); /* an attempt or two fails meanwhile */
	assert_int_equal(f->ups, 0);
	assert_false(up_now(a));
	listen_now(f);
	turn_until(f, &f->ups, 1, 10000);
	assert_int_equal(f->ups, 1);
	l = sess_agent_get(a, 0);
	assert_non_null(l);
	assert_int_equal(agent_link_ping(l, 5000), 0);
	agent_link_release(l);
	sess_agent_stop(a);
}

struct borrower {
	struct sess_agent *a;
	struct agent_link *got;
	atomic_bool done;
};

static void *borrow(void *arg)
{
	struct borrower *b = arg;

	b->got = sess_agent_get(b->a, SESS_AGENT_WAIT_MS);
	atomic_store(&b->done, true);
	return NULL;
}

static void test_a_thread_waits_for_the_link(void **state)
{
	struct fixture *f = *state;
	struct sess_agent *a = start(f);
	struct borrower b = { .a = sess_agent_hold(a) };
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, borrow, &b), 0);
	turn_until(f, &f->ups, 1, 100);
	assert_false(atomic_load(&b.done));
	listen_now(f);
	turn_until(f, &f->ups, 1, 10000);
	pthread_join(t, NULL);
	assert_non_null(b.got);
	assert_true(agent_link_alive(b.got));
	agent_link_release(b.got);
	sess_agent_stop(a);
	sess_agent_release(b.a);
}

static void test_a_lost_link_is_said_and_made_again(void **state)
{
	struct fixture *f = *state;
	struct sess_agent *a = start(f);

	listen_now(f);
	turn_until(f, &f->ups, 1, 10000);
	assert_int_equal(f->ups, 1);
	kill(f->agents[0], SIGKILL); /* the agent goes away */
	turn_until(f, &f->downs, 1, 10000);
	assert_int_equal(f->downs, 1);
	turn_until(f, &f->ups, 2, 10000);
	assert_int_equal(f->ups, 2);
	assert_true(up_now(a));
	assert_int_equal(atomic_load(&f->n_agents), 2);
	sess_agent_stop(a);
}

static void test_the_late_hook_holds_the_first_attempt(void **state)
{
	struct fixture *f = *state;
	int64_t t0 = fs_now_ms();
	struct sess_agent *a;

	setenv("VITRINE_TEST_AGENT_LATE_MS", "300", 1);
	listen_now(f);
	a = start(f);
	turn_until(f, &f->ups, 1, 10000);
	assert_int_equal(f->ups, 1);
	assert_true(fs_now_ms() - t0 >= 300);
	sess_agent_stop(a);
}

static void test_stop_with_an_attempt_under_way(void **state)
{
	struct fixture *f = *state;
	struct work_queue_stats st;
	struct sess_agent *a;
	int never = 0;

	listen_now(f);
	a = start(f);
	/* the timer submits the attempt; no reap: it is the queue's still */
	for (int i = 0; i < 100 && (work_queue_stats(f->q, &st), !st.submitted); i++) {
		lws_sul_schedule(f->ctx, 0, &f->tick, on_tick, 20 * LWS_US_PER_MS);
		lws_service(f->ctx, 0);
	}
	assert_int_equal(st.submitted, 1);
	sess_agent_stop(a); /* does not wait for it */
	turn_until(f, &never, 1, 200);
	assert_int_equal(f->ups, 0); /* the owner hears nothing after its stop */
	/* teardown's queue drain lets go of the rest (ASan checks) */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_comes_up_once_something_listens, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_thread_waits_for_the_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_lost_link_is_said_and_made_again, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_the_late_hook_holds_the_first_attempt, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_with_an_attempt_under_way, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
