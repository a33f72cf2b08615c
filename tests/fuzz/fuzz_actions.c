/* tests/fuzz/fuzz_actions.c: libFuzzer target for an agent's actions, in
 * all three dialects: gateway/action/actions.c (parse and validate),
 * keys.c (key names and chords) and plan.c (the input events that carry an
 * action out). The first byte picks the screen and the coordinate space
 * the session declares, the rest is the action's JSON. Checked besides
 * "no crash":
 *   - an accepted action has every point, path point and zoom region
 *     inside the screen, and every count, duration, repeat, text and chord
 *     within the bounds of actions.h;
 *   - its plan moves the pointer only to pixels of the screen (QMP's
 *     absolute axis 0..32767), releases every key it presses and, but for
 *     mouse_down, every button, and its delays and waits are within bounds;
 *   - a refused action says why (a known code and a message). */
#include "gateway/action/actions.h"
#include "gateway/action/keys.h"
#include "gateway/action/plan.h"
#include "vmm-qemu/input.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	int w, h, sw, sh; /* screen, and a screenshot space (0: screen pixels) */
} screens[] = {
	{ 1280, 800, 0, 0 },	   { 1024, 768, 1366, 768 }, { 1, 1, 0, 0 },
	{ 1920, 1080, 1280, 720 }, { 640, 480, 1, 1 },	     { 3, 16384, 0, 0 },
	{ 800, 600, 16384, 3 },
};

static bool in_screen(struct action_point p, int w, int h)
{
	return p.x >= 0 && p.y >= 0 && p.x < w && p.y < h;
}

static void check_chord(const struct keys_chord *c)
{
	if (c->len > KEYS_MAX_CHORD)
		__builtin_trap();
	for (size_t i = 0; i < c->len; i++)
		if (!c->qcodes[i] || !c->qcodes[i][0])
			__builtin_trap();
}

static void check_action(const struct action *a, int w, int h)
{
	if ((a->has_point && !in_screen(a->point, w, h)) || a->n_chords > ACTIONS_MAX_CHORDS)
		__builtin_trap();
	check_chord(&a->modifiers);
	for (size_t i = 0; i < a->n_chords; i++)
		check_chord(&a->chords[i]);
	for (size_t i = 0; i < a->path_len; i++)
		if (!in_screen(a->path[i], w, h))
			__builtin_trap();
	switch (a->kind) {
	case ACTION_KEY:
		if (a->n_chords < 1 || a->repeat < 1 || a->repeat > ACTIONS_MAX_REPEAT)
			__builtin_trap();
		break;
	case ACTION_HOLD_KEY:
	case ACTION_WAIT:
		if (a->duration_ms < 0 || a->duration_ms > ACTIONS_MAX_DURATION_MS ||
		    (a->kind == ACTION_HOLD_KEY && a->n_chords < 1))
			__builtin_trap();
		break;
	case ACTION_TYPE:
		if (!a->text || strlen(a->text) != a->text_len ||
		    a->text_len > ACTIONS_MAX_TEXT_BYTES)
			__builtin_trap();
		break;
	case ACTION_CLICK:
		if (a->click_count < 1 || a->click_count > 3)
			__builtin_trap();
		break;
	case ACTION_DRAG:
		if (!a->path || a->path_len > ACTIONS_MAX_PATH ||
		    a->path_len < (a->drag_from_pointer ? 1u : 2u))
			__builtin_trap();
		break;
	case ACTION_SCROLL:
		if (a->scroll_dx < -ACTIONS_MAX_SCROLL_NOTCHES ||
		    a->scroll_dx > ACTIONS_MAX_SCROLL_NOTCHES ||
		    a->scroll_dy < -ACTIONS_MAX_SCROLL_NOTCHES ||
		    a->scroll_dy > ACTIONS_MAX_SCROLL_NOTCHES)
			__builtin_trap();
		break;
	case ACTION_ZOOM:
		if (a->region.w < 1 || a->region.h < 1 || a->region.x < 0 || a->region.y < 0 ||
		    a->region.x + a->region.w > w || a->region.y + a->region.h > h)
			__builtin_trap();
		break;
	default:
		break;
	}
	if (a->want_screenshot && a->screenshot_opts && !json_is_object(a->screenshot_opts))
		__builtin_trap();
}

/* Walks the plan's events: absolute moves on the axis, keys and buttons
 * released by the end. */
static void check_plan(const struct plan *p, const struct action *a)
{
	int keys_down = 0, buttons_down = 0;

	for (size_t i = 0; i < p->len; i++) {
		const struct plan_step *s = &p->steps[i];
		size_t k;
		json_t *ev;

		if (!plan_step_kind_name(s->kind))
			__builtin_trap();
		if ((s->kind == PLAN_DELAY || s->kind == PLAN_WAIT) &&
		    (s->ms < 0 || s->ms > ACTIONS_MAX_DURATION_MS))
			__builtin_trap();
		if (s->kind == PLAN_TYPE_TEXT && (!s->text || strcmp(s->text, a->text)))
			__builtin_trap();
		if (s->kind != PLAN_INPUT)
			continue;
		if (!json_is_array(json_object_get(s->event, "events")))
			__builtin_trap();
		json_array_foreach(json_object_get(s->event, "events"), k, ev)
		{
			const char *type = json_string_value(json_object_get(ev, "type"));
			json_t *d = json_object_get(ev, "data");

			if (!type || !json_is_object(d))
				__builtin_trap();
			if (!strcmp(type, "abs")) {
				json_int_t v = json_integer_value(json_object_get(d, "value"));

				if (v < 0 || v > VMM_ABS_MAX)
					__builtin_trap();
			} else if (!strcmp(type, "key")) {
				keys_down += json_is_true(json_object_get(d, "down")) ? 1 : -1;
			} else if (!strcmp(type, "btn")) {
				const char *b = json_string_value(json_object_get(d, "button"));

				if (!b)
					__builtin_trap();
				buttons_down += json_is_true(json_object_get(d, "down")) ? 1 : -1;
			} else {
				__builtin_trap();
			}
			if (keys_down < 0 && a->kind != ACTION_MOUSE_UP)
				__builtin_trap();
		}
	}
	if (keys_down != 0 ||
	    (a->kind != ACTION_MOUSE_DOWN && a->kind != ACTION_MOUSE_UP && buttons_down != 0))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct actions_ctx ctx = { 0 };
	struct actions_error err;
	struct action *a;
	struct plan *p;
	json_t *j;
	int pick;

	if (size < 1)
		return 0;
	pick = data[0] % (int)(sizeof(screens) / sizeof(screens[0]));
	ctx.screen_width = screens[pick].w;
	ctx.screen_height = screens[pick].h;
	if (screens[pick].sw) {
		ctx.default_space.kind = ACTIONS_SPACE_SCREENSHOT;
		ctx.default_space.width = screens[pick].sw;
		ctx.default_space.height = screens[pick].sh;
	}
	j = json_loadb((const char *)data + 1, size - 1, 0, NULL);
	if (!j)
		return 0;
	a = actions_parse(j, &ctx, &err);
	json_decref(j);
	if (!a) {
		if (err.code == ACTIONS_OK || !err.message[0] || !actions_errc_name(err.code))
			__builtin_trap();
		return 0;
	}
	check_action(a, ctx.screen_width, ctx.screen_height);
	p = plan_build(a, ctx.screen_width, ctx.screen_height);
	if (!p)
		__builtin_trap();
	check_plan(p, a);
	plan_destroy(p);
	actions_destroy(a);
	return 0;
}
