/* vmm-qemu/disk_check.h: a guest's disk checked before root lets qemu-img
 * near it. A session's overlay (disk.qcow2) is written by QEMU as the
 * guest's uid, so an escaped QEMU can rewrite its header: name any host
 * file as its backing file, or an external data file. qemu-img run as root
 * (a template's chain flattened, an export's disk) would then read that
 * file and copy it into a world-readable template or a .vtpl. Every disk
 * that leaves a run dir for a template, or that qemu-img opens as root, is
 * first checked here (qcow2_hdr.h): its backing file must be exactly the
 * one Vitrine gave it, and the chain below it too.
 *
 * Blocking (a read of 64 KiB per layer): job threads and the bulk queue. */
#ifndef VITRINE_VMM_DISK_CHECK_H
#define VITRINE_VMM_DISK_CHECK_H

#include "vmm-qemu/image.h"

#include <stddef.h>

/* Layers vmm_disk_check_chain() walks at most before it refuses. */
#define VMM_DISK_CHAIN_WALK_MAX 16

/* Reads the qcow2 header at path (a regular file, never through a link)
 * and checks it (qcow2_hdr_check: backing NULL for any name, "" for none).
 * Returns 0, -EPERM (refused: a forged header, or anything QEMU would read
 * outside the file), -EPROTO (no qcow2 header, or one reaching past its
 * first 64 KiB), or -errno; err names the file and says why. */
int vmm_disk_check(const char *path, const char *backing, const char *backing_fmt, char *err,
		   size_t errlen);

/* Checks the chain under disk: its backing file must be the disk.qcow2 of
 * the template called on (NULL or "": img's rootfs, raw), and each
 * template's disk in turn names its own backing (template.json's) down to
 * the rootfs. Returns 0 or what vmm_disk_check() returns (-ENOENT: a
 * template of the chain is gone), err says why. */
int vmm_disk_check_chain(const char *disk, const char *on, const struct vmm_image *img, char *err,
			 size_t errlen);

#endif
