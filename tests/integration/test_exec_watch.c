/* tests/integration/test_exec_watch.c: exec jobs (gateway/guest/exec.h),
 * watched ones (exec_watch, exec_output: a recipe build's steps) among
 * them, without a guest: vitrine-agent built for the host runs on one end
 * of a socket pair (--fd), the session's agent connection holds the link
 * on the other, and jobs run as the gateway runs them, their ends reaped by
 * a loop this test turns (exec_reap, as the gateway's wake-up does). A
 * job's output shows while it runs; a long one keeps exactly its last
 * bytes and counts them all; stdin, exit codes and signals come back as
 * from POST exec; a timeout kills it with what it printed kept; a link that
 * breaks under it fails it. Its completion comes once, on the loop; a job
 * let go of while it runs is freed when it ends; shutdown cuts what still
 * runs without waiting for it. */
#include "common/fsutil.h"
#include "common/work_queue.h"
#include "gateway/core/gw.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/sess_agent.h"

#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

struct fixture {
	pid_t agent;
	struct gw gw;
	struct work_queue *q; /* where the connection would try again */
	struct sess_agent *sa;
	int completions; /* done() calls so far */
};

static void wake_loop(void *ud)
{
	lws_cancel_service(ud);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct lws_context_creation_info info = { .port = CONTEXT_PORT_NO_LISTEN };
	char dir[4096], bin[4200], err[256], fdarg[16];
	const char *gw = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	struct agent_link *link;
	int sv[2];

	assert_non_null(f);
	snprintf(dir, sizeof(dir), "%s", gw);
	snprintf(bin, sizeof(bin), "%s/vitrine-agent", dirname(dir));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->agent = fork();
	if (f->agent == 0) {
		int fd = dup(sv[1]); /* without CLOEXEC */

		snprintf(fdarg, sizeof(fdarg), "%d", fd);
		execl(bin, bin, "--fd", fdarg, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	assert_int_equal(agent_link_open_fd(sv[0], 5000, &link, err, sizeof(err)), 0);
	lws_set_log_level(0, NULL);
	f->gw.ctx = lws_create_context(&info); /* what the links' threads wake */
	assert_non_null(f->gw.ctx);
	{
		const struct work_queue_config qc = {
			.threads = 1, .max_jobs = 4, .wake = wake_loop, .wake_ud = f->gw.ctx
		};
		struct sess_agent_env env = { .ctx = f->gw.ctx };

		assert_int_equal(work_queue_create(&qc, &f->q), 0);
		env.q = f->q;
		/* No socket to connect again to (and no loop here to try): the
		 * link given is the only one. */
		f->sa = sess_agent_start(&env, "/nonexistent/agent.sock", link);
	}
	assert_non_null(f->sa);
	f->gw.execs = exec_runs_create(f->gw.ctx);
	assert_non_null(f->gw.execs);
	*state = f;
	return 0;
}

static void nothing(lws_sorted_usec_list_t *sul)
{
	(void)sul;
}

/* One turn of the loop (at most about 10 ms), then the ends reaped. */
static void turn(struct fixture *f)
{
	static lws_sorted_usec_list_t tick;

	lws_sul_schedule(f->gw.ctx, 0, &tick, nothing, 10 * LWS_US_PER_MS);
	lws_service(f->gw.ctx, 0);
	lws_sul_cancel(&tick);
	exec_reap(f->gw.execs);
}

/* Turns the loop for ms. */
static void turn_for(struct fixture *f, int ms)
{
	for (int64_t until = fs_now_ms() + ms; fs_now_ms() < until;)
		turn(f);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int64_t until = fs_now_ms() + 10000;

	sess_agent_stop(f->sa); /* the owner's reference: the link closes */
	while (exec_runs_count(f->gw.execs) > 0 && fs_now_ms() < until)
		turn(f);
	assert_int_equal(exec_runs_count(f->gw.execs), 0); /* no command left */
	exec_runs_destroy(f->gw.execs);
	work_queue_destroy(f->q);
	sess_agent_poke_all(); /* the word of a link a test broke lets go of it */
	kill(f->agent, SIGKILL); /* it ends with its socket; a test may have killed it */
	waitpid(f->agent, NULL, 0);
	lws_context_destroy(f->gw.ctx);
	free(f);
	return 0;
}

/* A job's completion: on the loop, the job done. */
static void counted(struct exec_job *j, void *ud)
{
	struct fixture *f = ud;

	assert_true(exec_done(j));
	f->completions++;
}

/* A watched job running body (exec_parse's JSON), keeping keep bytes. */
static struct exec_job *start(struct fixture *f, const char *body, size_t keep)
{
	struct api_error e;
	struct exec_job *j = exec_parse(body, strlen(body), &e);

	if (!j)
		fail_msg("exec_parse: %s", e.message);
	assert_int_equal(exec_watch(j, keep), 0);
	assert_int_equal(exec_start(j, &f->gw, f->sa, counted, f), 0);
	return j;
}

/* Turns the loop up to 20 s for j to end; its completion came once. */
static void wait_done_f(struct fixture *f, struct exec_job *j)
{
	int before = f->completions;

	for (int64_t until = fs_now_ms() + 20000; !exec_done(j) && fs_now_ms() < until;)
		turn(f);
	assert_true(exec_done(j));
	assert_int_equal(f->completions, before + 1);
	turn(f);
	assert_int_equal(f->completions, before + 1); /* once */
}
#define wait_done(j) wait_done_f(f, j)

/* stream's kept bytes as a string (of at most 64 KiB), its total in *total. */
static const char *output(struct exec_job *j, int stream, uint64_t *total)
{
	static char buf[65537];
	size_t n = exec_output(j, stream, buf, sizeof(buf) - 1, total);

	buf[n] = '\0';
	return buf;
}

static void test_output_while_running(void **state)
{
	struct fixture *f = *state;
	const struct agent_exec_result *res;
	const char *why;
	uint64_t total = 0;
	int64_t until = fs_now_ms() + 20000;
	struct exec_job *j = start(f,
				   "{\"cmd\":\"printf one; echo err >&2; sleep 2; printf two\","
				   "\"user\":\"root\",\"cwd\":\"/tmp\"}",
				   1024);

	/* "one" shows before the job ends (it sleeps 2 s after it). */
	while (strcmp(output(j, 1, &total), "one") && fs_now_ms() < until)
		usleep(10 * 1000);
	assert_string_equal(output(j, 1, &total), "one");
	assert_int_equal(total, 3);
	assert_false(exec_done(j));
	wait_done(j);
	assert_string_equal(output(j, 1, &total), "onetwo");
	assert_int_equal(total, 6);
	assert_string_equal(output(j, 2, &total), "err\n");
	assert_int_equal(total, 4);
	assert_int_equal(exec_result(j, &res, &why), 0);
	assert_int_equal(res->exit_code, 0);
	assert_false(res->timed_out);
	assert_true(res->pid > 0);
	assert_int_equal(res->out_len, 6);
	assert_memory_equal(res->out, "onetwo", 6);
	assert_false(res->out_truncated);
	exec_release(j);
}

/* seq 1 n's output, and its length. */
static size_t seq_text(int n, char **out)
{
	size_t len = 0, cap = (size_t)n * 8 + 1;
	char *s = malloc(cap);

	assert_non_null(s);
	for (int i = 1; i <= n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%d\n", i);
	*out = s;
	return len;
}

static void test_long_output_keeps_its_tail(void **state)
{
	struct fixture *f = *state;
	const struct agent_exec_result *res;
	const char *why, *got;
	uint64_t total;
	char *want;
	size_t want_len = seq_text(30000, &want);
	struct exec_job *j = start(f,
				   "{\"cmd\":\"seq 1 30000\",\"user\":\"root\",\"cwd\":\"/tmp\"}",
				   1000);

	wait_done(j);
	got = output(j, 1, &total);
	assert_int_equal(total, want_len);
	assert_int_equal(strlen(got), 1000);
	assert_string_equal(got, want + want_len - 1000);
	/* A shorter copy is the last bytes of those. */
	{
		char small[11];
		size_t n = exec_output(j, 1, small, 10, &total);

		small[n] = '\0';
		assert_string_equal(small, want + want_len - 10);
	}
	assert_int_equal(exec_result(j, &res, &why), 0);
	assert_int_equal(res->out_len, 1000);
	assert_memory_equal(res->out, want + want_len - 1000, 1000);
	assert_true(res->out_truncated);
	assert_int_equal(output(j, 2, &total)[0], '\0');
	assert_int_equal(total, 0);
	free(want);
	exec_release(j);
}

static void test_stdin_exit_and_signal(void **state)
{
	struct fixture *f = *state;
	const struct agent_exec_result *res;
	const char *why;
	uint64_t total;
	struct exec_job *j = start(f,
				   "{\"cmd\":\"cat; exit 3\",\"stdin\":\"hello\",\"user\":\"root\","
				   "\"cwd\":\"/tmp\"}",
				   64);
	int status;
	json_t *a;

	wait_done(j);
	assert_string_equal(output(j, 1, &total), "hello");
	assert_int_equal(exec_result(j, &res, &why), 0);
	assert_int_equal(res->exit_code, 3);
	a = exec_answer(j, &status); /* as POST exec would answer it */
	assert_int_equal(status, 200);
	assert_int_equal(json_integer_value(json_object_get(a, "exit_code")), 3);
	assert_string_equal(json_string_value(json_object_get(a, "stdout")), "hello");
	json_decref(a);
	exec_release(j);

	j = start(f, "{\"cmd\":\"kill -TERM $$\",\"user\":\"root\",\"cwd\":\"/tmp\"}", 64);
	wait_done(j);
	assert_int_equal(exec_result(j, &res, &why), 0);
	assert_int_equal(res->signal, 15);
	assert_int_equal(res->exit_code, -1);
	exec_release(j);

	j = start(f, "{\"cmd\":\"/nonexistent/program\",\"args\":[],\"user\":\"root\"}", 64);
	wait_done(j);
	assert_int_equal(exec_result(j, &res, &why), 0);
	assert_int_equal(res->exit_code, 127); /* the agent's child says why */
	assert_non_null(strstr(output(j, 2, &total), "cannot run /nonexistent/program"));
	exec_release(j);
}

static void test_timeout_keeps_output(void **state)
{
	struct fixture *f = *state;
	const struct agent_exec_result *res;
	const char *why;
	uint64_t total;
	int64_t t0 = fs_now_ms();
	struct exec_job *j = start(f,
				   "{\"cmd\":\"echo started; sleep 30\",\"timeout\":1,"
				   "\"user\":\"root\",\"cwd\":\"/tmp\"}",
				   64);

	wait_done(j);
	assert_true(fs_now_ms() - t0 < 10000);
	assert_int_equal(exec_result(j, &res, &why), -ETIMEDOUT);
	assert_string_equal(why, "timed out");
	assert_true(res->timed_out);
	assert_string_equal(output(j, 1, &total), "started\n");
	exec_release(j);
}

static void test_link_lost(void **state)
{
	struct fixture *f = *state;
	const struct agent_exec_result *res;
	const char *why;
	uint64_t total;
	int64_t until = fs_now_ms() + 20000;
	struct exec_job *j =
		start(f, "{\"cmd\":\"echo up; sleep 30\",\"user\":\"root\",\"cwd\":\"/tmp\"}", 64);

	while (strcmp(output(j, 1, &total), "up\n") && fs_now_ms() < until)
		usleep(10 * 1000);
	assert_string_equal(output(j, 1, &total), "up\n");
	kill(f->agent, SIGKILL);
	wait_done(j);
	assert_int_equal(exec_result(j, &res, &why), -EPIPE);
	assert_string_equal(output(j, 1, &total), "up\n");
	exec_release(j);
}

static void test_watch_refusals(void **state)
{
	struct api_error e;
	const char *body = "{\"cmd\":\"true\"}";
	struct exec_job *j = exec_parse(body, strlen(body), &e);
	uint64_t total = 7;
	char buf[4];

	(void)state;
	assert_non_null(j);
	assert_int_equal(exec_output(j, 1, buf, sizeof(buf), &total), 0); /* not watched */
	assert_int_equal(total, 0);
	assert_int_equal(exec_watch(j, 0), -EINVAL);
	assert_int_equal(exec_watch(j, (1u << 20) + 1), -EINVAL);
	assert_int_equal(exec_watch(j, 16), 0);
	assert_int_equal(exec_watch(j, 16), -EINVAL);
	assert_int_equal(exec_output(j, 3, buf, sizeof(buf), &total), 0);
	exec_free(j);
}

/* A job let go of while it runs runs on, without its completion, and is
 * freed once it ends (ASan says whether exactly once). */
static void test_release_while_running(void **state)
{
	struct fixture *f = *state;
	int64_t until = fs_now_ms() + 20000;
	struct exec_job *j =
		start(f, "{\"cmd\":\"sleep 1; echo done\",\"user\":\"root\",\"cwd\":\"/tmp\"}", 64);

	turn_for(f, 200);
	assert_int_equal(exec_runs_count(f->gw.execs), 1);
	exec_release(j);
	while (exec_runs_count(f->gw.execs) > 0 && fs_now_ms() < until)
		turn(f);
	assert_int_equal(exec_runs_count(f->gw.execs), 0);
	assert_int_equal(f->completions, 0);
}

/* Shutdown does not wait for a command: it is cut, its job fails at once
 * and its completion still comes. */
static void test_shutdown_cuts_running(void **state)
{
	struct fixture *f = *state;
	const struct agent_exec_result *res;
	const char *why;
	uint64_t total;
	int64_t until = fs_now_ms() + 20000, t0;
	struct exec_job *j =
		start(f, "{\"cmd\":\"echo up; sleep 30\",\"user\":\"root\",\"cwd\":\"/tmp\"}", 64);

	while (strcmp(output(j, 1, &total), "up\n") && fs_now_ms() < until)
		turn(f);
	t0 = fs_now_ms();
	exec_runs_destroy(f->gw.execs);
	assert_true(fs_now_ms() - t0 < 1000);
	assert_int_equal(f->completions, 1);
	assert_true(exec_done(j));
	assert_int_equal(exec_result(j, &res, &why), -EPIPE);
	assert_string_equal(why, "the gateway is stopping");
	exec_free(j);
	f->gw.execs = exec_runs_create(f->gw.ctx); /* for the teardown */
	assert_non_null(f->gw.execs);
	/* The link goes on: the next command runs. */
	j = start(f, "{\"cmd\":\"echo again\",\"user\":\"root\",\"cwd\":\"/tmp\"}", 64);
	wait_done(j);
	assert_int_equal(exec_result(j, &res, &why), 0);
	assert_string_equal(output(j, 1, &total), "again\n");
	exec_release(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_refusals),
		cmocka_unit_test_setup_teardown(test_release_while_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_cuts_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_while_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_output_keeps_its_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_exit_and_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_keeps_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_lost, setup, teardown),
	};

	return cmocka_run_group_tests_name("watched exec jobs", tests, NULL, NULL);
}
