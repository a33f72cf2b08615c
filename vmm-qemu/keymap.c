/* vmm-qemu/keymap.c: see keymap.h. A keymap is compiled with libxkbcommon
 * and read key by key through four xkb states (no modifier, Shift, AltGr,
 * both), the way X picks a key's keysym; the result is a sorted array of
 * (keysym, key, modifiers), searched with bsearch. */
#include "vmm-qemu/keymap.h"

#include "common/fsutil.h"
#include "vmm-qemu/evdev_qcode.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xkbcommon/xkbcommon.h>

#define XKB_LST "/usr/share/X11/xkb/rules/evdev.lst"
#define EVDEV_OFFSET 8 /* xkb keycode = evdev code + 8 */
#define SHIFT_EVDEV 42 /* KEY_LEFTSHIFT */
#define NAME_PART 32

struct entry {
	uint32_t keysym;
	unsigned order; /* combination * 256 + evdev code: lower wins */
	struct vmm_keystroke stroke;
};

struct vmm_keymap {
	char name[VMM_KEYMAP_MAX_NAME];
	const char *level3_qcode;
	struct entry *entries; /* owned, sorted by keysym, one per keysym */
	size_t len;
	struct vmm_keymap *next; /* cache */
};

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vmm_keymap *cache; /* under cache_mu; never freed */
static char *lst_text; /* under cache_mu: the host's evdev.lst, read once */
static size_t lst_len;
static bool lst_read;

static bool name_part_ok(const char *p, size_t len)
{
	if (len == 0 || len >= NAME_PART)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
			    p[i]) ||
		    !p[i])
			return false;
	return true;
}

int vmm_keymap_name_parse(const char *s, char *canon, char *layout, char *variant, char *err,
			  size_t errlen)
{
	size_t n = strlen(s), llen = strcspn(s, "(:"), vlen = 0;
	const char *v = NULL;

	if (llen < n) {
		v = s + llen + 1;
		vlen = n - llen - 1;
		if (s[llen] == '(') {
			if (vlen == 0 || v[vlen - 1] != ')')
				goto bad;
			vlen--;
		}
		if (!name_part_ok(v, vlen))
			goto bad;
	}
	if (!name_part_ok(s, llen))
		goto bad;
	memcpy(layout, s, llen);
	layout[llen] = '\0';
	memcpy(variant, v ? v : "", vlen);
	variant[vlen] = '\0';
	if (vlen)
		snprintf(canon, VMM_KEYMAP_MAX_NAME, "%s(%s)", layout, variant);
	else
		snprintf(canon, VMM_KEYMAP_MAX_NAME, "%s", layout);
	return 0;
bad:
	snprintf(err, errlen,
		 "keyboard_layout \"%.64s\" is not an xkb layout name: give \"layout\", "
		 "\"layout(variant)\" or \"layout:variant\" ([A-Za-z0-9_-], up to 31 each)",
		 s);
	return -EINVAL;
}

/* The line at *pos (advanced past it) as [*line, *line + *n). */
static bool next_line(const char *t, size_t len, size_t *pos, const char **line, size_t *n)
{
	size_t start = *pos;

	if (start >= len)
		return false;
	while (*pos < len && t[*pos] != '\n')
		(*pos)++;
	*line = t + start;
	*n = *pos - start;
	if (*pos < len)
		(*pos)++;
	return true;
}

/* The first word of line (after blanks), and what follows it. */
static void first_word(const char *line, size_t n, const char **w, size_t *wn, const char **rest,
		       size_t *rn)
{
	size_t i = 0, s;

	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	s = i;
	while (i < n && line[i] != ' ' && line[i] != '\t')
		i++;
	*w = line + s;
	*wn = i - s;
	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	*rest = line + i;
	*rn = n - i;
}

static bool word_is(const char *w, size_t wn, const char *s)
{
	return wn == strlen(s) && !memcmp(w, s, wn);
}

bool vmm_keymap_lst_has(const char *lst, size_t len, const char *layout, const char *variant)
{
	enum { OTHER, LAYOUTS, VARIANTS } section = OTHER;
	size_t pos = 0, n, wn, rn;
	const char *line, *w, *rest;
	bool have_layout = false, have_variant = !variant[0];

	while (next_line(lst, len, &pos, &line, &n)) {
		first_word(line, n, &w, &wn, &rest, &rn);
		if (word_is(w, wn, "!")) {
			first_word(rest, rn, &w, &wn, &rest, &rn);
			section = word_is(w, wn, "layout")    ? LAYOUTS
				  : word_is(w, wn, "variant") ? VARIANTS
							      : OTHER;
			continue;
		}
		if (section == LAYOUTS && word_is(w, wn, layout))
			have_layout = true;
		/* "  nodeadkeys      de: German (no dead keys)" */
		if (section == VARIANTS && variant[0] && word_is(w, wn, variant) &&
		    rn > strlen(layout) && !memcmp(rest, layout, strlen(layout)) &&
		    rest[strlen(layout)] == ':')
			have_variant = true;
	}
	return have_layout && have_variant;
}

