/* vmm-qemu/vm_find.h: finding a guest again from its run dir alone, for an
 * owner that died before it wrote down the guest's identity anywhere else
 * (the gateway, between starting a guest and recording it: docs/
 * durability.md): the label its owner gave it (RUN_DIR/label), its
 * identity (from vm.json), and stopping an orphan through its shim. */
#ifndef VITRINE_VMM_VM_FIND_H
#define VITRINE_VMM_VM_FIND_H

#include "vmm-qemu/vm.h"

#include <stdbool.h>
#include <stddef.h>

/* Writes label (1..63 bytes, no '/', no newline) as run_dir's label,
 * atomically. Returns 0, -EINVAL, or -errno. */
int vmm_run_dir_set_label(const char *run_dir, const char *label);
/* Copies run_dir's label into buf (len bytes). Returns 0, -ENOENT when it
 * has none, or -errno. */
int vmm_run_dir_label(const char *run_dir, char *buf, size_t len);

/* The identity of the shim-held guest in run_dir, from its vm.json, for
 * vmm_vm_adopt() (which verifies it against the live process). Returns 0,
 * or -ENOENT (no vm.json), -EBADMSG (no shim in it, or not parseable),
 * with a reason in err. */
int vmm_vm_identity_read(const char *run_dir, struct vmm_identity *out, char *err, size_t errlen);

/* Waits up to timeout_ms for the process id names (pid and start time) to
 * be gone: exited, a zombie, or its pid taken by another process. True
 * once it is. */
bool vmm_identity_wait_gone(const struct vmm_identity *id, int timeout_ms);

/* Stops the shim-held guest in run_dir that nobody will adopt: the shim
 * named in vm.json (or, before vm.json is written, the process in
 * owner.pid whose command line is this run dir's shim), if it is that very
 * process still (pid and start time),
 * gets SIGTERM (it quits QEMU and removes the run dir) and is waited for up
 * to timeout_ms, then SIGKILLed (QEMU dies with it). A process that is not
 * the shim is never signalled. Returns 0 once it is gone, -ESRCH when it
 * was gone already, or -errno with a reason in err. */
int vmm_shim_terminate(const char *run_dir, int timeout_ms, char *err, size_t errlen);
/* vmm_shim_terminate with the shim known from the run dir's root-owned
 * record alone (run_owner.h: the process it names, still that process,
 * whose command line is this run dir's shim), never from vm.json: what the
 * root helper does for a gateway it does not trust (privd.h). */
int vmm_shim_terminate_owned(const char *run_dir, int timeout_ms, char *err, size_t errlen);

#endif
