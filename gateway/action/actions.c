/* gateway/action/actions.c: see actions.h. */
#include "gateway/action/actions.h"

#include "common/utf8.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_MAX_BYTES 128
/* Anthropic's scroll_amount when the input leaves it out (as its reference tool does). */
#define ANTHROPIC_DEFAULT_SCROLL 3
#define ANTHROPIC_DEFAULT_WAIT_MS 1000
/* OpenAI's wait carries no duration; its sample computers wait 1 s. */
#define OPENAI_WAIT_MS 1000
/* Coordinates beyond this are rejected before any arithmetic on them. */
#define COORD_LIMIT 1000000

const char *actions_errc_name(enum actions_errc code)
{
	switch (code) {
	case ACTIONS_OK:
		return "ok";
	case ACTIONS_E_INVALID_ARGUMENT:
		return "invalid_argument";
	case ACTIONS_E_MISSING_FIELD:
		return "missing_field";
	case ACTIONS_E_UNKNOWN_ACTION:
		return "unknown_action";
	case ACTIONS_E_UNKNOWN_DIALECT:
		return "unknown_dialect";
	case ACTIONS_E_UNKNOWN_KEY:
		return "unknown_key";
	case ACTIONS_E_OUT_OF_RANGE:
		return "out_of_range";
	case ACTIONS_E_TOO_LONG:
		return "too_long";
	case ACTIONS_E_NO_MEMORY:
		return "no_memory";
	}
	return "invalid_argument";
}

int actions_fail(struct actions_error *err, enum actions_errc code, const char *field,
		 const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	/* Both quote what the client sent and may cut a character in two. */
	utf8_scrub(err->field);
	utf8_scrub(err->message);
	return -1;
}

/* ---- coordinate mapping ---- */

/* round(v * (to - 1) / (from - 1)) with halves up; from == 1 -> the middle. */
static int map_axis(int v, int from, int to)
{
	long long num, den;

	if (from == 1)
		return (to - 1) / 2;
	num = (long long)v * (to - 1);
	den = from - 1;
	return (int)((2 * num + den) / (2 * den));
}

int actions_map_point(const struct actions_space *space, int screen_w, int screen_h, int x, int y,
		      struct action_point *out)
{
	int w = screen_w, h = screen_h;

	if (screen_w <= 0 || screen_h <= 0)
		return -EINVAL;
	if (space->kind == ACTIONS_SPACE_SCREENSHOT) {
		w = space->width;
		h = space->height;
		if (w <= 0 || h <= 0)
			return -EINVAL;
	}
	if (x < 0 || y < 0 || x >= w || y >= h)
		return -ERANGE;
	if (space->kind == ACTIONS_SPACE_SCREENSHOT) {
		out->x = map_axis(x, w, screen_w);
		out->y = map_axis(y, h, screen_h);
	} else {
		out->x = x;
		out->y = y;
	}
	return 0;
}

/* ---- field readers: each returns 0, 1 when absent (optional), or -1 with err ---- */

struct parse {
	const json_t *obj;
	const struct actions_ctx *ctx;
	struct actions_space space;
	struct action *a;
	struct actions_error *err;
};

/* A field's value, NULL when absent or null. */
static const json_t *field(const struct parse *p, const char *key)
{
	const json_t *v = json_object_get(p->obj, key);

	return json_is_null(v) ? NULL : v;
}

static int missing(struct parse *p, const char *key)
{
	return actions_fail(p->err, ACTIONS_E_MISSING_FIELD, key, "field \"%s\" is required by %s",
			    key, p->a->name);
}

/* A number as an integer in [min, max]; reals are rounded when allow_real. */
static int number_value(struct parse *p, const json_t *v, const char *key, bool allow_real,
			long long min, long long max, long long *out)
{
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
	} else if (allow_real && json_is_real(v)) {
		double d = json_real_value(v);

		if (!isfinite(d) || d < (double)LLONG_MIN / 2 || d > (double)LLONG_MAX / 2)
			return actions_fail(p->err, ACTIONS_E_OUT_OF_RANGE, key,
					    "field \"%s\" is out of range", key);
		*out = (long long)(d < 0 ? d - 0.5 : d + 0.5);
	} else {
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must be %s", key,
				    allow_real ? "a number" : "an integer");
	}
	if (*out < min || *out > max)
		return actions_fail(p->err, ACTIONS_E_OUT_OF_RANGE, key,
				    "field \"%s\" is %lld, outside %lld..%lld", key, *out, min,
				    max);
	return 0;
}

static int get_int(struct parse *p, const char *key, bool required, bool allow_real, long long min,
		   long long max, int *out)
{
	const json_t *v = field(p, key);
	long long n;

	if (!v)
		return required ? missing(p, key) : 1;
	if (number_value(p, v, key, allow_real, min, max, &n) < 0)
		return -1;
	*out = (int)n;
	return 0;
}

/* Seconds (any number) -> milliseconds in 0..ACTIONS_MAX_DURATION_MS. */
static int get_seconds(struct parse *p, const char *key, bool required, int *ms)
{
	const json_t *v = field(p, key);
	double d;

	if (!v)
		return required ? missing(p, key) : 1;
	if (!json_is_number(v))
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must be a number of seconds", key);
	d = json_number_value(v);
	if (!isfinite(d) || d < 0)
		return actions_fail(p->err, ACTIONS_E_OUT_OF_RANGE, key,
				    "field \"%s\" must not be negative", key);
	if (d * 1000.0 > ACTIONS_MAX_DURATION_MS)
		return actions_fail(p->err, ACTIONS_E_OUT_OF_RANGE, key,
				    "field \"%s\" is over the %d s limit", key,
				    ACTIONS_MAX_DURATION_MS / 1000);
	*ms = (int)(d * 1000.0 + 0.5);
	return 0;
}

