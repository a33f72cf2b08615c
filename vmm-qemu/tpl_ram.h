/* vmm-qemu/tpl_ram.h: a template's RAM as a sealed memfd, so that clones
 * cannot write their template (issue 13, item 3). QEMU 7.2 opens a
 * memory-backend-file read-write even to map it private, so a clone given
 * the RAM file could write it; given /proc/self/fd/N of a memfd sealed
 * with F_SEAL_WRITE it opens the memfd instead, maps it private
 * (copy-on-write, which the seal allows) and cannot write it: write(2),
 * a shared writable mapping, growing and shrinking all fail. The RAM file
 * itself stays root's and read-only. One memfd per template file (by
 * device, inode, size and mtime) per process, filled once from the file
 * (its zero blocks left as holes) and shared by every clone, whose QEMU
 * keeps its own descriptor: a clone outlives the gateway that made it. */
#ifndef VITRINE_VMM_TPL_RAM_H
#define VITRINE_VMM_TPL_RAM_H

#include <stddef.h>

/* A descriptor of the sealed memfd holding ram_path's bytes, the caller's
 * to close (close-on-exec; hand it to QEMU as an inherited fd). Made on
 * the first call for that file; entries whose file is gone or changed are
 * dropped. Returns the fd or -errno with err. Thread-safe. */
int vmm_tpl_ram_fd(const char *ram_path, char *err, size_t errlen);

#endif
