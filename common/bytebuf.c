/* common/bytebuf.c: see bytebuf.h. */
#include "common/bytebuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

int bytebuf_printf(struct bytebuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->data ? b->data + b->len : NULL, b->data ? b->cap - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (!b->data || (size_t)n >= b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;
		char *more;

		while (cap < b->len + (size_t)n + 1)
			cap *= 2;
		if (!(more = realloc(b->data, cap)))
			return -ENOMEM;
		b->data = more;
		b->cap = cap;
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
	return 0;
}

void bytebuf_free(struct bytebuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
