/* vmm-qemu/sweep.h: what a run base holds, and removing what nobody owns
 * any more. A run dir (vm-XXXXXX) is kept while the process in its
 * owner.pid lives: the guest's shim when it has one (shim.h), else the
 * vitrine process whose child QEMU is. A checkpoint folder (vm-ckpt-XXXXXX)
 * is kept while its owner.pid lives or, held (checkpoint.h:
 * vmm_checkpoint_hold), for good. A shim's log (shim-vm-XXXXXX.log) is
 * kept while its run dir is there and for VMM_SHIM_LOG_KEEP_S after. */
#ifndef VITRINE_VMM_SWEEP_H
#define VITRINE_VMM_SWEEP_H

#include <stdbool.h>
#include <sys/types.h>

#define VMM_SHIM_LOG_KEEP_S (24 * 3600)

enum vmm_sweep_kind {
	VMM_SWEEP_RUN_DIR, /* vm-XXXXXX */
	VMM_SWEEP_CHECKPOINT, /* vm-ckpt-XXXXXX */
	VMM_SWEEP_SHIM_LOG, /* shim-vm-XXXXXX.log */
};

struct vmm_sweep_entry {
	enum vmm_sweep_kind kind;
	const char *path;
	pid_t owner; /* from owner.pid; 0 when there is none */
	bool owner_alive; /* and not a zombie */
	const char *held_by; /* a held checkpoint's holder; NULL otherwise */
	bool stale; /* what vmm_sweep_stale() removes */
};

/* Called once per entry; the strings live until it returns. */
typedef void (*vmm_sweep_fn)(void *ud, const struct vmm_sweep_entry *e);

/* Lists run_base's run dirs, checkpoints and shim logs (for `vitrine gc`).
 * Returns how many were listed (0 when run_base does not exist), or
 * -errno when it cannot be read. */
int vmm_sweep_list(const char *run_base, vmm_sweep_fn fn, void *ud);

/* Removes the stale entries: run dirs whose owner is gone (their QEMUs died
 * with it), checkpoints neither held nor owned by a live process, shim logs
 * of run dirs gone for over VMM_SHIM_LOG_KEEP_S. Returns the number of run
 * dirs and checkpoints removed. */
int vmm_sweep_stale(const char *run_base);

#endif
