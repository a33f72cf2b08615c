/* tests/integration/test_isolation.c: each guest's QEMU in a jail of its
 * own (vmm-qemu/jail.h), read from /proc with real QEMU and the tiny
 * guest: two guests at once (one held by a shim, one a plain child) run as
 * two uids of the range, neither root, each with a run dir root keeps
 * (0711: the uid can neither make, replace nor remove anything there, vm.json
 * included) and its sockets in a folder q/ of its own (0700); each
 * QEMU is in a network namespace of its own with no interface but lo, has
 * bounded rlimits and a cgroup with the expected limits that is gone once
 * the guest ends. A uid stays leased while its shim holds the guest,
 * across a detach and an adoption (a one-uid range then has none left);
 * as root without a range QEMU is refused with a clear error; a guest that
 * floods its console has serial.log rotated by its shim and its console
 * still read after the truncation; each QEMU has a mount namespace of its
 * own where the images and templates are read-only mounts (root there
 * gets EROFS), except the RAM file of a template being built, which its
 * own guest writes, and the host's /tmp and /run are hidden under mounts
 * of its own (while its run dir, under /tmp here, works); links an
 * escaped QEMU plants in its own files' place are not followed by root: a template saved from a guest whose
 * page.html became a link to a root-only file fails and leaves that file's
 * mode and bytes as they were, and a socket name linked to another socket
 * is not connected; a template's clone, whose RAM is a sealed
 * memfd, can neither open the template's RAM file for writing as its uid
 * nor write the memfd, and the file is unchanged after the clone ran. Run
 * as root
 * (skipped otherwise: without root there is nothing to jail). The shim is
 * $VITRINE_BIN (default build/vitrine). */
#include "common/fsutil.h"
#include "common/sha256.h"
#include "common/unixsock.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/agent_exec.h"
#include "vmm-qemu/cgroup.h"
#include "vmm-qemu/jail.h"
#include "vmm-qemu/run_dir.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/vm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char run_base[64];
static char shim_bin[PATH_MAX];
static uid_t range_first, range_last;

static void tiny_spec(struct vmm_spec *spec, struct vmm_image *img)
{
	char err[512], why[256];

	assert_int_equal(vmm_image_load("tiny", img, err, sizeof(err)), 0);
	vmm_spec_defaults(spec);
	spec->image = img;
	spec->width = 640;
	spec->height = 480;
	spec->memory_mib = 256;
	spec->vcpus = 1;
	vmm_accel_resolve(VMM_ACCEL_AUTO, img, "qemu-system-x86_64", &spec->accel, why,
			  sizeof(why));
}

static void start_tiny(const struct vmm_shim_opts *so, struct vmm_vm **vm, struct vmm_image *img)
{
	struct vmm_vm_opts opts = { .shim = so };
	struct vmm_spec spec;
	char err[4096];
	int rc;

	tiny_spec(&spec, img);
	rc = vmm_vm_start(&spec, &opts, vm, err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_wait_phase(*vm, "ready", 60000, err, sizeof(err));
	if (rc < 0)
		fail_msg("tiny guest did not start: %s", err);
}

/* The value after "key:" in /proc/PID/FILE's lines, into out. */
static bool proc_field(pid_t pid, const char *file, const char *key, char *out, size_t len)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			snprintf(out, len, "%s", line + strlen(key));
			out[strcspn(out, "\n")] = '\0';
			found = true;
		}
	fclose(f);
	return found;
}

/* QEMU's real, effective, saved and file-system uids, all one. */
static uid_t qemu_uid(pid_t pid)
{
	char v[128];
	unsigned r, e, s, fsu;

	assert_true(proc_field(pid, "status", "Uid:", v, sizeof(v)));
	assert_int_equal(sscanf(v, "%u %u %u %u", &r, &e, &s, &fsu), 4);
	assert_int_equal(r, e);
	assert_int_equal(r, s);
	assert_int_equal(r, fsu);
	return (uid_t)r;
}

