/* vmm-qemu/template_from.h: a template from a running guest (issue 16: "save
 * this session as a template"). The guest itself is only stopped for a
 * checkpoint (checkpoint.h, as a fork: it runs on); this turns that
 * checkpoint into a template on a thread of the caller's, away from the
 * guest. A template's RAM must be a file that clones map (snapshot.h), and a
 * session's RAM is anonymous or a private copy of its own template's, so a
 * helper QEMU with the new template's RAM file shared loads the checkpoint's
 * stream (its RAM lands in the file) and is saved as any built template is:
 * clones restore from it on the same path, clock, RNG and all.
 *
 * Disks form a chain: the checkpoint's overlay has its session's template's
 * disk.qcow2 (or the image's rootfs) as its backing file, and becomes the
 * new template's disk.qcow2 as it is. A chain deeper than the limit is
 * flattened first (qemu-img rebase onto the rootfs: the layers between are
 * copied into the overlay), so no clone reads through more than max_depth
 * template layers. */
#ifndef VITRINE_VMM_TEMPLATE_FROM_H
#define VITRINE_VMM_TEMPLATE_FROM_H

#include "vmm-qemu/snapshot.h"

#include <signal.h>
#include <stdbool.h>

/* Template layers a disk may have above its image's rootfs before a save
 * flattens it. */
#define VMM_TEMPLATE_CHAIN_MAX 4

struct vmm_template_from {
	const char *name; /* the new template, in vmm_templates_dir() */
	const char *ckpt; /* a checkpoint folder (vmm_checkpoint_save), left as it is */
	const char *parent; /* the template the guest was restored from, NULL for none */
	const char *from_session; /* recorded in template.json; may be NULL */
	int max_depth; /* 0: VMM_TEMPLATE_CHAIN_MAX */
	vmm_step_fn on_step; /* told each step (vm.h) on the calling thread; may be NULL */
	void *step_ud;
	const volatile sig_atomic_t *cancel; /* stop early (-EINTR) once non-zero; may be NULL */
};

/* The depth of a new layer on a parent disk of parent_depth layers (0: the
 * rootfs itself) under max_depth (0: VMM_TEMPLATE_CHAIN_MAX): parent_depth
 * + 1, or 1 when that is over the limit, with *flatten set. Pure. */
int vmm_template_chain_depth(int parent_depth, int max_depth, bool *flatten);

/* Makes the template p->name from the checkpoint p->ckpt. *flattened (may be
 * NULL) says whether its disk chain was flattened. Returns 0, -EEXIST when
 * the template exists, -ENOENT when the parent is gone, -EINTR when
 * cancelled, or another -errno; err says why. On failure nothing of the
 * template is left. Blocks for seconds (the helper guest loads and saves the
 * whole RAM): never on an event loop. */
int vmm_template_from_checkpoint(const struct vmm_template_from *p, bool *flattened, char *err,
				 size_t errlen);

#endif
