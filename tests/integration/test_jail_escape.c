/* tests/integration/test_jail_escape.c: what a guest's QEMU that escaped
 * could reach on the host through its mount namespace, without QEMU: a
 * probe (this binary again, exec'd through a descriptor) is spawned in the
 * very jail a guest's QEMU gets (vmm_guest_jail_make, vmm_proc_spawn: its
 * uid, network and mount namespaces, rlimits) and tries what an escaped
 * QEMU would. Its writes to /tmp, /var/tmp and /dev/shm land in private
 * tmpfs mounts, never on the host's, and stop at their size; it cannot
 * connect to a host socket the test makes in /tmp, in /run or in the
 * abstract namespace (the latter is its network namespace's); its run dir
 * (here under /tmp, as tests' run bases are) is still there for it, file
 * and socket alike, and the images still read-only. Its /dev is its own:
 * the test runs in a mount namespace of its own whose /dev (a tmpfs it
 * makes: the host's is never touched) holds what a host's does, a syslog
 * socket at /dev/log, a disk and a device node QEMU has no use for; the
 * probe cannot connect to /dev/log and sees no node but those QEMU opens,
 * which work. Run as root (skipped otherwise: without root there is no
 * jail). No guest. */
#include "common/fsutil.h"
#include "vmm-qemu/image.h"
#include "vmm-qemu/jail.h"
#include "vmm-qemu/mount_ns.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/spec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

static char run_base[64], run_dir[96], run_socks[64], tmp_sock[64];
static int self_fd = -1; /* this binary, for the probe's exec */
static struct vmm_guest_jail jail;

/* What the jail's /dev may hold (mount_ns.c). */
static const char *const dev_allowed[] = { ".",	     "..",	"null",	 "zero", "full",
					   "random", "urandom", "kvm",	 "shm",	 "fd",
					   "stdin",  "stdout",	"stderr" };

/* Entries of dir not in dev_allowed. */
static int unexpected_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 255;
	while ((e = readdir(d))) {
		bool ok = false;

		for (size_t i = 0; i < sizeof(dev_allowed) / sizeof(dev_allowed[0]); i++)
			ok = ok || !strcmp(e->d_name, dev_allowed[i]);
		n += !ok;
	}
	closedir(d);
	return n;
}

/* The probe's side: one operation, its errno as the exit status (0: it
 * worked). "write PATH", "fill PATH" (VMM_MNTNS_TMP_MIB + 1 MiB),
 * "connect PATH" ("@NAME": abstract), "read PATH" (16 bytes), "lsdev DIR"
 * (the count of entries QEMU's /dev should not have). */
static int probe(const char *op, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static char chunk[1 << 20];
	socklen_t len;
	int fd;

	if (!strcmp(op, "lsdev"))
		return unexpected_entries(path);
	if (!strcmp(op, "read")) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return errno;
		return read(fd, chunk, 16) == 16 ? 0 : errno ? errno : EIO;
	}

	if (!strcmp(op, "connect")) {
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			return errno;
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
		if (path[0] == '@')
			sa.sun_path[0] = '\0';
		return connect(fd, (struct sockaddr *)&sa, len) == 0 ? 0 : errno;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return errno;
	for (long left = !strcmp(op, "fill") ? (VMM_MNTNS_TMP_MIB + 1L) << 20 : 0; left > 0;) {
		ssize_t n = write(fd, chunk, sizeof(chunk));

		if (n < 0)
			return errno;
		left -= n;
	}
	return write(fd, "x", 1) == 1 ? 0 : errno;
}

/* Spawns the probe in the guest jail; returns its exit status (126: the
 * jail could not be entered). */
static int jailed(const char *op, const char *path)
{
	char exe[32], err[512];
	char *argv[] = { exe, "--probe", (char *)op, (char *)path, NULL };
	struct vmm_jail view;
	struct vmm_proc p;

	snprintf(exe, sizeof(exe), "/proc/self/fd/%d", self_fd);
	vmm_guest_jail_view(&jail, &view);
	if (vmm_proc_spawn(argv, NULL, &self_fd, 1, &view, &p, err, sizeof(err)) < 0)
		fail_msg("spawn: %s", err);
	assert_true(vmm_proc_wait(&p, 10000));
	vmm_proc_release(&p);
	return p.status;
}

/* A listening socket at path ("@NAME": abstract), mode 0777 so that only
 * the namespace can stop the probe. */
static int listener(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	else
		unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	assert_int_equal(listen(fd, 4), 0);
	if (path[0] != '@')
		assert_int_equal(chmod(path, 0777), 0);
	return fd;
}

static int dev_log = -1; /* the fake host's syslog socket */

/* This test's own mount namespace (nothing of it reaches the host), with a
 * /dev of the test's making standing for a host's: the nodes QEMU opens
 * (made from the host's), and what it must not see: a syslog socket at
 * /dev/log, a device node and a "disk" of no use to it, a shm dir. */
static int host_dev(void)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "kvm" };
	struct stat st[6];
	bool have[6];
	char path[64];

	for (size_t i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "/dev/%s", nodes[i]);
		have[i] = stat(path, &st[i]) == 0 && S_ISCHR(st[i].st_mode);
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("vt-jail-dev", "/dev", "tmpfs", MS_NOSUID, "mode=0755,size=1m") < 0)
		return -1;
	for (size_t i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "/dev/%s", nodes[i]);
		if (have[i] && (mknod(path, st[i].st_mode, st[i].st_rdev) < 0 ||
				chmod(path, st[i].st_mode & 07777) < 0))
			return -1;
	}
	if (mknod("/dev/hostonly", S_IFCHR | 0666, st[0].st_rdev) < 0 ||
	    chmod("/dev/hostonly", 0666) < 0 || fs_write_file("/dev/disk0", "disk", 4) < 0 ||
	    mkdir("/dev/shm", 01777) < 0 || chmod("/dev/shm", 01777) < 0)
		return -1;
	dev_log = listener("/dev/log");
	return 0;
}

