/* tests/unit/test_cgroup_v2.c: cgroup.c's v2 path against a fake cgroup2
 * hierarchy in a temporary dir ($VITRINE_CGROUP_V2_ROOT), because no host
 * here has a v2 hierarchy with controllers (they are v1's): what a real
 * kernel does is not shown by this test, only what cgroup.c asks of it.
 *
 * The fake is a small kernel of our own, linked in with --wrap (Makefile):
 * mkdir in it makes the interface files a cgroup2 dir has (cgroup.procs,
 * cgroup.kill, cgroup.controllers listing what the parent enabled,
 * cgroup.subtree_control, and memory.max, memory.swap.max, pids.max,
 * cpu.max, cpu.weight for the controllers it has); cgroup.subtree_control
 * is written to with O_APPEND (each "+ctrl" kept) and refuses a write with
 * EBUSY while the dir holds processes (the no-internal-processes rule,
 * the root excepted); writing cgroup.procs moves the writer there; rmdir
 * says EBUSY while processes are in it, unless cgroup.kill was written,
 * and removes the interface files as the kernel does.
 *
 * Checked: the controllers enabled at each level, the guest's limits, the
 * gateway moving itself into a leaf when its own cgroup holds it, a second
 * guest beside the first, removal through cgroup.kill, the sweep of an
 * empty one, and no v2 (no memory controller) reported as -ENOTSUP. */
#include "common/fsutil.h"
#include "vmm-qemu/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

static char root[64]; /* the fake's mount point */

int __real_open(const char *path, int flags, ...);
int __real_mkdir(const char *path, mode_t mode);
int __real_rmdir(const char *path);
int __wrap_open(const char *path, int flags, ...);
int __wrap_mkdir(const char *path, mode_t mode);
int __wrap_rmdir(const char *path);

static bool in_fake(const char *path)
{
	size_t n = strlen(root);

	return root[0] && !strncmp(path, root, n) && (path[n] == '/' || path[n] == '\0');
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = __real_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static char *get(const char *dir, const char *file)
{
	char path[PATH_MAX + 64], *text = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return fs_read_file(path, 4096, &text, NULL) == 0 ? text : NULL;
}

static bool has_word(const char *text, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = text; p && (p = strstr(p, word)); p += n)
		if ((p == text || strchr(" +\n", p[-1])) && strchr(" +\n", p[n]))
			return true;
	return false;
}

/* What a dir enabled for its children: the words of its subtree_control
 * ("+memory+pids") that its own controllers allow. */
static void enabled(const char *dir, char *out, size_t len)
{
	static const char *const all[] = { "cpu", "memory", "pids", "io" };
	char *sub = get(dir, "cgroup.subtree_control"), *mine = get(dir, "cgroup.controllers");

	out[0] = '\0';
	for (size_t i = 0; i < 4; i++)
		if (sub && mine && has_word(sub, all[i]) && has_word(mine, all[i]))
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? " " : "",
				 all[i]);
	free(sub);
	free(mine);
}

int __wrap_mkdir(const char *path, mode_t mode)
{
	char parent[PATH_MAX], ctrls[128];

	if (!in_fake(path))
		return __real_mkdir(path, mode);
	if (__real_mkdir(path, mode) < 0)
		return -1;
	snprintf(parent, sizeof(parent), "%s", path);
	*strrchr(parent, '/') = '\0';
	enabled(parent, ctrls, sizeof(ctrls));
	put(path, "cgroup.controllers", ctrls);
	put(path, "cgroup.subtree_control", "");
	put(path, "cgroup.procs", "");
	put(path, "cgroup.kill", "");
	return 0;
}

/* cgroup.controllers follows the parent's subtree_control, as the
 * kernel's does: made again from it (and its parent's, up to the root)
 * before any file of dir is opened. */
static void refresh(const char *dir)
{
	char parent[PATH_MAX], ctrls[128];

	if (!strcmp(dir, root) || !in_fake(dir))
		return;
	snprintf(parent, sizeof(parent), "%s", dir);
	*strrchr(parent, '/') = '\0';
	refresh(parent);
	enabled(parent, ctrls, sizeof(ctrls));
	put(dir, "cgroup.controllers", ctrls);
}