/* "Max open files   1024   1024   files": soft and hard. */
static void limit_of(pid_t pid, const char *name, char *soft, char *hard)
{
	char v[128];

	assert_true(proc_field(pid, "limits", name, v, sizeof(v)));
	assert_int_equal(sscanf(v, "%31s %31s", soft, hard), 2);
}

static void assert_limit(pid_t pid, const char *name, unsigned long long want)
{
	char soft[32], hard[32], w[32];

	limit_of(pid, name, soft, hard);
	snprintf(w, sizeof(w), "%llu", want);
	assert_string_equal(soft, w);
	assert_string_equal(hard, w);
}

/* The options of the mount at mount point path in /proc/PID/mountinfo
 * (the last one listed: it is on top), into opts. */
static bool mount_opts(pid_t pid, const char *path, char *opts, size_t len)
{
	char file[64], line[4096], point[PATH_MAX], o[512];
	bool found = false;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/mountinfo", (int)pid);
	assert_non_null(f = fopen(file, "re"));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %4095s %511s", point, o) == 2 &&
		    !strcmp(point, path)) {
			snprintf(opts, len, "%s", o);
			found = true;
		}
	fclose(f);
	return found;
}

static bool has_opt(const char *opts, const char *word)
{
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", opts);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (!strcmp(t, word))
			return true;
	return false;
}

/* Creates a file in dir as root from inside pid's mount namespace: 0 when
 * that worked (the file is removed again), else the errno. */
static int create_in_ns(pid_t pid, const char *dir)
{
	char ns[64];
	pid_t child;
	int st, nsfd;

	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
	nsfd = open(ns, O_RDONLY | O_CLOEXEC);
	assert_true(nsfd >= 0);
	child = fork();
	if (child == 0) {
		char path[PATH_MAX + 32];
		int fd;

		if (setns(nsfd, CLONE_NEWNS) < 0)
			_exit(100);
		snprintf(path, sizeof(path), "%s/.vt-iso-probe-%d", dir, (int)getpid());
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			_exit(errno);
		close(fd);
		unlink(path);
		_exit(0);
	}
	close(nsfd);
	assert_true(child > 0);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Read-only in pid's mount namespace: a mount of its own there, ro, nosuid
 * and nodev, which root cannot create a file in. */
static void assert_ro_mount(pid_t pid, const char *dir)
{
	char real[PATH_MAX], opts[512];

	assert_non_null(realpath(dir, real));
	if (!mount_opts(pid, real, opts, sizeof(opts)))
		fail_msg("no mount at %s in QEMU %d's namespace", real, (int)pid);
	assert_true(has_opt(opts, "ro"));
	assert_true(has_opt(opts, "nosuid"));
	assert_true(has_opt(opts, "nodev"));
	assert_int_equal(create_in_ns(pid, real), EROFS);
}

/* A mount namespace of its own, the images and templates read-only in it,
 * and our own namespace left as it was. */
static void assert_mounts(pid_t pid)
{
	char self[64], them[64], path[64], opts[512], real[PATH_MAX];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	memset(self, 0, sizeof(self));
	memset(them, 0, sizeof(them));
	assert_true(readlink("/proc/self/ns/mnt", self, sizeof(self) - 1) > 0);
	assert_true(readlink(path, them, sizeof(them) - 1) > 0);
	assert_string_not_equal(self, them);
	assert_ro_mount(pid, vmm_images_dir());
	assert_ro_mount(pid, vmm_templates_dir());
	assert_non_null(realpath(vmm_images_dir(), real));
	assert_false(mount_opts(getpid(), real, opts, sizeof(opts)));
	/* The host's /tmp and /run hidden under mounts of its own
	 * (test_jail_escape tries them as QEMU's uid); its run dir, under
	 * /tmp here, kept (QEMU got to ready through its sockets). */
	assert_true(mount_opts(pid, "/tmp", opts, sizeof(opts)));
	assert_true(has_opt(opts, "noexec"));
	assert_true(mount_opts(pid, "/run", opts, sizeof(opts)));
}

/* What uid gets trying op ("create", "unlink", "write") on path: 0 or
 * its errno, in a child that holds that uid alone (an escaped QEMU). */
static int as_uid(uid_t uid, const char *op, const char *path)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		int fd = -1;

		if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(100);
		if (!strcmp(op, "unlink"))
			_exit(unlink(path) < 0 ? errno : 0);
		fd = open(path, !strcmp(op, "create") ? O_WRONLY | O_CREAT | O_EXCL : O_WRONLY,
			  0600);
		_exit(fd < 0 ? errno : 0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 100);
	return WEXITSTATUS(st);
}

