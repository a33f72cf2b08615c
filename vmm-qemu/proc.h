/* vmm-qemu/proc.h: spawning, watching and reaping a child process (QEMU,
 * qemu-img, the per-guest shim), and watching a process another one
 * started (an adopted shim). A child dies with its parent
 * (PR_SET_PDEATHSIG) unless it is spawned to outlive it (the shim, which
 * holds QEMU so that a guest survives its gateway: shim.h); a pidfd lets an
 * event loop watch either kind. */
#ifndef VITRINE_VMM_PROC_H
#define VITRINE_VMM_PROC_H

#include "vmm-qemu/mount_ns.h"

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

#define VMM_JAIL_MAX_CGROUPS 3

/* What a child is confined to, applied between fork and exec (jail.h makes
 * one per guest): cgroups joined first, a network namespace and a mount
 * namespace of its own while still root, then the rlimits, then the
 * credentials. A zeroed one changes nothing; RLIMIT_CORE is always 0. */
struct vmm_jail {
	const struct vmm_cred *cred; /* NULL: the caller's */
	bool netns; /* unshare(CLONE_NEWNET): no interface but lo (down) */
	bool mntns; /* a mount namespace (mount_ns.h): ro_paths read-only, host places hidden */
	const char *ro_paths[VMM_MNTNS_MAX_RO];
	size_t n_ro;
	const char *rw_paths[VMM_MNTNS_MAX_RW]; /* writable again inside those */
	size_t n_rw;
	const char *keep_paths[VMM_MNTNS_MAX_KEEP]; /* kept where the host's places are hidden */
	size_t n_keep;
	unsigned long long fsize; /* RLIMIT_FSIZE in bytes; 0: unchanged */
	unsigned long nofile, nproc; /* RLIMIT_NOFILE, RLIMIT_NPROC; 0: unchanged */
	const char *cgroups[VMM_JAIL_MAX_CGROUPS]; /* dirs whose cgroup.procs it joins */
	size_t n_cgroups;
};

struct vmm_proc {
	pid_t pid; /* 0 once reaped */
	int pidfd; /* owned; readable when the process exits; -1 when closed */
	bool child; /* spawned by this process (waitpid works); false: adopted */
	bool exited;
	/* Shell-style: exit code, or 128 + signal; -1 when an adopted process
	 * exited (its status went to its parent). */
	int status;
};

/* Starts argv[0] (searched in PATH) with stdin on /dev/null and stdout and
 * stderr appended to log_path (or /dev/null when NULL), confined by jail
 * when not NULL. Every descriptor but 0-2 and those in keep_fds is closed
 * in the child. A jail step that fails ends the child with status 126
 * before exec. Returns 0 or -errno with a reason in err. */
int vmm_proc_spawn(char *const argv[], const char *log_path, const int *keep_fds, size_t n_keep,
		   const struct vmm_jail *jail, struct vmm_proc *p, char *err, size_t errlen);

/* vmm_proc_spawn(), except that the child outlives the caller: no
 * PR_SET_PDEATHSIG, and a session of its own (setsid) instead of a process
 * group, so that neither the caller's death nor its terminal's signals
 * reach it. While the caller lives it is still its child (waitpid). */
int vmm_proc_spawn_detached(char *const argv[], const char *log_path, const int *keep_fds,
			    size_t n_keep, struct vmm_proc *p, char *err, size_t errlen);

/* Watches pid, a process this one did not necessarily start: a pidfd is
 * opened first, then the process's start time (vmm_proc_start_time) is
 * compared with start_time, so that a pid reused by another process is
 * never taken for it. Returns 0 (p->child false), -ESRCH when it is gone
 * (or a zombie), -ESTALE when the pid now names another process, or
 * another -errno; err says which. */
int vmm_proc_adopt(pid_t pid, unsigned long long start_time, struct vmm_proc *p, char *err,
		   size_t errlen);

/* The start time of pid (field 22 of /proc/PID/stat: clock ticks after
 * boot), which with the pid names one process for as long as the host
 * runs. Returns 0, or -ESRCH when there is no such process or it has
 * exited (a zombie), or another -errno. */
int vmm_proc_start_time(pid_t pid, unsigned long long *out);

/* Waits up to timeout_ms (0: just checks; -1: forever) for the process to
 * exit and reaps it when it is a child (an adopted process that happens to
 * be one, too). Returns true when it has exited (status is set). */
bool vmm_proc_wait(struct vmm_proc *p, int timeout_ms);

/* Sends sig (through the pidfd when there is one: never to a process that
 * reused the pid) unless the process has exited. This function can't fail. */
void vmm_proc_signal(struct vmm_proc *p, int sig);

/* Kills (SIGKILL) if needed, waits for the exit (reaps a child), closes
 * the pidfd. Accepts a zeroed p. */
void vmm_proc_release(struct vmm_proc *p);

/* Lets go of the process without touching it: closes the pidfd. A child
 * that exits later stays a zombie until this process exits. Accepts a
 * zeroed p. */
void vmm_proc_forget(struct vmm_proc *p);

/* "exited with status N" / "killed by signal N (Killed)" / "exited" (an
 * adopted process), for messages. */
void vmm_proc_describe(const struct vmm_proc *p, char *buf, size_t len);

/* Runs argv to completion within timeout_ms, output to log_path. Returns the
 * shell-style status, or -errno (-ETIMEDOUT: killed) with a reason in err. */
int vmm_proc_run(char *const argv[], const char *log_path, int timeout_ms, char *err,
		 size_t errlen);

#endif
