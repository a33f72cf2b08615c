/* vmm-qemu/vm_shim.c: the gateway's side of a guest's shim (shim.h):
 * spawning `vitrine shim ... -- QEMU...` so that it outlives us, and
 * attaching to it on shim.sock (vm_int.h). */
#include "vmm-qemu/vm_int.h"

#include "common/fsutil.h"
#include "common/unixsock.h"
#include "vmm-qemu/shim_proto.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A start waits this long for the shim's socket (QEMU is spawned first). */
#define SHIM_ATTACH_START_MS 20000
/* The hello follows an accept at once; a shim this slow is not answering. */
#define SHIM_HELLO_MS 5000

/* Reads the hello on fd (non-blocking) until its newline, EOF or until_ms.
 * Returns its length, 0 on EOF, -ETIMEDOUT, -EPROTO or another -errno. */
static int read_hello(int fd, char *buf, size_t cap, int64_t until_ms)
{
	size_t used = 0;

	while (used < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = until_ms - fs_now_ms();
		ssize_t r;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
		r = read(fd, buf + used, cap - used);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			return errno == ECONNRESET ? 0 : -errno;
		if (r == 0)
			return 0;
		used += (size_t)r;
		if (memchr(buf, '\n', used))
			return (int)used;
	}
	return -EPROTO;
}

/* A connected, non-blocking, close-on-exec socket to path, or -errno; a
 * link planted at shim.sock is not followed (unixsock.h). */
static int connect_once(const char *path)
{
	return unixsock_connect_once(path, SOCK_NONBLOCK);
}

