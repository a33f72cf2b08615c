/* common/bytebuf.c: see bytebuf.h. */
#include "common/bytebuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int bytebuf_append(struct bytebuf *b, const void *bytes, size_t len)
{
	if (len == 0)
		return 0;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *n;

		while (cap < b->len + len)
			cap *= 2;
		n = realloc(b->data, cap);
		if (!n)
			return -ENOMEM;
		b->data = n;
		b->cap = cap;
	}
	memcpy(b->data + b->len, bytes, len);
	b->len += len;
	return 0;
}

void bytebuf_free(struct bytebuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