/* The run dir is root's (0711) and what root keeps there is out of the
 * guest's uid's reach; QEMU's folder q/ is the uid's (0700), and so are
 * its logs (vmm-qemu/run_dir.h). */
static void assert_run_dir_root_keeps(const char *dir, uid_t uid)
{
	static const char *const mine[] = { "q", "serial.log", "qemu.log" };
	char path[PATH_MAX + 32];
	struct stat st;

	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 07777, 0711);
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, mine[i]);
		assert_int_equal(lstat(path, &st), 0);
		assert_int_equal(st.st_uid, uid);
	}
	snprintf(path, sizeof(path), "%s/q", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/q/qmp.sock", dir);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	/* as the uid: nothing made, replaced or removed in the run dir ... */
	snprintf(path, sizeof(path), "%s/planted", dir);
	assert_int_equal(as_uid(uid, "create", path), EACCES);
	snprintf(path, sizeof(path), "%s/vm.json", dir);
	if (access(path, F_OK) == 0) {
		assert_int_equal(as_uid(uid, "unlink", path), EACCES);
		assert_int_equal(as_uid(uid, "write", path), EACCES);
	}
	snprintf(path, sizeof(path), "%s/serial.log", dir);
	assert_int_equal(as_uid(uid, "unlink", path), EACCES);
	/* ... its own files written, and in q/ anything */
	assert_int_equal(as_uid(uid, "write", path), 0);
	snprintf(path, sizeof(path), "%s/q/planted", dir);
	assert_int_equal(as_uid(uid, "create", path), 0);
	assert_int_equal(unlink(path), 0);
}

static void assert_jailed(struct vmm_vm *vm)
{
	pid_t pid = vmm_vm_qemu_pid(vm);
	uid_t uid = qemu_uid(pid);
	char self[64], them[64], path[64], line[256];
	int ifaces = 0;
	FILE *f;

	assert_true(uid >= range_first && uid <= range_last);
	assert_run_dir_root_keeps(vmm_vm_run_dir(vm), uid);

	/* A network namespace of its own, with lo only. */
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	assert_true(readlink("/proc/self/ns/net", self, sizeof(self)) > 0);
	memset(them, 0, sizeof(them));
	assert_true(readlink(path, them, sizeof(them) - 1) > 0);
	assert_string_not_equal(self, them);
	snprintf(path, sizeof(path), "/proc/%d/net/dev", (int)pid);
	assert_non_null(f = fopen(path, "re"));
	while (fgets(line, sizeof(line), f))
		if (strchr(line, ':')) {
			char name[64];

			assert_int_equal(sscanf(line, " %63[^:]", name), 1);
			assert_string_equal(name, "lo");
			ifaces++;
		}
	fclose(f);
	assert_int_equal(ifaces, 1);

	assert_mounts(pid);

	assert_limit(pid, "Max open files", VMM_QEMU_NOFILE);
	assert_limit(pid, "Max processes", VMM_QEMU_NPROC);
	assert_limit(pid, "Max core file size", 0);
	assert_limit(pid, "Max file size", vmm_jail_fsize(0, 256));
}

