/* vmm-qemu/run_owner.h: who owns a run dir, in a file its guest cannot
 * write. A run dir (vm-XXXXXX) is its guest's uid's, so anything in it is
 * the guest's to delete or forge; what decides whether the run dir lives
 * (the sweep removes it once its owner is gone) and which gateway it
 * belongs to is kept beside it instead, in the run base, which is root's:
 * RUN_BASE/owner-vm-XXXXXX, root's, 0644, written atomically, one line
 *
 *   PID START_TIME GATEWAY
 *
 * the owner's pid and start time (vmm_proc_start_time: together they never
 * name another process) and the id of the gateway the guest is for ("" for
 * none: `vitrine boot`, tests). The owner is the guest's shim when it has
 * one, else the process whose child QEMU is. A gateway's id is its state
 * dir's real path (vmm_run_owner_set_gateway), so that a gateway with
 * another state dir on the same run base knows a run dir for another's. */
#ifndef VITRINE_VMM_RUN_OWNER_H
#define VITRINE_VMM_RUN_OWNER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct vmm_run_owner {
	pid_t pid;
	unsigned long long start_time;
	char gateway[PATH_MAX]; /* "" for none */
};

/* The record's line for o into buf (len bytes). Returns its length, or
 * -ENAMETOOLONG when it does not fit. Pure. */
int vmm_run_owner_format(const struct vmm_run_owner *o, char *buf, size_t len);

/* Reads a record's text (n bytes) into o. Returns 0, or -EPROTO for
 * anything but one line of a positive pid, a start time and a gateway id
 * without control characters. Pure. */
int vmm_run_owner_parse(const char *text, size_t n, struct vmm_run_owner *o);

/* The id this process writes into the records it makes ("" until set);
 * set once at start (cli/gw_start.c: the state dir's real path), before
 * any guest starts. id NULL or "": none. */
void vmm_run_owner_set_gateway(const char *id);
const char *vmm_run_owner_gateway(void);

/* Writes run_dir's record: pid (with its start time) as its owner and
 * gateway (NULL: the one its record already names, else this process's).
 * Returns 0, -ESRCH when pid is gone, or -errno. */
int vmm_run_owner_write(const char *run_dir, pid_t pid, const char *gateway);

/* Reads run_dir's record. Returns 0, -ENOENT when it has none, -EPROTO
 * when it is not one, or -errno. */
int vmm_run_owner_read(const char *run_dir, struct vmm_run_owner *o);

/* Whether o's owner still runs: its pid, with its start time, and not a
 * zombie. */
bool vmm_run_owner_alive(const struct vmm_run_owner *o);

/* Whether o names a gateway other than this process's (both set). */
bool vmm_run_owner_foreign(const struct vmm_run_owner *o);

/* Removes run_dir (by descriptor, fs_rm_rf) and then its record. Returns
 * fs_rm_rf's result. */
int vmm_run_dir_remove(const char *run_dir);

#endif
