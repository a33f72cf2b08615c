/* gateway/action/plan.c: see plan.h. */
#include "gateway/action/plan.h"

#include "vmm-qemu/input.h"

#include <stdlib.h>
#include <string.h>

const char *plan_step_kind_name(enum plan_step_kind kind)
{
	switch (kind) {
	case PLAN_INPUT:
		return "input";
	case PLAN_DELAY:
		return "delay";
	case PLAN_TYPE_TEXT:
		return "type_text";
	case PLAN_SCREENSHOT:
		return "screenshot";
	case PLAN_CURSOR_POSITION:
		return "cursor_position";
	case PLAN_ZOOM:
		return "zoom";
	case PLAN_WAIT:
		return "wait";
	case PLAN_X_SYNC:
		return "x_sync";
	case PLAN_GUEST_SYNC:
		return "guest_sync";
	}
	return "unknown";
}

struct builder {
	struct plan *p;
	int w, h;
	int oom; /* sticky: set on the first failed allocation; later pushes are no-ops */
};

static struct plan_step *push(struct builder *b, enum plan_step_kind kind)
{
	struct plan *p = b->p;

	if (b->oom)
		return NULL;
	if (p->len == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct plan_step *s = realloc(p->steps, cap * sizeof(*s));

		if (!s) {
			b->oom = 1;
			return NULL;
		}
		p->steps = s;
		p->cap = cap;
	}
	memset(&p->steps[p->len], 0, sizeof(p->steps[0]));
	p->steps[p->len].kind = kind;
	return &p->steps[p->len++];
}

/* Takes ownership of ev (NULL = the builder failed to allocate it). */
static void input(struct builder *b, json_t *ev)
{
	struct plan_step *s;

	if (!ev) {
		b->oom = 1;
		return;
	}
	s = push(b, PLAN_INPUT);
	if (!s) {
		json_decref(ev);
		return;
	}
	s->event = ev;
}

static void delay(struct builder *b, enum plan_step_kind kind, int ms)
{
	struct plan_step *s = push(b, kind);

	if (s)
		s->ms = ms;
}

static void move(struct builder *b, struct action_point pt)
{
	input(b, vmm_input_move(pt.x, pt.y, b->w, b->h));
}

static void key(struct builder *b, const char *qcode, bool down)
{
	input(b, vmm_input_key(qcode, down));
}

static void chord_down(struct builder *b, const struct keys_chord *c)
{
	for (size_t i = 0; i < c->len; i++)
		key(b, c->qcodes[i], true);
}

static void chord_up(struct builder *b, const struct keys_chord *c)
{
	for (size_t i = c->len; i > 0; i--)
		key(b, c->qcodes[i - 1], false);
}

/* Modifiers held around pointer input. Keyboard and pointer are two devices
 * to the guest: events sent back to back reach it on two event devices at
 * once, and X reads each device's pending events whole, in the order the
 * devices became readable, so a modifier's down and up could both be taken
 * before the button (the click then has no modifier). A pause after the
 * modifiers go down and before they go up lets X see them apart. */
/* X's state bits for the modifiers of c that every layout puts on the same
 * bit (Shift, Control, Alt, Super); the right Alt is Alt on some layouts
 * and AltGr (Mod5) on others, and other keys are no modifiers: 0. */
static unsigned x_mask_of(const struct keys_chord *c)
{
	static const struct {
		const char *qcode;
		unsigned bit;
	} mods[] = {
		{ "shift", 1 }, { "shift_r", 1 }, { "ctrl", 4 },    { "ctrl_r", 4 },
		{ "alt", 8 },	{ "meta_l", 64 }, { "meta_r", 64 },
	};
	unsigned mask = 0;

	for (size_t i = 0; i < c->len; i++)
		for (size_t m = 0; m < sizeof(mods) / sizeof(mods[0]); m++)
			if (!strcmp(c->qcodes[i], mods[m].qcode))
				mask |= mods[m].bit;
	return mask;
}

static void mods_down(struct builder *b, const struct keys_chord *c)
{
	unsigned mask = x_mask_of(c);

	chord_down(b, c);
	if (mask) {
		struct plan_step *s = push(b, PLAN_X_SYNC);

		if (s) {
			s->x_mask = mask;
			s->ms = PLAN_X_SYNC_MS;
		}
	}
	if (c->len)
		delay(b, PLAN_DELAY, PLAN_MODIFIER_MS);
}

