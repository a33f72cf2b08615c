/* tests/integration/test_serve_start.c: `vitrine serve`'s ways out before
 * it serves. A bad command line exits 2 with its message (and the usage
 * where getopt_long's rules were broken); a start that fails part way (the
 * state dir unusable or held by another gateway, the port or the metrics
 * port taken) exits 1 with one clear line and leaves nothing behind: no
 * lock on the state dir, no listening socket, no run dir, and under ASan
 * no leak (which would change the exit status). A clean start and SIGTERM
 * exit 0 through the same teardown. Where no cgroup can be made, guests
 * are refused with 503 no_cgroup unless --allow-no-cgroup, and /healthz
 * and /metrics say whether they run unconfined. No guest. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/net.h"
#include "tests/lib/shell.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char home[64], run_base[80], state_dir[80], key_file[80];

/* libwebsockets 4.1 leaks 72 bytes of its own when lws_create_context
 * fails (a port taken): not the gateway's to free. Any other leak still
 * shows. */
#define LSAN_SUPPRESSIONS "leak:libwebsockets.so\n"

/* `vitrine serve ARGS` on this test's dirs; returns its exit status and
 * puts stdout+stderr in out. */
static int serve(const char *args, char *out, size_t len)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char cmd[2048];

	snprintf(
		cmd, sizeof(cmd),
		"LSAN_OPTIONS=suppressions=%s/lsan.supp VITRINE_HOME=%s VITRINE_RUN=%s %s serve %s "
		"2>&1",
		home, home, run_base, bin, args);
	return shell_run(cmd, out, len);
}

static void expect(const char *args, int status, const char *needle)
{
	char out[16384];
	int st = serve(args, out, sizeof(out));

	if (st != status || !strstr(out, needle) || strstr(out, "Sanitizer"))
		fail_msg("`vitrine serve %s` exited %d (want %d) saying:\n%s(want '%s')", args, st,
			 status, out, needle);
}

/* A socket listening on a loopback port of its own; its port in *port. */
static int listen_somewhere(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Holds dir/name's lock as another gateway would; the descriptor. */
static int hold_lock(const char *dir, const char *name)
{
	char lock[128];
	int fd;

	snprintf(lock, sizeof(lock), "%s/%s", dir, name);
	fd = open(lock, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	return fd;
}

/* The lock file at path, if there is one, is held by nobody. */
static void assert_unlocked(const char *path)
{
	int fd = open(path, O_RDWR);

	if (fd >= 0) {
		assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
		close(fd);
	}
}

/* What a failed start must not leave: the state dir's or the run base's
 * lock held, a socket on port, a run dir. */
static void assert_nothing_left(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };
	char lock[128];
	int fd;

	snprintf(lock, sizeof(lock), "%s/.lock", state_dir);
	assert_unlocked(lock);
	snprintf(lock, sizeof(lock), "%s/.gateway.lock", run_base);
	assert_unlocked(lock);
	if (port) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		assert_true(fd >= 0);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			fail_msg("something still listens on port %d", port);
		close(fd);
	}
	assert_true(access(run_base, F_OK) < 0 || fs_rm_rf(run_base) == 0);
}

static int setup(void **state)
{
	char supp[96];

	(void)state;
	snprintf(home, sizeof(home), "/tmp/vitrine-serve-start-%d", (int)getpid());
	snprintf(run_base, sizeof(run_base), "%s/run", home);
	snprintf(state_dir, sizeof(state_dir), "%s/state", home);
	snprintf(key_file, sizeof(key_file), "%s/key", home);
	fs_rm_rf(home);
	snprintf(supp, sizeof(supp), "%s/lsan.supp", home);
	if (mkdir(home, 0700) < 0)
		return -1;
	return fs_write_file(supp, LSAN_SUPPRESSIONS, strlen(LSAN_SUPPRESSIONS)) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rm_rf(home);
	return 0;
}

static void test_bad_command_lines(void **state)
{
	(void)state;
	expect("--help", 0, "usage: vitrine serve [options]\n  --listen HOST:PORT");
	expect("--max-sessions 0", 2,
	       "vitrine: --max-sessions must be a whole number in 1..256, not '0'\n");
	expect("--no-such-option", 2,
	       "serve: unrecognized option '--no-such-option'\nusage: vitrine serve [options]\n");
	expect("--listen", 2, "serve: option '--listen' requires an argument\nusage:");
	expect("--on-stop later", 2, "vitrine serve: --on-stop must be keep, pause or kill\n");
	expect("--record-max-bytes 12", 2,
	       "vitrine serve: --record-max-bytes must be a number of bytes, at least 4096, not "
	       "'12'\n");
	expect("--node Big", 2,
	       "vitrine serve: --node must be 1..20 lowercase letters and digits, not 'Big'\n");
	expect("--listen h:99999", 2,
	       "vitrine: --listen port must be a whole number in 0..65535, not '99999'\n"
	       "vitrine serve: --listen must be HOST:PORT, not 'h:99999'\n");
	expect("--state-dir /tmp extra", 2, "vitrine serve: unexpected argument 'extra'\n");
	/* None of these got as far as the key or the state dir. */
	assert_int_equal(access(state_dir, F_OK), -1);
	assert_int_equal(access(key_file, F_OK), -1);
}

