/* vmm-qemu/evdev_qcode.h: Linux evdev key codes (linux/input-event-codes.h,
 * what an xkb keymap's keycodes are, minus 8) -> QEMU qcodes (qapi/ui.json,
 * what QMP input-send-event takes). A keyboard layout (keymap.h) says which
 * evdev key types a character; QEMU is told the key by qcode. Pure. */
#ifndef VITRINE_VMM_EVDEV_QCODE_H
#define VITRINE_VMM_EVDEV_QCODE_H

/* The static qcode of evdev key code, or NULL for a code with none here
 * (codes past the keys a PC keyboard has are not mapped). */
const char *vmm_evdev_qcode(unsigned code);

#endif
