/* vmm-qemu/proc.c: see proc.h. */
#include "vmm-qemu/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
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

/* Runs in the child between fork and exec: only async-signal-safe calls. */
static void child_exec(char *const argv[], const char *log_path, const int *keep, size_t n_keep,
		       const struct vmm_cred *cred, pid_t parent)
{
	struct rlimit no_core = { 0, 0 };
	int fd;

	if (cred && (setgroups((size_t)cred->n_groups, cred->groups) < 0 ||
		     setresgid(cred->gid, cred->gid, cred->gid) < 0 ||
		     setresuid(cred->uid, cred->uid, cred->uid) < 0))
		_exit(126);
	/* After the credential change, which would clear it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127); /* the parent is already gone */
	/* No transparent huge pages (inherited across exec): QEMU asks for
	 * them on its TCG code buffer and guest RAM, and a 2 MiB page for
	 * every first touch made each guest's 256 MiB code buffer fully
	 * resident (measured here: 231 of a clone's 300 MiB). */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	setpgid(0, 0); /* a ^C on the terminal is the parent's to handle */
	signal(SIGPIPE, SIG_DFL);
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

int vmm_proc_spawn(char *const argv[], const char *log_path, const int *keep_fds, size_t n_keep,
		   const struct vmm_cred *cred, struct vmm_proc *p, char *err, size_t errlen)
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
		child_exec(argv, log_path, keep_fds, n_keep, cred, parent);
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

bool vmm_proc_wait(struct vmm_proc *p, int timeout_ms)
{
	int st;
	pid_t r;

	if (p->exited || p->pid <= 0)
		return true;
	if (timeout_ms != 0 && p->pidfd >= 0) {
		struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
		int n;

		do
			n = poll(&pfd, 1, timeout_ms);
		while (n < 0 && errno == EINTR);
		if (n == 0)
			return false;
	}
	do
		r = waitpid(p->pid, &st, timeout_ms < 0 ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	p->exited = true;
	if (r < 0)
		p->status = 127; /* reaped elsewhere: nothing more to learn */
	else if (WIFSIGNALED(st))
		p->status = 128 + WTERMSIG(st);
	else
		p->status = WEXITSTATUS(st);
	return true;
}

void vmm_proc_signal(struct vmm_proc *p, int sig)
{
	if (p->pid > 0 && !p->exited)
		kill(p->pid, sig);
}

void vmm_proc_release(struct vmm_proc *p)
{
	if (p->pid > 0 && !p->exited) {
		kill(p->pid, SIGKILL);
		vmm_proc_wait(p, -1);
	}
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
	p->pid = 0;
}

void vmm_proc_describe(const struct vmm_proc *p, char *buf, size_t len)
{
	if (!p->exited)
		snprintf(buf, len, "running");
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
