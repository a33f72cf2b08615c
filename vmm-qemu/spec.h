/* vmm-qemu/spec.h: what a guest is to look like; the input of argv.c and vm.c. */
#ifndef VITRINE_VMM_SPEC_H
#define VITRINE_VMM_SPEC_H

#include "vmm-qemu/image.h"

#include <stdbool.h>

enum vmm_accel { VMM_ACCEL_AUTO, VMM_ACCEL_KVM, VMM_ACCEL_TCG };

/* Limits enforced by vmm_spec_check(). */
#define VMM_MAX_VCPUS 16
#define VMM_MIN_MEMORY_MIB 128
#define VMM_MAX_MEMORY_MIB 32768
#define VMM_MIN_WIDTH 320
#define VMM_MAX_WIDTH 3840
#define VMM_MIN_HEIGHT 200
#define VMM_MAX_HEIGHT 2160
#define VMM_MAX_URL 1024
/* Where the guest puts the page handed over fw_cfg (docs/images.md). */
#define VMM_PAGE_URL "file:///run/vitrine/page.html"

/* The devices argv.c gives a guest, as a number: bumped whenever they
 * change, since saved state (templates) only loads into the same set. */
#define VMM_MACHINE_VERSION 3

struct vmm_spec {
	const struct vmm_image *image;
	enum vmm_accel accel; /* must be resolved (KVM or TCG) before argv */
	int vcpus;
	int memory_mib;
	int width, height;
	int tb_size_mib; /* TCG translation cache size; 0 means 256 */
	const char *url; /* start URL, NULL for about:blank */
	bool has_page; /* the run dir holds page.html, exposed as fw_cfg opt/vitrine/page */
	bool sandbox; /* -sandbox on with every deny option */
	/* Templates (snapshot.h). Guest RAM in this file (memory-backend-file)
	 * instead of anonymous memory, NULL for none; ram_share maps it shared
	 * (the template guest: its RAM is the file) or private copy-on-write (a
	 * clone: untouched pages stay shared with the other clones). */
	const char *ram_path;
	bool ram_share;
	bool incoming; /* -incoming defer: wait for migrate-incoming over QMP */
	const char *backing_disk; /* qcow2 the overlay is made on, instead of the rootfs */
	/* An existing overlay (a checkpoint's) linked into the run dir as the
	 * guest's disk instead of making a new one; NULL for none. The guest
	 * writes that very file (it is not copied unless it must be). */
	const char *adopt_disk;
};

/* Fills in defaults: 2 vcpus, 2048 MiB (256 without a rootfs), 1280x800. */
void vmm_spec_defaults(struct vmm_spec *spec);

/* Checks every field against the limits above. Returns 0 or -EINVAL with a
 * sentence in err naming the field. Pure. */
int vmm_spec_check(const struct vmm_spec *spec, char *err, size_t errlen);

const char *vmm_accel_name(enum vmm_accel a);
/* Parses "auto", "kvm" or "tcg". Returns 0 or -EINVAL. */
int vmm_accel_parse(const char *s, enum vmm_accel *out);

#endif