static int get_ms(struct parse *p, const char *key, bool required, int *ms)
{
	const json_t *v = field(p, key);

	if (v && json_is_integer(v) && json_integer_value(v) < 0)
		return actions_fail(p->err, ACTIONS_E_OUT_OF_RANGE, key,
				    "field \"%s\" must not be negative", key);
	return get_int(p, key, required, false, 0, ACTIONS_MAX_DURATION_MS, ms);
}

static int get_string(struct parse *p, const char *key, bool required, const char **s, size_t *len)
{
	const json_t *v = field(p, key);

	if (!v)
		return required ? missing(p, key) : 1;
	if (!json_is_string(v))
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must be a string", key);
	*s = json_string_value(v);
	*len = json_string_length(v);
	return 0;
}

/* Maps a point given in the action's space into a->point-like *out. */
static int map_point(struct parse *p, const char *key, long long x, long long y,
		     struct action_point *out)
{
	int r = x < -COORD_LIMIT || x > COORD_LIMIT || y < -COORD_LIMIT || y > COORD_LIMIT
			? -ERANGE
			: actions_map_point(&p->space, p->ctx->screen_width, p->ctx->screen_height,
					    (int)x, (int)y, out);

	if (r == -ERANGE) {
		if (p->space.kind == ACTIONS_SPACE_SCREENSHOT)
			return actions_fail(
				p->err, ACTIONS_E_OUT_OF_RANGE, key,
				"field \"%s\": (%lld, %lld) is outside the %dx%d screenshot", key,
				x, y, p->space.width, p->space.height);
		return actions_fail(p->err, ACTIONS_E_OUT_OF_RANGE, key,
				    "field \"%s\": (%lld, %lld) is outside the %dx%d screen", key,
				    x, y, p->ctx->screen_width, p->ctx->screen_height);
	}
	if (r < 0)
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key, "screen size unknown");
	return 0;
}

/* A coordinate number inside a point: numbers only, reals rounded. */
static int coord_value(struct parse *p, const json_t *v, const char *key, long long *out)
{
	if (!json_is_number(v))
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must hold numbers", key);
	return number_value(p, v, key, true, LLONG_MIN / 4, LLONG_MAX / 4, out);
}

/* A point value: [x, y], or {"x": x, "y": y} when allow_object. */
static int point_value(struct parse *p, const json_t *v, const char *key, bool allow_object,
		       struct action_point *out)
{
	long long x, y;

	if (json_is_array(v) && json_array_size(v) == 2) {
		if (coord_value(p, json_array_get(v, 0), key, &x) < 0 ||
		    coord_value(p, json_array_get(v, 1), key, &y) < 0)
			return -1;
	} else if (allow_object && json_is_object(v) && json_object_get(v, "x") &&
		   json_object_get(v, "y")) {
		if (coord_value(p, json_object_get(v, "x"), key, &x) < 0 ||
		    coord_value(p, json_object_get(v, "y"), key, &y) < 0)
			return -1;
	} else {
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    allow_object
					    ? "field \"%s\" must be [x, y] or {\"x\": x, \"y\": y}"
					    : "field \"%s\" must be [x, y]",
				    key);
	}
	return map_point(p, key, x, y, out);
}

/* Anthropic's "coordinate" style: [x, y]. */
static int get_coordinate(struct parse *p, const char *key, bool required, struct action_point *out)
{
	const json_t *v = field(p, key);

	if (!v)
		return required ? missing(p, key) : 1;
	return point_value(p, v, key, false, out);
}

/* OpenAI's and Vitrine's "x" and "y"; Vitrine also takes "coordinate". */
static int get_xy(struct parse *p, bool required, bool allow_coordinate, struct action_point *out)
{
	const json_t *x = field(p, "x"), *y = field(p, "y");
	long long xv, yv;

	if (allow_coordinate && field(p, "coordinate")) {
		if (x || y)
			return actions_fail(
				p->err, ACTIONS_E_INVALID_ARGUMENT, "coordinate",
				"give either \"coordinate\" or \"x\" and \"y\", not both");
		return get_coordinate(p, "coordinate", true, out);
	}
	if (!x && !y)
		return required ? missing(p, "x") : 1;
	if (!x || !y)
		return missing(p, x ? "y" : "x");
	if (coord_value(p, x, "x", &xv) < 0 || coord_value(p, y, "y", &yv) < 0)
		return -1;
	return map_point(p, "x", xv, yv, out);
}

static int key_error(struct parse *p, const char *key, int r, const char *msg)
{
	enum actions_errc code = r == -ENOENT  ? ACTIONS_E_UNKNOWN_KEY
				 : r == -E2BIG ? ACTIONS_E_TOO_LONG
					       : ACTIONS_E_INVALID_ARGUMENT;

	return actions_fail(p->err, code, key, "field \"%s\": %s", key, msg);
}

/* A key sequence in xdotool syntax into a->chords. */
static int sequence_value(struct parse *p, const char *key, const char *s)
{
	char msg[160];
	int r = keys_parse_sequence_in(p->ctx->keymap, s, p->a->chords, ACTIONS_MAX_CHORDS,
				       &p->a->n_chords, msg, sizeof(msg));

	return r < 0 ? key_error(p, key, r, msg) : 0;
}

/* An array of key names (each may itself be a chord) as one chord into *out. */
static int chord_array_value(struct parse *p, const char *key, const json_t *arr,
			     struct keys_chord *out)
{
	size_t i;
	const json_t *v;

	memset(out, 0, sizeof(*out));
	json_array_foreach(arr, i, v)
	{
		struct keys_chord one;
		char msg[160];
		int r;

		if (!json_is_string(v))
			return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
					    "field \"%s\" must hold strings", key);
		const char *name = json_string_value(v);
		char lower[2];

		/* ["CTRL", "A"] is ctrl+a, as in a "ctrl+A" chord (keys.h). */
		if (json_string_length(v) == 1 && name[0] >= 'A' && name[0] <= 'Z' &&
		    json_array_size(arr) > 1) {
			lower[0] = (char)(name[0] - 'A' + 'a');
			lower[1] = '\0';
			name = lower;
		}
		r = keys_parse_chord_in(p->ctx->keymap, name, json_string_length(v), &one, msg,
					sizeof(msg));
		if (r == 0 && keys_chord_merge(out, &one) < 0) {
			r = -E2BIG;
			snprintf(msg, sizeof(msg), "more than %d keys at once", KEYS_MAX_CHORD);
		}
		if (r < 0)
			return key_error(p, key, r, msg);
	}
	return 0;
}

