/* vmm-qemu/spec_json.h: a guest's spec as JSON, for the files that describe
 * a guest on disk and are read back by another process: a checkpoint's
 * checkpoint.json (checkpoint.h) and a run dir's vm.json (vm_state.c).
 * One writer and one reader, so that both files say the same thing the
 * same way. Pure. */
#ifndef VITRINE_VMM_SPEC_JSON_H
#define VITRINE_VMM_SPEC_JSON_H

#include "vmm-qemu/spec.h"

#include <jansson.h>
#include <stdbool.h>

/* {"image_dir", "width", "height", "vcpus", "memory_mib", "tb_size_mib",
 * "accel", "url" (when set), "disk" (the image has a rootfs), "page"
 * (has_page)}. Returns a new object, or NULL when out of memory. */
json_t *vmm_spec_json(const struct vmm_spec *spec);

/* Reads such an object into spec (filled with vmm_spec_defaults() first;
 * spec->image is left NULL for the caller to load from *image_dir).
 * *image_dir and spec->url point into j (the caller copies what it keeps).
 * Returns 0, or -EINVAL with a reason in err. */
int vmm_spec_from_json(const json_t *j, struct vmm_spec *spec, const char **image_dir,
		       bool *has_disk, char *err, size_t errlen);

#endif
