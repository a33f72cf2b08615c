/* vmm-qemu/template_create.c: see template_create.h. */
#include "vmm-qemu/template_create.h"

#include "common/fsutil.h"
#include "vmm-qemu/accel.h"

#include <errno.h>
#include <stdio.h>

/* Waits for "ready" in short steps so that cancel is honoured. */
static int wait_ready(struct vmm_vm *vm, int timeout_s, const volatile sig_atomic_t *cancel,
		      char *err, size_t errlen)
{
	int64_t deadline = fs_now_ms() + (int64_t)timeout_s * 1000;

	while (!(cancel && *cancel)) {
		int left = (int)(deadline - fs_now_ms());
		int rc = vmm_vm_wait_phase(vm, "ready", left < 250 ? (left > 0 ? left : 0) : 250,
					   err, errlen);

		if (rc != -ETIMEDOUT)
			return rc;
		if (left <= 250) {
			snprintf(err, errlen, "the guest was not ready within %d s", timeout_s);
			return rc;
		}
	}
	snprintf(err, errlen, "cancelled");
	return -EINTR;
}

int vmm_template_create(const char *name, const struct vmm_template_params *p,
			const volatile sig_atomic_t *cancel, char *err, size_t errlen)
{
	char dir[PATH_MAX], ram[PATH_MAX], why[256];
	struct vmm_vm_opts vopts = { 0 };
	struct vmm_vm *vm = NULL;
	struct vmm_image img;
	struct vmm_spec spec;
	int64_t until;
	int rc;

	if (!vmm_template_name_ok(name)) {
		snprintf(err, errlen, "bad template name '%s' (1-63 of a-z, 0-9, '_', '-')", name);
		return -EINVAL;
	}
	rc = vmm_image_load(p->image, &img, err, errlen);
	if (rc < 0)
		return rc;
	vmm_spec_defaults(&spec);
	spec.image = &img;
	if (p->width)
		spec.width = p->width;
	if (p->height)
		spec.height = p->height;
	if (p->vcpus)
		spec.vcpus = p->vcpus;
	spec.memory_mib = p->memory_mib ? p->memory_mib : img.rootfs[0] ? 2048 : 256;
	/* A page alone is opened where the guest puts it. */
	spec.url = p->url ? p->url : p->page_file ? VMM_PAGE_URL : NULL;
	vopts.page_file = p->page_file;
	vopts.on_step = p->on_step;
	vopts.step_ud = p->step_ud;
	vmm_vm_opts_step(&vopts, VMM_STEP_RUN_DIR);
	if (vmm_accel_resolve(VMM_ACCEL_AUTO, &img, "qemu-system-x86_64", &spec.accel, why,
			      sizeof(why)) < 0) {
		snprintf(err, errlen, "no accelerator: %s", why);
		return -ENODEV;
	}
	rc = vmm_spec_check(&spec, err, errlen);
	if (rc < 0)
		return rc;
	snprintf(dir, sizeof(dir), "%s/%s", vmm_templates_dir(), name);
	rc = vmm_template_prepare(dir, &spec, ram, sizeof(ram), err, errlen);
	if (rc < 0)
		return rc;
	rc = vmm_vm_start(&spec, &vopts, &vm, err, errlen);
	if (rc == 0)
		vmm_vm_opts_step(&vopts, VMM_STEP_BOOT);
	if (rc == 0)
		rc = wait_ready(vm, p->timeout_s ? p->timeout_s : 180, cancel, err, errlen);
	/* Let the first paint and the guest's start-up work finish. */
	if (rc == 0)
		vmm_vm_opts_step(&vopts, VMM_STEP_SETTLE);
	until = fs_now_ms() + (int64_t)(p->settle_s < 0 ? 2 : p->settle_s) * 1000;
	while (rc == 0 && !(cancel && *cancel) && fs_now_ms() < until)
		rc = vmm_vm_service(vm, 200, err, errlen);
	if (rc == 0 && cancel && *cancel) {
		snprintf(err, errlen, "cancelled");
		rc = -EINTR;
	}
	if (rc == 0) {
		vmm_vm_opts_step(&vopts, VMM_STEP_SAVE);
		rc = vmm_template_save(vm, dir, err, errlen);
	}
	vmm_vm_destroy(vm);
	if (rc < 0)
		fs_rm_rf(dir);
	return rc;
}
