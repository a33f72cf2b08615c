/* tests/integration/test_privd.c: the gateway's root helper
 * (vmm-qemu/privd.h, priv.h) as a real process (`vitrine privd`) on a run
 * base of the test's own: it removes a run dir of its run base with what
 * goes with it (the owner record, the shim's log) and nothing outside; it
 * refuses every other path, a run dir's name that is a link to a folder of
 * the test's is removed as a link (the folder's files stay); its sweep
 * removes a run dir whose owner is gone and keeps one whose owner lives,
 * and leaves a record being written (a start beside the sweep) alone;
 * raw datagrams, as a process that lost its mind could send them (garbage,
 * no socket to answer on, too long), are refused or dropped and the helper
 * goes on answering; shim-terminate stops a real `vitrine shim` (holding a
 * sleep) its run dir's record names and never a stranger the record names;
 * fifty requests at once are all answered; and the helper exits when its
 * socket closes, and a helper killed leaves its work to the gateway (root
 * itself). No guest boots. */
#include "common/fsutil.h"
#include "vmm-qemu/priv.h"
#include "vmm-qemu/priv_proto.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/run_owner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static char root[64]; /* the test's temporary folder: everything is under it */
static char base[128]; /* the helper's run base */

static const char *bin(void)
{
	return getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* base/vm-NAME with a file and a folder in it, its owner record (owner:
 * this process with start_time, or a wrong one when stale) and its shim's
 * log. */
static void make_run_dir(const char *name, bool stale)
{
	char path[PATH_MAX], line[PATH_MAX];
	struct vmm_run_owner o = { .pid = getpid() };

	snprintf(path, sizeof(path), "%s/%s/sub", base, name);
	assert_int_equal(fs_mkdir_p(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s/sub/qemu.log", base, name);
	assert_int_equal(fs_write_file(path, "x", 1), 0);
	assert_int_equal(vmm_proc_start_time(getpid(), &o.start_time), 0);
	if (stale)
		o.start_time += 1000;
	snprintf(path, sizeof(path), "%s/owner-%s", base, name);
	assert_true(vmm_run_owner_format(&o, line, sizeof(line)) > 0);
	assert_int_equal(fs_write_file(path, line, strlen(line)), 0);
	snprintf(path, sizeof(path), "%s/shim-%s.log", base, name);
	assert_int_equal(fs_write_file(path, "log", 3), 0);
}

static int setup(void **state)
{
	char err[512];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/vitrine-privd-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(base, sizeof(base), "%s/run", root);
	if (fs_mkdir_p(base, 0755) < 0)
		return -1;
	if (vmm_priv_start(bin(), base, "", err, sizeof(err)) < 0) {
		fprintf(stderr, "start the helper: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vmm_priv_stop();
	if (strncmp(root, "/tmp/vitrine-privd-", 19) == 0)
		fs_rm_rf(root);
	return 0;
}

static void test_removes_a_run_dir_and_what_goes_with_it(void **state)
{
	char path[PATH_MAX];

	(void)state;
	make_run_dir("vm-aB3xYz", false);
	snprintf(path, sizeof(path), "%s/vm-aB3xYz", base);
	assert_int_equal(vmm_priv_run_dir_remove(path), 0);
	assert_false(exists(path));
	snprintf(path, sizeof(path), "%s/owner-vm-aB3xYz", base);
	assert_false(exists(path));
	snprintf(path, sizeof(path), "%s/shim-vm-aB3xYz.log", base);
	assert_false(exists(path));
	/* one that is not there: nothing to do */
	snprintf(path, sizeof(path), "%s/vm-gone00", base);
	assert_int_equal(vmm_priv_run_dir_remove(path), 0);
}

static void test_refuses_other_paths(void **state)
{
	static const char *rel[] = { "", "/vm-aB3xYz/..", "/../victim", "/vm-aB3x",
				     "/x/vm-aB3xYz" };
	char victim[PATH_MAX], keep[PATH_MAX], path[PATH_MAX], msg[PRIV_MSG_MAX];
	const char *argv[1] = { path };

	(void)state;
	snprintf(victim, sizeof(victim), "%s/victim", root);
	snprintf(keep, sizeof(keep), "%s/victim/keep", root);
	assert_int_equal(fs_mkdir_p(victim, 0755), 0);
	assert_int_equal(fs_write_file(keep, "k", 1), 0);
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", base, rel[i]);
		if (vmm_priv_call(PRIV_RUN_DIR_REMOVE, argv, 1, msg, sizeof(msg)) != -EPERM)
			fail_msg("%s was not refused", path);
		assert_non_null(strstr(msg, "is not a run dir of"));
	}
	argv[0] = victim;
	assert_int_equal(vmm_priv_call(PRIV_RUN_DIR_REMOVE, argv, 1, msg, sizeof(msg)), -EPERM);
	argv[0] = "/";
	assert_int_equal(vmm_priv_call(PRIV_RUN_DIR_REMOVE, argv, 1, msg, sizeof(msg)), -EPERM);
	assert_true(exists(keep));
	assert_true(exists(base));

	/* a run dir's name that is a link to the victim goes as a link */
	snprintf(path, sizeof(path), "%s/vm-L1nk00", base);
	assert_int_equal(symlink(victim, path), 0);
	argv[0] = path;
	assert_int_equal(vmm_priv_call(PRIV_RUN_DIR_REMOVE, argv, 1, msg, sizeof(msg)), 0);
	assert_false(exists(path));
	assert_true(exists(keep));
}

static void test_sweep_removes_the_stale_only(void **state)
{
	char live[PATH_MAX], stale[PATH_MAX], fresh_tmp[PATH_MAX], old_tmp[PATH_MAX];

	(void)state;
	make_run_dir("vm-L1ve00", false);
	make_run_dir("vm-5tale0", true);
	snprintf(live, sizeof(live), "%s/vm-L1ve00", base);
	snprintf(stale, sizeof(stale), "%s/vm-5tale0", base);
	/* a record being written beside a start (fs_write_file_atomic's
	 * temporary file) is left to its writer; one left old is removed */
	snprintf(fresh_tmp, sizeof(fresh_tmp), "%s/owner-vm-N3w000.tmp-a1b2c3", base);
	snprintf(old_tmp, sizeof(old_tmp), "%s/owner-vm-0ld000.tmp-a1b2c3", base);
	assert_int_equal(fs_write_file(fresh_tmp, "1 2 \n", 5), 0);
	assert_int_equal(fs_write_file(old_tmp, "1 2 \n", 5), 0);
	assert_int_equal(utimensat(AT_FDCWD, old_tmp,
				   (const struct timespec[]){ { .tv_sec = time(NULL) - 600 },
							      { .tv_sec = time(NULL) - 600 } },
				   0),
			 0);
	assert_int_equal(vmm_priv_sweep(base), 1);
	assert_false(exists(stale));
	assert_true(exists(live));
	assert_true(exists(fresh_tmp));
	assert_false(exists(old_tmp));
	assert_int_equal(unlink(fresh_tmp), 0);
	assert_int_equal(vmm_priv_sweep(base), 0);
	assert_int_equal(vmm_priv_run_dir_remove(live), 0);
	assert_false(exists(live));
}

/* A helper of the test's own on a raw socket: what a broken or hostile
 * asker can send it. */
static void test_raw_datagrams(void **state)
{
	char fd_text[16], reply[PRIV_REPLY_MAX], msg[PRIV_MSG_MAX];
	static char big[PRIV_REQ_MAX + 100];
	char *argv[] = { (char *)bin(), "privd", "--fd", fd_text, "--run-base", base, NULL };
	struct vmm_proc p = { .pidfd = -1 };
	int sv[2], rv[2], rc;
	ssize_t n;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	snprintf(fd_text, sizeof(fd_text), "%d", sv[1]);
	assert_int_equal(vmm_proc_spawn(argv, NULL, &sv[1], 1, NULL, &p, msg, sizeof(msg)), 0);
	close(sv[1]);
	/* no socket to answer on: dropped */
	assert_int_equal(send(sv[0], "sweep", 6, 0), 6);
	/* garbage, then too long, each with a socket: refused in words */
	for (int round = 0; round < 3; round++) {
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} ctl = { 0 };
		struct iovec iov;
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = ctl.buf,
				    .msg_controllen = sizeof(ctl.buf) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rv), 0);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &rv[1], sizeof(int));
		if (round == 0) {
			iov = (struct iovec){ .iov_base = "\xff\x01rm -rf /", .iov_len = 11 };
		} else if (round == 1) {
			memset(big, 'a', sizeof(big));
			big[sizeof(big) - 1] = '\0';
			iov = (struct iovec){ .iov_base = big, .iov_len = sizeof(big) };
		} else {
			iov = (struct iovec){ .iov_base = "sweep", .iov_len = 6 };
		}
		assert_true(sendmsg(sv[0], &m, 0) > 0);
		close(rv[1]);
		n = recv(rv[0], reply, sizeof(reply), 0);
		close(rv[0]);
		assert_true(n > 0);
		assert_int_equal(priv_reply_parse(reply, (size_t)n, &rc, msg, sizeof(msg)), 0);
		if (round < 2) {
			assert_int_equal(rc, -EINVAL);
			assert_true(msg[0]);
		} else {
			assert_int_equal(rc, 0); /* still answering */
			assert_string_equal(msg, "0 removed");
		}
	}
	/* its socket closed, it exits */
	close(sv[0]);
	assert_true(vmm_proc_wait(&p, 10000));
	assert_int_equal(p.status, 0);
	vmm_proc_release(&p);
}

