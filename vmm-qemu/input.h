/* vmm-qemu/input.h: pointer and keyboard events as QMP input-send-event
 * arguments. Pure: builds JSON, sends nothing.
 *
 * Input goes in through QMP rather than VNC because QMP's absolute axis
 * (0..32767) lands on exact pixels, where a VNC click was seen one pixel off,
 * and because it does not depend on anything running in the guest. */
#ifndef VITRINE_VMM_INPUT_H
#define VITRINE_VMM_INPUT_H

#include <jansson.h>
#include <stdbool.h>

#define VMM_ABS_MAX 32767

/* The absolute axis value that lands on pixel p of a size-pixel axis: the
 * centre of the pixel, so both floor(abs * size / 32768) (libinput) and
 * rounding mappings hit p. p is clamped to [0, size). */
int vmm_input_abs(int p, int size);

/* {"events": [abs x, abs y]} moving the pointer to pixel (x, y) of a w x h screen. */
json_t *vmm_input_move(int x, int y, int w, int h);

/* {"events": [btn]}: button ("left", "middle", "right", "wheel-up",
 * "wheel-down", "side", "extra", "wheel-left", "wheel-right") down or up. */
json_t *vmm_input_button(const char *button, bool down);

/* {"events": [key]}: a key by QEMU qcode (e.g. "a", "shift", "ret"), down or up. */
json_t *vmm_input_key(const char *qcode, bool down);

#endif
