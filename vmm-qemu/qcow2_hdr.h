/* vmm-qemu/qcow2_hdr.h: a qcow2 image's header read without QEMU, so that
 * root never hands qemu-img (which opens whatever the header names) a disk
 * a guest's uid could have written before the header was checked (issue 25:
 * a forged backing-file name would copy any host file into a template).
 *
 * Parsing is pure (bytes in, fields out; unit-tested and fuzzed); the
 * policy (qcow2_hdr_check) is pure too; disk_check.h reads the bytes from
 * a file and walks a template's chain. Only what QEMU 7.2 itself accepts
 * is parsed: the header (version 2 or 3), its extensions up to the backing
 * file's name (or the end of the first cluster), and the name. */
#ifndef VITRINE_VMM_QCOW2_HDR_H
#define VITRINE_VMM_QCOW2_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QCOW2_BACKING_MAX 1023 /* QEMU's own limit on the name */
#define QCOW2_FMT_MAX 15 /* a backing format's name ("raw", "qcow2") */

/* Incompatible feature bits (the spec's). */
#define QCOW2_INCOMPAT_DIRTY (1ull << 0)
#define QCOW2_INCOMPAT_CORRUPT (1ull << 1)
#define QCOW2_INCOMPAT_DATA_FILE (1ull << 2)
#define QCOW2_INCOMPAT_COMPRESSION (1ull << 3)
#define QCOW2_INCOMPAT_EXTL2 (1ull << 4)

struct qcow2_hdr {
	uint32_t version; /* 2 or 3 */
	uint32_t cluster_bits; /* 9..21 */
	uint64_t size; /* the virtual disk's bytes */
	uint32_t crypt_method; /* 0: none */
	uint64_t incompat, compat, autoclear; /* 0 for version 2 */
	char backing[QCOW2_BACKING_MAX + 1]; /* "" when none */
	char backing_fmt[QCOW2_FMT_MAX + 1]; /* from its extension; "" when none */
	bool data_file; /* an external data file: the bit, or its extension */
	bool crypto_ext; /* an encryption header extension */
};

/* Reads the header in buf (n bytes, the file's start). Returns 0 with h
 * filled; -EPROTO when it is no qcow2 header QEMU would open (bad magic,
 * version, cluster size, header length, an extension past its end, a
 * backing name too long, outside the first cluster or holding a NUL);
 * -ENODATA when the header, its extensions or the name reach past n.
 * err says why. Pure. */
int qcow2_hdr_parse(const void *buf, size_t n, struct qcow2_hdr *h, char *err, size_t errlen);

/* Whether h is a disk root may hand to qemu-img: no external data file,
 * no encryption, no incompatible feature but dirty, compression type and
 * extended L2 (corrupt refused), and its backing file exactly backing
 * (format backing_fmt) — "" for none; NULL: any name, for a caller that
 * never opens the backing file (qemu-img rebase -u). Returns 0 or -EPERM
 * with err saying why. Pure. */
int qcow2_hdr_check(const struct qcow2_hdr *h, const char *backing, const char *backing_fmt,
		    char *err, size_t errlen);

#endif
