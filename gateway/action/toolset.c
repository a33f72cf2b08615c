/* gateway/action/toolset.c: see toolset.h. */
#include "gateway/action/toolset.h"

#include "common/utf8.h"
#include "display/encode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The members, in the SDKs' order, with the input fields each takes and the
 * acknowledgment the model reads after a pure action (the SDKs' own words;
 * {text}, {duration}, {scroll_direction} from the input). */
struct member {
	const char *name;
	const char *ack; /* NULL: answered with an image or a point */
	const char *const *fields;
};

#define FIELDS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define CLICK_FIELDS FIELDS("coordinate", "text")

static const struct member members[TOOLSET_N_MEMBERS] = {
	{ "key", "Pressed {text}.", FIELDS("text", "repeat") },
	{ "hold_key", "Held {text} for {duration}s.", FIELDS("text", "duration") },
	{ "type", "Typed.", FIELDS("text") },
	{ "cursor_position", NULL, FIELDS(NULL) },
	{ "mouse_move", "Moved the mouse.", FIELDS("coordinate") },
	{ "left_mouse_down", "Left mouse button pressed.", CLICK_FIELDS },
	{ "left_mouse_up", "Left mouse button released.", CLICK_FIELDS },
	{ "left_click", "Clicked.", CLICK_FIELDS },
	{ "left_click_drag", "Dragged.", FIELDS("start_coordinate", "coordinate", "text") },
	{ "right_click", "Right-clicked.", CLICK_FIELDS },
	{ "middle_click", "Middle-clicked.", CLICK_FIELDS },
	{ "double_click", "Double-clicked.", CLICK_FIELDS },
	{ "triple_click", "Triple-clicked.", CLICK_FIELDS },
	{ "scroll", "Scrolled {scroll_direction}.",
	  FIELDS("coordinate", "scroll_direction", "scroll_amount", "text") },
	{ "wait", "Waited {duration}s.", FIELDS("duration") },
	{ "screenshot", NULL, FIELDS(NULL) },
	{ "zoom", NULL, FIELDS("region") },
};

struct toolset_limits toolset_default_limits(void)
{
	return (struct toolset_limits){ TOOLSET_DEFAULT_LONG_EDGE, TOOLSET_DEFAULT_VISUAL_TOKENS };
}

const char *toolset_member_name(int member)
{
	return member >= 0 && member < TOOLSET_N_MEMBERS ? members[member].name : NULL;
}

int toolset_member_index(const char *name)
{
	for (int i = 0; name && i < TOOLSET_N_MEMBERS; i++)
		if (!strcmp(members[i].name, name))
			return i;
	return -1;
}

/* ---- the turn's envelope ---- */

static const json_t *get(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_null(v) ? NULL : v;
}

static bool is_str(const json_t *v, const char *s)
{
	return json_is_string(v) && !strcmp(json_string_value(v), s);
}

/* A tool_use block, or a bare {name, input}. */
static bool is_call(const json_t *e)
{
	return json_is_object(e) && !get(e, "action") &&
	       (is_str(get(e, "type"), "tool_use") ||
		(!get(e, "type") && json_is_string(get(e, "name")) && get(e, "input")));
}

/* In a message's content: a tool_use block of the computer toolset. */
static bool is_computer_block(const json_t *e)
{
	const json_t *ts = get(e, "toolset_name");

	if (!is_str(get(e, "type"), "tool_use"))
		return false;
	if (ts)
		return is_str(ts, TOOLSET_NAME);
	return toolset_member_index(json_string_value(get(e, "name"))) >= 0;
}

bool toolset_is_turn(const json_t *obj)
{
	const json_t *list = get(obj, "actions"), *content = get(obj, "content");

	if (!json_is_object(obj))
		return false;
	if (json_is_array(list))
		return json_array_size(list) > 0 && is_call(json_array_get(list, 0));
	if (json_is_array(content))
		return !get(obj, "action");
	return is_call(obj);
}