static pid_t sleeping_child(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		for (;;)
			pause();
	return pid;
}

/* shim-terminate stops the shim a run dir's record names, and only a
 * shim of that run dir: a stranger the record names is never signalled. A
 * real `vitrine shim` holds a sleep as its "QEMU" here. */
static void test_shim_terminate(void **state)
{
	char dir[PATH_MAX], rec[PATH_MAX], line[PATH_MAX], msg[PRIV_MSG_MAX];
	struct vmm_run_owner o = { 0 };
	struct vmm_proc shim = { .pidfd = -1 };
	const char *argv[2] = { dir, "1000" };
	pid_t stranger = sleeping_child();
	int st;

	(void)state;
	/* a stranger in the record: refused, alive */
	snprintf(dir, sizeof(dir), "%s/vm-5trang", base);
	assert_int_equal(mkdir(dir, 0700), 0);
	o.pid = stranger;
	assert_int_equal(vmm_proc_start_time(stranger, &o.start_time), 0);
	snprintf(rec, sizeof(rec), "%s/owner-vm-5trang", base);
	assert_true(vmm_run_owner_format(&o, line, sizeof(line)) > 0);
	assert_int_equal(fs_write_file(rec, line, strlen(line)), 0);
	assert_int_equal(vmm_priv_call(PRIV_SHIM_TERMINATE, argv, 2, msg, sizeof(msg)), -ESRCH);
	assert_non_null(strstr(msg, "is not its shim"));
	assert_int_equal(waitpid(stranger, &st, WNOHANG), 0);
	kill(stranger, SIGKILL);
	waitpid(stranger, &st, 0);
	assert_int_equal(vmm_priv_run_dir_remove(dir), 0);

	/* bad waits and paths */
	argv[1] = "60001";
	assert_int_equal(vmm_priv_call(PRIV_SHIM_TERMINATE, argv, 2, msg, sizeof(msg)), -EINVAL);
	argv[1] = "-1";
	assert_int_equal(vmm_priv_call(PRIV_SHIM_TERMINATE, argv, 2, msg, sizeof(msg)), -EINVAL);
	argv[1] = "12x";
	assert_int_equal(vmm_priv_call(PRIV_SHIM_TERMINATE, argv, 2, msg, sizeof(msg)), -EINVAL);
	argv[0] = root;
	argv[1] = "1000";
	assert_int_equal(vmm_priv_call(PRIV_SHIM_TERMINATE, argv, 2, msg, sizeof(msg)), -EPERM);

	/* a real shim: stopped, its "QEMU" with it, its run dir removed */
	snprintf(dir, sizeof(dir), "%s/vm-5h1m00", base);
	assert_int_equal(mkdir(dir, 0700), 0);
	{
		char *sargv[] = { (char *)bin(), "shim",       "--run-dir",    dir,
				  "--grace-s",	 "60",	       "--on-abandon", "kill",
				  "--",		 "/bin/sleep", "1000",	       NULL };

		assert_int_equal(vmm_proc_spawn_detached(sargv, NULL, NULL, 0, &shim, msg,
							 sizeof(msg)),
				 0);
	}
	/* it names itself in the record once it runs */
	for (int i = 0; i < 200; i++) {
		if (vmm_run_owner_read(dir, &o) == 0 && o.pid == shim.pid)
			break;
		usleep(50 * 1000);
	}
	assert_int_equal(o.pid, shim.pid);
	assert_int_equal(vmm_priv_shim_terminate(dir, 5000, msg, sizeof(msg)), 0);
	assert_true(vmm_proc_wait(&shim, 10000));
	vmm_proc_release(&shim);
	assert_false(exists(dir));
	/* gone already: said so */
	assert_int_equal(vmm_priv_shim_terminate(dir, 1000, msg, sizeof(msg)), -ESRCH);
	vmm_priv_run_dir_remove(dir);
}

