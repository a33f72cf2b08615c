/* vmm-qemu/spec.c: see spec.h. */
#include "vmm-qemu/spec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void vmm_spec_defaults(struct vmm_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->accel = VMM_ACCEL_AUTO;
	spec->vcpus = 2;
	spec->memory_mib = 2048;
	spec->width = 1280;
	spec->height = 800;
	spec->sandbox = true;
}

int vmm_spec_check(const struct vmm_spec *spec, char *err, size_t errlen)
{
	if (!spec->image) {
		snprintf(err, errlen, "no image given");
		return -EINVAL;
	}
	if (spec->vcpus < 1 || spec->vcpus > VMM_MAX_VCPUS) {
		snprintf(err, errlen, "vcpus must be 1..%d, not %d", VMM_MAX_VCPUS, spec->vcpus);
		return -EINVAL;
	}
	if (spec->memory_mib < VMM_MIN_MEMORY_MIB || spec->memory_mib > VMM_MAX_MEMORY_MIB) {
		snprintf(err, errlen, "memory_mib must be %d..%d, not %d", VMM_MIN_MEMORY_MIB,
			 VMM_MAX_MEMORY_MIB, spec->memory_mib);
		return -EINVAL;
	}
	if (spec->width < VMM_MIN_WIDTH || spec->width > VMM_MAX_WIDTH ||
	    spec->height < VMM_MIN_HEIGHT || spec->height > VMM_MAX_HEIGHT) {
		snprintf(err, errlen, "screen must be %dx%d..%dx%d, not %dx%d", VMM_MIN_WIDTH,
			 VMM_MIN_HEIGHT, VMM_MAX_WIDTH, VMM_MAX_HEIGHT, spec->width, spec->height);
		return -EINVAL;
	}
	if (spec->url && strlen(spec->url) > VMM_MAX_URL) {
		snprintf(err, errlen, "url longer than %d bytes", VMM_MAX_URL);
		return -EINVAL;
	}
	if (spec->tb_size_mib < 0 || spec->tb_size_mib > 4096) {
		snprintf(err, errlen, "tb_size_mib must be 0..4096");
		return -EINVAL;
	}
	if (spec->accel == VMM_ACCEL_AUTO) {
		snprintf(err, errlen, "accelerator not resolved (auto)");
		return -EINVAL;
	}
	return 0;
}

const char *vmm_accel_name(enum vmm_accel a)
{
	switch (a) {
	case VMM_ACCEL_KVM:
		return "kvm";
	case VMM_ACCEL_TCG:
		return "tcg";
	case VMM_ACCEL_AUTO:
		break;
	}
	return "auto";
}

int vmm_accel_parse(const char *s, enum vmm_accel *out)
{
	if (!strcmp(s, "auto"))
		*out = VMM_ACCEL_AUTO;
	else if (!strcmp(s, "kvm"))
		*out = VMM_ACCEL_KVM;
	else if (!strcmp(s, "tcg"))
		*out = VMM_ACCEL_TCG;
	else
		return -EINVAL;
	return 0;
}
