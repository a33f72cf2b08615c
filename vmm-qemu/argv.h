/* vmm-qemu/argv.h: a session spec turned into a QEMU command line. Pure: no
 * files are touched, so every rule here is unit-tested. */
#ifndef VITRINE_VMM_ARGV_H
#define VITRINE_VMM_ARGV_H

#include "common/strv.h"
#include "vmm-qemu/spec.h"

/* Builds the argv (argv[0] is qemu_bin) for spec, with every socket, log and
 * disk inside run_dir: the sockets of run_dir.h, serial.log, disk.qcow2,
 * page.html. Returns 0, or -EINVAL (err says why), -ENAMETOOLONG (run_dir
 * too long for a socket name) or -ENOMEM. On error out is left empty. */
int vmm_argv_build(const struct vmm_spec *spec, const char *qemu_bin, const char *run_dir,
		   struct strv *out, char *err, size_t errlen);

/* Writes url into out percent-encoding every byte a kernel command line or a
 * shell would split on or interpret (controls, space, non-ASCII, quotes,
 * backslash, backquote, '<', '>'); '%' and other URL syntax stay as given.
 * Returns 0, or -ENOSPC when out is too small. */
int vmm_url_encode_cmdline(const char *url, char *out, size_t outlen);

#endif
