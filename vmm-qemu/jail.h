/* vmm-qemu/jail.h: what confines one guest's QEMU, Firecracker's jailer
 * in our terms: a uid of its own from a configured range (so that no QEMU
 * can reach another's run dir, and RLIMIT_NPROC counts one guest), a
 * network namespace with no interface, a mount namespace where the images
 * and templates are read-only (mount_ns.h), rlimits and a cgroup
 * (cgroup.h).
 * vm.c makes one per guest before it spawns QEMU (or the shim, which
 * applies it: shim_proto.h carries it on the command line).
 *
 * A uid is leased: an flock on LOCK_DIR/UID (default /run/vitrine/qemu-uids)
 * that the guest's holder keeps for QEMU's life (the shim, else the vm),
 * so that two live guests never share one, across processes and gateway
 * restarts, and a holder's death gives its uid back. Numeric uids and gids
 * (the gid is the uid's number) need no passwd entry.
 *
 * Without root, QEMU runs as the caller (as before), with the rlimits. As
 * root with no usable range QEMU is refused unless root was allowed, and
 * where no cgroup can be made guests are refused unless that was allowed
 * (--allow-no-cgroup): they would run unconfined, their memory, CPU and
 * processes bounded by nothing. */
#ifndef VITRINE_VMM_JAIL_H
#define VITRINE_VMM_JAIL_H

#include "vmm-qemu/cgroup.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/spec.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What deploy/install-deps.sh reserves (in /etc/subuid and /etc/subgid,
 * for vitrine-qemu) and `vitrine serve --qemu-uids` defaults to. */
#define VMM_QEMU_UIDS_DEFAULT "900000-900999"
#define VMM_QEMU_NOFILE 1024
#define VMM_QEMU_NPROC 256 /* QEMU's threads count: TCG vCPUs, I/O workers, VNC */

/* Process-wide, set once before any guest starts (vitrine serve's flags).
 * Unset, a first use reads $VITRINE_QEMU_UIDS (FIRST-LAST or "none",
 * default VMM_QEMU_UIDS_DEFAULT), $VITRINE_ALLOW_ROOT_QEMU=1 and
 * $VITRINE_ALLOW_NO_CGROUP=1. */
struct vmm_jail_config {
	uid_t first, last; /* 0, 0: no range */
	bool allow_root; /* QEMU may run as root when there is no range */
	bool allow_no_cgroup; /* guests may run without a cgroup when none can be made */
	bool no_cgroup; /* no cgroup per guest (tests that measure without) */
	bool no_netns; /* no network namespace (the same) */
	bool no_mntns; /* no mount namespace (the same) */
};

/* Parses "FIRST-LAST" (1 <= FIRST <= LAST < 2^31, at most 65536 uids) or
 * "none" (0, 0). Returns 0 or -EINVAL. Pure. */
int vmm_uid_range_parse(const char *s, uid_t *first, uid_t *last);

/* In /etc/subuid's or /etc/subgid's text ("name:start:count" lines), the
 * first range that overlaps first..last and is not vitrine-qemu's (the
 * installer's reservation): its line into who. Returns 1 when there is
 * one, else 0. Pure. */
int vmm_subid_overlap(const char *text, uid_t first, uid_t last, char *who, size_t len);

/* Checks that no passwd or group entry names a uid or gid in the range (a
 * QEMU would get that user's files) and that no other user's subordinate
 * ids (/etc/subuid, /etc/subgid: a container's users) overlap it (a fresh
 * lease kills what runs as its uid). Returns 0 or -EEXIST with the name in
 * err. */
int vmm_uid_range_check(uid_t first, uid_t last, char *err, size_t errlen);

void vmm_jail_configure(const struct vmm_jail_config *cfg);
/* The configuration in force (the environment's when none was set). */
void vmm_jail_config_get(struct vmm_jail_config *out);

/* RLIMIT_FSIZE for a guest: its disk overlay grows to at most the
 * rootfs's size (plus qcow2's metadata) and a checkpoint's stream holds
 * its RAM, so the largest file it may write is below the sum plus 1 GiB.
 * Pure. */
unsigned long long vmm_jail_fsize(unsigned long long rootfs_bytes, int memory_mib);

/* One guest's jail, owned by its vm (vm_int.h). */
struct vmm_guest_jail {
	bool drop; /* cred applies */
	struct vmm_cred cred;
	bool netns;
	bool mntns;
	char ro[VMM_MNTNS_MAX_RO][PATH_MAX]; /* real paths: the images, the templates */
	size_t n_ro;
	char rw[VMM_MNTNS_MAX_RW][PATH_MAX]; /* a template guest's RAM file among them */
	size_t n_rw;
	char keep[VMM_MNTNS_MAX_KEEP][PATH_MAX]; /* as QEMU names them: its run dir, ... */
	size_t n_keep;
	unsigned long long fsize;
	unsigned long nofile, nproc;
	struct vmm_cgroup cg; /* n_dirs 0: none */
	int lease_fd; /* owned: the flock on the uid; -1 */
};

/* The jail for a guest of spec whose run dir is run_dir (its last part
 * names the cgroup): a uid leased (root), the cgroup made (where the host
 * has none writable: -ENOTSUP, or a warning once and none when that is
 * allowed),
 * the namespaces asked for (a warning once for each the host cannot make:
 * guests then go without), the limits computed. The mount namespace makes
 * vmm_images_dir() and vmm_templates_dir() read-only where they exist,
 * except spec's RAM file when it is shared (a template's own guest), hides
 * the host's /tmp, /var/tmp, /dev/shm and /run, and keeps the run dir and
 * spec's files that lie elsewhere where they are. tpl_gid: a group for the clone's template RAM file
 * (-1 for none), added to its groups. Returns 0, -EPERM when QEMU would run
 * as root without leave, -EAGAIN when every uid of the range is leased, or
 * another -errno; err says which. Nothing is held on failure. */
int vmm_guest_jail_make(const struct vmm_spec *spec, const char *run_dir, gid_t tpl_gid,
			struct vmm_guest_jail *out, char *err, size_t errlen);

/* The jail as proc.h's spawn takes it (pointing into j). */
void vmm_guest_jail_view(const struct vmm_guest_jail *j, struct vmm_jail *out);

/* Gives the uid back (closes the lease) and removes the cgroup. Accepts a
 * zeroed j with lease_fd -1. */
void vmm_guest_jail_release(struct vmm_guest_jail *j);

/* Whether guests get a cgroup, as this process last found (the probe of
 * vmm_jail_report, then each guest's start); never asks the host itself,
 * so an event loop may call it. Not root, or cgroups turned off: NONE. */
enum vmm_jail_cgroups {
	VMM_JAIL_CGROUPS_YES, /* made per guest (or not asked yet) */
	VMM_JAIL_CGROUPS_NONE, /* guests run without one: unconfined */
	VMM_JAIL_CGROUPS_REFUSED, /* none can be made and that is not allowed */
};
enum vmm_jail_cgroups vmm_jail_cgroups(void);

/* What the jail cannot do on this host, for the gateway to say at start-up
 * (this layer logs nothing): a bad $VITRINE_QEMU_UIDS, a namespace kind
 * this process cannot give a child, no cgroup per guest. As root it asks
 * now (namespaces in a child, a cgroup made and removed); notes from
 * guests started since are kept too. One line each into out (len bytes,
 * cut short when long); returns how many. */
int vmm_jail_report(char *out, size_t len);

#endif
