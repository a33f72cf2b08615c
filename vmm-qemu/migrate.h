/* vmm-qemu/migrate.h: QEMU migration steps shared by templates
 * (snapshot.h) and checkpoints (checkpoint.h): device and RAM state to a
 * file through an fd handed over with getfd, back from an fd a guest
 * started with -incoming defer inherited, and quitting QEMU cleanly. Every
 * call blocks, servicing the guest, and returns 0 or -errno with a reason
 * in err. */
#ifndef VITRINE_VMM_MIGRATE_H
#define VITRINE_VMM_MIGRATE_H

#include "vmm-qemu/vm.h"

#include <stdbool.h>

#define VMM_MIGRATE_TIMEOUT_MS 120000

/* Sets x-ignore-shared: RAM mapped from a shared file is left out of the
 * stream (on), or every RAM block goes in (off). */
int vmm_migrate_ignore_shared(struct vmm_vm *vm, bool on, char *err, size_t errlen);

/* Writes the guest's state to path (created 0600) and waits until the
 * migration completed. The guest should be stopped first; it stays stopped
 * ("postmigrate"), its disks flushed and inactive until "cont". */
int vmm_migrate_to_file(struct vmm_vm *vm, const char *path, char *err, size_t errlen);

/* Loads a stream from fd, a descriptor QEMU inherited at the same number
 * (vmm_vm_opts.keep_fds; the guest was started with spec.incoming), and
 * waits until it is loaded. The guest stays paused. */
int vmm_migrate_incoming(struct vmm_vm *vm, int fd, char *err, size_t errlen);

/* Polls query-migrate until the migration (either way) completes: 0, or
 * -EIO when it failed or was cancelled, -ETIMEDOUT. */
int vmm_migrate_wait(struct vmm_vm *vm, int timeout_ms, char *err, size_t errlen);

/* Polls query-migrate until no migration is under way (none, completed,
 * failed or cancelled): after a migrate_cancel, which QEMU carries out on
 * its migration thread, before the guest can run again. 0, -ETIMEDOUT, or
 * -errno with a reason in err. */
int vmm_migrate_settle(struct vmm_vm *vm, int timeout_ms, char *err, size_t errlen);

/* Quits QEMU and waits for it to exit (its disk writes are all out). */
int vmm_vm_quit(struct vmm_vm *vm, char *err, size_t errlen);

#endif
