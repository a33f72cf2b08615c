/* vmm-qemu/tpl_import.h: an export file (tpl_archive.h) taken back as a
 * template, written to disk as it arrives (never held in memory) into a
 * staging directory beside the templates ($VITRINE_HOME/templates/
 * .import-XXXXXX, which no listing shows), checked, and only then renamed
 * to its name. Refused, it leaves nothing: tpl_import_free removes the
 * staging directory of an import not installed.
 *
 * What is checked (docs/api.md, "Export and import rules"): the archive's
 * form and every member's SHA-256 (a corrupt or truncated file); that the
 * name is free; and that this host can restore it: the same image, built
 * from the same recipe, the same machine version (VMM_MACHINE_VERSION),
 * its accelerator available, its RAM file the size of its memory, its
 * disk a plain qcow2 (no external data file), rebased onto this host's
 * copy of the image's rootfs. */
#ifndef VITRINE_VMM_TPL_IMPORT_H
#define VITRINE_VMM_TPL_IMPORT_H

#include <stddef.h>

struct tpl_import;

/* Starts importing a template to be called name. Fast (a mkdtemp): the
 * lws loop may call it. Returns 0 with *out (the caller's:
 * tpl_import_free), or -EINVAL (a bad name), -EEXIST (a template of that
 * name exists), -errno; err says why. */
int tpl_import_begin(const char *name, struct tpl_import **out, char *err, size_t errlen);

/* Takes the next n bytes of the file (written to the staging files in
 * 64 KiB writes, zero pages left as holes: fast enough for the loop).
 * Returns 0, or -1 once the file is refused (tpl_import_error says why;
 * the rest is then ignored). */
int tpl_import_write(struct tpl_import *im, const void *p, size_t n);

/* Why the file was refused, "" while it was not. */
const char *tpl_import_error(const struct tpl_import *im);

/* At the end of the file: checks it whole, checks it fits this host,
 * installs it. Blocking (qemu-img; a KVM probe for a KVM template): a job
 * thread's. Returns 0 (the template exists), -EPROTO (corrupt or
 * truncated), -ESTALE (made for another image build, machine or
 * accelerator), -EEXIST (the name was taken meanwhile), or -errno; err
 * says why. */
int tpl_import_finish(struct tpl_import *im, char *err, size_t errlen);

/* The template's name. */
const char *tpl_import_name(const struct tpl_import *im);

/* Removes the staging directory unless the import was installed, and
 * frees im. Accepts NULL. */
void tpl_import_free(struct tpl_import *im);

#endif
