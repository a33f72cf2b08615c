/* tests/lib/ppm.h: binary PPM reader and pixel queries for screen checks. */
#ifndef VITRINE_TESTS_PPM_H
#define VITRINE_TESTS_PPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ppm {
	int width, height;
	unsigned char *rgb; /* owned, width * height * 3 */
};

/* Returns 0 or -errno (-EINVAL when not an 8-bit P6 file). */
int ppm_load(const char *path, struct ppm *img);
void ppm_free(struct ppm *img);
/* 0xRRGGBB, or 0xFFFFFFFF outside the image. */
uint32_t ppm_pixel(const struct ppm *img, int x, int y);
/* True when every channel differs by at most tolerance. */
bool ppm_close(uint32_t a, uint32_t b, int tolerance);
/* Pixels within tolerance of rgb. */
size_t ppm_count(const struct ppm *img, uint32_t rgb, int tolerance);
/* Bounding box of the pixels within tolerance of rgb; false when none. */
bool ppm_find_bbox(const struct ppm *img, uint32_t rgb, int tolerance, int *x0, int *y0, int *x1,
		   int *y1);

/* Mean absolute difference per channel between two images of the same
 * size; -1 when their sizes differ. */
double ppm_mean_diff(const struct ppm *a, const struct ppm *b);

#endif
