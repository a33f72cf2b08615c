/* vmm-qemu/cgroup.h: a cgroup per guest, so that one QEMU's memory, CPU
 * and process count are bounded apart from the others' and the gateway's.
 * cgroup v2 where the host has a writable hierarchy with the memory and
 * pids controllers delegated to us, else v1 (the memory, cpu and pids
 * hierarchies, each on its own); in either a vitrine/ folder under the
 * cgroup the caller is in, and one folder per guest in it, named after
 * its run dir. On v2 the caller moves itself into vitrine-gateway/ beside
 * vitrine/ when its own cgroup may not hand controllers down while it
 * holds the caller (v2's "no internal processes"). The v2 path has run
 * against a fake hierarchy only (tests/unit/test_cgroup_v2.c). The guest's QEMU joins it between fork and exec
 * (proc.h: vmm_jail.cgroups); whoever reaps QEMU removes it (the shim,
 * or vmm_vm_destroy). The limits are pure arithmetic, unit-tested. */
#ifndef VITRINE_VMM_CGROUP_H
#define VITRINE_VMM_CGROUP_H

#include "vmm-qemu/proc.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* QEMU's own memory beside guest RAM and the TCG code buffer: its
 * anonymous memory outside those two, measured under TCG by `make
 * bench-isolation`, was 86 MiB for the tiny guest (1 vCPU, 256 MiB) and
 * 326 MiB for the desktop (2 vCPUs, 2 GiB, Chromium up), growing with
 * the vCPUs (each has its own softmmu TLBs, which TCG sizes to the
 * working set). The margin: a base and a share per vCPU, half again over
 * what was measured. */
#define VMM_CGROUP_OVERHEAD_MIB 256
#define VMM_CGROUP_OVERHEAD_VCPU_MIB 128
#define VMM_CGROUP_PIDS 256

struct vmm_cgroup_limits {
	unsigned long long memory_bytes;
	int vcpus; /* cpu quota: this many CPUs' worth; weight/shares in proportion */
	int pids;
};

struct vmm_cgroup {
	bool v2;
	char dirs[VMM_JAIL_MAX_CGROUPS][PATH_MAX]; /* one (v2) or one per v1 hierarchy */
	size_t n_dirs;
};

/* The limits for a guest of memory_mib MiB with vcpus vCPUs whose TCG code
 * buffer is tb_mib MiB (0 under KVM): memory RAM + code buffer +
 * VMM_CGROUP_OVERHEAD_MIB + VMM_CGROUP_OVERHEAD_VCPU_MIB per vCPU. Pure. */
void vmm_cgroup_limits_for(int memory_mib, int vcpus, int tb_mib, struct vmm_cgroup_limits *out);

/* Creates the cgroup `name` (e.g. "vm-abc123") with lim and fills out.
 * Returns 0, -ENOTSUP when no hierarchy with the memory and pids
 * controllers is writable (err says what was tried: the caller warns and
 * goes on without), or another -errno with err (what was made is
 * removed). */
int vmm_cgroup_create(const char *name, const struct vmm_cgroup_limits *lim, struct vmm_cgroup *out,
		      char *err, size_t errlen);

/* Removes the guest's cgroup dirs (given as strings: the shim has them
 * from its command line), killing what is left in them first (cgroup.kill
 * on v2, SIGKILL to each pid on v1) and retrying briefly while the
 * processes go. Best effort; this function can't fail. */
void vmm_cgroup_remove(const char *const dirs[], size_t n);

/* vmm_cgroup_remove for the dirs of cg (as vmm_cgroup_create filled it),
 * which then holds none. */
void vmm_cgroup_release(struct vmm_cgroup *cg);

/* Removes the cgroup `name` where it is empty, in every hierarchy it may
 * be in: for a run dir swept because its owner died (sweep.c) before it
 * removed its guest's cgroup. Never kills. Best effort. */
void vmm_cgroup_sweep(const char *name);

#endif