void toolset_turn_destroy(struct toolset_turn *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		json_decref(t->calls[i].id);
		json_decref(t->calls[i].input);
	}
	free(t->calls);
	free(t);
}

static int add_call(struct toolset_turn *t, const json_t *e, size_t i, struct actions_error *err)
{
	const json_t *name = get(e, "name"), *input = get(e, "input"), *id = get(e, "id");
	const json_t *ts = get(e, "toolset_name");
	struct toolset_call *c = &t->calls[t->n];

	if (!json_is_string(name))
		return actions_fail(err, ACTIONS_E_MISSING_FIELD, "name",
				    "call %zu: field \"name\" (a computer tool's name) is required",
				    i);
	if (ts && !is_str(ts, TOOLSET_NAME))
		return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "toolset_name",
				    "call %zu: \"toolset_name\" must be \"" TOOLSET_NAME "\"", i);
	c->member = toolset_member_index(json_string_value(name));
	if (c->member < 0)
		return actions_fail(err, ACTIONS_E_UNKNOWN_ACTION, "name",
				    "call %zu: \"%.40s\" is no tool of " TOOLSET_TYPE, i,
				    json_string_value(name));
	if (input && !json_is_object(input))
		return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "input",
				    "call %zu: field \"input\" must be an object", i);
	if (id && !json_is_string(id) && !json_is_integer(id))
		return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "id",
				    "call %zu: field \"id\" must be a string or an integer", i);
	if (json_is_string(id) && json_string_length(id) > 128)
		return actions_fail(err, ACTIONS_E_TOO_LONG, "id",
				    "call %zu: \"id\" is over 128 bytes", i);
	c->input = input ? json_incref((json_t *)input) : json_object();
	c->id = id ? json_incref((json_t *)id) : NULL;
	if (!c->input)
		return actions_fail(err, ACTIONS_E_NO_MEMORY, "", "out of memory");
	t->n++;
	return 0;
}

/* "tool" (the entry) or "tools" (the request's list): the members turned off. */
static int parse_entry(struct toolset_turn *t, const json_t *obj, struct actions_error *err)
{
	const json_t *entry = get(obj, "tool"), *tools = get(obj, "tools"), *configs, *cfg;
	const char *key;
	size_t i;

	if (entry && tools)
		return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "tools",
				    "give the toolset's entry in \"tool\" or \"tools\", not both");
	if (json_is_array(tools)) {
		const json_t *e;

		json_array_foreach(tools, i, e)
		{
			if (json_is_object(e) && is_str(get(e, "type"), TOOLSET_TYPE))
				entry = e;
		}
		if (!entry)
			return 0; /* the request's other tools: nothing of ours */
	} else if (tools) {
		return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "tools",
				    "field \"tools\" must be the request's list of tools");
	}
	if (!entry)
		return 0;
	if (!json_is_object(entry) || !is_str(get(entry, "type"), TOOLSET_TYPE))
		return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "tool",
				    "field \"tool\" must be {\"type\": \"" TOOLSET_TYPE
				    "\", \"configs\"?: {...}}");
	t->has_entry = true;
	configs = get(entry, "configs");
	if (!configs)
		return 0;
	if (!json_is_object(configs))
		return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "configs",
				    "field \"configs\" must be an object of member configs");
	json_object_foreach((json_t *)configs, key, cfg)
	{
		int m = toolset_member_index(key);
		const json_t *on = json_is_object(cfg) ? get(cfg, "enabled") : NULL;

		if (m < 0)
			return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "configs",
					    "configs: \"%.40s\" is no tool of " TOOLSET_TYPE, key);
		if (json_is_null(cfg))
			continue;
		if (!json_is_object(cfg) || (on && !json_is_boolean(on)))
			return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "configs",
					    "configs.%s must be {\"enabled\"?: true|false}", key);
		if (json_is_false(on))
			t->disabled |= 1u << m;
	}
	return 0;
}