/* QEMU's folder in the v1 hierarchy of ctrl, from /proc/PID/cgroup. */
static bool cgroup_dir(pid_t pid, const char *ctrl, char *out, size_t len)
{
	char path[64], line[512], key[64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	snprintf(key, sizeof(key), ":%s:", ctrl);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *k = strstr(line, key);

		if (!k)
			continue;
		k += strlen(key);
		k[strcspn(k, "\n")] = '\0';
		snprintf(out, len, "/sys/fs/cgroup/%s%s", ctrl, k);
		found = true;
	}
	fclose(f);
	return found;
}

static void assert_file(const char *dir, const char *file, const char *want)
{
	char path[PATH_MAX + 64], *text = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_int_equal(fs_read_file(path, 4096, &text, NULL), 0);
	text[strcspn(text, "\n")] = '\0';
	assert_string_equal(text, want);
	free(text);
}

/* The cgroup of a 256 MiB, 1-vCPU TCG guest (v1: this host's kind), or
 * an empty dir when the host has no writable memory hierarchy. */
static void check_cgroup(struct vmm_vm *vm, char *mem, size_t len)
{
	struct vmm_cgroup_limits lim;
	char v[64], dir[PATH_MAX];

	mem[0] = '\0';
	if (access("/sys/fs/cgroup/memory/cgroup.procs", W_OK) < 0) {
		fprintf(stderr, "no writable v1 memory hierarchy: cgroup not checked\n");
		return;
	}
	vmm_cgroup_limits_for(256, 1, 256, &lim);
	assert_true(cgroup_dir(vmm_vm_qemu_pid(vm), "memory", mem, len));
	assert_non_null(strstr(mem, "/vitrine/vm-"));
	snprintf(v, sizeof(v), "%llu", lim.memory_bytes);
	assert_file(mem, "memory.limit_in_bytes", v);
	assert_true(cgroup_dir(vmm_vm_qemu_pid(vm), "pids", dir, sizeof(dir)));
	snprintf(v, sizeof(v), "%d", VMM_CGROUP_PIDS);
	assert_file(dir, "pids.max", v);
	if (cgroup_dir(vmm_vm_qemu_pid(vm), "cpu", dir, sizeof(dir))) {
		assert_file(dir, "cpu.cfs_quota_us", "100000");
		assert_file(dir, "cpu.shares", "1024");
	}
}

static int setup(void **state)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	struct vmm_jail_config cfg;

	(void)state;
	if (!realpath(bin, shim_bin)) {
		fprintf(stderr, "no vitrine binary at %s (VITRINE_BIN)\n", bin);
		return -1;
	}
	snprintf(run_base, sizeof(run_base), "/tmp/vt-iso-%d", (int)getpid());
	setenv("VITRINE_RUN", run_base, 1);
	/* The jail mounts the templates read-only: the folder must be there
	 * whatever ran before this test (tests/run.sh's order is not its own). */
	fs_mkdir_p(vmm_templates_dir(), 0755);
	vmm_jail_config_get(&cfg);
	range_first = cfg.first;
	range_last = cfg.last;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rm_rf(run_base);
	return 0;
}

static void test_two_guests_two_jails(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	char mem_a[PATH_MAX], mem_b[PATH_MAX];
	struct vmm_image img_a, img_b;
	struct vmm_vm *a, *b;
	uid_t ua, ub;

	(void)state;
	if (geteuid() != 0)
		skip();
	start_tiny(&so, &a, &img_a);
	start_tiny(NULL, &b, &img_b);
	ua = qemu_uid(vmm_vm_qemu_pid(a));
	ub = qemu_uid(vmm_vm_qemu_pid(b));
	assert_int_not_equal(ua, 0);
	assert_int_not_equal(ub, 0);
	assert_int_not_equal(ua, ub);
	assert_jailed(a);
	assert_jailed(b);
	check_cgroup(a, mem_a, sizeof(mem_a));
	check_cgroup(b, mem_b, sizeof(mem_b));
	vmm_vm_destroy(a);
	vmm_vm_destroy(b);
	if (mem_a[0]) {
		assert_int_not_equal(access(mem_a, F_OK), 0);
		assert_int_not_equal(access(mem_b, F_OK), 0);
	}
}