int vmm_keymap_check(const char *s, char *canon, char *err, size_t errlen)
{
	char layout[NAME_PART], variant[NAME_PART];
	int rc = vmm_keymap_name_parse(s, canon, layout, variant, err, errlen);
	bool ok;

	if (rc < 0)
		return rc;
	pthread_mutex_lock(&cache_mu);
	if (!lst_read) {
		lst_read = true;
		if (fs_read_file(XKB_LST, 1 << 20, &lst_text, &lst_len) < 0)
			lst_text = NULL;
	}
	ok = lst_text && vmm_keymap_lst_has(lst_text, lst_len, layout, variant);
	rc = !lst_text ? -EIO : ok ? 0 : -ENOENT;
	pthread_mutex_unlock(&cache_mu);
	if (rc == -EIO)
		snprintf(err, errlen,
			 "this host has no xkb data (%s): keyboard layouts need xkb-data", XKB_LST);
	else if (rc < 0 && variant[0])
		snprintf(err, errlen,
			 "keyboard_layout \"%.64s\": xkb has no layout \"%s\" with variant \"%s\"",
			 s, layout, variant);
	else if (rc < 0)
		snprintf(err, errlen, "keyboard_layout \"%.64s\": xkb has no layout \"%s\"", s,
			 layout);
	return rc;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->keysym != y->keysym)
		return x->keysym < y->keysym ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The xkb keycode of the first key whose base keysym is sym, or 0. prefer
 * is tried first. */
static xkb_keycode_t key_of(struct xkb_keymap *km, xkb_keysym_t sym, xkb_keycode_t prefer)
{
	const xkb_keysym_t *syms;

	if (xkb_keymap_key_get_syms_by_level(km, prefer, 0, 0, &syms) > 0 && syms[0] == sym)
		return prefer;
	for (xkb_keycode_t kc = xkb_keymap_min_keycode(km); kc <= xkb_keymap_max_keycode(km); kc++)
		if (vmm_evdev_qcode(kc - EVDEV_OFFSET) &&
		    xkb_keymap_key_get_syms_by_level(km, kc, 0, 0, &syms) > 0 && syms[0] == sym)
			return kc;
	return 0;
}

/* Reads every key of xkm under the four modifier combinations into km. */
static int fill(struct vmm_keymap *km, struct xkb_keymap *xkm)
{
	xkb_keycode_t shift = SHIFT_EVDEV + EVDEV_OFFSET;
	xkb_keycode_t l3 = key_of(xkm, XKB_KEY_ISO_Level3_Shift, 100 + EVDEV_OFFSET);
	xkb_keycode_t lo = xkb_keymap_min_keycode(xkm), hi = xkb_keymap_max_keycode(xkm);
	size_t cap = 4 * (size_t)(hi - lo + 1);

	km->entries = calloc(cap, sizeof(*km->entries));
	if (!km->entries)
		return -ENOMEM;
	km->level3_qcode = l3 ? vmm_evdev_qcode(l3 - EVDEV_OFFSET) : NULL;
	for (unsigned combo = 0; combo < 4; combo++) {
		bool with_shift = combo & 1, with_l3 = combo & 2;
		struct xkb_state *st;

		if (with_l3 && !l3)
			continue;
		if (!(st = xkb_state_new(xkm)))
			return -ENOMEM;
		if (with_shift)
			xkb_state_update_key(st, shift, XKB_KEY_DOWN);
		if (with_l3)
			xkb_state_update_key(st, l3, XKB_KEY_DOWN);
		for (xkb_keycode_t kc = lo; kc <= hi && km->len < cap; kc++) {
			const char *qcode = kc >= EVDEV_OFFSET ? vmm_evdev_qcode(kc - EVDEV_OFFSET)
							       : NULL;
			xkb_keysym_t sym;

			if (!qcode || (sym = xkb_state_key_get_one_sym(st, kc)) == XKB_KEY_NoSymbol)
				continue;
			km->entries[km->len++] = (struct entry){
				.keysym = sym,
				.order = combo * 256 + (kc - EVDEV_OFFSET),
				.stroke = { qcode, with_shift, with_l3 },
			};
		}
		xkb_state_unref(st);
	}
	qsort(km->entries, km->len, sizeof(*km->entries), entry_cmp);
	/* One entry per keysym: the first of each run, the one with the
	 * lowest order. */
	{
		size_t out = 0;

		for (size_t i = 0; i < km->len; i++)
			if (out == 0 || km->entries[out - 1].keysym != km->entries[i].keysym)
				km->entries[out++] = km->entries[i];
		km->len = out;
	}
	return 0;
}