static void mods_up(struct builder *b, const struct keys_chord *c)
{
	if (c->len)
		delay(b, PLAN_DELAY, PLAN_MODIFIER_MS);
	chord_up(b, c);
}

static const char *button_name(enum action_button button)
{
	switch (button) {
	case ACTION_BUTTON_MIDDLE:
		return "middle";
	case ACTION_BUTTON_RIGHT:
		return "right";
	case ACTION_BUTTON_BACK:
		return "side";
	case ACTION_BUTTON_FORWARD:
		return "extra";
	case ACTION_BUTTON_LEFT:
		break;
	}
	return "left";
}

/* One wheel button pressed and released per notch. */
static void wheel(struct builder *b, const char *button, int notches)
{
	for (int i = 0; i < notches; i++) {
		input(b, vmm_input_button(button, true));
		input(b, vmm_input_button(button, false));
	}
}

/* Decodes the UTF-8 sequence at s[*i] (valid: jansson checked it). */
static uint32_t next_codepoint(const char *s, size_t len, size_t *i)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c = u[*i];
	int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;

	if (extra)
		c &= 0x3f >> extra;
	(*i)++;
	for (; extra > 0 && *i < len; extra--, (*i)++)
		c = (c << 6) | (u[*i] & 0x3f);
	return c;
}

/* Text that key events can type on the session's layout (km; NULL: US) is
 * typed with them. Text with even one character they cannot express goes
 * whole through the other path, so it is typed entirely or not at all
 * (never a prefix, should that path fail). */
static void type_text(struct builder *b, const struct vmm_keymap *km, const char *text, size_t len)
{
	const char *level3 = km ? vmm_keymap_level3_qcode(km) : NULL;
	struct vmm_keystroke st;
	size_t i = 0;
	int queued = 0; /* events sent since the last PLAN_GUEST_SYNC */

	while (i < len) {
		if (keys_char_stroke(km, next_codepoint(text, len, &i), &st) < 0) {
			struct plan_step *s = push(b, PLAN_TYPE_TEXT);

			if (s && !(s->text = strndup(text, len)))
				b->oom = 1;
			return;
		}
	}
	i = 0;
	while (i < len && !b->oom) {
		/* virtio-input events: a key's press or release and its sync */
		int events;

		keys_char_stroke(km, next_codepoint(text, len, &i), &st);
		events = 2 * 2 * (1 + st.shift + st.level3);
		if (queued + events > PLAN_INPUT_QUEUE - 8) { /* room for a chord */
			delay(b, PLAN_GUEST_SYNC, PLAN_GUEST_SYNC_MS);
			queued = 0;
		}
		queued += events;
		if (st.shift)
			key(b, "shift", true);
		if (st.level3)
			key(b, level3, true);
		key(b, st.qcode, true);
		key(b, st.qcode, false);
		if (st.level3)
			key(b, level3, false);
		if (st.shift)
			key(b, "shift", false);
	}
}

/* num / den rounded half away from zero; den > 0. */
static int round_div(long long num, long long den)
{
	return (int)(num >= 0 ? (2 * num + den) / (2 * den) : -((-2 * num + den) / (2 * den)));
}

/* ceil(sqrt(v)) for v >= 0, without libm. */
static long long ceil_sqrt(long long v)
{
	long long r = 0, bit = 1LL << 31;

	for (; bit > 0; bit >>= 1)
		if ((r + bit) * (r + bit) <= v)
			r += bit;
	return r * r == v ? r : r + 1;
}

static long long seg_len(struct action_point a, struct action_point b)
{
	long long dx = b.x - a.x, dy = b.y - a.y;

	return ceil_sqrt(dx * dx + dy * dy);
}

/* A drag's moves so far. Only the left button starts a native drag
 * session, once the pointer is more than PLAN_DND_THRESHOLD_PX from where it
 * was pressed (along either axis, as Blink counts); the first such move is
 * followed by the wait for the browser's drag session, and such a drag ends
 * with drag_settle. */
struct drag_moves {
	bool native; /* left button: the drag may be a native one */
	bool press_known; /* press: where the button went down */
	struct action_point press;
	bool started; /* a move went past the threshold (and waited) */
};

static void drag_move(struct builder *b, struct drag_moves *dm, struct action_point pt)
{
	move(b, pt);
	if (!dm->native || dm->started)
		return;
	if (dm->press_known && abs(pt.x - dm->press.x) <= PLAN_DND_THRESHOLD_PX &&
	    abs(pt.y - dm->press.y) <= PLAN_DND_THRESHOLD_PX)
		return;
	dm->started = true;
	delay(b, PLAN_DELAY, PLAN_DND_START_MS);
}

