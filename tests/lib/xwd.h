/* tests/lib/xwd.h: reads the XWD dumps `xwd` writes (ZPixmap, 24/32-bit
 * TrueColor, the only kind Xvfb's default visual gives), so a test can look
 * at what a program drew in a window. */
#ifndef VITRINE_TESTS_XWD_H
#define VITRINE_TESTS_XWD_H

#include "tests/lib/ppm.h"

/* Decodes len bytes of an XWD file into img (RGB). Returns 0, or -EINVAL
 * when it is not a 32-bit-per-pixel ZPixmap dump. */
int xwd_decode(const unsigned char *data, size_t len, struct ppm *img);

#endif
