/* vmm-qemu/keymap.h: a guest's keyboard layout as a table from X keysyms to
 * the key that types each one (its QEMU qcode) and the modifiers it needs
 * (shift, AltGr = ISO_Level3_Shift), so that an input event sent to a German
 * or French guest types the character asked for. Built with libxkbcommon
 * from the host's xkb data (the same rules the guest's X runs: evdev,
 * pc105), once per layout, and kept for the life of the process.
 *
 * Layout names: "de", "fr", "us(intl)" or "us:intl" (a variant), checked
 * against the layouts and variants the host's xkb data lists
 * (rules/evdev.lst). Canonical form: "layout" or "layout(variant)".
 *
 * Threads: vmm_keymap_get compiles (milliseconds, reads xkb files): call it
 * from a worker. vmm_keymap_cached and vmm_keymap_lookup never block on
 * more than a lock. Keymaps are never freed. */
#ifndef VITRINE_VMM_KEYMAP_H
#define VITRINE_VMM_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest canonical name, NUL included. */
#define VMM_KEYMAP_MAX_NAME 64
#define VMM_KEYMAP_DEFAULT "us"

struct vmm_keymap;

/* One key stroke: qcode (static) pressed with shift and/or AltGr held. */
struct vmm_keystroke {
	const char *qcode;
	bool shift, level3;
};

/* Splits s ("de", "de(nodeadkeys)", "de:nodeadkeys") into layout and
 * variant ("" for none), each [A-Za-z0-9_-] of 1..31 bytes, and writes the
 * canonical name into canon (VMM_KEYMAP_MAX_NAME bytes). Returns 0, or
 * -EINVAL with a reason in err. Pure. */
int vmm_keymap_name_parse(const char *s, char *canon, char *layout, char *variant, char *err,
			  size_t errlen);

/* Whether lst (the text of an xkb rules .lst file, len bytes) lists layout,
 * and variant under it when variant is not "". Pure. */
bool vmm_keymap_lst_has(const char *lst, size_t len, const char *layout, const char *variant);

/* Checks s against the host's xkb data and writes its canonical name into
 * canon. The list is read once, at the first call (about a millisecond).
 * Returns 0, -EINVAL (bad syntax), -ENOENT (no such layout or variant here)
 * or -EIO (the host has no xkb data), with a reason in err. */
int vmm_keymap_check(const char *s, char *canon, char *err, size_t errlen);

/* The keymap of canonical name canon, compiled at the first call for it and
 * cached. Returns NULL with a reason in err when it does not compile.
 * Blocking (see above); any thread. */
const struct vmm_keymap *vmm_keymap_get(const char *canon, char *err, size_t errlen);

/* The keymap of canon if vmm_keymap_get has compiled it already, or NULL. */
const struct vmm_keymap *vmm_keymap_cached(const char *canon);

/* The canonical name km was compiled for. */
const char *vmm_keymap_name(const struct vmm_keymap *km);

/* How km types keysym: the first key, in order of fewest modifiers (none,
 * shift, AltGr, shift+AltGr) and then of key code. Returns 0 with *out, or
 * -ENOENT when no key of the layout types it. */
int vmm_keymap_lookup(const struct vmm_keymap *km, uint32_t keysym, struct vmm_keystroke *out);

/* The qcode of km's AltGr key (ISO_Level3_Shift: "alt_r" on most layouts),
 * or NULL when the layout has none. */
const char *vmm_keymap_level3_qcode(const struct vmm_keymap *km);

/* The keysym of Unicode code point cp (Latin-1 keysyms are the code
 * points; others are 0x1000000 + cp or a legacy keysym). 0 for none. */
uint32_t vmm_keysym_from_char(uint32_t cp);

/* The keysym named by name (len bytes, X keysym names: "at", "Return",
 * "dead_acute", "U20AC"), exactly as spelled or, failing that, ignoring case.
 * 0 for none. */
uint32_t vmm_keysym_from_name(const char *name, size_t len);

#endif
