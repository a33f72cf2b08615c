/* common/tar.h: an uncompressed ustar archive as a pure function of its
 * members, offset -> bytes, so a server can send a large archive chunk by
 * chunk without ever holding it whole (the trajectory export,
 * docs/trajectory.md). Each member is a 512-byte header and its bytes
 * padded with NULs to a multiple of 512; the archive ends with two zero
 * blocks. A member's bytes are a list of pieces (pointers the caller keeps
 * alive while the archive is read). No I/O; any thread. */
#ifndef VITRINE_COMMON_TAR_H
#define VITRINE_COMMON_TAR_H

#include <stddef.h>
#include <stdint.h>

#define TAR_BLOCK 512
#define TAR_NAME_MAX 99 /* ustar's name field, without a prefix, NUL kept */

struct tar_piece {
	const void *data;
	size_t len;
};

struct tar_member {
	char name[TAR_NAME_MAX + 1]; /* a regular file's path, relative, '/'-separated */
	int64_t mtime; /* Unix seconds */
	const struct tar_piece *pieces; /* borrowed, n_pieces of them */
	size_t n_pieces;
	/* Filled by tar_layout: */
	uint64_t size; /* sum of the pieces */
	uint64_t offset; /* of its header in the archive */
};

/* Computes each member's size and offset. Returns the archive's total size
 * (members, padding and the two zero blocks: at least 1024), or 0 when a
 * name is empty, too long or a size does not fit ustar's 11 octal digits. */
uint64_t tar_layout(struct tar_member *m, size_t n);

/* Writes member m's 512-byte ustar header (mode 0644, uid/gid 0, owner
 * "vitrine") into out. Can't fail once tar_layout has accepted m. */
void tar_header(const struct tar_member *m, unsigned char out[TAR_BLOCK]);

/* Copies up to cap bytes of the archive laid out by tar_layout (n members
 * of total bytes) from offset off into buf. Returns the number copied:
 * cap, or fewer only at the end (0 at or past total). */
size_t tar_read(const struct tar_member *m, size_t n, uint64_t total, uint64_t off,
		unsigned char *buf, size_t cap);

#endif