static void test_state_dir_unusable(void **state)
{
	char args[512], want[256];
	int port = net_free_port(), fd;

	(void)state;
	/* A file where the state dir should be. */
	fd = open(state_dir, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(args, sizeof(args), "--listen 127.0.0.1:%d --api-key-file %s --state-dir %s", port,
		 key_file, state_dir);
	snprintf(want, sizeof(want), "vitrine serve: open %s/.lock: Not a directory\n", state_dir);
	expect(args, 1, want);
	assert_nothing_left(port);
	unlink(state_dir);
}

static void test_state_dir_held(void **state)
{
	char args[512], want[256];
	int port = net_free_port(), fd;

	(void)state;
	assert_int_equal(fs_mkdir_p(state_dir, 0700), 0);
	fd = hold_lock(state_dir, ".lock");
	snprintf(args, sizeof(args), "--listen 127.0.0.1:%d --api-key-file %s --state-dir %s", port,
		 key_file, state_dir);
	snprintf(want, sizeof(want),
		 "vitrine serve: %s is in use by another gateway (it holds .lock)\n", state_dir);
	expect(args, 1, want);
	close(fd);
	assert_nothing_left(port);
}

/* Another gateway (here: this test) manages the run base: a gateway with
 * another state dir, and a gc, are refused before they sweep, adopt or
 * stop anything of it. */
static void test_run_base_held(void **state)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char args[512], want[512], keep[128], cmd[1024], out[4096];
	int port = net_free_port(), fd;

	(void)state;
	assert_int_equal(fs_mkdir_p(run_base, 0755), 0);
	/* what the other gateway's sweep would take if it ran */
	snprintf(keep, sizeof(keep), "%s/vm-ckpt-other", run_base);
	assert_int_equal(fs_mkdir_p(keep, 0700), 0);
	fd = hold_lock(run_base, ".gateway.lock");
	snprintf(args, sizeof(args), "--listen 127.0.0.1:%d --api-key-file %s --state-dir %s", port,
		 key_file, state_dir);
	snprintf(want, sizeof(want),
		 "vitrine serve: another gateway (or vitrine gc) uses the run base %s: stop it, or "
		 "give this one its own (VITRINE_RUN or VITRINE_HOME)\n",
		 run_base);
	expect(args, 1, want);
	snprintf(cmd, sizeof(cmd), "VITRINE_HOME=%s VITRINE_RUN=%s %s gc --state-dir %s 2>&1", home,
		 run_base, bin, state_dir);
	assert_int_equal(shell_run(cmd, out, sizeof(out)), 1);
	assert_non_null(
		strstr(out, "vitrine gc: another gateway (or vitrine gc) uses the run base"));
	assert_int_equal(access(keep, F_OK), 0); /* untouched */
	close(fd);
	assert_nothing_left(port);
}

static void test_port_taken(void **state)
{
	char args[512], want[256];
	int port, fd = listen_somewhere(&port);

	(void)state;
	snprintf(args, sizeof(args), "--listen 127.0.0.1:%d --api-key-file %s --state-dir %s", port,
		 key_file, state_dir);
	snprintf(want, sizeof(want), "vitrine serve: cannot listen on 127.0.0.1:%d\n", port);
	expect(args, 1, want);
	close(fd);
	assert_nothing_left(0);
}

/* The last way out of the start: the main door is open, the encoder
 * threads run, the sampler too; all of it goes. */
static void test_metrics_port_taken(void **state)
{
	char args[512], want[256];
	int metrics, fd = listen_somewhere(&metrics), port = net_free_port();

	(void)state;
	snprintf(args, sizeof(args),
		 "--listen 127.0.0.1:%d --metrics-listen 127.0.0.1:%d --api-key-file %s "
		 "--state-dir %s",
		 port, metrics, key_file, state_dir);
	snprintf(want, sizeof(want),
		 "vitrine serve: cannot listen on 127.0.0.1:%d (--metrics-listen)\n", metrics);
	expect(args, 1, want);
	close(fd);
	assert_nothing_left(port);
	snprintf(args, sizeof(args),
		 "--listen 127.0.0.1:%d --metrics-listen nowhere --api-key-file %s --state-dir %s",
		 port, key_file, state_dir);
	expect(args, 1, "vitrine serve: --metrics-listen must be HOST:PORT, not 'nowhere'\n");
	assert_nothing_left(port);
}

