/* vmm-qemu/template_create.h: making a template from scratch: boot an
 * image, wait until the guest is ready, let it settle, save (snapshot.h).
 * One function shared by `vitrine template create` and the gateway's
 * POST /v1/templates, which runs it on a worker thread. */
#ifndef VITRINE_VMM_TEMPLATE_CREATE_H
#define VITRINE_VMM_TEMPLATE_CREATE_H

#include "vmm-qemu/snapshot.h"

#include <signal.h>

struct vmm_template_params {
	const char *image; /* image name or folder */
	const char *url; /* NULL: about:blank (or the page) */
	const char *page_file; /* NULL: none; an HTML file the guest shows */
	int width, height, vcpus, memory_mib; /* 0: the defaults of vmm_spec_defaults() */
	int timeout_s; /* for the guest to become ready; 0: 180 */
	int settle_s; /* after ready, before saving; -1: 2 */
	vmm_step_fn on_step; /* told each step (vm.h) on the calling thread; NULL: nobody */
	void *step_ud;
};

/* Boots p->image and saves it as the template name in vmm_templates_dir().
 * Stops early with -EINTR once *cancel (may be NULL) becomes non-zero.
 * Returns 0, -EEXIST when the template exists, -ENOENT for an unknown
 * image, -EINVAL for bad parameters, or another -errno; err says why. On
 * failure nothing of the template is left. */
int vmm_template_create(const char *name, const struct vmm_template_params *p,
			const volatile sig_atomic_t *cancel, char *err, size_t errlen);

#endif
