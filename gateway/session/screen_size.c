/* gateway/session/screen_size.c: see screen_size.h. */
#include "gateway/session/screen_size.h"

#include "display/mirror.h"

/* What a frame shows of a screen side of n pixels. */
static int shown(int n, int max)
{
	return n < max ? n : max;
}

bool screen_size_fits(struct screen_size s, struct screen_size frame)
{
	return s.width > 0 && s.height > 0 &&
	       shown(s.width, DISPLAY_MIRROR_MAX_WIDTH) == frame.width &&
	       shown(s.height, DISPLAY_MIRROR_MAX_HEIGHT) == frame.height;
}

/* One side: the frame's, unless it is at the most QEMU shows; then the
 * side the session has when that is at least as large. */
static int side(int cur, int frame, int max)
{
	return frame < max ? frame : cur >= max ? cur : max;
}

bool screen_size_follow(struct screen_size cur, struct screen_size said, struct screen_size frame,
			struct screen_size *out)
{
	*out = cur;
	if (frame.width <= 0 || frame.height <= 0)
		return false;
	if (screen_size_fits(said, frame)) {
		*out = said;
	} else if (!screen_size_fits(cur, frame)) {
		out->width = side(cur.width, frame.width, DISPLAY_MIRROR_MAX_WIDTH);
		out->height = side(cur.height, frame.height, DISPLAY_MIRROR_MAX_HEIGHT);
	}
	return out->width != cur.width || out->height != cur.height;
}