/* A uid of the range no live guest holds now (other processes may run
 * guests too): its lease file is not locked. */
static uid_t free_uid(void)
{
	const char *dir = getenv("VITRINE_UID_LOCK_DIR");
	char path[PATH_MAX];

	for (uid_t u = range_last; u >= range_first; u--) {
		int fd, ok;

		snprintf(path, sizeof(path), "%s/%u", dir && *dir ? dir : "/run/vitrine/qemu-uids",
			 (unsigned)u);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return u; /* no lock dir yet: nobody holds any */
		ok = flock(fd, LOCK_EX | LOCK_NB) == 0;
		close(fd);
		if (ok)
			return u;
	}
	fail_msg("every uid of the range is leased");
	return 0;
}

/* A one-uid range: the shim keeps the lease across detach and adoption,
 * so a second guest finds none; once the guest ends, its uid is free. */
static void test_lease_survives_adoption(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	struct vmm_jail_config cfg = { 0 };
	struct vmm_vm_opts none = { 0 };
	struct vmm_identity id;
	struct vmm_image img;
	struct vmm_spec spec;
	struct vmm_vm *a, *b = NULL;
	char err[4096];

	(void)state;
	if (geteuid() != 0)
		skip();
	cfg.first = cfg.last = free_uid();
	vmm_jail_configure(&cfg);
	start_tiny(&so, &a, &img);
	vmm_vm_identity(a, &id);
	vmm_vm_detach(a);
	if (vmm_vm_adopt(&id, &none, &a, err, sizeof(err)) < 0)
		fail_msg("adopt: %s", err);
	assert_int_equal(qemu_uid(vmm_vm_qemu_pid(a)), cfg.first);
	tiny_spec(&spec, &img);
	assert_int_equal(vmm_vm_start(&spec, &none, &b, err, sizeof(err)), -EAGAIN);
	assert_non_null(strstr(err, "in use"));
	vmm_vm_destroy(a);
	/* The shim is gone: its lease with it. */
	if (vmm_vm_start(&spec, &none, &b, err, sizeof(err)) < 0)
		fail_msg("the freed uid was not leased again: %s", err);
	assert_int_equal(qemu_uid(vmm_vm_qemu_pid(b)), cfg.first);
	vmm_vm_destroy(b);
	cfg.first = range_first;
	cfg.last = range_last;
	vmm_jail_configure(&cfg);
}

static void test_root_refused_without_a_range(void **state)
{
	struct vmm_jail_config cfg = { 0 };
	struct vmm_vm_opts none = { 0 };
	struct vmm_image img;
	struct vmm_spec spec;
	struct vmm_vm *vm = NULL;
	char err[4096];

	(void)state;
	if (geteuid() != 0)
		skip();
	vmm_jail_configure(&cfg);
	tiny_spec(&spec, &img);
	assert_int_equal(vmm_vm_start(&spec, &none, &vm, err, sizeof(err)), -EPERM);
	assert_null(vm);
	assert_non_null(strstr(err, "refusing to run QEMU as root"));
	assert_non_null(strstr(err, "--allow-root-qemu"));
	cfg.first = range_first;
	cfg.last = range_last;
	vmm_jail_configure(&cfg);
}

/* The guest writes ~300 KiB to its console; the shim (cap 64 KiB) rotates
 * serial.log, and a marker printed afterwards still reaches the reader. */
