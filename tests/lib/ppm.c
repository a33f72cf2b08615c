/* tests/lib/ppm.c: reads the binary PPM (P6) files QMP screendump writes, so
 * tests can check screens pixel by pixel. */
#include "tests/lib/ppm.h"

#include "common/fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads one header number, skipping blanks and comments. */
static int header_int(const char **p, const char *end, int *out)
{
	long v = 0;
	int digits = 0;

	while (*p < end &&
	       (**p == ' ' || **p == '\n' || **p == '\r' || **p == '\t' || **p == '#')) {
		if (**p == '#')
			while (*p < end && **p != '\n')
				(*p)++;
		else
			(*p)++;
	}
	while (*p < end && **p >= '0' && **p <= '9' && digits < 6) {
		v = v * 10 + (**p - '0');
		(*p)++;
		digits++;
	}
	if (!digits)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int ppm_load(const char *path, struct ppm *img)
{
	char *data = NULL;
	const char *p, *end;
	size_t len;
	int maxval, rc;

	memset(img, 0, sizeof(*img));
	rc = fs_read_file(path, 64u << 20, &data, &len);
	if (rc < 0)
		return rc;
	p = data;
	end = data + len;
	if (len < 2 || memcmp(p, "P6", 2)) {
		free(data);
		return -EINVAL;
	}
	p += 2;
	if (header_int(&p, end, &img->width) || header_int(&p, end, &img->height) ||
	    header_int(&p, end, &maxval) || maxval != 255 || p >= end) {
		free(data);
		return -EINVAL;
	}
	p++; /* the single blank after maxval */
	if ((size_t)(end - p) < (size_t)img->width * (size_t)img->height * 3) {
		free(data);
		return -EINVAL;
	}
	img->rgb = malloc((size_t)img->width * (size_t)img->height * 3);
	if (!img->rgb) {
		free(data);
		return -ENOMEM;
	}
	memcpy(img->rgb, p, (size_t)img->width * (size_t)img->height * 3);
	free(data);
	return 0;
}

uint32_t ppm_pixel(const struct ppm *img, int x, int y)
{
	const unsigned char *px;

	if (x < 0 || y < 0 || x >= img->width || y >= img->height)
		return 0xFFFFFFFFu;
	px = img->rgb + ((size_t)y * (size_t)img->width + (size_t)x) * 3;
	return (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
}

size_t ppm_count(const struct ppm *img, uint32_t rgb, int tolerance)
{
	size_t n = 0;

	for (int y = 0; y < img->height; y++)
		for (int x = 0; x < img->width; x++)
			if (ppm_close(ppm_pixel(img, x, y), rgb, tolerance))
				n++;
	return n;
}

bool ppm_close(uint32_t a, uint32_t b, int tolerance)
{
	for (int s = 0; s < 24; s += 8) {
		int d = (int)((a >> s) & 255) - (int)((b >> s) & 255);

		if (d > tolerance || d < -tolerance)
			return false;
	}
	return true;
}

bool ppm_find_bbox(const struct ppm *img, uint32_t rgb, int tolerance, int *x0, int *y0, int *x1,
		   int *y1)
{
	bool found = false;

	for (int y = 0; y < img->height; y++)
		for (int x = 0; x < img->width; x++) {
			if (!ppm_close(ppm_pixel(img, x, y), rgb, tolerance))
				continue;
			if (!found) {
				*x0 = *x1 = x;
				*y0 = *y1 = y;
				found = true;
			}
			if (x < *x0)
				*x0 = x;
			if (x > *x1)
				*x1 = x;
			if (y > *y1)
				*y1 = y;
		}
	return found;
}

void ppm_free(struct ppm *img)
{
	free(img->rgb);
	img->rgb = NULL;
}

double ppm_mean_diff(const struct ppm *a, const struct ppm *b)
{
	size_t n = (size_t)a->width * a->height * 3;
	uint64_t sum = 0;

	if (a->width != b->width || a->height != b->height)
		return -1;
	for (size_t i = 0; i < n; i++)
		sum += (uint64_t)abs((int)a->rgb[i] - (int)b->rgb[i]);
	return (double)sum / (double)n;
}
