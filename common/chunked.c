/* common/chunked.c: see chunked.h. */
#include "common/chunked.h"

#include <errno.h>
#include <string.h>

enum {
	C_SIZE, /* hex digits */
	C_EXT, /* after the size: an extension, up to LF */
	C_DATA,
	C_DATA_CR,
	C_DATA_LF,
	C_TRAILER, /* lines until an empty one */
	C_DONE,
	C_BROKEN,
};

static int hex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long chunked_decode(struct chunked *c, const void *in_, size_t len, void *out_)
{
	const unsigned char *in = in_;
	unsigned char *out = out_;
	size_t i = 0, o = 0;

	while (i < len) {
		unsigned char b = in[i];

		switch (c->state) {
		case C_SIZE:
			if (hex(b) >= 0) {
				if (++c->digits > 15)
					goto broken;
				c->left = c->left * 16 + (uint64_t)hex(b);
				i++;
				break;
			}
			if (!c->digits)
				goto broken;
			c->state = C_EXT;
			break;
		case C_EXT:
			i++;
			if (b == '\n') {
				c->digits = 0;
				if (c->left) {
					c->state = C_DATA;
				} else {
					c->state = C_TRAILER;
					c->line_empty = true;
				}
			}
			break;
		case C_DATA: {
			size_t n = len - i < c->left ? len - i : (size_t)c->left;

			memmove(out + o, in + i, n);
			o += n;
			i += n;
			c->left -= n;
			if (!c->left)
				c->state = C_DATA_CR;
			break;
		}
		case C_DATA_CR:
			if (b != '\r')
				goto broken;
			i++;
			c->state = C_DATA_LF;
			break;
		case C_DATA_LF:
			if (b != '\n')
				goto broken;
			i++;
			c->state = C_SIZE;
			break;
		case C_TRAILER:
			i++;
			if (b == '\n') {
				if (c->line_empty)
					c->state = C_DONE;
				c->line_empty = true;
			} else if (b != '\r') {
				c->line_empty = false;
			}
			break;
		default:
			goto broken;
		}
	}
	return (long)o;
broken:
	c->state = C_BROKEN;
	return -EPROTO;
}

bool chunked_done(const struct chunked *c)
{
	return c->state == C_DONE;
}
