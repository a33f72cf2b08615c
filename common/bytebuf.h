/* common/bytebuf.h: a growable byte buffer, for the line protocols (QMP,
 * the guest agent) that collect a line across reads. */
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
/* Frees the storage and empties b. Accepts an empty b. */
void bytebuf_free(struct bytebuf *b);

#endif
