/* common/bytebuf.h: a growable byte buffer, for the line protocols (QMP,
 * the guest agent) that collect a line across reads, and for texts built
 * piece by piece (CSV, ffmpeg's frame list). */
#ifndef VITRINE_COMMON_BYTEBUF_H
#define VITRINE_COMMON_BYTEBUF_H

#include <stddef.h>

struct bytebuf {
	char *data; /* owned */
	size_t len, cap;
};

/* Appends len bytes, growing geometrically. Returns 0 or -ENOMEM (the
 * buffer is unchanged then). */
int bytebuf_append(struct bytebuf *b, const void *bytes, size_t len);
/* Appends printf-formatted text, growing as needed; the text stays
 * NUL-terminated after len (so data is a C string once anything was
 * added). Returns 0 or -ENOMEM (b unchanged then). */
int bytebuf_printf(struct bytebuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees the storage and empties b. Accepts an empty b. */
void bytebuf_free(struct bytebuf *b);

#endif
