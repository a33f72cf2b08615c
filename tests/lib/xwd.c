/* tests/lib/xwd.c: see xwd.h. Layout: X11's XWDFileHeader (25 big-endian
 * CARD32 fields), the window name, ncolors 12-byte XWDColor entries, then
 * the rows, bytes_per_line apart. */
#include "tests/lib/xwd.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int shift_of(uint32_t mask)
{
	int s = 0;

	while (mask && !(mask & 1)) {
		mask >>= 1;
		s++;
	}
	return s;
}

int xwd_decode(const unsigned char *d, size_t len, struct ppm *img)
{
	uint32_t hsize, format, w, h, byte_order, bpp, bpl, rmask, gmask, bmask, ncolors;
	size_t off;

	if (len < 100)
		return -EINVAL;
	hsize = be32(d);
	format = be32(d + 8);
	w = be32(d + 16);
	h = be32(d + 20);
	byte_order = be32(d + 28);
	bpp = be32(d + 44);
	bpl = be32(d + 48);
	rmask = be32(d + 56);
	gmask = be32(d + 60);
	bmask = be32(d + 64);
	ncolors = be32(d + 76);
	off = (size_t)hsize + (size_t)ncolors * 12;
	if (format != 2 || bpp != 32 || w == 0 || h == 0 || w > 16384 || h > 16384 || hsize < 100 ||
	    bpl < w * 4 || off > len || (len - off) / bpl < h)
		return -EINVAL;
	img->width = (int)w;
	img->height = (int)h;
	img->rgb = malloc((size_t)w * h * 3);
	if (!img->rgb)
		return -ENOMEM;
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			const unsigned char *p = d + off + (size_t)y * bpl + (size_t)x * 4;
			uint32_t v = byte_order ? be32(p)
						: (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
							  (uint32_t)p[1] << 8 | p[0];
			unsigned char *o = img->rgb + ((size_t)y * w + x) * 3;

			o[0] = (unsigned char)((v & rmask) >> shift_of(rmask));
			o[1] = (unsigned char)((v & gmask) >> shift_of(gmask));
			o[2] = (unsigned char)((v & bmask) >> shift_of(bmask));
		}
	return 0;
}