static int setup(void **state)
{
	struct vmm_jail_config cfg;
	struct vmm_spec spec;
	char err[512];

	(void)state;
	if (geteuid() != 0)
		return 0;
	if (host_dev() < 0)
		return -1;
	self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	snprintf(run_base, sizeof(run_base), "/tmp/vt-jail-%d", (int)getpid());
	snprintf(run_dir, sizeof(run_dir), "%s/vm-XXXXXX", run_base);
	snprintf(run_socks, sizeof(run_socks), "/run/vt-jail-%d", (int)getpid());
	if (self_fd < 0 || fs_mkdir_p(run_base, 0755) < 0 || !mkdtemp(run_dir) ||
	    fs_mkdir_p(run_socks, 0755) < 0)
		return -1;
	/* The cgroup is not what this test is about (and made without one). */
	vmm_jail_config_get(&cfg);
	cfg.no_cgroup = true;
	vmm_jail_configure(&cfg);
	vmm_spec_defaults(&spec);
	spec.memory_mib = 64;
	if (vmm_guest_jail_make(&spec, run_dir, (gid_t)-1, &jail, err, sizeof(err)) < 0) {
		fprintf(stderr, "jail: %s\n", err);
		return -1;
	}
	if (jail.drop && chown(run_dir, jail.cred.uid, jail.cred.gid) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0;
	vmm_guest_jail_release(&jail);
	fs_rm_rf(run_base);
	fs_rm_rf(run_socks);
	if (tmp_sock[0])
		unlink(tmp_sock); /* left by an assert that failed */
	if (self_fd >= 0)
		close(self_fd);
	if (dev_log >= 0)
		close(dev_log);
	return 0;
}

/* Writes to the host's shared places stay in the jail's own, bounded. */
static void test_tmp_private(void **state)
{
	static const char *const dirs[] = { "/tmp", "/var/tmp", "/dev/shm" };
	char path[PATH_MAX];

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_true(jail.drop && jail.mntns);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/vt-jail-probe-%d", dirs[i], (int)getpid());
		unlink(path);
		assert_int_equal(jailed("write", path), 0);
		if (lstat(path, &st) == 0) {
			unlink(path);
			fail_msg("the jailed probe wrote the host's %s", dirs[i]);
		}
		assert_int_equal(jailed("fill", path), ENOSPC);
	}
}

/* Host sockets are out of reach; the run dir's are not. */
static void test_host_sockets_hidden(void **state)
{
	char run_sock[PATH_MAX], own_sock[PATH_MAX], abstract[64], own_file[PATH_MAX];
	int fds[4];

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(tmp_sock, sizeof(tmp_sock), "/tmp/vt-jail-%d.sock", (int)getpid());
	snprintf(run_sock, sizeof(run_sock), "%s/bus.sock", run_socks);
	snprintf(own_sock, sizeof(own_sock), "%s/qmp.sock", run_dir);
	snprintf(own_file, sizeof(own_file), "%s/serial.log", run_dir);
	snprintf(abstract, sizeof(abstract), "@vt-jail-%d", (int)getpid());
	fds[0] = listener(tmp_sock);
	fds[1] = listener(run_sock);
	fds[2] = listener(abstract);
	fds[3] = listener(own_sock);
	assert_int_equal(jailed("connect", tmp_sock), ENOENT);
	assert_int_equal(jailed("connect", run_sock), ENOENT);
	assert_int_equal(jailed("connect", abstract), ECONNREFUSED);
	/* What QEMU needs is still there: its run dir, the images read-only. */
	assert_int_equal(jailed("connect", own_sock), 0);
	assert_int_equal(jailed("write", own_file), 0);
	assert_int_equal(access(own_file, F_OK), 0);
	if (jail.n_ro) {
		char img[PATH_MAX + 16];

		snprintf(img, sizeof(img), "%s/vt-jail-probe", jail.ro[0]);
		assert_int_equal(jailed("write", img), EROFS);
	}
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	unlink(tmp_sock);
}

/* The jail's /dev is its own: no /dev/log, nothing but what QEMU opens,
 * and that works. */
static void test_private_dev(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(access("/dev/hostonly", F_OK), 0); /* the fake host's /dev */
	assert_int_equal(jailed("connect", "/dev/log"), ENOENT);
	assert_int_equal(jailed("lsdev", "/dev"), 0);
	assert_int_equal(jailed("write", "/dev/null"), 0);
	assert_int_equal(jailed("read", "/dev/urandom"), 0);
	assert_int_equal(jailed("read", "/dev/zero"), 0);
	assert_int_equal(jailed("read", "/dev/disk0"), ENOENT);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tmp_private),
		cmocka_unit_test(test_host_sockets_hidden),
		cmocka_unit_test(test_private_dev),
	};

	if (argc == 4 && !strcmp(argv[1], "--probe"))
		_exit(probe(argv[2], argv[3]));
	return cmocka_run_group_tests(tests, setup, teardown);
}
