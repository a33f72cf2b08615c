/* tests/lib/png.h: decodes PNG (libpng) and JPEG (TurboJPEG) bytes into the
 * RGB image of ppm.h, so tests can check pixels of gateway screenshots. */
#ifndef VITRINE_TESTS_PNG_H
#define VITRINE_TESTS_PNG_H

#include "tests/lib/ppm.h"

/* Returns 0 or -EINVAL when data is not a decodable image of that kind. */
int png_decode(const void *data, size_t len, struct ppm *img);
int jpeg_decode(const void *data, size_t len, struct ppm *img);

#endif