static int parse_limits(struct toolset_turn *t, const json_t *obj, struct actions_error *err)
{
	const json_t *lim = get(obj, "image_limits"), *v;
	const char *key;

	if (!lim)
		return 0;
	if (!json_is_object(lim))
		return actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "image_limits",
				    "field \"image_limits\" must be {\"max_long_edge\"?, "
				    "\"max_visual_tokens\"?}");
	t->has_limits = true;
	t->limits = toolset_default_limits();
	json_object_foreach((json_t *)lim, key, v)
	{
		bool edge = !strcmp(key, "max_long_edge");
		long long max = edge ? TOOLSET_MAX_LONG_EDGE : TOOLSET_MAX_VISUAL_TOKENS;

		if (!edge && strcmp(key, "max_visual_tokens"))
			return actions_fail(
				err, ACTIONS_E_INVALID_ARGUMENT, "image_limits",
				"image_limits takes max_long_edge and max_visual_tokens, "
				"not \"%.40s\"",
				key);
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
			return actions_fail(err, ACTIONS_E_OUT_OF_RANGE, "image_limits",
					    "image_limits.%s must be an integer in 1..%lld", key,
					    max);
		if (edge)
			t->limits.long_edge = (int)json_integer_value(v);
		else
			t->limits.visual_tokens = (int)json_integer_value(v);
	}
	return 0;
}

struct toolset_turn *toolset_parse_turn(const json_t *obj, struct actions_error *err, long *index)
{
	const json_t *list = get(obj, "actions"), *content = get(obj, "content"), *e;
	struct toolset_turn *t = calloc(1, sizeof(*t));
	size_t n = 1, i;

	memset(err, 0, sizeof(*err));
	*index = -1;
	if (!t) {
		actions_fail(err, ACTIONS_E_NO_MEMORY, "", "out of memory");
		return NULL;
	}
	if (!json_is_object(obj) || !toolset_is_turn(obj)) {
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "",
			     "not a turn of " TOOLSET_TYPE " calls");
		goto fail;
	}
	if (list)
		n = json_array_size(list);
	else if (content)
		n = json_array_size(content);
	if (n > TOOLSET_MAX_CALLS && list) {
		actions_fail(err, ACTIONS_E_TOO_LONG, "actions",
			     "a turn has at most %d calls (this one has %zu)", TOOLSET_MAX_CALLS,
			     n);
		goto fail;
	}
	if (!(t->calls = calloc(n ? n : 1, sizeof(*t->calls)))) {
		actions_fail(err, ACTIONS_E_NO_MEMORY, "", "out of memory");
		goto fail;
	}
	if (list) {
		json_array_foreach(list, i, e)
		{
			if (!is_call(e)) {
				actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "actions",
					     "actions[%zu]: a turn of computer tool calls takes "
					     "tool_use blocks only",
					     i);
				*index = (long)i;
				goto fail;
			}
			if (add_call(t, e, i, err) < 0) {
				*index = (long)i;
				goto fail;
			}
		}
	} else if (content) {
		json_array_foreach(content, i, e)
		{
			if (!is_computer_block(e))
				continue;
			if (t->n >= TOOLSET_MAX_CALLS) {
				actions_fail(err, ACTIONS_E_TOO_LONG, "content",
					     "a turn has at most %d computer calls",
					     TOOLSET_MAX_CALLS);
				goto fail;
			}
			if (add_call(t, e, t->n, err) < 0) {
				*index = (long)t->n;
				goto fail;
			}
		}
		if (t->n == 0) {
			actions_fail(err, ACTIONS_E_MISSING_FIELD, "content",
				     "the message has no tool_use block of the computer toolset");
			goto fail;
		}
	} else if (add_call(t, obj, 0, err) < 0) {
		goto fail;
	}
	if (parse_entry(t, obj, err) < 0 || parse_limits(t, obj, err) < 0)
		goto fail;
	return t;