/* The controller whose interface file name is, or NULL for cgroup.*. */
static const char *controller_of(const char *name)
{
	static const char *const files[][2] = {
		{ "memory.max", "memory" }, { "memory.swap.max", "memory" }, { "pids.max", "pids" },
		{ "cpu.max", "cpu" },	    { "cpu.weight", "cpu" },
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!strcmp(name, files[i][0]))
			return files[i][1];
	return NULL;
}

static bool holds_processes(const char *dir)
{
	char *procs = get(dir, "cgroup.procs");
	bool yes = procs && procs[0];

	free(procs);
	return yes;
}

/* Empties every cgroup.procs of the fake (the writer leaves its cgroup). */
static void leave_all(const char *dir)
{
	char cmd[PATH_MAX + 128];

	snprintf(cmd, sizeof(cmd), "find %s -name cgroup.procs -exec truncate -s 0 {} +", dir);
	assert_int_equal(system(cmd), 0);
}

int __wrap_open(const char *path, int flags, ...)
{
	const char *file = strrchr(path, '/');
	mode_t mode = 0;
	char dir[PATH_MAX];

	if (flags & O_CREAT) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!in_fake(path) || !file)
		return __real_open(path, flags, mode);
	snprintf(dir, sizeof(dir), "%.*s", (int)(file - path), path);
	refresh(dir);
	if ((flags & O_ACCMODE) == O_RDONLY)
		return __real_open(path, flags, mode);
	if (controller_of(file + 1)) {
		char *mine = get(dir, "cgroup.controllers");
		bool there = mine && has_word(mine, controller_of(file + 1));

		free(mine);
		if (!there) {
			errno = ENOENT;
			return -1;
		}
		return __real_open(path, flags | O_CREAT | O_TRUNC, 0644);
	}
	if (!strcmp(file, "/cgroup.subtree_control")) {
		if (strcmp(dir, root) && holds_processes(dir)) {
			errno = EBUSY;
			return -1;
		}
		return __real_open(path, flags | O_APPEND, mode);
	}
	if (!strcmp(file, "/cgroup.procs")) {
		leave_all(root);
		return __real_open(path, flags | O_TRUNC, mode);
	}
	return __real_open(path, flags, mode);
}

int __wrap_rmdir(const char *path)
{
	static const char *const files[] = {
		"cgroup.controllers", "cgroup.subtree_control", "cgroup.procs", "cgroup.kill",
		"memory.max",	      "memory.swap.max",	"pids.max",	"cpu.max",
		"cpu.weight",
	};
	char file[PATH_MAX + 32], *kill = NULL;

	if (!in_fake(path))
		return __real_rmdir(path);
	kill = get(path, "cgroup.kill");
	if (holds_processes(path) && !(kill && !strcmp(kill, "1"))) {
		free(kill);
		errno = EBUSY;
		return -1;
	}
	free(kill);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(file, sizeof(file), "%s/%s", path, files[i]);
		unlink(file);
	}
	return __real_rmdir(path);
}

/* A delegated cgroup2 subtree at root/service with the gateway (us) in
 * it, the way systemd hands one to a Delegate=yes service. */
static void fake_hierarchy(const char *controllers)
{
	char service[PATH_MAX], pid[32];

	snprintf(root, sizeof(root), "/tmp/vitrine-cg2-XXXXXX");
	assert_non_null(mkdtemp(root));
	put(root, "cgroup.controllers", controllers);
	put(root, "cgroup.subtree_control", "");
	put(root, "cgroup.procs", "");
	put(root, "cgroup.subtree_control", "+memory+pids+cpu");
	snprintf(service, sizeof(service), "%s/vitrine.service", root);
	assert_int_equal(mkdir(service, 0755), 0);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	put(service, "cgroup.procs", pid);
	setenv("VITRINE_CGROUP_V2_ROOT", service, 1);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	root[0] = '\0';
	unsetenv("VITRINE_CGROUP_V2_ROOT");
	return system(cmd) == 0 ? 0 : -1;
}

