/* vmm-qemu/tpl_archive.h: a template's export file (GET
 * /v1/templates/{name}/export, POST /v1/templates/import), its layout and
 * its reader, as pure functions over bytes so that the reader, which takes
 * whatever a client uploads, is unit-tested and fuzzed (fuzz_tpl_archive).
 *
 * The file is an uncompressed ustar archive (common/tar.h) of:
 *   template.json  first, at most TPL_ARCHIVE_META_MAX bytes (the
 *                  template's metadata, its disk's chain flattened)
 *   ram, state     required, in any order after it, as are the optional
 *   disk.qcow2, page.html, screen.ppm
 *   SHA256SUMS     last: one line "HEX  NAME\n" per member before it, in
 *                  their order (sha256sum's format)
 * then the two zero blocks (more zero bytes are allowed after them, as
 * tar pads to its records; anything else is refused). Every member a
 * regular file, each name at most once. */
#ifndef VITRINE_VMM_TPL_ARCHIVE_H
#define VITRINE_VMM_TPL_ARCHIVE_H

#include "common/sha256.h"
#include "common/tar.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TPL_ARCHIVE_META_MAX (64u << 10)
#define TPL_ARCHIVE_SUMS_MAX 1024u

enum tpl_file {
	TPL_FILE_META, /* template.json */
	TPL_FILE_RAM,
	TPL_FILE_STATE,
	TPL_FILE_DISK,
	TPL_FILE_PAGE,
	TPL_FILE_SCREEN,
	TPL_FILE_SUMS, /* SHA256SUMS */
	TPL_FILE_COUNT,
};

/* Each member's name, index = enum tpl_file. */
extern const char *const tpl_file_names[TPL_FILE_COUNT];

/* The SHA256SUMS text for the members marked in present (TPL_FILE_META up
 * to TPL_FILE_SCREEN, in enum order) with their digests, into out (cap
 * bytes, NUL-terminated). Returns its length (the same for any digests),
 * or 0 when it does not fit. */
size_t tpl_archive_sums(const bool present[TPL_FILE_COUNT],
			const uint8_t digest[TPL_FILE_COUNT][SHA256_LEN], char *out, size_t cap);

/* Where the reader hands a member's bytes: begin (size bytes follow),
 * data (in order, in pieces of any size), end. Each returns 0, or -1 to
 * stop (with a reason in err, errlen bytes). */
struct tpl_unpack_ops {
	int (*begin)(void *ud, enum tpl_file f, uint64_t size, char *err, size_t errlen);
	int (*data)(void *ud, enum tpl_file f, const void *p, size_t n, char *err, size_t errlen);
	int (*end)(void *ud, enum tpl_file f, char *err, size_t errlen);
};

enum tpl_unpack_state {
	TPL_UNPACK_HEADER, /* collecting a member's header */
	TPL_UNPACK_DATA,
	TPL_UNPACK_PAD,
	TPL_UNPACK_TRAILER, /* the two zero blocks after SHA256SUMS */
	TPL_UNPACK_DONE,
	TPL_UNPACK_BROKEN,
};

/* The reader; embed or allocate it, tpl_unpack_init before use. It holds
 * no resource: nothing to free. */
struct tpl_unpack {
	enum tpl_unpack_state state;
	const struct tpl_unpack_ops *ops; /* borrowed; may be NULL (only checks) */
	void *ud;
	unsigned char block[TAR_BLOCK]; /* a header or trailer block so far */
	size_t n_block;
	int n_zero_blocks; /* of the trailer */
	enum tpl_file cur;
	uint64_t left; /* of the current member's data, or of its padding */
	int n_members;
	bool seen[TPL_FILE_COUNT];
	struct sha256_ctx sha;
	uint8_t digest[TPL_FILE_COUNT][SHA256_LEN];
	char sums[TPL_ARCHIVE_SUMS_MAX + 1]; /* SHA256SUMS as it came */
	size_t n_sums;
	uint64_t total; /* bytes taken */
	char err[256]; /* why it is broken */
};

void tpl_unpack_init(struct tpl_unpack *u, const struct tpl_unpack_ops *ops, void *ud);

/* Takes the next n bytes of the file. Returns 0, or -1 once the file is
 * refused (u->err says why; every later call returns -1 too). This
 * function does no I/O but through ops. */
int tpl_unpack_feed(struct tpl_unpack *u, const void *p, size_t n);

/* At the end of the file: 0 when it came whole (the trailer seen, every
 * checksum right), else -1 with u->err ("truncated ..." for a file that
 * stops early). */
int tpl_unpack_finish(struct tpl_unpack *u);

#endif
