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
 *   - a refused action says why (a known code and a message);
 *   - the same JSON as a batch (batch.c, {"actions": [...]} or one action):
 *     every action it keeps passes the checks above, there are at most
 *     ACTIONS_MAX_BATCH, each element before a refusal parses alone, and
 *     the refused index is the first element that does not (alone, or for
 *     its own "screenshot");
 *   - screenshot coordinates (actions_map_point, sizes and a point from
 *     the input's last 12 bytes) land inside the screen, within half a
 *     pixel of the exact scaling, corners on corners, in order, and on
 *     distinct pixels when the screenshot is no larger than the screen;
 *   - a turn of Claude's computer toolset (toolset.c, the JSON as a body):
 *     1..TOOLSET_MAX_CALLS known members; its screenshot size is within the
 *     image limits (the turn's or the default), no larger than the screen,
 *     and exactly what the encoder makes of what it is asked; its calls
 *     parse in order against that size into actions that pass the checks
 *     above, up to the first refused; a screenshot pixel mapped to the
 *     screen and back is itself; the answers of a turn stopped there are
 *     one per call, each later one exactly the fixed "Not executed" words. */
#include "display/encode.h"
#include "gateway/action/actions.h"
#include "gateway/action/batch.h"
#include "gateway/action/keys.h"
#include "gateway/action/plan.h"
#include "gateway/action/toolset.h"
#include "vmm-qemu/input.h"

#include <errno.h>
#include <math.h>
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
		if (s->kind == PLAN_GUEST_SYNC && s->ms != PLAN_GUEST_SYNC_MS)
			__builtin_trap();
		/* a barrier only after modifiers went down, on their bits */
		if (s->kind == PLAN_X_SYNC &&
		    (!s->x_mask || (s->x_mask & ~77u) || s->ms != PLAN_X_SYNC_MS || keys_down < 1))
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

static int u16(const uint8_t *p, int mod)
{
	return (p[0] | p[1] << 8) % mod;
}

/* One axis of a screenshot from..to pixels: point v and its neighbour. */
static void check_axis(int v, int from, int to, int got, int next)
{
	double exact = from > 1 ? (double)v * (to - 1) / (from - 1) : (to - 1) / 2.0;

	if (got < 0 || got >= to || fabs(got - exact) > 0.5 + 1e-9)
		__builtin_trap();
	if (v + 1 < from && (next < got || (from <= to && next == got)))
		__builtin_trap();
}

static void check_map(const uint8_t *d)
{
	struct actions_space sp = { ACTIONS_SPACE_SCREENSHOT, u16(d, 16384) + 1,
				    u16(d + 2, 16384) + 1 };
	int sw = u16(d + 4, 16384) + 1, sh = u16(d + 6, 16384) + 1;
	int x = u16(d + 8, sp.width), y = u16(d + 10, sp.height);
	struct action_point p, n = { 0, 0 }, c;

	if (actions_map_point(&sp, sw, sh, x, y, &p) != 0)
		__builtin_trap();
	if (x + 1 < sp.width && actions_map_point(&sp, sw, sh, x + 1, y, &n) != 0)
		__builtin_trap();
	check_axis(x, sp.width, sw, p.x, n.x);
	if (y + 1 < sp.height && actions_map_point(&sp, sw, sh, x, y + 1, &n) != 0)
		__builtin_trap();
	check_axis(y, sp.height, sh, p.y, n.y);
	if (actions_map_point(&sp, sw, sh, sp.width - 1, sp.height - 1, &c) != 0 ||
	    (sp.width > 1 && c.x != sw - 1) || (sp.height > 1 && c.y != sh - 1) ||
	    actions_map_point(&sp, sw, sh, 0, 0, &c) != 0 || (sp.width > 1 && c.x != 0) ||
	    (sp.height > 1 && c.y != 0))
		__builtin_trap();
	if (actions_map_point(&sp, sw, sh, sp.width, 0, &c) != -ERANGE ||
	    actions_map_point(&sp, sw, sh, 0, -1, &c) != -ERANGE)
		__builtin_trap();
}

static void check_one(const struct action *a, int w, int h)
{
	struct plan *p;

	check_action(a, w, h);
	p = plan_build(a, w, h);
	if (!p)
		__builtin_trap();
	check_plan(p, a);
	plan_destroy(p);
}

/* Element e of batch j as it runs: with the batch's dialect, and its
 * coordinate space and size when e names none of the three (batch.h). A
 * new reference; NULL when e is no object. */
static json_t *element_full(const json_t *j, const json_t *e)
{
	static const char *const space[] = { "coordinate_space", "screenshot_width",
					     "screenshot_height" };
	json_t *full, *v;
	bool own = false;

	if (!json_is_object(e) || !(full = json_copy((json_t *)e)))
		return NULL;
	for (size_t i = 0; i < 3; i++)
		own = own || json_object_get(e, space[i]);
	v = json_object_get(j, "dialect");
	if (v && !json_is_null(v) && !json_object_get(e, "dialect"))
		json_object_set(full, "dialect", v);
	for (size_t i = 0; i < 3 && !own; i++) {
		v = json_object_get(j, space[i]);
		if (v && !json_is_null(v))
			json_object_set(full, space[i], v);
	}
	return full;
}

/* Whether element e of batch j is refused: as it runs, or for its
 * screenshot. */
static bool element_refused(const json_t *j, const json_t *e, const struct actions_ctx *ctx)
{
	struct actions_error err;
	json_t *full = element_full(j, e);
	struct action *a = full ? actions_parse(full, ctx, &err) : NULL;
	bool refused = !a || a->want_screenshot || a->screenshot_opts;

	actions_destroy(a);
	json_decref(full);
	return refused;
}

/* A toolset turn's batch b (unresolved) of body j on ctx's screen; d: bytes
 * for a screenshot pixel. */
static void check_turn(struct action_batch *b, const struct actions_ctx *ctx, const uint8_t *d)
{
	const struct toolset_turn *t = b->turn;
	struct toolset_limits lim = t->has_limits ? t->limits : toolset_default_limits();
	struct actions_ctx c = *ctx;
	struct toolset_frame f;
	struct action_point p;
	json_t *done = json_array(), *all;
	int ew, eh, w2, h2, sx, sy, x, y;
	double scale;

	if (t->n < 1 || t->n > TOOLSET_MAX_CALLS || b->n != 0 || !b->is_batch)
		__builtin_trap();
	for (size_t i = 0; i < t->n; i++)
		if (!toolset_member_name(t->calls[i].member) || !json_is_object(t->calls[i].input))
			__builtin_trap();
	toolset_frame_init(&f, ctx->screen_width, ctx->screen_height, &lim);
	if (f.shot_w < 1 || f.shot_h < 1 || f.shot_w > ctx->screen_width ||
	    f.shot_h > ctx->screen_height || f.shot_w > lim.long_edge || f.shot_h > lim.long_edge ||
	    (long long)((f.shot_w + 27) / 28) * ((f.shot_h + 27) / 28) > lim.visual_tokens)
		__builtin_trap();
	toolset_frame_encode_size(&f, &ew, &eh);
	display_scale_fit(ctx->screen_width, ctx->screen_height, ew, eh, &w2, &h2, &scale);
	if (w2 != f.shot_w || h2 != f.shot_h)
		__builtin_trap();
	x = u16(d, f.shot_w);
	y = u16(d + 2, f.shot_h);
	c.default_space = (struct actions_space){ ACTIONS_SPACE_SCREENSHOT, f.shot_w, f.shot_h };
	if (actions_map_point(&c.default_space, c.screen_width, c.screen_height, x, y, &p) < 0)
		__builtin_trap();
	toolset_to_shot(&f, c.screen_width, c.screen_height, p.x, p.y, &sx, &sy);
	if (sx != x || sy != y)
		__builtin_trap();
	if (batch_resolve_toolset(b, &c, t->disabled) < 0)
		return; /* out of memory */
	if (b->n > t->n || b->refused != (b->n < t->n) ||
	    (b->refused && (!b->refusal.message[0] || b->refusal.code == ACTIONS_OK)))
		__builtin_trap();
	for (size_t i = 0; i < b->n; i++) {
		check_one(b->actions[i], c.screen_width, c.screen_height);
		json_array_append_new(done, toolset_result_ack(&t->calls[i]));
	}
	all = toolset_results_stopped(t, done, b->n, b->refused ? b->refusal.message : "x");
	if (!all || json_array_size(all) != t->n)
		__builtin_trap();
	for (size_t i = b->n + 1; i < t->n; i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(all, i), "content")),
			   TOOLSET_NOT_EXECUTED))
			__builtin_trap();
	json_decref(all);
	json_decref(done);
}

