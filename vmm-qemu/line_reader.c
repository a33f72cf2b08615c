/* vmm-qemu/line_reader.c: see line_reader.h. */
#include "vmm-qemu/line_reader.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void line_reader_init(struct line_reader *r, int reset_byte)
{
	memset(r, 0, sizeof(*r));
	r->reset_byte = reset_byte;
}

void line_reader_free(struct line_reader *r)
{
	bytebuf_free(&r->buf);
	r->returned = false;
}

void line_reader_reset(struct line_reader *r)
{
	r->buf.len = 0;
	r->returned = false;
}

static void take(const char **bytes, size_t *len, size_t n)
{
	*bytes += n;
	*len -= n;
}

int line_reader_next(struct line_reader *r, size_t max, const char **bytes, size_t *len,
		     const char **line, size_t *line_len, char *err, size_t errlen)
{
	if (r->returned)
		line_reader_reset(r);
	while (*len > 0) {
		const char *p = *bytes;
		const char *nl = memchr(p, '\n', *len);
		size_t seg = nl ? (size_t)(nl - p) : *len;
		const char *reset = r->reset_byte >= 0 ? memchr(p, r->reset_byte, seg) : NULL;

		if (reset) {
			r->buf.len = 0;
			take(bytes, len, (size_t)(reset - p) + 1);
			continue;
		}
		/* The bound comes before any copy: a guest cannot grow buf past max. */
		if (r->buf.len + seg > max) {
			r->buf.len = 0;
			take(bytes, len, seg + (nl ? 1 : 0));
			if (errlen)
				snprintf(err, errlen, "line longer than %zu bytes", max);
			return -EMSGSIZE;
		}
		if (nl && r->buf.len == 0) {
			*line = p; /* whole in the input: no copy */
			*line_len = seg;
			take(bytes, len, seg + 1);
			return 1;
		}
		if (bytebuf_append(&r->buf, p, seg) < 0) {
			r->buf.len = 0;
			take(bytes, len, seg + (nl ? 1 : 0));
			if (errlen)
				snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		take(bytes, len, seg + (nl ? 1 : 0));
		if (nl) {
			*line = r->buf.data;
			*line_len = r->buf.len;
			r->returned = true;
			return 1;
		}
	}
	return 0;
}