/* The normal way out goes through the same gw_stop: exit 0. */
/* The gateway's child that runs `vitrine privd` (its root helper), or 0. */
static pid_t root_helper_of(pid_t gw)
{
	char path[64], line[4096];
	pid_t found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)gw, (int)gw);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f))
		for (char *tok = strtok(line, " \n"); tok && !found; tok = strtok(NULL, " \n")) {
			char cmd[256] = "";
			size_t n;
			FILE *c;

			snprintf(path, sizeof(path), "/proc/%s/cmdline", tok);
			if (!(c = fopen(path, "r")))
				continue;
			n = fread(cmd, 1, sizeof(cmd) - 1, c);
			fclose(c);
			if (n > 0 && strlen(cmd) + 1 < n && !strcmp(cmd + strlen(cmd) + 1, "privd"))
				found = (pid_t)atoi(tok);
		}
	fclose(f);
	return found;
}

/* A clean start runs the root helper (vmm-qemu/privd.h) beside it; a
 * clean stop takes it too. */
static void test_clean_start_and_stop(void **state)
{
	struct gateway_proc g;
	pid_t helper;

	(void)state;
	assert_int_equal(gateway_proc_start(&g, (const char *const[]){ "--on-stop", "keep", NULL }),
			 0);
	helper = root_helper_of(g.pid);
	assert_true(helper > 0);
	assert_int_equal(gateway_proc_stop(&g), 0);
	assert_int_equal(kill(helper, 0), -1);
}

/* method path on g with its key: the status, the answer in *out (owned). */
static int get(const struct gateway_proc *g, const char *method, const char *path, const char *body,
	       struct http_resp *out)
{
	assert_int_equal(http_request("127.0.0.1", g->port, method, path, g->key, body,
				      body ? strlen(body) : 0, 30, out),
			 0);
	return out->status;
}

/* A host where no cgroup can be made (VITRINE_CGROUP_V2_ROOT at a folder
 * that is no cgroup: cgroup.c then never looks at v1): guests are refused
 * before anything starts (503 no_cgroup), and /healthz says they do not
 * run unconfined; with --allow-no-cgroup they would, which /healthz and
 * /metrics say. No guest is started either way. */
static struct gateway_proc no_cgroup_gw; /* stopped by its teardown when an assert fails */

static void test_no_cgroup(void **state)
{
	struct gateway_proc *g = &no_cgroup_gw;
	struct http_resp r;
	char fake[96];

	(void)state;
	if (geteuid() != 0)
		skip(); /* no jail, no cgroup asked for */
	snprintf(fake, sizeof(fake), "%s/not-a-cgroup", home);
	assert_int_equal(fs_mkdir_p(fake, 0755), 0);
	setenv("VITRINE_CGROUP_V2_ROOT", fake, 1);
	assert_int_equal(gateway_proc_start(g, NULL), 0);
	assert_int_equal(get(g, "GET", "/healthz", NULL, &r), 200);
	assert_non_null(r.json);
	assert_true(json_is_false(json_object_get(r.json, "unconfined")));
	http_resp_free(&r);
	assert_int_equal(get(g, "POST", "/v1/sessions", "{\"image\":\"tiny\"}", &r), 503);
	assert_string_equal(http_error_code(&r), "no_cgroup");
	http_resp_free(&r);
	assert_int_equal(gateway_proc_guests(g), 0);
	assert_int_equal(gateway_proc_stop(g), 0);

	assert_int_equal(gateway_proc_start(g, (const char *const[]){ "--allow-no-cgroup", NULL }),
			 0);
	assert_int_equal(get(g, "GET", "/healthz", NULL, &r), 200);
	assert_true(json_is_true(json_object_get(r.json, "unconfined")));
	http_resp_free(&r);
	assert_int_equal(get(g, "GET", "/metrics", NULL, &r), 200);
	assert_non_null(strstr(r.body, "\nvitrine_unconfined 1\n"));
	http_resp_free(&r);
	assert_int_equal(gateway_proc_stop(g), 0);
}

static int teardown_no_cgroup(void **state)
{
	if (no_cgroup_gw.run_base[0]) /* started once */
		gateway_proc_stop(&no_cgroup_gw);
	unsetenv("VITRINE_CGROUP_V2_ROOT");
	return teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bad_command_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_dir_unusable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_dir_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_base_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_taken, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_port_taken, setup, teardown),
		cmocka_unit_test(test_clean_start_and_stop),
		cmocka_unit_test_setup_teardown(test_no_cgroup, setup, teardown_no_cgroup),
	};

	return cmocka_run_group_tests_name("vitrine serve's start and its failures", tests, NULL,
					   NULL);
}
