/* vmm-qemu/tpl_export.h: a template as one export file (tpl_archive.h),
 * made as it is read so that nothing the size of the template is built in
 * memory or on disk: tpl_export_open() (blocking: a disk on a chain of
 * templates is flattened onto the image's rootfs first, with qemu-img)
 * opens every file, and tpl_export_read() hands out the archive's bytes
 * in order, hashing the members as they pass, so the SHA256SUMS member at
 * the end is known when it is reached. The open descriptors keep the
 * files' bytes even if the template is deleted meanwhile. */
#ifndef VITRINE_VMM_TPL_EXPORT_H
#define VITRINE_VMM_TPL_EXPORT_H

#include <stddef.h>
#include <stdint.h>

struct tpl_export;

/* Opens template name (of vmm_templates_dir()) for export. Blocking: a job
 * thread's. Returns 0 with *out (the caller's: tpl_export_free), or -errno
 * with a reason in err: -ENOENT (no such template), -ESTALE (its image is
 * gone or rebuilt: it could not be restored anywhere), others. Nothing is
 * left behind on failure. */
int tpl_export_open(const char *name, struct tpl_export **out, char *err, size_t errlen);

/* The file's size in bytes. */
uint64_t tpl_export_size(const struct tpl_export *x);

/* Copies up to cap bytes of the file from off into buf; reads must come
 * in order (off the end of the last one). Returns how many: cap, fewer at
 * the end, 0 for a read out of order or a file that shrank (the answer is
 * then cut, and an import of it refused). Reads a file's page cache: fast
 * enough for the lws loop in 64 KiB chunks. */
size_t tpl_export_read(void *x, uint64_t off, unsigned char *buf, size_t cap);

/* Closes everything. Accepts NULL. */
void tpl_export_free(void *x);

#endif