/* Modifiers held during a pointer action: "ctrl+shift", "ctrl shift" or an
 * array of names. Fills a->modifiers. */
static int modifiers_value(struct parse *p, const char *key, const json_t *v)
{
	struct keys_chord seq[ACTIONS_MAX_CHORDS];
	size_t n;
	char msg[160];
	int r;

	memset(&p->a->modifiers, 0, sizeof(p->a->modifiers));
	if (json_is_array(v))
		return chord_array_value(p, key, v, &p->a->modifiers);
	if (!json_is_string(v))
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must be a string of keys", key);
	r = keys_parse_sequence_in(p->ctx->keymap, json_string_value(v), seq, ACTIONS_MAX_CHORDS,
				   &n, msg, sizeof(msg));
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (keys_chord_merge(&p->a->modifiers, &seq[i]) < 0) {
			r = -E2BIG;
			snprintf(msg, sizeof(msg), "more than %d keys at once", KEYS_MAX_CHORD);
		}
	}
	return r < 0 ? key_error(p, key, r, msg) : 0;
}

static int get_modifiers(struct parse *p, const char *key)
{
	const json_t *v = field(p, key);

	return v ? modifiers_value(p, key, v) : 1;
}

static int get_text(struct parse *p, const char *key)
{
	const char *s;
	size_t len;
	int r = get_string(p, key, true, &s, &len);

	if (r != 0)
		return -1;
	if (len > ACTIONS_MAX_TEXT_BYTES)
		return actions_fail(p->err, ACTIONS_E_TOO_LONG, key,
				    "field \"%s\" is %zu bytes, over the %d byte limit", key, len,
				    ACTIONS_MAX_TEXT_BYTES);
	if (memchr(s, '\0', len))
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must not contain NUL characters", key);
	p->a->text = malloc(len + 1);
	if (!p->a->text)
		return actions_fail(p->err, ACTIONS_E_NO_MEMORY, key, "out of memory");
	memcpy(p->a->text, s, len + 1);
	p->a->text_len = len;
	return 0;
}

/* A drag path: an array of 2 or more points ([x, y] or {x, y}). */
static int get_path(struct parse *p, const char *key, size_t min)
{
	const json_t *v = field(p, key), *pt;
	size_t i, n;

	if (!v)
		return missing(p, key);
	if (!json_is_array(v))
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must be an array of points", key);
	n = json_array_size(v);
	if (n < min)
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" needs at least %zu points", key, min);
	if (n > ACTIONS_MAX_PATH)
		return actions_fail(p->err, ACTIONS_E_TOO_LONG, key,
				    "field \"%s\" has %zu points, over the limit of %d", key, n,
				    ACTIONS_MAX_PATH);
	p->a->path = calloc(n, sizeof(*p->a->path));
	if (!p->a->path)
		return actions_fail(p->err, ACTIONS_E_NO_MEMORY, key, "out of memory");
	json_array_foreach(v, i, pt)
	{
		if (point_value(p, pt, key, true, &p->a->path[i]) < 0)
			return -1;
	}
	p->a->path_len = n;
	return 0;
}

static int set_path2(struct parse *p, const char *key, const struct action_point *from,
		     const struct action_point *to)
{
	p->a->path = calloc(2, sizeof(*p->a->path));
	if (!p->a->path)
		return actions_fail(p->err, ACTIONS_E_NO_MEMORY, key, "out of memory");
	if (from) {
		p->a->path[0] = *from;
		p->a->path[1] = *to;
		p->a->path_len = 2;
	} else {
		p->a->path[0] = *to;
		p->a->path_len = 1;
		p->a->drag_from_pointer = true;
	}
	return 0;
}

/* Zoom region [x0, y0, x1, y1]: x0, y0 the top-left pixel, x1, y1 the edge
 * past the bottom-right pixel (Anthropic crops (x1 - x0) x (y1 - y0) at x0, y0). */
static int get_region(struct parse *p, const char *key)
{
	const json_t *v = field(p, key);
	long long c[4];
	struct action_point tl, br;
	int w, h;

	if (!v)
		return missing(p, key);
	if (!json_is_array(v) || json_array_size(v) != 4)
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must be [x0, y0, x1, y1]", key);
	for (size_t i = 0; i < 4; i++)
		if (coord_value(p, json_array_get(v, i), key, &c[i]) < 0)
			return -1;
	w = p->space.kind == ACTIONS_SPACE_SCREENSHOT ? p->space.width : p->ctx->screen_width;
	h = p->space.kind == ACTIONS_SPACE_SCREENSHOT ? p->space.height : p->ctx->screen_height;
	if (c[0] < 0 || c[1] < 0 || c[2] > w || c[3] > h || c[0] >= c[2] || c[1] >= c[3])
		return actions_fail(
			p->err, ACTIONS_E_OUT_OF_RANGE, key,
			"field \"%s\": [%lld, %lld, %lld, %lld] is not a non-empty region of "
			"the %dx%d %s",
			key, c[0], c[1], c[2], c[3], w, h,
			p->space.kind == ACTIONS_SPACE_SCREENSHOT ? "screenshot" : "screen");
	if (map_point(p, key, c[0], c[1], &tl) < 0 ||
	    map_point(p, key, c[2] - 1, c[3] - 1, &br) < 0)
		return -1;
	p->a->region = (struct action_rect){ tl.x, tl.y, br.x - tl.x + 1, br.y - tl.y + 1 };
	return 0;
}

/* ---- action tables ---- */

struct spec {
	const char *name;
	enum action_kind kind;
	enum action_button button;
	int count; /* clicks; 0 = from the "count" field (Vitrine "click") */
	const char *const *fields; /* accepted besides the common ones; NULL-terminated */
};

