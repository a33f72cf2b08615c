/* vmm-qemu/mount_ns.c: see mount_ns.h. */
#include "vmm-qemu/mount_ns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* The host's places an escaped QEMU must not reach, each hidden under a
 * tmpfs of its own: the world-writable ones private and bounded, the
 * sockets' ones empty and root's. */
static const struct {
	const char *path;
	const char *opts;
} hidden[] = {
	{ "/tmp", "mode=1777,nr_inodes=4096,size=" STR(VMM_MNTNS_TMP_MIB) "m" },
	{ "/var/tmp", "mode=1777,nr_inodes=4096,size=" STR(VMM_MNTNS_TMP_MIB) "m" },
	{ "/dev/shm", "mode=1777,nr_inodes=4096,size=" STR(VMM_MNTNS_TMP_MIB) "m" },
	{ "/run", "mode=0755,nr_inodes=256,size=64k" },
	{ "/var/run", "mode=0755,nr_inodes=256,size=64k" }, /* where it is not a link to /run */
};
#define N_HIDDEN (sizeof(hidden) / sizeof(hidden[0]))

/* What QEMU opens of /dev, made again in a /dev of its own: the rest of
 * the host's (disks, loop and fuse devices, kmsg, ptys, the syslog socket
 * /dev/log, the host's /dev/shm) is not there. kvm where the host has it. */
static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "kvm" };
#define N_DEV (sizeof(dev_nodes) / sizeof(dev_nodes[0]))
#define MAX_MOVED (VMM_MNTNS_MAX_RO + VMM_MNTNS_MAX_KEEP)

/* path bound onto itself, then remounted with flags (MS_RDONLY or not). */
static int rebind(const char *path, unsigned long flags)
{
	if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -1;
	return mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | flags, NULL);
}

/* Is path dir itself or below it? */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* A hidden place that is a directory of its own here (not a link to
 * another: /var/run on most hosts). */
static bool place_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Does path lie under a place about to be hidden, and is it not already
 * carried by another of paths (one above it, or the same one earlier)? */
static bool must_move(const char *const paths[], size_t n, size_t i)
{
	bool hid = false;

	for (size_t h = 0; h < N_HIDDEN; h++)
		hid = hid || (under(paths[i], hidden[h].path) && place_exists(hidden[h].path));
	hid = hid || under(paths[i], "/dev"); /* a /dev of its own (private_dev) */
	if (!hid)
		return false;
	for (size_t j = 0; j < n; j++)
		if (j != i && under(paths[i], paths[j]) && (strcmp(paths[i], paths[j]) || j < i))
			return false;
	return true;
}

/* Makes path and the dirs above it (root's, 0755) where they are missing. */
static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		buf[i] = path[i];
	}
	return 0;
}

/* "/dev/" name into buf (32 bytes). */
static void dev_path(char *buf, const char *name)
{
	size_t n = strlen(name);

	memcpy(buf, "/dev/", 5);
	memcpy(buf + 5, name, n + 1);
}

/* A tmpfs over /dev with the nodes of dev_nodes the host has (its modes,
 * owners and numbers), an empty shm (a tmpfs of its own goes on it: hidden
 * above) and the usual links into /proc/self/fd. */
static int private_dev(void)
{
	static const char *const links[][2] = { { "/proc/self/fd", "/dev/fd" },
						{ "/proc/self/fd/0", "/dev/stdin" },
						{ "/proc/self/fd/1", "/dev/stdout" },
						{ "/proc/self/fd/2", "/dev/stderr" } };
	struct stat st[N_DEV];
	bool have[N_DEV];
	char path[32];

	for (size_t i = 0; i < N_DEV; i++) {
		dev_path(path, dev_nodes[i]);
		have[i] = stat(path, &st[i]) == 0 && S_ISCHR(st[i].st_mode);
	}
	if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
		  "mode=0755,nr_inodes=64,size=64k") < 0)
		return -1;
	for (size_t i = 0; i < N_DEV; i++) {
		if (!have[i])
			continue;
		dev_path(path, dev_nodes[i]);
		if (mknod(path, S_IFCHR | 0600, st[i].st_rdev) < 0 ||
		    chown(path, st[i].st_uid, st[i].st_gid) < 0 ||
		    chmod(path, st[i].st_mode & 07777) < 0)
			return -1;
	}
	if (mkdir("/dev/shm", 01777) < 0 || chmod("/dev/shm", 01777) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlink(links[i][0], links[i][1]) < 0)
			return -1;
	return 0;
}

/* Hides the places; what must stay of paths (dirs: a link on the way is
 * followed to what is cloned) goes back on top at the path as named. */
static int hide_places(const char *const paths[], size_t n)
{
	int fds[MAX_MOVED];
	size_t n_fds = 0;
	int rc = -1, e;

	for (size_t i = 0; i < n; i++) {
		if (!must_move(paths, n, i))
			continue;
		fds[n_fds] = open_tree(AT_FDCWD, paths[i],
				       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (fds[n_fds] < 0)
			goto out;
		n_fds++;
	}
	if (place_exists("/dev") && private_dev() < 0)
		goto out;
	for (size_t h = 0; h < N_HIDDEN; h++)
		if (place_exists(hidden[h].path) &&
		    mount("tmpfs", hidden[h].path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  hidden[h].opts) < 0)
			goto out;
	for (size_t i = 0, k = 0; i < n && k < n_fds; i++) {
		if (!must_move(paths, n, i))
			continue;
		if (mkdir_p(paths[i]) < 0 ||
		    move_mount(fds[k], "", AT_FDCWD, paths[i], MOVE_MOUNT_F_EMPTY_PATH) < 0)
			goto out;
		k++;
	}
	rc = 0;
out:
	e = errno;
	for (size_t k = 0; k < n_fds; k++)
		close(fds[k]);
	errno = e;
	return rc;
}

int vmm_mntns_enter(const char *const ro[], size_t n_ro, const char *const rw[], size_t n_rw,
		    const char *const keep[], size_t n_keep)
{
	const char *paths[MAX_MOVED];
	size_t n = 0;

	if (n_ro > VMM_MNTNS_MAX_RO || n_rw > VMM_MNTNS_MAX_RW || n_keep > VMM_MNTNS_MAX_KEEP) {
		errno = EINVAL;
		return -1;
	}
	if (unshare(CLONE_NEWNS) < 0)
		return -1;
	/* Not MS_PRIVATE: a slave still sees the host unmount a disk, so a
	 * guest's namespace never keeps one busy. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -1;
	for (size_t i = 0; i < n_ro; i++)
		if (rebind(ro[i], MS_RDONLY) < 0)
			return -1;
	for (size_t i = 0; i < n_rw; i++)
		if (rebind(rw[i], 0) < 0)
			return -1;
	for (size_t i = 0; i < n_ro; i++)
		paths[n++] = ro[i];
	for (size_t i = 0; i < n_keep; i++)
		paths[n++] = keep[i];
	return hide_places(paths, n);
}
