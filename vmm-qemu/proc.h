/* vmm-qemu/proc.h: spawning, watching and reaping a child process (QEMU,
 * qemu-img). The child dies with its parent (PR_SET_PDEATHSIG), so a killed
 * gateway never leaves a guest running; a pidfd lets an event loop watch it. */
#ifndef VITRINE_VMM_PROC_H
#define VITRINE_VMM_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Credentials a child drops to before exec (not after, as QEMU's -runas
 * would: a credential change clears PR_SET_PDEATHSIG). */
struct vmm_cred {
	uid_t uid;
	gid_t gid;
	gid_t groups[8]; /* supplementary groups, e.g. kvm */
	int n_groups;
};

/* Fills cred for user name, with the kvm group added when it exists.
 * Returns 0 or -ENOENT when there is no such user. */
int vmm_cred_lookup(const char *user, struct vmm_cred *cred);

struct vmm_proc {
	pid_t pid; /* 0 once reaped */
	int pidfd; /* owned; readable when the child exits; -1 when closed */
	bool exited;
	int status; /* shell-style: exit code, or 128 + signal */
};

/* Starts argv[0] (searched in PATH) with stdin on /dev/null and stdout and
 * stderr appended to log_path (or /dev/null when NULL), as cred when not
 * NULL. Every descriptor but 0-2 and those in keep_fds is closed in the
 * child. Returns 0 or -errno with a reason in err. */
int vmm_proc_spawn(char *const argv[], const char *log_path, const int *keep_fds, size_t n_keep,
		   const struct vmm_cred *cred, struct vmm_proc *p, char *err, size_t errlen);

/* Waits up to timeout_ms (0: just checks; -1: forever) for the child to exit
 * and reaps it. Returns true when it has exited (status is set). */
bool vmm_proc_wait(struct vmm_proc *p, int timeout_ms);

/* Sends sig unless the child was reaped. This function can't fail. */
void vmm_proc_signal(struct vmm_proc *p, int sig);

/* Kills (SIGKILL) if needed, reaps, closes the pidfd. Accepts a zeroed p. */
void vmm_proc_release(struct vmm_proc *p);

/* "exited with status N" / "killed by SIGKILL", for messages. */
void vmm_proc_describe(const struct vmm_proc *p, char *buf, size_t len);

/* Runs argv to completion within timeout_ms, output to log_path. Returns the
 * shell-style status, or -errno (-ETIMEDOUT: killed) with a reason in err. */
int vmm_proc_run(char *const argv[], const char *log_path, int timeout_ms, char *err,
		 size_t errlen);

#endif