static const char *const common_fields[] = {
	"dialect",	     "id", "screenshot", "coordinate_space", "screenshot_width",
	"screenshot_height", NULL
};

#define FIELDS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NO_FIELDS ((const char *const[]){ NULL })

static const struct spec anthropic_specs[] = {
	{ "key", ACTION_KEY, 0, 0, FIELDS("action", "text", "repeat") },
	{ "hold_key", ACTION_HOLD_KEY, 0, 0, FIELDS("action", "text", "duration") },
	{ "type", ACTION_TYPE, 0, 0, FIELDS("action", "text") },
	{ "mouse_move", ACTION_MOVE, 0, 0, FIELDS("action", "coordinate") },
	{ "left_click", ACTION_CLICK, ACTION_BUTTON_LEFT, 1,
	  FIELDS("action", "coordinate", "text", "key") },
	{ "right_click", ACTION_CLICK, ACTION_BUTTON_RIGHT, 1,
	  FIELDS("action", "coordinate", "text", "key") },
	{ "middle_click", ACTION_CLICK, ACTION_BUTTON_MIDDLE, 1,
	  FIELDS("action", "coordinate", "text", "key") },
	{ "double_click", ACTION_CLICK, ACTION_BUTTON_LEFT, 2,
	  FIELDS("action", "coordinate", "text", "key") },
	{ "triple_click", ACTION_CLICK, ACTION_BUTTON_LEFT, 3,
	  FIELDS("action", "coordinate", "text", "key") },
	{ "left_mouse_down", ACTION_MOUSE_DOWN, ACTION_BUTTON_LEFT, 0,
	  FIELDS("action", "coordinate", "text", "key") },
	{ "left_mouse_up", ACTION_MOUSE_UP, ACTION_BUTTON_LEFT, 0,
	  FIELDS("action", "coordinate", "text", "key") },
	{ "left_click_drag", ACTION_DRAG, ACTION_BUTTON_LEFT, 0,
	  FIELDS("action", "start_coordinate", "coordinate", "text", "key") },
	{ "scroll", ACTION_SCROLL, 0, 0,
	  FIELDS("action", "coordinate", "scroll_direction", "scroll_amount", "text") },
	{ "wait", ACTION_WAIT, 0, 0, FIELDS("action", "duration") },
	{ "screenshot", ACTION_SCREENSHOT, 0, 0, FIELDS("action") },
	{ "cursor_position", ACTION_CURSOR_POSITION, 0, 0, FIELDS("action") },
	{ "zoom", ACTION_ZOOM, 0, 0, FIELDS("action", "region") },
};

static const struct spec openai_specs[] = {
	{ "click", ACTION_CLICK, ACTION_BUTTON_LEFT, 1,
	  FIELDS("type", "x", "y", "button", "keys") },
	{ "double_click", ACTION_CLICK, ACTION_BUTTON_LEFT, 2,
	  FIELDS("type", "x", "y", "button", "keys") },
	{ "scroll", ACTION_SCROLL, 0, 0, FIELDS("type", "x", "y", "scroll_x", "scroll_y", "keys") },
	{ "type", ACTION_TYPE, 0, 0, FIELDS("type", "text") },
	{ "keypress", ACTION_KEY, 0, 0, FIELDS("type", "keys") },
	{ "move", ACTION_MOVE, 0, 0, FIELDS("type", "x", "y", "keys") },
	{ "drag", ACTION_DRAG, ACTION_BUTTON_LEFT, 0, FIELDS("type", "path", "keys") },
	{ "wait", ACTION_WAIT, 0, 0, FIELDS("type") },
	{ "screenshot", ACTION_SCREENSHOT, 0, 0, FIELDS("type") },
};

#define V_POINT "action", "x", "y", "coordinate"
static const struct spec vitrine_specs[] = {
	{ "click", ACTION_CLICK, ACTION_BUTTON_LEFT, 0,
	  FIELDS(V_POINT, "button", "count", "modifiers") },
	{ "left_click", ACTION_CLICK, ACTION_BUTTON_LEFT, 1, FIELDS(V_POINT, "modifiers") },
	{ "right_click", ACTION_CLICK, ACTION_BUTTON_RIGHT, 1, FIELDS(V_POINT, "modifiers") },
	{ "middle_click", ACTION_CLICK, ACTION_BUTTON_MIDDLE, 1, FIELDS(V_POINT, "modifiers") },
	{ "double_click", ACTION_CLICK, ACTION_BUTTON_LEFT, 2, FIELDS(V_POINT, "modifiers") },
	{ "triple_click", ACTION_CLICK, ACTION_BUTTON_LEFT, 3, FIELDS(V_POINT, "modifiers") },
	{ "mouse_down", ACTION_MOUSE_DOWN, ACTION_BUTTON_LEFT, 0,
	  FIELDS(V_POINT, "button", "modifiers") },
	{ "mouse_up", ACTION_MOUSE_UP, ACTION_BUTTON_LEFT, 0,
	  FIELDS(V_POINT, "button", "modifiers") },
	{ "left_mouse_down", ACTION_MOUSE_DOWN, ACTION_BUTTON_LEFT, 0,
	  FIELDS(V_POINT, "modifiers") },
	{ "left_mouse_up", ACTION_MOUSE_UP, ACTION_BUTTON_LEFT, 0, FIELDS(V_POINT, "modifiers") },
	{ "move", ACTION_MOVE, 0, 0, FIELDS(V_POINT, "modifiers") },
	{ "move_mouse", ACTION_MOVE, 0, 0, FIELDS(V_POINT, "modifiers") },
	{ "mouse_move", ACTION_MOVE, 0, 0, FIELDS(V_POINT, "modifiers") },
	{ "drag", ACTION_DRAG, ACTION_BUTTON_LEFT, 0,
	  FIELDS("action", "path", "from", "to", "button", "modifiers") },
	{ "scroll", ACTION_SCROLL, 0, 0,
	  FIELDS(V_POINT, "dx", "dy", "direction", "amount", "modifiers") },
	{ "type", ACTION_TYPE, 0, 0, FIELDS("action", "text") },
	{ "write", ACTION_TYPE, 0, 0, FIELDS("action", "text") },
	{ "key", ACTION_KEY, 0, 0, FIELDS("action", "keys", "repeat") },
	{ "press", ACTION_KEY, 0, 0, FIELDS("action", "keys", "repeat") },
	{ "hold_key", ACTION_HOLD_KEY, 0, 0, FIELDS("action", "keys", "duration_ms") },
	{ "wait", ACTION_WAIT, 0, 0, FIELDS("action", "duration_ms") },
	{ "screenshot", ACTION_SCREENSHOT, 0, 0, FIELDS("action") },
	{ "cursor_position", ACTION_CURSOR_POSITION, 0, 0, FIELDS("action") },
	{ "zoom", ACTION_ZOOM, 0, 0, FIELDS("action", "region") },
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct spec *find_spec(const struct spec *specs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(specs[i].name, name) == 0)
			return &specs[i];
	return NULL;
}