/* Moves from a to b in steps of at most step_px, PLAN_DRAG_STEP_MS apart. */
static void glide(struct builder *b, struct drag_moves *dm, struct action_point from,
		  struct action_point to, long long step_px)
{
	long long dx = to.x - from.x, dy = to.y - from.y;
	long long n = (seg_len(from, to) + step_px - 1) / step_px;

	if (n < 1)
		n = 1;
	for (long long i = 1; i <= n; i++) {
		struct action_point pt = { from.x + round_div(dx * i, n),
					   from.y + round_div(dy * i, n) };

		delay(b, PLAN_DELAY, PLAN_DRAG_STEP_MS);
		drag_move(b, dm, pt);
	}
}

/* Over the drop target: a pause for the browser to hear from the target
 * (dragover answered), a nudge one pixel aside and back (motion the
 * browser's drag session sees even when it started late, after the
 * glide), and a pause again before the button goes up. */
static void drag_settle(struct builder *b, struct action_point end)
{
	struct action_point aside = { end.x + 1 < b->w ? end.x + 1
				      : end.x > 0      ? end.x - 1
						       : end.x,
				      end.y };

	delay(b, PLAN_DELAY, PLAN_DND_SETTLE_MS);
	move(b, aside);
	delay(b, PLAN_DELAY, PLAN_DRAG_STEP_MS);
	move(b, end);
	delay(b, PLAN_DELAY, PLAN_DND_SETTLE_MS);
}

static void drag(struct builder *b, const struct action *a)
{
	const char *button = button_name(a->button);
	long long total = 0, step = PLAN_DRAG_STEP_PX;
	size_t first = 0;
	struct drag_moves dm = { .native = a->button == ACTION_BUTTON_LEFT,
				 .press_known = !a->drag_from_pointer,
				 .press = a->path[0] };

	for (size_t i = 1; i < a->path_len; i++)
		total += seg_len(a->path[i - 1], a->path[i]);
	/* Each segment rounds its move count up: budget one extra move per segment. */
	if (total > (long long)PLAN_DRAG_MAX_MOVES * step)
		step = (total + PLAN_DRAG_MAX_MOVES - 1) / PLAN_DRAG_MAX_MOVES;

	mods_down(b, &a->modifiers);
	if (!a->drag_from_pointer) {
		move(b, a->path[0]);
		first = 1;
	}
	input(b, vmm_input_button(button, true));
	delay(b, PLAN_DELAY, PLAN_DRAG_HOLD_MS);
	if (a->drag_from_pointer) {
		/* Where the pointer is is unknown here: one straight move to the end. */
		drag_move(b, &dm, a->path[0]);
	}
	for (size_t i = first; i < a->path_len; i++)
		if (i > 0)
			glide(b, &dm, a->path[i - 1], a->path[i], step);
	if (dm.started)
		drag_settle(b, a->path[a->path_len - 1]);
	else
		delay(b, PLAN_DELAY, PLAN_DRAG_HOLD_MS);
	input(b, vmm_input_button(button, false));
	mods_up(b, &a->modifiers);
}