static void test_console_log_rotated(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30, .log_cap = 64 << 10 };
	const char *flood[] = { "/bin/sh", "-c",
				"i=0; while [ $i -lt 3000 ]; do echo "
				"'flood 0123456789012345678901234567890123456789012345678901234567"
				"89012345678901234567890123456789'; i=$((i+1)); done > /dev/ttyS0; "
				"sleep 2; echo 'VITRINE phase=rotated' > /dev/ttyS0",
				NULL };
	const char *env[] = { "PATH=/bin:/sbin:/usr/bin:/usr/sbin", NULL };
	struct agent_exec_spec spec = {
		.argv = flood,
		.env = env,
		.cwd = "/",
		.uid = -1,
		.gid = -1,
		.timeout_ms = 60000,
		.max_output = 4096,
	};
	struct agent_exec_result r = { 0 };
	struct agent_link *link = NULL;
	char err[4096], path[PATH_MAX + 16], sock[108];
	struct vmm_image img;
	struct vmm_vm *vm;
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip();
	start_tiny(&so, &vm, &img);
	assert_int_equal(vmm_vm_socket(vm, VMM_SOCKET_AGENT, sock, sizeof(sock)), 0);
	if (agent_link_open(sock, 20000, &link, err, sizeof(err)) < 0)
		fail_msg("agent: %s", err);
	if (agent_exec_run(link, &spec, &r, err, sizeof(err)) < 0)
		fail_msg("exec: %s", err);
	assert_int_equal(r.exit_code, 0);
	agent_exec_result_free(&r);
	agent_link_destroy(link);
	if (vmm_vm_wait_phase(vm, "rotated", 20000, err, sizeof(err)) < 0)
		fail_msg("no marker after the rotation: %s", err);
	snprintf(path, sizeof(path), "%s/serial.log.1", vmm_vm_run_dir(vm));
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 64 << 10);
	snprintf(path, sizeof(path), "%s/serial.log", vmm_vm_run_dir(vm));
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size < 300 << 10);
	vmm_vm_destroy(vm);
}

/* sha256 of a file's bytes (the RAM file, or a memfd through /proc). */
static void digest_of(const char *path, char out[SHA256_HEX_LEN + 1])
{
	char *data = NULL;
	size_t len;

	assert_int_equal(fs_read_file(path, 1u << 30, &data, &len), 0);
	sha256_hex(data, len, out);
	free(data);
}

/* Tries path as uid: 0 when open(O_RDWR) and a write both worked, else
 * the errno of the step that failed. */
static int write_as(uid_t uid, const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int fd;

		if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
			_exit(100);
		fd = open(path, O_RDWR);
		if (fd < 0)
			_exit(errno);
		_exit(pwrite(fd, "x", 1, 0) == 1 ? 0 : errno);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* The descriptor of QEMU's that is the template's memfd, as a /proc path. */
static bool memfd_of(pid_t pid, char *out, size_t len)
{
	char dir[64], link[PATH_MAX], target[PATH_MAX];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	assert_non_null(d = opendir(dir));
	while (!found && (e = readdir(d))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strstr(target, "memfd:vitrine-template-ram")) {
			snprintf(out, len, "%s", link);
			found = true;
		}
	}
	closedir(d);
	return found;
}