static bool in_list(const char *const *list, const char *key)
{
	for (; *list; list++)
		if (strcmp(*list, key) == 0)
			return true;
	return false;
}

/* Vitrine is strict about fields; vendor dialects ignore what they do not know. */
static int check_fields(struct parse *p, const struct spec *s)
{
	const char *key;
	json_t *v;

	if (p->a->dialect != ACTIONS_DIALECT_VITRINE)
		return 0;
	json_object_foreach((json_t *)p->obj, key, v)
	{
		if (json_is_null(v) || in_list(common_fields, key) || in_list(s->fields, key))
			continue;
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" is not accepted by %s", key, s->name);
	}
	return 0;
}

/* ---- common fields ---- */

static int parse_common(struct parse *p)
{
	const json_t *id = field(p, "id"), *shot = field(p, "screenshot");
	const char *space;
	size_t len;
	int r;

	if (id) {
		if (!json_is_string(id) && !json_is_integer(id))
			return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, "id",
					    "field \"id\" must be a string or an integer");
		if (json_is_string(id) && json_string_length(id) > ID_MAX_BYTES)
			return actions_fail(p->err, ACTIONS_E_TOO_LONG, "id",
					    "field \"id\" is over %d bytes", ID_MAX_BYTES);
		p->a->id = json_incref((json_t *)id);
	}
	if (shot) {
		if (json_is_boolean(shot)) {
			p->a->want_screenshot = json_is_true(shot);
		} else if (json_is_object(shot)) {
			p->a->want_screenshot = true;
			p->a->screenshot_opts = json_incref((json_t *)shot);
		} else {
			return actions_fail(
				p->err, ACTIONS_E_INVALID_ARGUMENT, "screenshot",
				"field \"screenshot\" must be a boolean or an object of options");
		}
	}

	p->space = p->ctx->default_space;
	r = get_string(p, "coordinate_space", false, &space, &len);
	if (r < 0)
		return -1;
	if (r == 0) {
		if (strcmp(space, "screen") == 0)
			p->space.kind = ACTIONS_SPACE_SCREEN;
		else if (strcmp(space, "screenshot") == 0)
			p->space.kind = ACTIONS_SPACE_SCREENSHOT;
		else
			return actions_fail(
				p->err, ACTIONS_E_INVALID_ARGUMENT, "coordinate_space",
				"field \"coordinate_space\" must be \"screen\" or \"screenshot\"");
	}
	if (p->space.kind == ACTIONS_SPACE_SCREEN) {
		const char *extra = field(p, "screenshot_width")    ? "screenshot_width"
				    : field(p, "screenshot_height") ? "screenshot_height"
								    : NULL;

		if (extra)
			return actions_fail(
				p->err, ACTIONS_E_INVALID_ARGUMENT, extra,
				"field \"%s\" needs \"coordinate_space\": \"screenshot\"", extra);
		return 0;
	}
	if (p->ctx->default_space.kind != ACTIONS_SPACE_SCREENSHOT)
		p->space.width = p->space.height = 0;
	r = get_int(p, "screenshot_width", false, false, 1, ACTIONS_MAX_SCREENSHOT_DIM,
		    &p->space.width);
	if (r < 0)
		return -1;
	r = get_int(p, "screenshot_height", false, false, 1, ACTIONS_MAX_SCREENSHOT_DIM,
		    &p->space.height);
	if (r < 0)
		return -1;
	if (p->space.width <= 0)
		return actions_fail(p->err, ACTIONS_E_MISSING_FIELD, "screenshot_width",
				    "field \"screenshot_width\" is required by coordinate_space "
				    "\"screenshot\"");
	if (p->space.height <= 0)
		return actions_fail(p->err, ACTIONS_E_MISSING_FIELD, "screenshot_height",
				    "field \"screenshot_height\" is required by coordinate_space "
				    "\"screenshot\"");
	return 0;
}

/* ---- dialects ---- */

static int scroll_direction(struct parse *p, const char *key, const char *dir, int amount)
{
	struct action *a = p->a;

	if (strcmp(dir, "up") == 0)
		a->scroll_dy = -amount;
	else if (strcmp(dir, "down") == 0)
		a->scroll_dy = amount;
	else if (strcmp(dir, "left") == 0)
		a->scroll_dx = -amount;
	else if (strcmp(dir, "right") == 0)
		a->scroll_dx = amount;
	else
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must be up, down, left or right", key);
	return 0;
}

/* Anthropic takes modifiers in "text" (computer_20251124) or "key" (the
 * reference implementation); both at once is ambiguous. */
static int anthropic_modifiers(struct parse *p)
{
	if (field(p, "text") && field(p, "key"))
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, "key",
				    "give the modifier keys in \"text\" or in \"key\", not both");
	if (field(p, "text"))
		return get_modifiers(p, "text");
	return get_modifiers(p, "key");
}