static void *sweeps(void *arg)
{
	int *bad = arg;

	for (int i = 0; i < 25; i++)
		if (vmm_priv_sweep(base) != 0)
			(*bad)++;
	return NULL;
}

static void test_requests_at_once(void **state)
{
	pthread_t t[2];
	int bad[2] = { 0, 0 };

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, sweeps, &bad[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(bad[0] + bad[1], 0);
}

static void test_exits_when_its_socket_closes(void **state)
{
	int pid = vmm_priv_pid();
	char err[512], path[PATH_MAX];

	(void)state;
	assert_true(pid > 0);
	vmm_priv_stop();
	assert_false(vmm_priv_running());
	assert_int_equal(kill(pid, 0), -1);
	/* a helper killed under the gateway: the work is done here (as root) */
	assert_int_equal(vmm_priv_start(bin(), base, "", err, sizeof(err)), 0);
	kill(vmm_priv_pid(), SIGKILL);
	make_run_dir("vm-K1lled", true);
	assert_int_equal(vmm_priv_sweep(base), 1);
	make_run_dir("vm-K1lle2", false);
	snprintf(path, sizeof(path), "%s/vm-K1lle2", base);
	assert_int_equal(vmm_priv_run_dir_remove(path), 0);
	assert_false(exists(path));
	vmm_priv_stop();
	/* and without one, the work is done here, as before */
	make_run_dir("vm-L0ca10", true);
	assert_int_equal(vmm_priv_sweep(base), 1);
	assert_int_equal(vmm_priv_start(bin(), base, "", err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_removes_a_run_dir_and_what_goes_with_it),
		cmocka_unit_test(test_refuses_other_paths),
		cmocka_unit_test(test_sweep_removes_the_stale_only),
		cmocka_unit_test(test_raw_datagrams),
		cmocka_unit_test(test_shim_terminate),
		cmocka_unit_test(test_requests_at_once),
		cmocka_unit_test(test_exits_when_its_socket_closes),
	};

	return cmocka_run_group_tests_name("root helper", tests, setup, teardown);
}