static struct vmm_keymap *compile(const char *canon, char *err, size_t errlen)
{
	char layout[NAME_PART], variant[NAME_PART], dummy[VMM_KEYMAP_MAX_NAME];
	struct xkb_context *ctx = NULL;
	struct xkb_keymap *xkm = NULL;
	struct vmm_keymap *km = NULL;
	struct xkb_rule_names names = { .rules = "evdev", .model = "pc105" };

	if (vmm_keymap_name_parse(canon, dummy, layout, variant, err, errlen) < 0)
		return NULL;
	names.layout = layout;
	names.variant = variant;
	ctx = xkb_context_new(XKB_CONTEXT_NO_ENVIRONMENT_NAMES);
	if (!ctx) {
		snprintf(err, errlen, "keyboard layout %s: no xkb context", canon);
		goto out;
	}
	xkm = xkb_keymap_new_from_names(ctx, &names, XKB_KEYMAP_COMPILE_NO_FLAGS);
	if (!xkm) {
		snprintf(err, errlen, "keyboard layout %s: xkb cannot compile it", canon);
		goto out;
	}
	km = calloc(1, sizeof(*km));
	if (!km || fill(km, xkm) < 0) {
		snprintf(err, errlen, "keyboard layout %s: out of memory", canon);
		if (km)
			free(km->entries);
		free(km);
		km = NULL;
		goto out;
	}
	snprintf(km->name, sizeof(km->name), "%s", canon);
out:
	xkb_keymap_unref(xkm);
	xkb_context_unref(ctx);
	return km;
}

static struct vmm_keymap *find(const char *canon)
{
	for (struct vmm_keymap *k = cache; k; k = k->next)
		if (!strcmp(k->name, canon))
			return k;
	return NULL;
}

const struct vmm_keymap *vmm_keymap_cached(const char *canon)
{
	struct vmm_keymap *k;

	pthread_mutex_lock(&cache_mu);
	k = find(canon);
	pthread_mutex_unlock(&cache_mu);
	return k;
}

const struct vmm_keymap *vmm_keymap_get(const char *canon, char *err, size_t errlen)
{
	struct vmm_keymap *k = (struct vmm_keymap *)vmm_keymap_cached(canon), *other;

	if (k)
		return k;
	/* Compiled outside the lock: two threads may both compile one layout;
	 * the second one's copy is dropped. */
	if (!(k = compile(canon, err, errlen)))
		return NULL;
	pthread_mutex_lock(&cache_mu);
	if ((other = find(canon))) {
		free(k->entries);
		free(k);
		k = other;
	} else {
		k->next = cache;
		cache = k;
	}
	pthread_mutex_unlock(&cache_mu);
	return k;
}

const char *vmm_keymap_name(const struct vmm_keymap *km)
{
	return km->name;
}

int vmm_keymap_lookup(const struct vmm_keymap *km, uint32_t keysym, struct vmm_keystroke *out)
{
	size_t lo = 0, hi = km->len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (km->entries[mid].keysym == keysym) {
			*out = km->entries[mid].stroke;
			return 0;
		}
		if (km->entries[mid].keysym < keysym)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

const char *vmm_keymap_level3_qcode(const struct vmm_keymap *km)
{
	return km->level3_qcode;
}

uint32_t vmm_keysym_from_char(uint32_t cp)
{
	return xkb_utf32_to_keysym(cp);
}

uint32_t vmm_keysym_from_name(const char *name, size_t len)
{
	char buf[64];
	xkb_keysym_t s;

	if (len == 0 || len >= sizeof(buf) || memchr(name, '\0', len))
		return 0;
	memcpy(buf, name, len);
	buf[len] = '\0';
	s = xkb_keysym_from_name(buf, XKB_KEYSYM_NO_FLAGS);
	if (s == XKB_KEY_NoSymbol)
		s = xkb_keysym_from_name(buf, XKB_KEYSYM_CASE_INSENSITIVE);
	return s;
}