int vm_shim_attach(const char *run_dir, struct vmm_proc *shim, int timeout_ms, pid_t *qemu,
		   char *err, size_t errlen)
{
	char path[108], hello[VMM_SHIM_HELLO_MAX]; /* path: a unix socket address's room */
	int64_t deadline = fs_now_ms() + timeout_ms;
	pid_t said_shim;
	int fd, n;

	if (vmm_run_dir_socket(run_dir, VMM_SOCKET_SHIM, path, sizeof(path)) < 0) {
		snprintf(err, errlen, "run dir %s too long for unix sockets", run_dir);
		return -ENAMETOOLONG;
	}
	for (;;) {
		fd = connect_once(path);
		if (fd >= 0)
			break;
		if (fd != -ENOENT && fd != -ECONNREFUSED) {
			snprintf(err, errlen, "connect %s: %s", path, strerror(-fd));
			return fd;
		}
		if (vmm_proc_wait(shim, 0)) {
			snprintf(err, errlen, "the shim (pid %d) exited", (int)shim->pid);
			return -ECHILD;
		}
		if (fs_now_ms() >= deadline) {
			snprintf(err, errlen,
				 "the shim (pid %d) takes no attachment (%s: %s): it is stopping "
				 "or pausing its guest",
				 (int)shim->pid, path, strerror(-fd));
			return -EAGAIN;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
	n = read_hello(fd, hello, sizeof(hello), fs_now_ms() + SHIM_HELLO_MS);
	if (n <= 0) {
		close(fd);
		if (n == 0 && vmm_proc_wait(shim, 200)) {
			snprintf(err, errlen, "the shim (pid %d) exited", (int)shim->pid);
			return -ECHILD;
		}
		if (n == 0) {
			snprintf(err, errlen,
				 "the shim (pid %d) closed %s without a hello: it is stopping or "
				 "pausing its guest",
				 (int)shim->pid, path);
			return -EAGAIN;
		}
		snprintf(err, errlen, "no hello from the shim on %s: %s", path, strerror(-n));
		return n;
	}
	if (vmm_shim_hello_parse(hello, (size_t)n, &said_shim, qemu) < 0 ||
	    said_shim != shim->pid) {
		close(fd);
		snprintf(err, errlen, "%s: the hello '%.*s' is not from shim %d", path,
			 (int)strcspn(hello, "\n"), hello, (int)shim->pid);
		return -EPROTO;
	}
	return fd;
}

int vm_shim_log_path(const char *run_dir, char *out, size_t len)
{
	const char *slash = strrchr(run_dir, '/');
	int n;

	if (!slash)
		return -EINVAL;
	n = snprintf(out, len, "%.*s/shim-%s.log", (int)(slash - run_dir), run_dir, slash + 1);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int vm_shim_spawn(struct vmm_vm *vm, const struct vmm_shim_opts *shim, char *const qemu_argv[],
		  char *err, size_t errlen)
{
	struct vmm_shim_args a = { 0 };
	struct strv argv = { 0 };
	int keep[VMM_SHIM_MAX_KEEP_FDS + 1];
	size_t n_keep = 0;
	int rc, fd;

	if (!shim->bin || shim->bin[0] != '/' || vm->opts.n_keep_fds > VMM_SHIM_MAX_KEEP_FDS) {
		snprintf(err, errlen, "shim: needs an absolute bin and at most %d inherited fds",
			 VMM_SHIM_MAX_KEEP_FDS);
		return -EINVAL;
	}
	a.run_dir = vm->run_dir;
	a.grace_s = shim->grace_s;
	a.abandon_pause = shim->abandon_pause;
	a.record = shim->record;
	a.log_cap = shim->log_cap;
	a.drop_privileges = vm->jail.drop;
	a.cred = vm->jail.cred;
	a.lease_fd = vm->jail.lease_fd;
	a.netns = vm->jail.netns;
	a.mntns = vm->jail.mntns;
	for (size_t i = 0; i < vm->jail.n_ro; i++)
		a.ro[i] = vm->jail.ro[i];
	a.n_ro = vm->jail.n_ro;
	for (size_t i = 0; i < vm->jail.n_rw; i++)
		a.rw[i] = vm->jail.rw[i];
	a.n_rw = vm->jail.n_rw;
	for (size_t i = 0; i < vm->jail.n_keep; i++)
		a.keep[i] = vm->jail.keep[i];
	a.n_keep = vm->jail.n_keep;
	a.fsize = vm->jail.fsize;
	a.nofile = vm->jail.nofile;
	a.nproc = vm->jail.nproc;
	for (size_t i = 0; i < vm->jail.cg.n_dirs; i++)
		a.cgroups[i] = vm->jail.cg.dirs[i];
	a.n_cgroups = vm->jail.cg.n_dirs;
	for (size_t i = 0; i < vm->opts.n_keep_fds; i++)
		keep[n_keep++] = a.keep_fds[i] = vm->opts.keep_fds[i];
	a.n_keep_fds = vm->opts.n_keep_fds;
	if (vm->jail.lease_fd >= 0)
		keep[n_keep++] = vm->jail.lease_fd;
	a.qemu_argv = qemu_argv;
	rc = vm_shim_log_path(vm->run_dir, vm->shim_log, sizeof(vm->shim_log));
	if (rc < 0) {
		snprintf(err, errlen, "run dir %s: no room for the shim's log", vm->run_dir);
		vm->shim_log[0] = '\0';
		return rc;
	}
	rc = vmm_shim_args_build(shim->bin, &a, &argv, err, errlen);
	if (rc == 0)
		rc = vmm_proc_spawn_detached(argv.v, vm->shim_log, keep, n_keep, &vm->proc, err,
					     errlen);
	strv_free(&argv);
	if (rc < 0)
		return rc;
	/* The shim holds the uid's lease from now on, for QEMU's life. */
	if (vm->jail.lease_fd >= 0)
		close(vm->jail.lease_fd);
	vm->jail.lease_fd = -1;
	vm->shim_held = true;
	fd = vm_shim_attach(vm->run_dir, &vm->proc, SHIM_ATTACH_START_MS, &vm->qemu_pid, err,
			    errlen);
	if (fd < 0)
		return fd;
	vm->attach_fd = fd;
	return 0;
}
