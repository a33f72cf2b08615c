/* gateway/e2b/proc_output.h: the output an E2B process keeps for its
 * streams (sandbox.h), bounded in the memory it really takes: each
 * chunk's header, its allocation's slack and the table that finds it
 * count, not only its bytes, so that a guest writing 1 byte at a time
 * cannot make 4 MiB of output cost 200 MiB. Consecutive pieces of one
 * stream (stdout or stderr) join the same chunk; past the bound the
 * oldest chunks go. Readers hold a cursor (an offset in everything the
 * process wrote) and copy a bounded slice from it; a reader whose cursor
 * is older than what is kept has lost output, and is told. Pure: no
 * locks (the caller's), no I/O; unit-tested (tests/unit/test_e2b_output.c). */
#ifndef VITRINE_GATEWAY_E2B_PROC_OUTPUT_H
#define VITRINE_GATEWAY_E2B_PROC_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A chunk grows (by joining pieces) up to this; a piece larger comes as
 * a chunk of its own size. */
#define E2B_OUT_CHUNK_MAX (16u * 1024)
/* What an allocation costs beyond what was asked, counted per chunk
 * (glibc's header and rounding). */
#define E2B_OUT_MALLOC_SLACK 16u

struct e2b_out_chunk {
	uint64_t start; /* the offset of data[0] in the process's output */
	size_t len, cap;
	bool err; /* stderr, else stdout */
	unsigned char data[];
};

/* Zeroed is empty. */
struct e2b_out {
	struct e2b_out_chunk **ring; /* owned, as are its chunks: a ring of ring_cap (a power of
				      * two), n of them from first, oldest first */
	size_t ring_cap, first, n;
	uint64_t start; /* the offset of the oldest byte kept */
	uint64_t end; /* the offset after the last byte written */
	size_t bytes; /* accounted: chunks with their headers and slack, and the ring */
};

/* One piece of a slice: len bytes at off in its data, of one stream. */
struct e2b_out_piece {
	bool err;
	size_t off, len;
};

/* Appends n bytes of stream err, then drops the oldest chunks while
 * more than limit bytes are accounted (the newest chunk always stays).
 * 0, or -ENOMEM (the bytes are dropped, counted in o->end all the same:
 * readers see them as lost). */
int e2b_out_add(struct e2b_out *o, size_t limit, bool err, const void *d, size_t n);
/* Copies what follows *cursor, at most max bytes in at most max_pieces
 * pieces (each of one stream, in order), to data and pieces; advances
 * *cursor past it. Returns the number of pieces (0: nothing new), or
 * -ESPIPE when *cursor is older than what is kept (*cursor is left as it
 * was; o->start says where the kept output begins). */
int e2b_out_read(const struct e2b_out *o, uint64_t *cursor, unsigned char *data, size_t max,
		 struct e2b_out_piece *pieces, int max_pieces);
/* Frees what o keeps; o is empty again. */
void e2b_out_free(struct e2b_out *o);

#endif