static void build(struct builder *b, const struct action *a)
{
	const char *button = button_name(a->button);
	struct plan_step *s;

	switch (a->kind) {
	case ACTION_KEY:
		for (int r = 0; r < a->repeat; r++) {
			for (size_t i = 0; i < a->n_chords; i++) {
				chord_down(b, &a->chords[i]);
				chord_up(b, &a->chords[i]);
			}
		}
		break;
	case ACTION_HOLD_KEY:
		chord_down(b, &a->chords[0]);
		delay(b, PLAN_DELAY, a->duration_ms);
		chord_up(b, &a->chords[0]);
		break;
	case ACTION_TYPE:
		type_text(b, a->keymap, a->text, a->text_len);
		break;
	case ACTION_MOVE:
		mods_down(b, &a->modifiers);
		move(b, a->point);
		mods_up(b, &a->modifiers);
		break;
	case ACTION_CLICK:
		if (a->has_point)
			move(b, a->point);
		mods_down(b, &a->modifiers);
		for (int i = 0; i < a->click_count; i++) {
			if (i > 0)
				delay(b, PLAN_DELAY, PLAN_CLICK_GAP_MS);
			input(b, vmm_input_button(button, true));
			input(b, vmm_input_button(button, false));
		}
		mods_up(b, &a->modifiers);
		break;
	case ACTION_MOUSE_DOWN:
	case ACTION_MOUSE_UP:
		if (a->has_point)
			move(b, a->point);
		mods_down(b, &a->modifiers);
		input(b, vmm_input_button(button, a->kind == ACTION_MOUSE_DOWN));
		mods_up(b, &a->modifiers);
		break;
	case ACTION_DRAG:
		drag(b, a);
		break;
	case ACTION_SCROLL:
		if (a->has_point)
			move(b, a->point);
		mods_down(b, &a->modifiers);
		wheel(b, a->scroll_dy < 0 ? "wheel-up" : "wheel-down", abs(a->scroll_dy));
		wheel(b, a->scroll_dx < 0 ? "wheel-left" : "wheel-right", abs(a->scroll_dx));
		mods_up(b, &a->modifiers);
		break;
	case ACTION_WAIT:
		delay(b, PLAN_WAIT, a->duration_ms);
		break;
	case ACTION_SCREENSHOT:
		push(b, PLAN_SCREENSHOT);
		break;
	case ACTION_CURSOR_POSITION:
		push(b, PLAN_CURSOR_POSITION);
		break;
	case ACTION_ZOOM:
		s = push(b, PLAN_ZOOM);
		if (s)
			s->region = a->region;
		break;
	}
}

struct plan *plan_build(const struct action *a, int screen_w, int screen_h)
{
	struct builder b = { .w = screen_w, .h = screen_h };

	if (screen_w <= 0 || screen_h <= 0)
		return NULL;
	b.p = calloc(1, sizeof(*b.p));
	if (!b.p)
		return NULL;
	build(&b, a);
	if (b.oom) {
		plan_destroy(b.p);
		return NULL;
	}
	return b.p;
}

void plan_destroy(struct plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->len; i++) {
		json_decref(p->steps[i].event);
		free(p->steps[i].text);
	}
	free(p->steps);
	free(p);
}

/* The name of a key or button event (its qcode or button), and whether it
 * is a key; NULL for other events. */
static const char *held_name(const json_t *ev, bool *key, bool *down)
{
	const char *type = json_string_value(json_object_get(ev, "type"));
	const json_t *data = json_object_get(ev, "data");

	*down = json_is_true(json_object_get(data, "down"));
	*key = type && !strcmp(type, "key");
	if (*key)
		return json_string_value(json_object_get(json_object_get(data, "key"), "data"));
	if (type && !strcmp(type, "btn"))
		return json_string_value(json_object_get(data, "button"));
	return NULL;
}

json_t *plan_release_held(const struct plan *p, size_t sent)
{
	const char *names[PLAN_MAX_HELD];
	bool keys[PLAN_MAX_HELD];
	int n = 0;
	json_t *events, *out;

	for (size_t i = 0; p && i < sent && i < p->len; i++) {
		const json_t *ev;
		size_t k;

		if (p->steps[i].kind != PLAN_INPUT)
			continue;
		json_array_foreach(json_object_get(p->steps[i].event, "events"), k, ev)
		{
			bool key, down;
			const char *name = held_name(ev, &key, &down);
			int at = -1;

			for (int j = 0; name && j < n; j++)
				if (keys[j] == key && !strcmp(names[j], name))
					at = j;
			if (!name || (down && at >= 0) || (!down && at < 0))
				continue;
			if (down && n < PLAN_MAX_HELD) {
				names[n] = name;
				keys[n++] = key;
			} else if (!down) {
				memmove(names + at, names + at + 1,
					(size_t)(n - at - 1) * sizeof(names[0]));
				memmove(keys + at, keys + at + 1,
					(size_t)(n - at - 1) * sizeof(keys[0]));
				n--;
			}
		}
	}
	if (!n || !(events = json_array()))
		return NULL;
	for (int pass = 0; pass < 2; pass++) /* buttons, then keys */
		for (int j = n - 1; j >= 0; j--) {
			json_t *up;

			if (keys[j] != (pass == 1))
				continue;
			up = keys[j] ? vmm_input_key(names[j], false)
				     : vmm_input_button(names[j], false);
			json_array_extend(events, json_object_get(up, "events"));
			json_decref(up);
		}
	out = json_pack("{s:o}", "events", events);
	return out;
}
