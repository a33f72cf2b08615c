/* tests/integration/test_lifecycle.c: guest lifetimes with real QEMU and the
 * tiny guest: a guest that exits or is killed is detected and reported, a
 * destroyed guest leaves no process and no files, a SIGKILLed parent leaves
 * no QEMU behind and its run dir is swept, bad specs fail cleanly, and the
 * slow-start test hook stretches a start. */
#include "common/fsutil.h"
#include "tests/lib/guest.h"
#include "vmm-qemu/accel.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char run_base[64];

/* Number of vm-* dirs under the test's run base. */
static int run_dirs(void)
{
	DIR *d = opendir(run_base);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "vm-", 3);
	closedir(d);
	return n;
}

static bool alive(pid_t pid)
{
	char path[64], *stat = NULL;
	bool zombie;

	if (kill(pid, 0) < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (fs_read_file(path, 4096, &stat, NULL) < 0)
		return false;
	zombie = strstr(stat, ") Z ") != NULL;
	free(stat);
	return !zombie;
}

static int setup(void **state)
{
	(void)state;
	snprintf(run_base, sizeof(run_base), "/tmp/vitrine-lc-%d", (int)getpid());
	setenv("VITRINE_RUN", run_base, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rm_rf(run_base);
	return 0;
}

static void test_destroy_leaves_nothing(void **state)
{
	struct test_guest g;
	char dir[4096];
	pid_t pid;

	(void)state;
	assert_int_equal(test_guest_boot(&g, "tiny", 800, 600, NULL, NULL, 60000), 0);
	snprintf(dir, sizeof(dir), "%s", vmm_vm_run_dir(g.vm));
	pid = vmm_vm_proc(g.vm)->pid;
	assert_true(alive(pid));
	assert_int_equal(access(dir, F_OK), 0);
	assert_int_equal(run_dirs(), 1);
	test_guest_destroy(&g);
	assert_false(alive(pid));
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(run_dirs(), 0);
}

static void test_guest_exit_is_reported(void **state)
{
	struct test_guest g;
	char err[4096];
	int rc = 0;

	(void)state;
	assert_int_equal(test_guest_boot(&g, "tiny", 800, 600, NULL, NULL, 60000), 0);
	/* With -no-reboot a guest reset ends QEMU: the same path as a reboot or a panic. */
	assert_int_equal(vmm_vm_qmp(g.vm, "system_reset", NULL, NULL, 5000, err, sizeof(err)), 0);
	for (int i = 0; i < 200 && rc == 0; i++)
		rc = vmm_vm_service(g.vm, 50, err, sizeof(err));
	assert_int_equal(rc, -ECHILD);
	if (!strstr(err, "QEMU exited with status 0") || !strstr(err, "phase=ready"))
		fail_msg("unexpected report: %s", err);
	test_guest_destroy(&g);
	assert_int_equal(run_dirs(), 0);
}

static void test_killed_qemu_is_reported(void **state)
{
	struct test_guest g;
	char err[4096];
	int rc = 0;

	(void)state;
	assert_int_equal(test_guest_boot(&g, "tiny", 800, 600, NULL, NULL, 60000), 0);
	kill(vmm_vm_proc(g.vm)->pid, SIGKILL);
	for (int i = 0; i < 100 && rc == 0; i++)
		rc = vmm_vm_service(g.vm, 50, err, sizeof(err));
	assert_int_equal(rc, -ECHILD);
	if (!strstr(err, "killed by signal 9"))
		fail_msg("unexpected report: %s", err);
	/* A QMP call on the dead guest fails the same way. */
	assert_int_equal(vmm_vm_qmp(g.vm, "query-status", NULL, NULL, 2000, err, sizeof(err)),
			 -ECHILD);
	test_guest_destroy(&g);
	assert_int_equal(run_dirs(), 0);
}

/* The QEMU child of pid, or 0. */
static pid_t child_of(pid_t pid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	while (d && (e = readdir(d)) && !found) {
		char path[300], *stat = NULL, *p;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (fs_read_file(path, 4096, &stat, NULL) < 0)
			continue;
		p = strrchr(stat, ')');
		/* ") S PPID ..." */
		if (p && strstr(stat, "(qemu-system-x86") && atoi(p + 4) == pid)
			found = (pid_t)atoi(e->d_name);
		free(stat);
	}
	if (d)
		closedir(d);
	return found;
}

static void test_sigkill_of_parent_leaves_no_qemu(void **state)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	pid_t parent, qemu = 0;
	int st;

	(void)state;
	parent = fork();
	assert_true(parent >= 0);
	if (parent == 0) {
		execl(bin, bin, "boot", "--image", "tiny", "--hold", "120", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 300 && !qemu; i++) {
		usleep(100 * 1000);
		qemu = child_of(parent);
	}
	assert_true(qemu > 0);
	assert_int_equal(run_dirs(), 1);
	kill(parent, SIGKILL);
	waitpid(parent, &st, 0);
	for (int i = 0; i < 50 && alive(qemu); i++)
		usleep(100 * 1000);
	if (alive(qemu))
		fail_msg("QEMU %d outlived its SIGKILLed parent", (int)qemu);
	/* The dead parent could not clean up; the next vitrine sweeps its dir. */
	assert_int_equal(run_dirs(), 1);
	assert_int_equal(vmm_sweep_stale(run_base), 1);
	assert_int_equal(run_dirs(), 0);
}

static void test_bad_spec_leaves_nothing(void **state)
{
	struct vmm_image img;
	struct vmm_spec spec;
	struct vmm_vm_opts opts = { 0 };
	struct vmm_vm *vm = NULL;
	char err[1024];

	(void)state;
	assert_int_equal(vmm_image_load("no-such-image", &img, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "make images"));
	assert_int_equal(vmm_image_load("tiny", &img, err, sizeof(err)), 0);
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.accel = VMM_ACCEL_TCG;
	spec.width = 99999;
	assert_int_equal(vmm_vm_start(&spec, &opts, &vm, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "screen"));
	assert_null(vm);
	spec.width = 800;
	opts.page_file = "/nonexistent/page.html";
	assert_int_equal(vmm_vm_start(&spec, &opts, &vm, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/page.html"));
	assert_int_equal(run_dirs(), 0);
	/* A QEMU that refuses its command line is reported with QEMU's words. */
	opts.page_file = NULL;
	opts.qemu_bin = "/bin/false";
	assert_int_equal(vmm_vm_start(&spec, &opts, &vm, err, sizeof(err)), -ECHILD);
	assert_non_null(strstr(err, "exited with status 1"));
	assert_int_equal(run_dirs(), 0);
}

/* The test hook of docs/vmm.md stretches the start (the tiny image has no
 * overlay, so only the wait before QMP applies) and changes nothing else. */
static void test_slow_start_hook(void **state)
{
	struct vmm_image img;
	struct vmm_spec spec;
	struct vmm_vm_opts opts = { 0 };
	struct vmm_vm *vm = NULL;
	char err[1024];
	int64_t t0, ms;

	(void)state;
	assert_int_equal(vmm_image_load("tiny", &img, err, sizeof(err)), 0);
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.accel = VMM_ACCEL_TCG;
	setenv("VITRINE_TEST_SLOW_START_MS", "700", 1);
	t0 = fs_now_ms();
	assert_int_equal(vmm_vm_start(&spec, &opts, &vm, err, sizeof(err)), 0);
	ms = fs_now_ms() - t0;
	unsetenv("VITRINE_TEST_SLOW_START_MS");
	printf("start with a 700 ms hook: %lld ms\n", (long long)ms);
	assert_true(ms >= 700);
	assert_int_equal(vmm_vm_qmp(vm, "query-status", NULL, NULL, 5000, err, sizeof(err)), 0);
	vmm_vm_destroy(vm);
	assert_int_equal(run_dirs(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroy_leaves_nothing),
		cmocka_unit_test(test_guest_exit_is_reported),
		cmocka_unit_test(test_killed_qemu_is_reported),
		cmocka_unit_test(test_sigkill_of_parent_leaves_no_qemu),
		cmocka_unit_test(test_bad_spec_leaves_nothing),
		cmocka_unit_test(test_slow_start_hook),
	};

	return cmocka_run_group_tests_name("guest lifecycle", tests, setup, teardown);
}
