/* vmm-qemu/proc.c: see proc.h. */
#include "vmm-qemu/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Runs in the child between fork and exec: only async-signal-safe calls.
 * detached: no PDEATHSIG, a session of its own (vmm_proc_spawn_detached). */
/* Writes "0" (this process) into dir/cgroup.procs. Async-signal-safe. */
static int join_cgroup(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);
	int fd, ok;

	if (n + sizeof("/cgroup.procs") > sizeof(path))
		return -1;
	memcpy(path, dir, n);
	memcpy(path + n, "/cgroup.procs", sizeof("/cgroup.procs"));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* The jail's steps that need root, then its rlimits. Async-signal-safe. */
static int enter_jail(const struct vmm_jail *j)
{
	struct rlimit r;

	for (size_t i = 0; i < j->n_cgroups; i++)
		if (join_cgroup(j->cgroups[i]) < 0)
			return -1;
	if (j->netns && unshare(CLONE_NEWNET) < 0)
		return -1;
	if (j->mntns && vmm_mntns_enter(j->ro_paths, j->n_ro, j->rw_paths, j->n_rw, j->keep_paths,
					j->n_keep) < 0)
		return -1;
	if (j->fsize) {
		r = (struct rlimit){ j->fsize, j->fsize };
		if (setrlimit(RLIMIT_FSIZE, &r) < 0)
			return -1;
	}
	if (j->nofile) {
		r = (struct rlimit){ j->nofile, j->nofile };
		if (setrlimit(RLIMIT_NOFILE, &r) < 0)
			return -1;
	}
	if (j->nproc) {
		r = (struct rlimit){ j->nproc, j->nproc };
		if (setrlimit(RLIMIT_NPROC, &r) < 0)
			return -1;
	}
	return 0;
}

static void child_exec(char *const argv[], const char *log_path, const int *keep, size_t n_keep,
		       const struct vmm_jail *jail, pid_t parent, bool detached)
{
	const struct vmm_cred *cred = jail ? jail->cred : NULL;
	struct rlimit no_core = { 0, 0 };
	sigset_t none;
	int fd;

	if (jail && enter_jail(jail) < 0)
		_exit(126);
	if (cred && (setgroups((size_t)cred->n_groups, cred->groups) < 0 ||
		     setresgid(cred->gid, cred->gid, cred->gid) < 0 ||
		     setresuid(cred->uid, cred->uid, cred->uid) < 0))
		_exit(126);
	/* After the credential change, which would clear it. */
	if (!detached && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent))
		_exit(127); /* the parent is already gone */
	/* No transparent huge pages (inherited across exec): QEMU asks for
	 * them on its TCG code buffer and guest RAM, and a 2 MiB page for
	 * every first touch made each guest's 256 MiB code buffer fully
	 * resident (measured here: 231 of a clone's 300 MiB). */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	if (detached)
		setsid();
	else
		setpgid(0, 0); /* a ^C on the terminal is the parent's to handle */
	/* Ignored signals and the mask survive exec: the shim ignores some
	 * and blocks SIGTERM for its signalfd, QEMU must do neither. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setrlimit(RLIMIT_CORE, &no_core);
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0)
		_exit(127);
	fd = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0640);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(127);
	/* Everything above 2 closes on exec, except the fds handed over. */
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		_exit(127);
	for (size_t i = 0; i < n_keep; i++) {
		int fl = fcntl(keep[i], F_GETFD);

		if (fl < 0 || fcntl(keep[i], F_SETFD, fl & ~FD_CLOEXEC) < 0)
			_exit(127);
	}
	execvp(argv[0], argv);
	_exit(127);
}

int vmm_cred_lookup(const char *user, struct vmm_cred *cred)
{
	struct passwd *pw = getpwnam(user);
	struct group *kvm = getgrnam("kvm");

	if (!pw)
		return -ENOENT;
	memset(cred, 0, sizeof(*cred));
	cred->uid = pw->pw_uid;
	cred->gid = pw->pw_gid;
	cred->groups[cred->n_groups++] = pw->pw_gid;
	if (kvm)
		cred->groups[cred->n_groups++] = kvm->gr_gid;
	return 0;
}

static int spawn(char *const argv[], const char *log_path, const int *keep_fds, size_t n_keep,
		 const struct vmm_jail *jail, bool detached, struct vmm_proc *p, char *err,
		 size_t errlen)
{
	pid_t parent = getpid();
	int e;

	memset(p, 0, sizeof(*p));
	p->pidfd = -1;
	p->pid = fork();
	if (p->pid < 0) {
		e = errno;
		p->pid = 0;
		snprintf(err, errlen, "fork: %s", strerror(e));
		return -e;
	}
	if (p->pid == 0)
		child_exec(argv, log_path, keep_fds, n_keep, jail, parent, detached);
	p->child = true;
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (p->pidfd < 0) {
		e = errno;
		vmm_proc_release(p);
		snprintf(err, errlen, "pidfd_open: %s", strerror(e));
		return -e;
	}
	fcntl(p->pidfd, F_SETFD, FD_CLOEXEC);
	return 0;
}