/* The checks of a batch b (NULL: refused with *err at index) of the
 * actions in list (n of them), which b does not free. */
static void check_plain(const json_t *j, const struct actions_ctx *ctx, struct action_batch *b,
			const struct actions_error *perr, long index, const json_t *list, size_t n)
{
	struct actions_error err = *perr;
	const json_t *type = json_object_get(j, "type"), *single = json_object_get(j, "action");
	json_t *one = NULL;

	/* OpenAI's preview computer call: its one "action" is the list */
	if ((!list || json_is_null(list)) && json_is_string(type) &&
	    !strcmp(json_string_value(type), "computer_call") && json_is_object(single)) {
		one = json_pack("[O]", single);
		list = one;
		n = 1;
	}
	if (!b) {
		if (err.code == ACTIONS_OK || !err.message[0] || index < -1 ||
		    (index >= 0 && (!json_is_array(list) || (size_t)index >= n ||
				    !element_refused(j, json_array_get(list, (size_t)index), ctx))))
			__builtin_trap();
		if (json_is_array(list) && n > ACTIONS_MAX_BATCH && index != -1)
			__builtin_trap();
		goto out;
	}
	if (b->n < 1 || b->n > ACTIONS_MAX_BATCH ||
	    (!b->is_batch && (b->n != 1 || json_is_array(list))) ||
	    (b->is_batch && (b->n > n || (b->refused != (b->n < n)))))
		__builtin_trap();
	for (size_t i = 0; i < b->n; i++) {
		check_one(b->actions[i], ctx->screen_width, ctx->screen_height);
		if (b->is_batch && element_refused(j, json_array_get(list, i), ctx))
			__builtin_trap();
	}
	if (b->refused && (!b->refusal.message[0] || b->refusal.code == ACTIONS_OK ||
			   !element_refused(j, json_array_get(list, b->n), ctx)))
		__builtin_trap();
out:
	json_decref(one);
}

static void check_batch(const json_t *j, const struct actions_ctx *ctx, const uint8_t *d)
{
	struct actions_error err = { 0 };
	long index;
	struct action_batch *b = batch_parse(j, ctx, &err, &index);
	const json_t *list = json_object_get(j, "actions");
	size_t n = json_array_size(list);

	if (toolset_is_turn(j)) {
		if (b && b->turn)
			check_turn(b, ctx, d);
		else if (b || err.code == ACTIONS_OK || !err.message[0] || index < -1)
			__builtin_trap();
		batch_destroy(b);
		return;
	}
	if (b && b->turn)
		__builtin_trap();
	check_plain(j, ctx, b, &err, index, list, n);
	batch_destroy(b);
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct actions_ctx ctx = { 0 };
	struct actions_error err;
	struct action *a;
	json_t *j;
	int pick;

	if (size >= 12)
		check_map(data + size - 12);
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
	check_batch(j, &ctx, data);
	json_decref(j);
	if (!a) {
		if (err.code == ACTIONS_OK || !err.message[0] || !actions_errc_name(err.code))
			__builtin_trap();
		return 0;
	}
	check_one(a, ctx.screen_width, ctx.screen_height);
	actions_destroy(a);
	return 0;
}
