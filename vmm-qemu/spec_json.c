/* vmm-qemu/spec_json.c: see spec_json.h. */
#include "vmm-qemu/spec_json.h"

#include <errno.h>
#include <stdio.h>

json_t *vmm_spec_json(const struct vmm_spec *spec)
{
	return json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:s, s:s*, s:b, s:b}", "image_dir",
			 spec->image->dir, "width", spec->width, "height", spec->height, "vcpus",
			 spec->vcpus, "memory_mib", spec->memory_mib, "tb_size_mib",
			 spec->tb_size_mib, "accel", vmm_accel_name(spec->accel), "url", spec->url,
			 "disk", spec->image->rootfs[0] != '\0', "page", spec->has_page);
}

int vmm_spec_from_json(const json_t *j, struct vmm_spec *spec, const char **image_dir,
		       bool *has_disk, char *err, size_t errlen)
{
	const char *accel, *url = NULL;
	int disk = 0, page = 0;
	json_error_t jerr;

	vmm_spec_defaults(spec);
	if (json_unpack_ex((json_t *)j, &jerr, 0,
			   "{s:s, s:i, s:i, s:i, s:i, s:i, s:s, s?s, s:b, s:b}", "image_dir",
			   image_dir, "width", &spec->width, "height", &spec->height, "vcpus",
			   &spec->vcpus, "memory_mib", &spec->memory_mib, "tb_size_mib",
			   &spec->tb_size_mib, "accel", &accel, "url", &url, "disk", &disk, "page",
			   &page) < 0) {
		snprintf(err, errlen, "%s", jerr.text);
		return -EINVAL;
	}
	if (vmm_accel_parse(accel, &spec->accel) < 0) {
		snprintf(err, errlen, "unknown accelerator '%s'", accel);
		return -EINVAL;
	}
	spec->url = url;
	spec->has_page = page;
	*has_disk = disk;
	return 0;
}