static int parse_anthropic(struct parse *p, const struct spec *s)
{
	struct action *a = p->a;
	struct action_point from;
	const char *str;
	size_t len;
	int r, amount = ANTHROPIC_DEFAULT_SCROLL;

	switch (s->kind) {
	case ACTION_KEY:
		if (get_string(p, "text", true, &str, &len) != 0 ||
		    sequence_value(p, "text", str) < 0)
			return -1;
		r = get_int(p, "repeat", false, false, 1, ACTIONS_MAX_REPEAT, &a->repeat);
		return r < 0 ? -1 : 0;
	case ACTION_HOLD_KEY:
		if (get_string(p, "text", true, &str, &len) != 0 ||
		    modifiers_value(p, "text", field(p, "text")) < 0)
			return -1;
		a->chords[0] = a->modifiers;
		a->n_chords = 1;
		memset(&a->modifiers, 0, sizeof(a->modifiers));
		return get_seconds(p, "duration", true, &a->duration_ms) == 0 ? 0 : -1;
	case ACTION_TYPE:
		return get_text(p, "text");
	case ACTION_MOVE:
		if (get_coordinate(p, "coordinate", true, &a->point) != 0)
			return -1;
		a->has_point = true;
		return 0;
	case ACTION_CLICK:
	case ACTION_MOUSE_DOWN:
	case ACTION_MOUSE_UP:
		r = get_coordinate(p, "coordinate", false, &a->point);
		if (r < 0)
			return -1;
		a->has_point = r == 0;
		return anthropic_modifiers(p) < 0 ? -1 : 0;
	case ACTION_DRAG:
		if (get_coordinate(p, "coordinate", true, &a->point) != 0)
			return -1;
		r = get_coordinate(p, "start_coordinate", false, &from);
		if (r < 0 || set_path2(p, "coordinate", r == 0 ? &from : NULL, &a->point) < 0)
			return -1;
		return anthropic_modifiers(p) < 0 ? -1 : 0;
	case ACTION_SCROLL:
		r = get_coordinate(p, "coordinate", false, &a->point);
		if (r < 0)
			return -1;
		a->has_point = r == 0;
		if (get_string(p, "scroll_direction", true, &str, &len) != 0)
			return -1;
		if (get_int(p, "scroll_amount", false, false, 0, ACTIONS_MAX_SCROLL_NOTCHES,
			    &amount) < 0)
			return -1;
		if (scroll_direction(p, "scroll_direction", str, amount) < 0)
			return -1;
		return get_modifiers(p, "text") < 0 ? -1 : 0;
	case ACTION_WAIT:
		a->duration_ms = ANTHROPIC_DEFAULT_WAIT_MS;
		return get_seconds(p, "duration", false, &a->duration_ms) < 0 ? -1 : 0;
	case ACTION_ZOOM:
		return get_region(p, "region");
	case ACTION_SCREENSHOT:
	case ACTION_CURSOR_POSITION:
		return 0;
	}
	return 0;
}

/* OpenAI scroll pixels -> wheel notches, rounded half away from zero; any
 * non-zero amount scrolls at least one notch. */
static int openai_scroll(struct parse *p, const char *key, int *notches)
{
	const json_t *v = field(p, key);
	long long px, n;

	if (!v)
		return missing(p, key);
	if (number_value(p, v, key, true, -(long long)INT_MAX, INT_MAX, &px) < 0)
		return -1;
	n = (llabs(px) + ACTIONS_SCROLL_PX_PER_NOTCH / 2) / ACTIONS_SCROLL_PX_PER_NOTCH;
	if (n == 0 && px != 0)
		n = 1;
	if (n > ACTIONS_MAX_SCROLL_NOTCHES)
		return actions_fail(p->err, ACTIONS_E_OUT_OF_RANGE, key,
				    "field \"%s\": %lld pixels is over the limit of %d", key, px,
				    ACTIONS_MAX_SCROLL_NOTCHES * ACTIONS_SCROLL_PX_PER_NOTCH);
	*notches = (int)(px < 0 ? -n : n);
	return 0;
}

static int button_value(struct parse *p, const char *key, bool vitrine)
{
	const char *b;
	size_t len;
	int r = get_string(p, key, false, &b, &len);

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (strcmp(b, "left") == 0)
		p->a->button = ACTION_BUTTON_LEFT;
	else if (strcmp(b, "right") == 0)
		p->a->button = ACTION_BUTTON_RIGHT;
	else if (strcmp(b, "middle") == 0 || strcmp(b, "wheel") == 0)
		p->a->button = ACTION_BUTTON_MIDDLE;
	else if (strcmp(b, "back") == 0)
		p->a->button = ACTION_BUTTON_BACK;
	else if (strcmp(b, "forward") == 0)
		p->a->button = ACTION_BUTTON_FORWARD;
	else
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, key,
				    "field \"%s\" must be one of left, right, %s, back, forward",
				    key, vitrine ? "middle" : "wheel");
	return 0;
}

static int openai_keys(struct parse *p, struct keys_chord *out)
{
	const json_t *v = field(p, "keys");

	if (!v)
		return 1;
	if (!json_is_array(v))
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, "keys",
				    "field \"keys\" must be an array of key names");
	return chord_array_value(p, "keys", v, out);
}