fail:
	toolset_turn_destroy(t);
	return NULL;
}

/* ---- sizes ---- */

static long long tokens(int w, int h)
{
	return (long long)((w + TOOLSET_PATCH - 1) / TOOLSET_PATCH) *
	       ((h + TOOLSET_PATCH - 1) / TOOLSET_PATCH);
}

void toolset_fit(int w, int h, const struct toolset_limits *lim, int *out_w, int *out_h, int *enc_w,
		 int *enc_h)
{
	bool wide = w >= h;
	int longest = wide ? w : h;
	double scale;

	/* The long edge from the largest down: the first fit is the largest.
	 * Sizes are made as the encoder will make them, so what is asked of it
	 * is exactly what the model sees. */
	for (int e = longest < lim->long_edge ? longest : lim->long_edge; e >= 1; e--) {
		*enc_w = wide ? e : 0;
		*enc_h = wide ? 0 : e;
		display_scale_fit(w, h, *enc_w, *enc_h, out_w, out_h, &scale);
		if (*out_w <= lim->long_edge && *out_h <= lim->long_edge &&
		    tokens(*out_w, *out_h) <= lim->visual_tokens)
			return;
	}
	/* Nothing fits (a sliver under a tiny token limit): one pixel's side. */
	*enc_w = wide ? 1 : 0;
	*enc_h = wide ? 0 : 1;
	display_scale_fit(w, h, *enc_w, *enc_h, out_w, out_h, &scale);
}

void toolset_frame_init(struct toolset_frame *f, int screen_w, int screen_h,
			const struct toolset_limits *lim)
{
	int ew, eh;

	f->limits = *lim;
	f->screen_w = screen_w;
	f->screen_h = screen_h;
	toolset_fit(screen_w, screen_h, lim, &f->shot_w, &f->shot_h, &ew, &eh);
}

void toolset_frame_encode_size(const struct toolset_frame *f, int *enc_w, int *enc_h)
{
	bool wide = f->screen_w >= f->screen_h;

	*enc_w = wide ? f->shot_w : 0;
	*enc_h = wide ? 0 : f->shot_h;
}

/* round(v * (to - 1) / (from - 1)), halves up: actions_map_point's axis
 * the other way; a 1-pixel axis maps to 0. */
static int unmap_axis(int v, int from, int to)
{
	long long num, den;

	if (from <= 1 || to <= 1)
		return 0;
	if (v < 0)
		v = 0;
	if (v > from - 1)
		v = from - 1;
	num = (long long)v * (to - 1);
	den = from - 1;
	return (int)((2 * num + den) / (2 * den));
}

void toolset_to_shot(const struct toolset_frame *f, int screen_w, int screen_h, int x, int y,
		     int *sx, int *sy)
{
	*sx = unmap_axis(x, screen_w, f->shot_w);
	*sy = unmap_axis(y, screen_h, f->shot_h);
}

/* ---- a call ---- */

static bool takes(const struct member *m, const char *key)
{
	for (const char *const *k = m->fields; *k; k++)
		if (!strcmp(*k, key))
			return true;
	return false;
}

struct action *toolset_call_parse(const struct toolset_call *c, const struct actions_ctx *ctx,
				  uint32_t disabled, struct actions_error *err)
{
	const struct member *m = &members[c->member];
	json_t *obj, *v;
	struct action *a;
	const char *key;

	memset(err, 0, sizeof(*err));
	if (disabled & (1u << c->member)) {
		actions_fail(err, ACTIONS_E_UNKNOWN_ACTION, "name",
			     "the computer tool \"%s\" is disabled by the toolset's configs",
			     m->name);
		return NULL;
	}
	/* The member as the Anthropic dialect's action of the same name, with
	 * the member's own fields only: an input cannot pick another action,
	 * dialect or coordinate space. */
	if (!(obj = json_pack("{s:s, s:s}", "dialect", "anthropic", "action", m->name))) {
		actions_fail(err, ACTIONS_E_NO_MEMORY, "", "out of memory");
		return NULL;
	}
	json_object_foreach(c->input, key, v)
	{
		if (json_is_null(v))
			continue;
		if (!takes(m, key)) {
			json_decref(obj);
			actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, key,
				     "field \"%.40s\" is not an input of %s", key, m->name);
			return NULL;
		}
		json_object_set(obj, key, v);
	}
	if (c->id)
		json_object_set(obj, "id", c->id);
	a = actions_parse(obj, ctx, err);
	json_decref(obj);
	return a;
}

