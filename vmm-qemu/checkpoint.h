/* vmm-qemu/checkpoint.h: a running guest's whole state (RAM, devices,
 * disk) in a folder, for pausing a session to disk and for forking it.
 *
 * Unlike a template (snapshot.h), whose RAM is a file shared by every
 * clone, a checkpoint carries the guest's RAM in its migration stream
 * (zero pages are not written), so any guest can be checkpointed however
 * it was started. Saving stops the guest, migrates to <dir>/state and
 * copies (fork) or moves (pause) its disk overlay; restoring starts QEMU
 * with -incoming defer and the overlay linked in, loads the stream and
 * continues.
 *
 * Folder (<run base>/vm-ckpt-XXXXXX, 0700, with owner.pid so that
 * vmm_sweep_stale() removes it once its owner is gone, or held_by instead
 * once something outside any one process keeps it: a session's record on
 * disk, a paused session whose guest's shim made it):
 *   state            QEMU migration stream (RAM included)
 *   disk.qcow2       the guest's overlay (images with a rootfs)
 *   page.html        the page the guest was given, when there was one
 *   checkpoint.json  the guest's spec */
#ifndef VITRINE_VMM_CHECKPOINT_H
#define VITRINE_VMM_CHECKPOINT_H

#include "vmm-qemu/vm.h"

#include <limits.h>
#include <stdbool.h>

enum vmm_checkpoint_mode {
	VMM_CKPT_KEEP_RUNNING, /* fork: the guest continues (if it ran), its disk is copied */
	VMM_CKPT_QUIT, /* pause: QEMU quits, its disk moves to the checkpoint */
};

/* Makes a new checkpoint folder under run_base (NULL: vmm_run_base()),
 * path into dir (PATH_MAX). Returns 0 or -errno with a reason in err. */
int vmm_checkpoint_dir_new(const char *run_base, char *dir, char *err, size_t errlen);

/* Saves vm's state into dir (from vmm_checkpoint_dir_new()). With
 * VMM_CKPT_QUIT, QEMU has exited on success and the caller destroys vm
 * (its run dir goes, the checkpoint stays). bytes (may be NULL) gets the
 * stream's size. Returns 0 or -errno with a reason in err. A failure
 * before QEMU was told to quit (any mode: the migration failed, ENOSPC
 * included, or a file could not be written) leaves the guest as it was,
 * continued where it had run (QMP cont, which takes its disks back), the
 * partial files in dir for the caller to remove; with VMM_CKPT_QUIT one
 * after (the quit, the disk's move) leaves QEMU quit or quitting. */
int vmm_checkpoint_save(struct vmm_vm *vm, const char *dir, enum vmm_checkpoint_mode mode,
			int64_t *bytes, char *err, size_t errlen);

/* Hands the checkpoint in dir to holder (a session id, a record's path):
 * writes held_by with holder, then removes owner.pid, so that
 * vmm_sweep_stale() keeps it whatever becomes of the process that made
 * it; it goes when its holder removes it (vitrine gc lists held folders
 * with vmm_sweep_list()). Returns 0 or -errno. */
int vmm_checkpoint_hold(const char *dir, const char *holder);

/* The reverse: owner.pid names this process again, held_by goes. Returns
 * 0 or -errno. */
int vmm_checkpoint_unhold(const char *dir);

/* Copies the holder of the checkpoint in dir into holder (len bytes, may
 * be NULL). Returns 0, -ENOENT when it is not held, or another -errno. */
int vmm_checkpoint_held_by(const char *dir, char *holder, size_t len);

/* Whether the checkpoint in dir is whole: its description, its state, and
 * its disk when it has one. A save with VMM_CKPT_QUIT writes the first two,
 * has QEMU quit, then moves the guest's disk in; one whose writer died
 * between the last two left the disk in the guest's run dir: given
 * gone_run_dir (that guest's, known to be gone; NULL for none), the disk is
 * moved in from there now. Never follows a link. Can't fail otherwise. */
bool vmm_checkpoint_complete(const char *dir, const char *gone_run_dir);

/* Starts a new guest from the checkpoint in dir and waits until it runs
 * (opts as for vmm_vm_start; its page and inherited fds are the
 * checkpoint's). The guest writes the checkpoint's disk itself (linked into
 * its run dir), so a checkpoint is restored once: the caller removes dir
 * after a success; after a failure dir is intact and may be tried again.
 * Returns 0 with *out owning the guest, or -errno with a reason in err. */
int vmm_checkpoint_restore(const char *dir, const struct vmm_vm_opts *opts, struct vmm_vm **out,
			   char *err, size_t errlen);

#endif
