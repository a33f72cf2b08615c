/* vmm-qemu/mount_ns.h: the mount namespace a guest's QEMU runs in, so that
 * an escaped QEMU finds the images and templates read-only whatever their
 * modes say, and none of the host's shared places: /tmp, /var/tmp and
 * /dev/shm are private tmpfs mounts of a bounded size, /run (and /var/run
 * when it is not a link to it) an empty one, so no host daemon's socket
 * (D-Bus, X11's /tmp/.X11-unix, containerd, ...) is there to connect to.
 * Abstract Unix sockets are per network namespace: QEMU's own (jail.h)
 * holds none of the host's. /dev is a tmpfs of its own with only the
 * nodes QEMU opens (null, zero, full, random, urandom, and kvm where the
 * host has it): no /dev/log (the host's syslog socket), no disks, no
 * host /dev/shm. Entered by the child between fork and exec
 * (proc.c), while it is still root; jail.c decides which paths and asks
 * once whether the host lets us make one at all. */
#ifndef VITRINE_VMM_MOUNT_NS_H
#define VITRINE_VMM_MOUNT_NS_H

#include <stddef.h>

/* Read-only dirs: the images and the templates. Writable exceptions
 * inside them: the RAM file of a template being built (its own guest maps
 * it shared and writes it). Kept dirs: what QEMU opens by name outside
 * them (its run dir; an image, a template disk or a RAM file loaded from
 * a path of its own), which stay where they are even under a hidden
 * place. */
#define VMM_MNTNS_MAX_RO 2
#define VMM_MNTNS_MAX_RW 1
#define VMM_MNTNS_MAX_KEEP 6

/* The size of each private /tmp, /var/tmp and /dev/shm (QEMU needs none:
 * its RAM is anonymous, a memfd or a template's file). */
#define VMM_MNTNS_TMP_MIB 16

/* Unshares the mount namespace, makes the whole tree a slave of the one
 * it came from (mounts and unmounts on the host still reach it, nothing
 * made here goes back), bind-mounts each of ro onto itself and remounts it
 * read-only, nosuid, nodev, then each of rw likewise writable again (a
 * bind inherits the read-only flag of the mount it sits in). Then hides
 * the host's places (above) under tmpfs mounts, after which each of ro
 * and keep that lay under one is mounted back at its own path (a clone
 * of it taken before, its read-only flag and mounts inside it included).
 * Paths must be absolute; ro and rw free of symlinks (jail.c resolves
 * them), keep as QEMU names them (a link on the way is followed to what
 * is cloned, and the name made of directories in the tmpfs).
 * Returns 0, or -1 with errno; the namespace is then half made, and the
 * caller must not exec. Async-signal-safe: only system calls, for a child
 * of a threaded process. */
int vmm_mntns_enter(const char *const ro[], size_t n_ro, const char *const rw[], size_t n_rw,
		    const char *const keep[], size_t n_keep);

#endif
