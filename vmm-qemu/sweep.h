/* vmm-qemu/sweep.h: what a run base holds, and removing what nobody owns
 * any more. A run dir (vm-XXXXXX) is kept while the owner its record names
 * lives (run_owner.h: owner-vm-XXXXXX beside it, root's; never a file in
 * the run dir, which its guest's uid may delete or forge): the guest's
 * shim when it has one (shim.h), else the vitrine process whose child QEMU
 * is. A run dir without a record (one made before records, or being made)
 * is kept while it is younger than VMM_SWEEP_YOUNG_S or the pid in its
 * owner.pid lives. A checkpoint folder (vm-ckpt-XXXXXX, root's)
 * is kept while its owner.pid lives or, held (checkpoint.h:
 * vmm_checkpoint_hold), for good. A shim's log (shim-vm-XXXXXX.log) is
 * kept while its run dir is there and for VMM_SHIM_LOG_KEEP_S after. */
#ifndef VITRINE_VMM_SWEEP_H
#define VITRINE_VMM_SWEEP_H

#include <stdbool.h>
#include <sys/types.h>

#define VMM_SHIM_LOG_KEEP_S (24 * 3600)
#define VMM_SWEEP_YOUNG_S 60

enum vmm_sweep_kind {
	VMM_SWEEP_RUN_DIR, /* vm-XXXXXX */
	VMM_SWEEP_CHECKPOINT, /* vm-ckpt-XXXXXX */
	VMM_SWEEP_SHIM_LOG, /* shim-vm-XXXXXX.log */
	VMM_SWEEP_OWNER_RECORD, /* owner-vm-XXXXXX whose run dir is gone */
};

struct vmm_sweep_entry {
	enum vmm_sweep_kind kind;
	const char *path;
	pid_t owner; /* from the run dir's record (a checkpoint's owner.pid); 0: none */
	bool owner_alive; /* with its start time, and not a zombie */
	const char *gateway; /* a run dir's gateway id (run_owner.h); NULL: none known */
	bool foreign; /* a run dir of another gateway than this process's */
	bool being_made; /* a run dir without a record, younger than VMM_SWEEP_YOUNG_S */
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