static void expect(const char *dir, const char *file, const char *want)
{
	char *text = get(dir, file);

	if (!text)
		fail_msg("%s/%s is missing", dir, file);
	text[strcspn(text, "\n")] = '\0';
	assert_string_equal(text, want);
	free(text);
}

static void test_create_and_remove(void **state)
{
	struct vmm_cgroup_limits lim;
	struct vmm_cgroup cg, cg2;
	char err[512], dir[PATH_MAX + 64], leaf[PATH_MAX], v[64];
	const char *dirs[1];
	pid_t child;
	int st;

	(void)state;
	fake_hierarchy("cpuset cpu io memory hugetlb pids rdma misc");
	vmm_cgroup_limits_for(2048, 2, 256, &lim);
	if (vmm_cgroup_create("vm-abc123", &lim, &cg, err, sizeof(err)) < 0)
		fail_msg("create: %s", err);
	assert_true(cg.v2);
	assert_int_equal(cg.n_dirs, 1);
	snprintf(dir, sizeof(dir), "%s/vitrine.service/vitrine/vm-abc123", root);
	assert_string_equal(cg.dirs[0], dir);
	/* The gateway left its cgroup for a leaf, so that the service's
	 * cgroup may hand its controllers down; it is the only one there. */
	snprintf(leaf, sizeof(leaf), "%s/vitrine.service/vitrine-gateway", root);
	expect(leaf, "cgroup.procs", "0");
	snprintf(leaf, sizeof(leaf), "%s/vitrine.service", root);
	expect(leaf, "cgroup.procs", "");
	expect(leaf, "cgroup.subtree_control", "+memory+pids+cpu");
	snprintf(leaf, sizeof(leaf), "%s/vitrine.service/vitrine", root);
	expect(leaf, "cgroup.subtree_control", "+memory+pids+cpu");
	expect(dir, "cgroup.controllers", "cpu memory pids");
	/* RAM + code buffer + 256 + 128 per vCPU; no swap; two CPUs' quota. */
	snprintf(v, sizeof(v), "%llu", (2048ULL + 256 + 256 + 2 * 128) << 20);
	expect(dir, "memory.max", v);
	expect(dir, "memory.swap.max", "0");
	expect(dir, "pids.max", "256");
	expect(dir, "cpu.max", "200000 100000");
	expect(dir, "cpu.weight", "200");

	/* A second guest goes beside it, not under the gateway's leaf. */
	vmm_cgroup_limits_for(256, 1, 256, &lim);
	if (vmm_cgroup_create("vm-def456", &lim, &cg2, err, sizeof(err)) < 0)
		fail_msg("second create: %s", err);
	snprintf(dir, sizeof(dir), "%s/vitrine.service/vitrine/vm-def456", root);
	assert_string_equal(cg2.dirs[0], dir);
	expect(dir, "cpu.max", "100000 100000");

	/* A process still in it: removed through cgroup.kill (the fake kills
	 * nothing; a SIGKILL to the pid instead would end the child). */
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	snprintf(v, sizeof(v), "%d\n", (int)child);
	put(cg.dirs[0], "cgroup.procs", v);
	dirs[0] = cg.dirs[0];
	vmm_cgroup_remove(dirs, 1);
	assert_int_not_equal(access(cg.dirs[0], F_OK), 0);
	assert_int_equal(waitpid(child, &st, WNOHANG), 0);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);

	/* The sweep removes an empty one by name, and leaves none behind. */
	vmm_cgroup_sweep("vm-def456");
	assert_int_not_equal(access(cg2.dirs[0], F_OK), 0);
}

static void test_no_memory_controller(void **state)
{
	struct vmm_cgroup_limits lim;
	struct vmm_cgroup cg;
	char err[512] = "";

	(void)state;
	fake_hierarchy("cpu io pids");
	vmm_cgroup_limits_for(256, 1, 256, &lim);
	assert_int_equal(vmm_cgroup_create("vm-x", &lim, &cg, err, sizeof(err)), -ENOTSUP);
	assert_int_equal(cg.n_dirs, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_create_and_remove, teardown),
		cmocka_unit_test_teardown(test_no_memory_controller, teardown),
	};

	return cmocka_run_group_tests_name("cgroup v2 (a fake hierarchy)", tests, NULL, NULL);
}