static int parse_openai(struct parse *p, const struct spec *s)
{
	struct action *a = p->a;

	switch (s->kind) {
	case ACTION_CLICK:
		if (get_xy(p, true, false, &a->point) != 0 || button_value(p, "button", false) < 0)
			return -1;
		a->has_point = true;
		return openai_keys(p, &a->modifiers) < 0 ? -1 : 0;
	case ACTION_MOVE:
		if (get_xy(p, true, false, &a->point) != 0)
			return -1;
		a->has_point = true;
		return openai_keys(p, &a->modifiers) < 0 ? -1 : 0;
	case ACTION_SCROLL:
		if (get_xy(p, true, false, &a->point) != 0 ||
		    openai_scroll(p, "scroll_x", &a->scroll_dx) < 0 ||
		    openai_scroll(p, "scroll_y", &a->scroll_dy) < 0)
			return -1;
		a->has_point = true;
		return openai_keys(p, &a->modifiers) < 0 ? -1 : 0;
	case ACTION_TYPE:
		return get_text(p, "text");
	case ACTION_KEY: {
		int r = openai_keys(p, &a->chords[0]);

		if (r > 0)
			return missing(p, "keys");
		if (r < 0)
			return -1;
		if (a->chords[0].len == 0)
			return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, "keys",
					    "field \"keys\" must name at least one key");
		a->n_chords = 1;
		return 0;
	}
	case ACTION_DRAG:
		if (get_path(p, "path", 2) < 0)
			return -1;
		return openai_keys(p, &a->modifiers) < 0 ? -1 : 0;
	case ACTION_WAIT:
		a->duration_ms = OPENAI_WAIT_MS;
		return 0;
	default:
		return 0;
	}
}

static int vitrine_keys(struct parse *p, struct keys_chord *single_chord)
{
	const json_t *v = field(p, "keys");

	if (!v)
		return missing(p, "keys");
	if (json_is_array(v)) {
		if (json_array_size(v) == 0)
			return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, "keys",
					    "field \"keys\" must name at least one key");
		if (chord_array_value(p, "keys", v, &p->a->chords[0]) < 0)
			return -1;
		p->a->n_chords = 1;
	} else if (json_is_string(v)) {
		if (sequence_value(p, "keys", json_string_value(v)) < 0)
			return -1;
	} else {
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, "keys",
				    "field \"keys\" must be a string or an array of key names");
	}
	if (single_chord) {
		/* hold_key: every key named is held at once. */
		memset(single_chord, 0, sizeof(*single_chord));
		for (size_t i = 0; i < p->a->n_chords; i++)
			if (keys_chord_merge(single_chord, &p->a->chords[i]) < 0)
				return actions_fail(p->err, ACTIONS_E_TOO_LONG, "keys",
						    "field \"keys\": more than %d keys at once",
						    KEYS_MAX_CHORD);
	}
	return 0;
}

static int parse_vitrine(struct parse *p, const struct spec *s)
{
	struct action *a = p->a;
	struct action_point from, to;
	const char *str;
	size_t len;
	int r;

	switch (s->kind) {
	case ACTION_CLICK:
	case ACTION_MOUSE_DOWN:
	case ACTION_MOUSE_UP:
	case ACTION_MOVE:
		r = get_xy(p, s->kind == ACTION_MOVE, true, &a->point);
		if (r < 0)
			return -1;
		a->has_point = r == 0;
		if (button_value(p, "button", true) < 0 || get_modifiers(p, "modifiers") < 0)
			return -1;
		if (s->kind == ACTION_CLICK && s->count == 0) {
			a->click_count = 1;
			if (get_int(p, "count", false, false, 1, 3, &a->click_count) < 0)
				return -1;
		}
		return 0;
	case ACTION_DRAG:
		if (field(p, "path")) {
			if (field(p, "from") || field(p, "to"))
				return actions_fail(
					p->err, ACTIONS_E_INVALID_ARGUMENT, "path",
					"give either \"path\" or \"from\" and \"to\", not both");
			if (get_path(p, "path", 2) < 0)
				return -1;
		} else {
			if (!field(p, "from"))
				return missing(p, field(p, "to") ? "from" : "path");
			if (!field(p, "to"))
				return missing(p, "to");
			if (point_value(p, field(p, "from"), "from", true, &from) < 0 ||
			    point_value(p, field(p, "to"), "to", true, &to) < 0 ||
			    set_path2(p, "to", &from, &to) < 0)
				return -1;
		}
		if (button_value(p, "button", true) < 0 || get_modifiers(p, "modifiers") < 0)
			return -1;
		return 0;
	case ACTION_SCROLL: {
		bool has_delta = field(p, "dx") || field(p, "dy");
		bool has_dir = field(p, "direction") != NULL;
		int amount = 1;

		r = get_xy(p, false, true, &a->point);
		if (r < 0)
			return -1;
		a->has_point = r == 0;
		if (has_delta && (has_dir || field(p, "amount")))
			return actions_fail(
				p->err, ACTIONS_E_INVALID_ARGUMENT, "direction",
				"give either \"dx\"/\"dy\" or \"direction\"/\"amount\", not both");
		if (has_dir) {
			if (get_string(p, "direction", true, &str, &len) != 0 ||
			    get_int(p, "amount", false, false, 0, ACTIONS_MAX_SCROLL_NOTCHES,
				    &amount) < 0 ||
			    scroll_direction(p, "direction", str, amount) < 0)
				return -1;
		} else if (has_delta) {
			if (get_int(p, "dx", false, false, -ACTIONS_MAX_SCROLL_NOTCHES,
				    ACTIONS_MAX_SCROLL_NOTCHES, &a->scroll_dx) < 0 ||
			    get_int(p, "dy", false, false, -ACTIONS_MAX_SCROLL_NOTCHES,
				    ACTIONS_MAX_SCROLL_NOTCHES, &a->scroll_dy) < 0)
				return -1;
		} else {
			return missing(p, "dy");
		}
		return get_modifiers(p, "modifiers") < 0 ? -1 : 0;
	}
	case ACTION_TYPE:
		return get_text(p, "text");
	case ACTION_KEY:
		if (vitrine_keys(p, NULL) < 0)
			return -1;
		return get_int(p, "repeat", false, false, 1, ACTIONS_MAX_REPEAT, &a->repeat) < 0
			       ? -1
			       : 0;
	case ACTION_HOLD_KEY: {
		struct keys_chord held;

		if (vitrine_keys(p, &held) < 0)
			return -1;
		a->chords[0] = held;
		a->n_chords = 1;
		return get_ms(p, "duration_ms", true, &a->duration_ms) == 0 ? 0 : -1;
	}
	case ACTION_WAIT:
		return get_ms(p, "duration_ms", true, &a->duration_ms) == 0 ? 0 : -1;
	case ACTION_ZOOM:
		return get_region(p, "region");
	case ACTION_SCREENSHOT:
	case ACTION_CURSOR_POSITION:
		return 0;
	}
	return 0;
}

