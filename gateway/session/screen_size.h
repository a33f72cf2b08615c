/* gateway/session/screen_size.h: a session's screen size as its guest's
 * frames show it (pure). The guest may change its resolution at any time
 * (a DRM mode set, xrandr); the mirror's frames then come at the new size,
 * and the session's width and height follow them (session.c,
 * sess_follow_screen). A frame is no exact measure past what QEMU's VNC
 * server shows (DISPLAY_MIRROR_MAX_WIDTH x DISPLAY_MIRROR_MAX_HEIGHT, the
 * top-left of a larger screen): a frame that wide only says the screen is
 * at least that wide. The size the guest last said it set (the desktop
 * guest's screen script) is taken when the frame agrees with it; else the
 * size the session has is kept while the frame agrees with it; else each
 * side is the frame's, or where the frame is at QEMU's most, the
 * session's when that is at least as large, else QEMU's most. */
#ifndef VITRINE_GATEWAY_SCREEN_SIZE_H
#define VITRINE_GATEWAY_SCREEN_SIZE_H

#include <stdbool.h>

struct screen_size {
	int width, height;
};

/* Whether a frame of frame's size can show a screen of size s (all of it,
 * or the part QEMU's VNC server shows of it). */
bool screen_size_fits(struct screen_size s, struct screen_size frame);

/* The session's screen size once a frame of frame's size came, given the
 * size it has (cur) and the one the guest last said it set (said; 0x0 for
 * none), into *out. Returns true when that differs from cur. A frame of
 * no size changes nothing. Can't fail. */
bool screen_size_follow(struct screen_size cur, struct screen_size said, struct screen_size frame,
			struct screen_size *out);

#endif