/* ---- results ---- */

static json_t *result(const struct toolset_call *c, json_t *content, bool is_error)
{
	json_t *r;

	if (!content)
		return NULL;
	r = json_pack("{s:s, s:s, s:o}", "type", "tool_result", "toolset_name", TOOLSET_NAME,
		      "content", content);
	if (r && c && c->id)
		json_object_set(r, "tool_use_id", c->id);
	if (r && is_error)
		json_object_set_new(r, "is_error", json_true());
	return r;
}

static json_t *text_blocks(const char *text)
{
	return json_pack("[{s:s, s:s}]", "type", "text", "text", text);
}

/* An input field as the acknowledgment shows it, on one line: numbers as
 * JSON writes them (2, 0.5), text with its controls made spaces. */
static void field_text(const json_t *input, const char *key, char *out, size_t size)
{
	const json_t *v = get(input, key);

	out[0] = '\0';
	if (json_is_integer(v))
		snprintf(out, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v) && isfinite(json_real_value(v)))
		snprintf(out, size, "%.15g", json_real_value(v));
	else if (json_is_string(v))
		snprintf(out, size, "%s", json_string_value(v));
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	utf8_scrub(out);
}

json_t *toolset_result_ack(const struct toolset_call *c)
{
	const struct member *m = &members[c->member];
	char text[512] = "", val[256];
	size_t len = 0;

	for (const char *p = m->ack ? m->ack : "Done."; *p && len + 1 < sizeof(text);) {
		const char *close = *p == '{' ? strchr(p, '}') : NULL;

		if (close && close - p - 1 < 32) {
			char key[32];

			memcpy(key, p + 1, (size_t)(close - p - 1));
			key[close - p - 1] = '\0';
			field_text(c->input, key, val, sizeof(val));
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s", val);
			if (len >= sizeof(text))
				len = sizeof(text) - 1;
			p = close + 1;
		} else {
			text[len++] = *p++;
			text[len] = '\0';
		}
	}
	utf8_scrub(text);
	return result(c, text_blocks(text), false);
}

json_t *toolset_result_point(const struct toolset_call *c, int x, int y)
{
	char text[64];

	snprintf(text, sizeof(text), "X=%d,Y=%d", x, y);
	return result(c, text_blocks(text), false);
}

json_t *toolset_result_image(const struct toolset_call *c, json_t *data, const char *media_type)
{
	json_t *block;

	if (!data)
		return NULL;
	block = json_pack("[{s:s, s:{s:s, s:s, s:o}}]", "type", "image", "source", "type", "base64",
			  "media_type", media_type, "data", data);
	return result(c, block, false);
}

json_t *toolset_result_error(const struct toolset_call *c, const char *text)
{
	return result(c, json_string(text), true);
}

json_t *toolset_results_stopped(const struct toolset_turn *t, const json_t *done, size_t index,
				const char *msg)
{
	json_t *all = done ? json_copy((json_t *)done) : json_array();

	for (size_t i = index; all && i < t->n; i++) {
		json_t *e = toolset_result_error(&t->calls[i],
						 i == index ? msg : TOOLSET_NOT_EXECUTED);

		if (json_array_append_new(all, e) < 0) {
			json_decref(all);
			return NULL;
		}
	}
	return all;
}
