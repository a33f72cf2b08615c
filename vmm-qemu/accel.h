/* vmm-qemu/accel.h: choosing KVM or TCG.
 *
 * A /dev/kvm that opens is not proof that KVM works: under nested
 * para-virtualised KVM (as on the machines this was built on) QEMU aborts on
 * MSR set-up, or a guest kernel hangs without printing a line. So the probe
 * boots the image's kernel under KVM and waits, bounded, for its first console
 * line. The verdict is cached per host kernel, QEMU binary and guest kernel. */
#ifndef VITRINE_VMM_ACCEL_H
#define VITRINE_VMM_ACCEL_H

#include "vmm-qemu/spec.h"

/* Default bound of the probe; VITRINE_KVM_PROBE_MS overrides it. */
#define VMM_KVM_PROBE_MS 6000

/* Resolves want (AUTO, KVM or TCG) to KVM or TCG for guests of img.
 * AUTO falls back to TCG, with the reason in why. KVM fails (-ENODEV, reason
 * in why) when KVM does not work. TCG always succeeds. Returns 0 or -errno. */
int vmm_accel_resolve(enum vmm_accel want, const struct vmm_image *img, const char *qemu_bin,
		      enum vmm_accel *out, char *why, size_t whylen);

#endif
