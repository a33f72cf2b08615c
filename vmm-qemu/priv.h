/* vmm-qemu/priv.h: the gateway's side of its root helper (privd.h): it
 * starts the helper once, at `vitrine serve`'s start, and asks it for what
 * needs root. Every caller goes through the functions below, which ask the
 * helper when there is one and the request is within its run base, and
 * otherwise do the work in this process as before (`vitrine boot`, `gc`,
 * the shim, tests that drive the vmm directly, run as root themselves).
 * A helper that died (killed, crashed: its socket refuses) leaves its work
 * to a gateway that is root itself, said once in the log. */
#ifndef VITRINE_VMM_PRIV_H
#define VITRINE_VMM_PRIV_H

#include "vmm-qemu/priv_proto.h"

#include <stdbool.h>
#include <stddef.h>

/* How long a request may take before the asker gives up on it. */
#define PRIV_CALL_TIMEOUT_MS (120 * 1000)

/* Starts the helper for run_base (its gateway id: gateway, "" for none):
 * `BIN privd` (bin: the absolute path of the vitrine binary), dying with
 * this process. Once per process.
 * Returns 0, or -errno with why in err. */
int vmm_priv_start(const char *bin, const char *run_base, const char *gateway, char *err,
		   size_t errlen);

/* Whether a helper runs, and its pid (0: none). */
bool vmm_priv_running(void);
int vmm_priv_pid(void);

/* Closes the control socket (the helper exits once its requests are
 * answered) and reaps it. */
void vmm_priv_stop(void);

/* Asks the helper: op with argv[0..argc). Returns its answer (0 or -errno,
 * with its message in msg), or -errno of the asking (-ENOTCONN: no helper,
 * -EPIPE: it answered nothing, -ETIMEDOUT) with why in msg. Any thread. */
int vmm_priv_call(enum priv_op op, const char *const *argv, int argc, char *msg, size_t msglen);

/* vmm_run_dir_remove() and what else a guest's end leaves (its cgroup,
 * its shim's log), by the helper for a run dir of its run base. Returns 0
 * or -errno. */
int vmm_priv_run_dir_remove(const char *run_dir);

/* vmm_sweep_stale(run_base), by the helper when it is its run base.
 * Returns how many it removed, or -errno. */
int vmm_priv_sweep(const char *run_base);

/* vmm_shim_terminate(run_dir, ms): by the helper for a run dir of its run
 * base, which knows the shim from the run dir's record alone
 * (vmm_shim_terminate_owned). Returns 0, -ESRCH (no such shim), or -errno,
 * with why in err. */
int vmm_priv_shim_terminate(const char *run_dir, int ms, char *err, size_t errlen);

#endif