/* ---- entry points ---- */

/* Fields only the Vitrine dialect has: they tell a Vitrine action from an
 * Anthropic one of the same name ("scroll", "left_click", ...). */
static bool has_vitrine_field(const struct parse *p)
{
	static const char *const only_vitrine[] = { "x",	   "y",	     "dx",   "dy",
						    "direction",   "amount", "keys", "modifiers",
						    "duration_ms", "path",   "from", "to",
						    "button",	   "count",  NULL };

	for (const char *const *k = only_vitrine; *k; k++)
		if (field(p, *k))
			return true;
	return false;
}

static int detect_dialect(struct parse *p, const char **name_key)
{
	const json_t *d = field(p, "dialect"), *act = field(p, "action"), *type = field(p, "type");

	if (d) {
		const char *s = json_is_string(d) ? json_string_value(d) : NULL;

		if (!s)
			return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, "dialect",
					    "field \"dialect\" must be a string");
		if (strcmp(s, "anthropic") == 0)
			p->a->dialect = ACTIONS_DIALECT_ANTHROPIC;
		else if (strcmp(s, "openai") == 0)
			p->a->dialect = ACTIONS_DIALECT_OPENAI;
		else if (strcmp(s, "vitrine") == 0)
			p->a->dialect = ACTIONS_DIALECT_VITRINE;
		else
			return actions_fail(
				p->err, ACTIONS_E_UNKNOWN_DIALECT, "dialect",
				"unknown dialect \"%.40s\" (anthropic, openai or vitrine)", s);
	} else if (json_is_string(act)) {
		const char *s = json_string_value(act);

		bool anthropic = find_spec(anthropic_specs, N_OF(anthropic_specs), s) != NULL;
		bool vitrine = find_spec(vitrine_specs, N_OF(vitrine_specs), s) != NULL;

		p->a->dialect = vitrine && (!anthropic || has_vitrine_field(p))
					? ACTIONS_DIALECT_VITRINE
					: ACTIONS_DIALECT_ANTHROPIC;
	} else if (!act && json_is_string(type)) {
		p->a->dialect = ACTIONS_DIALECT_OPENAI;
	} else if (act) {
		return actions_fail(p->err, ACTIONS_E_INVALID_ARGUMENT, "action",
				    "field \"action\" must be a string");
	} else {
		return actions_fail(p->err, ACTIONS_E_MISSING_FIELD, "action",
				    "field \"action\" (or OpenAI's \"type\") is required");
	}
	*name_key = p->a->dialect == ACTIONS_DIALECT_OPENAI ? "type" : "action";
	return 0;
}

struct action *actions_parse(const json_t *obj, const struct actions_ctx *ctx,
			     struct actions_error *err)
{
	struct parse p = { .obj = obj, .ctx = ctx, .err = err };
	const struct spec *specs, *s;
	const char *name_key = "action", *name;
	const json_t *nv;
	size_t n_specs;
	int r = -1;

	memset(err, 0, sizeof(*err));
	if (!json_is_object(obj)) {
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, NULL,
			     "an action must be a JSON object");
		return NULL;
	}
	p.a = calloc(1, sizeof(*p.a));
	if (!p.a) {
		actions_fail(err, ACTIONS_E_NO_MEMORY, NULL, "out of memory");
		return NULL;
	}
	p.a->repeat = 1;
	if (detect_dialect(&p, &name_key) < 0)
		goto out;
	nv = field(&p, name_key);
	if (!nv) {
		actions_fail(err, ACTIONS_E_MISSING_FIELD, name_key, "field \"%s\" is required",
			     name_key);
		goto out;
	}
	if (!json_is_string(nv)) {
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, name_key,
			     "field \"%s\" must be a string", name_key);
		goto out;
	}
	name = json_string_value(nv);
	switch (p.a->dialect) {
	case ACTIONS_DIALECT_ANTHROPIC:
		specs = anthropic_specs;
		n_specs = N_OF(anthropic_specs);
		break;
	case ACTIONS_DIALECT_OPENAI:
		specs = openai_specs;
		n_specs = N_OF(openai_specs);
		break;
	default:
		specs = vitrine_specs;
		n_specs = N_OF(vitrine_specs);
		break;
	}
	s = find_spec(specs, n_specs, name);
	if (!s) {
		actions_fail(err, ACTIONS_E_UNKNOWN_ACTION, name_key,
			     "field \"%s\": unknown %s action \"%.40s\"", name_key,
			     p.a->dialect == ACTIONS_DIALECT_ANTHROPIC ? "Anthropic"
			     : p.a->dialect == ACTIONS_DIALECT_OPENAI  ? "OpenAI"
								       : "Vitrine",
			     name);
		goto out;
	}
	snprintf(p.a->name, sizeof(p.a->name), "%s", s->name);
	p.a->kind = s->kind;
	p.a->button = s->button;
	p.a->click_count = s->count;
	p.a->keymap = ctx->keymap;
	if (ctx->screen_width <= 0 || ctx->screen_height <= 0) {
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, NULL, "the screen size is unknown");
		goto out;
	}
	if (check_fields(&p, s) < 0 || parse_common(&p) < 0)
		goto out;
	switch (p.a->dialect) {
	case ACTIONS_DIALECT_ANTHROPIC:
		r = parse_anthropic(&p, s);
		break;
	case ACTIONS_DIALECT_OPENAI:
		r = parse_openai(&p, s);
		break;
	default:
		r = parse_vitrine(&p, s);
		break;
	}
out:
	if (r < 0) {
		actions_destroy(p.a);
		return NULL;
	}
	return p.a;
}

void actions_destroy(struct action *a)
{
	if (!a)
		return;
	json_decref(a->id);
	json_decref(a->screenshot_opts);
	free(a->text);
	free(a->path);
	free(a);
}