static void test_clone_cannot_write_its_template(void **state)
{
	char dir[PATH_MAX], ram[PATH_MAX], err[4096], before[SHA256_HEX_LEN + 1],
		after[SHA256_HEX_LEN + 1], mem[SHA256_HEX_LEN + 1], memfd[PATH_MAX], status[32];
	struct vmm_vm_opts none = { 0 };
	struct vmm_template t;
	struct vmm_image img;
	struct vmm_spec spec;
	struct vmm_vm *vm = NULL;
	uid_t uid;
	int rc;

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(dir, sizeof(dir), "%s/tpl-iso", run_base);
	tiny_spec(&spec, &img);
	rc = vmm_template_prepare(dir, &spec, ram, sizeof(ram), err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_start(&spec, &none, &vm, err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_wait_phase(vm, "ready", 60000, err, sizeof(err));
	if (rc == 0)
		rc = vmm_template_save(vm, dir, err, sizeof(err));
	vmm_vm_destroy(vm);
	vm = NULL;
	if (rc == 0)
		rc = vmm_template_load(dir, &t, err, sizeof(err));
	if (rc < 0)
		fail_msg("template: %s", err);
	digest_of(ram, before);
	if (vmm_template_restore(&t, &none, &vm, NULL, err, sizeof(err)) < 0)
		fail_msg("restore: %s", err);
	assert_int_equal(vmm_vm_status(vm, status, sizeof(status), err, sizeof(err)), 0);
	assert_string_equal(status, "running");
	sleep(1); /* the clone runs, and writes its memory */
	uid = qemu_uid(vmm_vm_qemu_pid(vm));
	assert_int_not_equal(uid, 0);
	/* The file is root's and read-only; the memfd is sealed. */
	assert_int_equal(write_as(uid, ram), EACCES);
	assert_true(memfd_of(vmm_vm_qemu_pid(vm), memfd, sizeof(memfd)));
	assert_int_equal(write_as(uid, memfd), EPERM);
	digest_of(memfd, mem);
	assert_string_equal(mem, before);
	vmm_vm_destroy(vm);
	digest_of(ram, after);
	assert_string_equal(after, before);
	fs_rm_rf(dir);
}

/* A VITRINE_HOME of the test's own (the images linked from the real one),
 * so that a template can be built in its templates dir. */
static void own_home(char *home, size_t len, char *old, size_t oldlen)
{
	const char *h = getenv("VITRINE_HOME");
	char path[PATH_MAX + 32], from[PATH_MAX + 32];

	snprintf(old, oldlen, "%s", h && *h ? h : "/var/lib/vitrine");
	snprintf(home, len, "%s/home", run_base);
	snprintf(path, sizeof(path), "%s/templates", home);
	assert_int_equal(fs_mkdir_p(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/images", home);
	snprintf(from, sizeof(from), "%s/images", old);
	assert_int_equal(symlink(from, path), 0);
	snprintf(path, sizeof(path), "%s/accel-probe", home);
	snprintf(from, sizeof(from), "%s/accel-probe", old);
	fs_copy_file(from, path, 0644); /* the KVM probe's verdict, when there is one */
	setenv("VITRINE_HOME", home, 1);
}

/* A template built in the templates dir: its own guest's RAM file is the
 * one writable mount in it (it is the guest's memory), the rest read-only;
 * the template saves, and its clone has the whole dir read-only. */
static void test_template_dir_read_only(void **state)
{
	char home[PATH_MAX], old[PATH_MAX], dir[PATH_MAX + 32], ram[PATH_MAX], err[4096], opts[512],
		status[32];
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	struct vmm_vm_opts with_shim = { .shim = &so }, none = { 0 };
	struct vmm_template t;
	struct vmm_image img;
	struct vmm_spec spec;
	struct vmm_vm *vm = NULL;
	pid_t pid;
	int rc;

	(void)state;
	if (geteuid() != 0)
		skip();
	own_home(home, sizeof(home), old, sizeof(old));
	snprintf(dir, sizeof(dir), "%s/templates/iso-ro", home);
	tiny_spec(&spec, &img);
	rc = vmm_template_prepare(dir, &spec, ram, sizeof(ram), err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_start(&spec, &with_shim, &vm, err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_wait_phase(vm, "ready", 60000, err, sizeof(err));
	if (rc < 0)
		fail_msg("template guest: %s", err);
	pid = vmm_vm_qemu_pid(vm);
	assert_mounts(pid);
	assert_true(mount_opts(pid, ram, opts, sizeof(opts)));
	assert_true(has_opt(opts, "rw"));
	assert_int_equal(create_in_ns(pid, dir), EROFS);
	rc = vmm_template_save(vm, dir, err, sizeof(err));
	vmm_vm_destroy(vm);
	vm = NULL;
	if (rc == 0)
		rc = vmm_template_load(dir, &t, err, sizeof(err));
	if (rc == 0)
		rc = vmm_template_restore(&t, &none, &vm, NULL, err, sizeof(err));
	if (rc < 0)
		fail_msg("template: %s", err);
	assert_int_equal(vmm_vm_status(vm, status, sizeof(status), err, sizeof(err)), 0);
	assert_string_equal(status, "running");
	pid = vmm_vm_qemu_pid(vm);
	assert_mounts(pid);
	assert_false(mount_opts(pid, ram, opts, sizeof(opts)));
	vmm_vm_destroy(vm);
	setenv("VITRINE_HOME", old, 1);
	fs_rm_rf(home);
}

/* As an escaped QEMU would (it owns its run dir): page.html swapped for a
 * link to a root-only file before the template is saved, agent.sock for a
 * link to a live socket. Root follows neither. */
static void test_planted_links_not_followed(void **state)
{
	char dir[PATH_MAX], ram[PATH_MAX], page[PATH_MAX], secret[PATH_MAX], err[4096],
		path[PATH_MAX + 32], real[PATH_MAX + 32], *text = NULL;
	struct vmm_vm_opts opts = { 0 };
	struct vmm_image img;
	struct vmm_spec spec;
	struct vmm_vm *vm = NULL;
	struct stat st;
	int rc, fd;

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(dir, sizeof(dir), "%s/tpl-link", run_base);
	snprintf(page, sizeof(page), "%s/page-in.html", run_base);
	snprintf(secret, sizeof(secret), "%s/secret", run_base);
	assert_int_equal(fs_write_file(page, "<p>hello</p>", 12), 0);
	assert_int_equal(fs_write_file(secret, "root only\n", 10), 0);
	assert_int_equal(chmod(secret, 0600), 0);
	opts.page_file = page;
	tiny_spec(&spec, &img);
	rc = vmm_template_prepare(dir, &spec, ram, sizeof(ram), err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_start(&spec, &opts, &vm, err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_wait_phase(vm, "ready", 60000, err, sizeof(err));
	if (rc < 0)
		fail_msg("guest: %s", err);

	assert_int_equal(vmm_run_dir_socket(vmm_vm_run_dir(vm), VMM_SOCKET_AGENT, path,
					    sizeof(path)),
			 0);
	snprintf(real, sizeof(real), "%s/q/agent.real", vmm_vm_run_dir(vm));
	assert_int_equal(rename(path, real), 0);
	assert_int_equal(symlink(real, path), 0);
	assert_int_equal(unixsock_connect(path, 200, err, sizeof(err)), -ELOOP);
	fd = unixsock_connect(real, 200, err, sizeof(err)); /* QEMU's own: fine */
	assert_true(fd >= 0);
	close(fd);

	snprintf(path, sizeof(path), "%s/page.html", vmm_vm_run_dir(vm));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(secret, path), 0);
	assert_int_equal(vmm_template_save(vm, dir, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	snprintf(path, sizeof(path), "%s/page.html", dir);
	assert_int_not_equal(lstat(path, &st), 0);
	assert_int_equal(stat(secret, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(fs_read_file(secret, 64, &text, NULL), 0);
	assert_string_equal(text, "root only\n");
	free(text);
	vmm_vm_destroy(vm);
	fs_rm_rf(dir);
	unlink(secret);
	unlink(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_guests_two_jails),
		cmocka_unit_test(test_lease_survives_adoption),
		cmocka_unit_test(test_root_refused_without_a_range),
		cmocka_unit_test(test_console_log_rotated),
		cmocka_unit_test(test_clone_cannot_write_its_template),
		cmocka_unit_test(test_template_dir_read_only),
		cmocka_unit_test(test_planted_links_not_followed),
	};

	return cmocka_run_group_tests_name("guest isolation", tests, setup, teardown);
}
