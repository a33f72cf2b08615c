/* tests/lib/png.c: see png.h. */
#include "tests/lib/png.h"

#include <errno.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

int png_decode(const void *data, size_t len, struct ppm *img)
{
	png_image pi;

	memset(&pi, 0, sizeof(pi));
	memset(img, 0, sizeof(*img));
	pi.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&pi, data, len))
		return -EINVAL;
	pi.format = PNG_FORMAT_RGB;
	img->width = (int)pi.width;
	img->height = (int)pi.height;
	img->rgb = malloc(PNG_IMAGE_SIZE(pi));
	if (!img->rgb || !png_image_finish_read(&pi, NULL, img->rgb, 0, NULL)) {
		png_image_free(&pi);
		ppm_free(img);
		return -EINVAL;
	}
	return 0;
}

int jpeg_decode(const void *data, size_t len, struct ppm *img)
{
	tjhandle tj = tjInitDecompress();
	int w, h, sub, cs, rc = -EINVAL;

	memset(img, 0, sizeof(*img));
	if (!tj)
		return -ENOMEM;
	if (tjDecompressHeader3(tj, data, (unsigned long)len, &w, &h, &sub, &cs) == 0 &&
	    (img->rgb = malloc((size_t)w * (size_t)h * 3)) &&
	    tjDecompress2(tj, data, (unsigned long)len, img->rgb, w, 0, h, TJPF_RGB, 0) == 0) {
		img->width = w;
		img->height = h;
		rc = 0;
	} else {
		ppm_free(img);
	}
	tjDestroy(tj);
	return rc;
}