int vmm_proc_spawn(char *const argv[], const char *log_path, const int *keep_fds, size_t n_keep,
		   const struct vmm_jail *jail, struct vmm_proc *p, char *err, size_t errlen)
{
	return spawn(argv, log_path, keep_fds, n_keep, jail, false, p, err, errlen);
}

int vmm_proc_spawn_detached(char *const argv[], const char *log_path, const int *keep_fds,
			    size_t n_keep, struct vmm_proc *p, char *err, size_t errlen)
{
	return spawn(argv, log_path, keep_fds, n_keep, NULL, true, p, err, errlen);
}

int vmm_proc_start_time(pid_t pid, unsigned long long *out)
{
	char path[64], buf[1024], *p;
	unsigned long long start;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 && errno != ESRCH ? -errno : -ESRCH;
	buf[n] = '\0';
	/* "PID (COMM) STATE PPID ...": comm may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EIO;
	if (p[2] == 'Z' || p[2] == 'X')
		return -ESRCH;
	p += 3; /* at the space before field 4 */
	for (int field = 4; field <= 22; field++) { /* each step: to the start of field */
		p = strchr(p, ' ');
		if (!p)
			return -EIO;
		p++;
	}
	if (sscanf(p, "%llu", &start) != 1)
		return -EIO;
	*out = start;
	return 0;
}

int vmm_proc_adopt(pid_t pid, unsigned long long start_time, struct vmm_proc *p, char *err,
		   size_t errlen)
{
	unsigned long long now;
	int rc;

	memset(p, 0, sizeof(*p));
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (p->pidfd < 0) {
		rc = -errno;
		snprintf(err, errlen, "process %d: %s", (int)pid,
			 rc == -ESRCH ? "gone" : strerror(-rc));
		p->pidfd = -1;
		return rc;
	}
	fcntl(p->pidfd, F_SETFD, FD_CLOEXEC);
	/* After the pidfd: from here on the pid cannot be reused under us. */
	rc = vmm_proc_start_time(pid, &now);
	if (rc == 0 && now != start_time)
		rc = -ESTALE;
	if (rc < 0) {
		if (rc == -ESTALE)
			snprintf(err, errlen,
				 "process %d started at tick %llu, not %llu: another process",
				 (int)pid, now, start_time);
		else
			snprintf(err, errlen, "process %d: %s", (int)pid,
				 rc == -ESRCH ? "gone" : strerror(-rc));
		close(p->pidfd);
		p->pidfd = -1;
		return rc;
	}
	p->pid = pid;
	return 0;
}

/* Polls the pidfd for up to timeout_ms: true once the process has exited. */
static bool pidfd_exited(int pidfd, int timeout_ms)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int n;

	do
		n = poll(&pfd, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	return n > 0;
}

bool vmm_proc_wait(struct vmm_proc *p, int timeout_ms)
{
	int st;
	pid_t r;

	if (p->exited || p->pid <= 0)
		return true;
	if (p->pidfd >= 0 && (timeout_ms != 0 || !p->child)) {
		/* Not our child, waitpid says nothing until the pidfd has spoken. */
		if (!pidfd_exited(p->pidfd, timeout_ms))
			return false;
	}
	do
		r = waitpid(p->pid, &st, timeout_ms < 0 && p->child ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	p->exited = true;
	if (r < 0 && !p->child)
		p->status = -1; /* its status went to its own parent */
	else if (r < 0)
		p->status = 127; /* reaped elsewhere: nothing more to learn */
	else if (WIFSIGNALED(st))
		p->status = 128 + WTERMSIG(st);
	else
		p->status = WEXITSTATUS(st);
	return true;
}

void vmm_proc_signal(struct vmm_proc *p, int sig)
{
	if (p->pid <= 0 || p->exited)
		return;
	if (p->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, p->pidfd, sig, NULL, 0);
	else if (p->child)
		kill(p->pid, sig);
}

void vmm_proc_release(struct vmm_proc *p)
{
	if (p->pid > 0 && !p->exited) {
		vmm_proc_signal(p, SIGKILL);
		vmm_proc_wait(p, -1);
	}
	vmm_proc_forget(p);
}

void vmm_proc_forget(struct vmm_proc *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
	p->pid = 0;
}

void vmm_proc_describe(const struct vmm_proc *p, char *buf, size_t len)
{
	if (!p->exited)
		snprintf(buf, len, "running");
	else if (p->status < 0)
		snprintf(buf, len, "exited");
	else if (p->status > 128)
		snprintf(buf, len, "killed by signal %d (%s)", p->status - 128,
			 strsignal(p->status - 128));
	else
		snprintf(buf, len, "exited with status %d", p->status);
}

int vmm_proc_run(char *const argv[], const char *log_path, int timeout_ms, char *err, size_t errlen)
{
	struct vmm_proc p;
	int rc;

	rc = vmm_proc_spawn(argv, log_path, NULL, 0, NULL, &p, err, errlen);
	if (rc < 0)
		return rc;
	if (!vmm_proc_wait(&p, timeout_ms)) {
		vmm_proc_release(&p);
		snprintf(err, errlen, "%s: still running after %d ms, killed", argv[0], timeout_ms);
		return -ETIMEDOUT;
	}
	rc = p.status;
	vmm_proc_release(&p);
	return rc;
}
