/* tests/unit/test_actions.c: the action parser (gateway/actions.c) in its
 * three dialects, on verbatim vendor inputs, every error path with its code,
 * and the screenshot -> screen coordinate mapping. */
#include "gateway/action/actions.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const struct actions_ctx screen_1280 = { .screen_width = 1280, .screen_height = 800 };

static struct action *parse_ctx(const char *json, const struct actions_ctx *ctx)
{
	json_error_t jerr;
	json_t *j = json_loads(json, 0, &jerr);
	struct actions_error err;
	struct action *a;

	if (!j)
		fail_msg("bad test JSON %s: %s", json, jerr.text);
	a = actions_parse(j, ctx, &err);
	json_decref(j);
	if (!a)
		fail_msg("%s -> %s (%s): %s", json, actions_errc_name(err.code), err.field,
			 err.message);
	return a;
}

static struct action *parse(const char *json)
{
	return parse_ctx(json, &screen_1280);
}

static void expect_error_ctx(const char *json, const struct actions_ctx *ctx,
			     enum actions_errc code, const char *field)
{
	json_t *j = json_loads(json, JSON_ALLOW_NUL, NULL);
	struct actions_error err;
	struct action *a;

	if (!j)
		fail_msg("bad test JSON %s", json);
	a = actions_parse(j, ctx, &err);
	json_decref(j);
	if (a) {
		actions_destroy(a);
		fail_msg("%s parsed, want %s", json, actions_errc_name(code));
	}
	if (err.code != code || strcmp(err.field, field) != 0)
		fail_msg("%s -> %s (%s) \"%s\", want %s (%s)", json, actions_errc_name(err.code),
			 err.field, err.message, actions_errc_name(code), field);
	/* The human message names the field. */
	if (field[0] && !strstr(err.message, field))
		fail_msg("%s: message \"%s\" does not name \"%s\"", json, err.message, field);
}

static void expect_error(const char *json, enum actions_errc code, const char *field)
{
	expect_error_ctx(json, &screen_1280, code, field);
}

static void chord_str(const struct keys_chord *c, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < c->len; i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, "%s%s", i ? "," : "", c->qcodes[i]);
	}
}

static void expect_chord(const struct keys_chord *c, const char *want)
{
	char got[256];

	chord_str(c, got, sizeof(got));
	if (strcmp(got, want) != 0)
		fail_msg("chord %s, want %s", got, want);
}

static void expect_point(const struct action *a, int x, int y)
{
	assert_true(a->has_point);
	if (a->point.x != x || a->point.y != y)
		fail_msg("point (%d, %d), want (%d, %d)", a->point.x, a->point.y, x, y);
}

/* ---- Anthropic ---- */

static void test_anthropic_keys_and_text(void **state)
{
	struct action *a;

	(void)state;
	a = parse("{\"action\": \"key\", \"text\": \"Return\"}");
	assert_int_equal(a->dialect, ACTIONS_DIALECT_ANTHROPIC);
	assert_int_equal(a->kind, ACTION_KEY);
	assert_string_equal(a->name, "key");
	assert_int_equal(a->n_chords, 1);
	assert_int_equal(a->repeat, 1);
	expect_chord(&a->chords[0], "ret");
	actions_destroy(a);

	a = parse("{\"action\": \"key\", \"text\": \"ctrl+a Delete\", \"repeat\": 2}");
	assert_int_equal(a->n_chords, 2);
	assert_int_equal(a->repeat, 2);
	expect_chord(&a->chords[0], "ctrl,a");
	expect_chord(&a->chords[1], "delete");
	actions_destroy(a);

	a = parse("{\"action\": \"key\", \"text\": \"alt+Tab\"}");
	expect_chord(&a->chords[0], "alt,tab");
	actions_destroy(a);

	a = parse("{\"action\": \"type\", \"text\": \"Hello, world!\"}");
	assert_int_equal(a->kind, ACTION_TYPE);
	assert_string_equal(a->text, "Hello, world!");
	assert_int_equal(a->text_len, 13);
	actions_destroy(a);

	a = parse("{\"action\": \"hold_key\", \"text\": \"shift\", \"duration\": 1.5}");
	assert_int_equal(a->kind, ACTION_HOLD_KEY);
	expect_chord(&a->chords[0], "shift");
	assert_int_equal(a->duration_ms, 1500);
	assert_int_equal(a->modifiers.len, 0);
	actions_destroy(a);

	a = parse("{\"action\": \"hold_key\", \"text\": \"ctrl+shift\", \"duration\": 0}");
	expect_chord(&a->chords[0], "ctrl,shift");
	assert_int_equal(a->duration_ms, 0);
	actions_destroy(a);
}

static void test_anthropic_pointer(void **state)
{
	static const struct {
		const char *name;
		enum action_button button;
		int count;
	} clicks[] = {
		{ "left_click", ACTION_BUTTON_LEFT, 1 },
		{ "right_click", ACTION_BUTTON_RIGHT, 1 },
		{ "middle_click", ACTION_BUTTON_MIDDLE, 1 },
		{ "double_click", ACTION_BUTTON_LEFT, 2 },
		{ "triple_click", ACTION_BUTTON_LEFT, 3 },
	};
	struct action *a;
	char json[128];

	(void)state;
	for (size_t i = 0; i < sizeof(clicks) / sizeof(clicks[0]); i++) {
		snprintf(json, sizeof(json), "{\"action\": \"%s\", \"coordinate\": [500, 300]}",
			 clicks[i].name);
		a = parse(json);
		assert_int_equal(a->kind, ACTION_CLICK);
		assert_int_equal(a->button, clicks[i].button);
		assert_int_equal(a->click_count, clicks[i].count);
		expect_point(a, 500, 300);
		assert_int_equal(a->modifiers.len, 0);
		actions_destroy(a);
	}

	/* 20250124: coordinate optional (click where the pointer is). */
	a = parse("{\"action\": \"left_click\"}");
	assert_false(a->has_point);
	actions_destroy(a);

	/* Modifiers held during the click: "text" (20251124) or "key". */
	a = parse("{\"action\": \"left_click\", \"coordinate\": [500, 300], \"text\": \"shift\"}");
	expect_chord(&a->modifiers, "shift");
	actions_destroy(a);
	a = parse("{\"action\": \"left_click\", \"coordinate\": [5, 3], \"key\": \"ctrl+shift\"}");
	expect_chord(&a->modifiers, "ctrl,shift");
	actions_destroy(a);

	a = parse("{\"action\": \"mouse_move\", \"coordinate\": [0, 799]}");
	assert_int_equal(a->kind, ACTION_MOVE);
	expect_point(a, 0, 799);
	actions_destroy(a);

	a = parse("{\"action\": \"left_mouse_down\"}");
	assert_int_equal(a->kind, ACTION_MOUSE_DOWN);
	assert_false(a->has_point);
	actions_destroy(a);
	a = parse("{\"action\": \"left_mouse_up\", \"coordinate\": [10, 20]}");
	assert_int_equal(a->kind, ACTION_MOUSE_UP);
	expect_point(a, 10, 20);
	actions_destroy(a);

	a = parse("{\"action\": \"left_click_drag\", \"start_coordinate\": [400, 300], "
		  "\"coordinate\": [600, 500]}");
	assert_int_equal(a->kind, ACTION_DRAG);
	assert_int_equal(a->path_len, 2);
	assert_false(a->drag_from_pointer);
	assert_int_equal(a->path[0].x, 400);
	assert_int_equal(a->path[1].y, 500);
	actions_destroy(a);

	/* computer_20241022 shape: drag from where the pointer is. */
	a = parse("{\"action\": \"left_click_drag\", \"coordinate\": [600, 500]}");
	assert_true(a->drag_from_pointer);
	assert_int_equal(a->path_len, 1);
	assert_int_equal(a->path[0].x, 600);
	actions_destroy(a);

	a = parse("{\"action\": \"scroll\", \"coordinate\": [500, 300], \"scroll_direction\": "
		  "\"down\", \"scroll_amount\": 3}");
	assert_int_equal(a->kind, ACTION_SCROLL);
	expect_point(a, 500, 300);
	assert_int_equal(a->scroll_dy, 3);
	assert_int_equal(a->scroll_dx, 0);
	actions_destroy(a);

	a = parse(
		"{\"action\": \"scroll\", \"coordinate\": [1, 2], \"scroll_direction\": \"left\", "
		"\"scroll_amount\": 5, \"text\": \"shift\"}");
	assert_int_equal(a->scroll_dx, -5);
	expect_chord(&a->modifiers, "shift");
	actions_destroy(a);

	a = parse("{\"action\": \"scroll\", \"scroll_direction\": \"up\"}");
	assert_false(a->has_point);
	assert_int_equal(a->scroll_dy, -3);
	actions_destroy(a);
}

static void test_anthropic_other(void **state)
{
	struct action *a;

	(void)state;
	a = parse("{\"action\": \"wait\", \"duration\": 2}");
	assert_int_equal(a->kind, ACTION_WAIT);
	assert_int_equal(a->duration_ms, 2000);
	actions_destroy(a);
	a = parse("{\"action\": \"wait\"}");
	assert_int_equal(a->duration_ms, 1000);
	actions_destroy(a);
	a = parse("{\"action\": \"screenshot\"}");
	assert_int_equal(a->kind, ACTION_SCREENSHOT);
	actions_destroy(a);
	a = parse("{\"action\": \"cursor_position\"}");
	assert_int_equal(a->kind, ACTION_CURSOR_POSITION);
	actions_destroy(a);

	a = parse("{\"action\": \"zoom\", \"region\": [0, 0, 400, 300]}");
	assert_int_equal(a->kind, ACTION_ZOOM);
	assert_int_equal(a->region.x, 0);
	assert_int_equal(a->region.y, 0);
	assert_int_equal(a->region.w, 400);
	assert_int_equal(a->region.h, 300);
	actions_destroy(a);
	a = parse("{\"action\": \"zoom\", \"region\": [0, 0, 1280, 800]}");
	assert_int_equal(a->region.w, 1280);
	assert_int_equal(a->region.h, 800);
	actions_destroy(a);

	/* Unknown fields are ignored in vendor dialects; nulls are absent. */
	a = parse("{\"action\": \"left_click\", \"coordinate\": [1, 1], \"future_field\": 1, "
		  "\"text\": null}");
	assert_int_equal(a->modifiers.len, 0);
	actions_destroy(a);
}

/* ---- OpenAI ---- */

static void test_openai(void **state)
{
	static const struct {
		const char *button;
		enum action_button want;
	} buttons[] = {
		{ "left", ACTION_BUTTON_LEFT },	      { "right", ACTION_BUTTON_RIGHT },
		{ "wheel", ACTION_BUTTON_MIDDLE },    { "back", ACTION_BUTTON_BACK },
		{ "forward", ACTION_BUTTON_FORWARD },
	};
	struct action *a;
	char json[128];

	(void)state;
	for (size_t i = 0; i < sizeof(buttons) / sizeof(buttons[0]); i++) {
		snprintf(json, sizeof(json),
			 "{\"type\": \"click\", \"button\": \"%s\", \"x\": 156, \"y\": 50}",
			 buttons[i].button);
		a = parse(json);
		assert_int_equal(a->dialect, ACTIONS_DIALECT_OPENAI);
		assert_int_equal(a->kind, ACTION_CLICK);
		assert_int_equal(a->button, buttons[i].want);
		assert_int_equal(a->click_count, 1);
		expect_point(a, 156, 50);
		actions_destroy(a);
	}

	a = parse("{\"type\": \"click\", \"x\": 10, \"y\": 20}");
	assert_int_equal(a->button, ACTION_BUTTON_LEFT);
	actions_destroy(a);

	/* pydantic dumps unset fields as null; newer actions carry held "keys". */
	a = parse(
		"{\"type\": \"click\", \"button\": \"left\", \"x\": 10, \"y\": 20, \"keys\": null}");
	assert_int_equal(a->modifiers.len, 0);
	actions_destroy(a);
	a = parse("{\"type\": \"click\", \"x\": 10, \"y\": 20, \"keys\": [\"CTRL\"]}");
	expect_chord(&a->modifiers, "ctrl");
	actions_destroy(a);

	a = parse("{\"type\": \"double_click\", \"x\": 10.4, \"y\": 20.6}");
	assert_int_equal(a->click_count, 2);
	expect_point(a, 10, 21);
	actions_destroy(a);

	a = parse(
		"{\"type\": \"scroll\", \"x\": 640, \"y\": 400, \"scroll_x\": 0, \"scroll_y\": 300}");
	assert_int_equal(a->kind, ACTION_SCROLL);
	expect_point(a, 640, 400);
	assert_int_equal(a->scroll_dy, 3);
	assert_int_equal(a->scroll_dx, 0);
	actions_destroy(a);
	a = parse(
		"{\"type\": \"scroll\", \"x\": 1, \"y\": 1, \"scroll_x\": -149, \"scroll_y\": -20}");
	assert_int_equal(a->scroll_dx, -1);
	assert_int_equal(a->scroll_dy, -1);
	actions_destroy(a);
	a = parse("{\"type\": \"scroll\", \"x\": 1, \"y\": 1, \"scroll_x\": 150, \"scroll_y\": 0}");
	assert_int_equal(a->scroll_dx, 2);
	actions_destroy(a);

	a = parse("{\"type\": \"type\", \"text\": \"hello\"}");
	assert_int_equal(a->kind, ACTION_TYPE);
	assert_string_equal(a->text, "hello");
	actions_destroy(a);

	a = parse("{\"type\": \"keypress\", \"keys\": [\"CTRL\", \"A\"]}");
	assert_int_equal(a->kind, ACTION_KEY);
	assert_int_equal(a->n_chords, 1);
	expect_chord(&a->chords[0], "ctrl,a");
	actions_destroy(a);
	a = parse("{\"type\": \"keypress\", \"keys\": [\"ENTER\"]}");
	expect_chord(&a->chords[0], "ret");
	actions_destroy(a);
	a = parse("{\"type\": \"keypress\", \"keys\": [\"ARROWLEFT\"]}");
	expect_chord(&a->chords[0], "left");
	actions_destroy(a);
	a = parse("{\"type\": \"keypress\", \"keys\": [\"ctrl+shift\", \"t\"]}");
	expect_chord(&a->chords[0], "ctrl,shift,t");
	actions_destroy(a);

	a = parse("{\"type\": \"move\", \"x\": 5, \"y\": 6}");
	assert_int_equal(a->kind, ACTION_MOVE);
	expect_point(a, 5, 6);
	actions_destroy(a);

	a = parse("{\"type\": \"drag\", \"path\": [{\"x\": 10, \"y\": 20}, {\"x\": 30, \"y\": 40}, "
		  "{\"x\": 50, \"y\": 60}]}");
	assert_int_equal(a->kind, ACTION_DRAG);
	assert_int_equal(a->button, ACTION_BUTTON_LEFT);
	assert_int_equal(a->path_len, 3);
	assert_int_equal(a->path[2].x, 50);
	assert_int_equal(a->path[2].y, 60);
	actions_destroy(a);

	a = parse("{\"type\": \"wait\"}");
	assert_int_equal(a->kind, ACTION_WAIT);
	assert_int_equal(a->duration_ms, 1000);
	actions_destroy(a);
	a = parse("{\"type\": \"screenshot\"}");
	assert_int_equal(a->kind, ACTION_SCREENSHOT);
	actions_destroy(a);
}

/* ---- Vitrine and E2B names ---- */

static void test_vitrine(void **state)
{
	struct action *a;

	(void)state;
	a = parse(
		"{\"action\": \"click\", \"x\": 1, \"y\": 2, \"button\": \"middle\", \"count\": 3, "
		"\"modifiers\": [\"ctrl\", \"shift\"]}");
	assert_int_equal(a->dialect, ACTIONS_DIALECT_VITRINE);
	assert_int_equal(a->kind, ACTION_CLICK);
	assert_int_equal(a->button, ACTION_BUTTON_MIDDLE);
	assert_int_equal(a->click_count, 3);
	expect_point(a, 1, 2);
	expect_chord(&a->modifiers, "ctrl,shift");
	actions_destroy(a);

	a = parse("{\"action\": \"click\"}");
	assert_int_equal(a->click_count, 1);
	assert_false(a->has_point);
	actions_destroy(a);

	/* E2B names: left_click is also Anthropic's, so a bare one is Anthropic;
	 * with dialect vitrine, x/y work. */
	a = parse("{\"dialect\": \"vitrine\", \"action\": \"left_click\", \"x\": 3, \"y\": 4, "
		  "\"modifiers\": \"ctrl+alt\"}");
	assert_int_equal(a->dialect, ACTIONS_DIALECT_VITRINE);
	expect_point(a, 3, 4);
	expect_chord(&a->modifiers, "ctrl,alt");
	actions_destroy(a);
	a = parse(
		"{\"dialect\": \"vitrine\", \"action\": \"right_click\", \"coordinate\": [7, 8]}");
	assert_int_equal(a->button, ACTION_BUTTON_RIGHT);
	expect_point(a, 7, 8);
	actions_destroy(a);
	a = parse("{\"dialect\": \"vitrine\", \"action\": \"double_click\", \"x\": 1, \"y\": 1}");
	assert_int_equal(a->click_count, 2);
	actions_destroy(a);

	a = parse("{\"action\": \"move_mouse\", \"x\": 100, \"y\": 200}");
	assert_int_equal(a->dialect, ACTIONS_DIALECT_VITRINE);
	assert_int_equal(a->kind, ACTION_MOVE);
	expect_point(a, 100, 200);
	actions_destroy(a);

	a = parse("{\"action\": \"mouse_down\", \"button\": \"right\"}");
	assert_int_equal(a->kind, ACTION_MOUSE_DOWN);
	assert_int_equal(a->button, ACTION_BUTTON_RIGHT);
	actions_destroy(a);
	a = parse("{\"action\": \"mouse_up\", \"x\": 1, \"y\": 1}");
	assert_int_equal(a->kind, ACTION_MOUSE_UP);
	actions_destroy(a);

	a = parse("{\"action\": \"drag\", \"path\": [[0, 0], {\"x\": 10, \"y\": 10}], \"button\": "
		  "\"middle\"}");
	assert_int_equal(a->kind, ACTION_DRAG);
	assert_int_equal(a->button, ACTION_BUTTON_MIDDLE);
	assert_int_equal(a->path_len, 2);
	actions_destroy(a);
	a = parse("{\"action\": \"drag\", \"from\": [1, 2], \"to\": [3, 4]}");
	assert_int_equal(a->path_len, 2);
	assert_int_equal(a->path[1].x, 3);
	actions_destroy(a);

	a = parse("{\"action\": \"scroll\", \"x\": 5, \"y\": 5, \"dx\": -2, \"dy\": 4}");
	assert_int_equal(a->scroll_dx, -2);
	assert_int_equal(a->scroll_dy, 4);
	actions_destroy(a);
	a = parse("{\"action\": \"scroll\", \"direction\": \"up\", \"amount\": 2}");
	assert_int_equal(a->scroll_dy, -2);
	actions_destroy(a);
	a = parse("{\"action\": \"scroll\", \"direction\": \"down\"}");
	assert_int_equal(a->scroll_dy, 1);
	actions_destroy(a);

	a = parse("{\"action\": \"write\", \"text\": \"h\xc3\xa9llo\"}");
	assert_int_equal(a->kind, ACTION_TYPE);
	assert_int_equal(a->text_len, 6);
	actions_destroy(a);

	a = parse("{\"action\": \"press\", \"keys\": [\"ctrl\", \"c\"]}");
	assert_int_equal(a->kind, ACTION_KEY);
	assert_int_equal(a->n_chords, 1);
	expect_chord(&a->chords[0], "ctrl,c");
	actions_destroy(a);
	a = parse("{\"action\": \"press\", \"keys\": \"enter\"}");
	expect_chord(&a->chords[0], "ret");
	actions_destroy(a);
	a = parse(
		"{\"dialect\": \"vitrine\", \"action\": \"key\", \"keys\": \"ctrl+a BackSpace\"}");
	assert_int_equal(a->n_chords, 2);
	actions_destroy(a);

	a = parse("{\"dialect\": \"vitrine\", \"action\": \"hold_key\", \"keys\": \"shift\", "
		  "\"duration_ms\": 250}");
	assert_int_equal(a->kind, ACTION_HOLD_KEY);
	expect_chord(&a->chords[0], "shift");
	assert_int_equal(a->duration_ms, 250);
	actions_destroy(a);
	a = parse("{\"dialect\": \"vitrine\", \"action\": \"wait\", \"duration_ms\": 100}");
	assert_int_equal(a->duration_ms, 100);
	actions_destroy(a);
	a = parse("{\"dialect\": \"vitrine\", \"action\": \"zoom\", \"region\": [10, 10, 20, 30]}");
	assert_int_equal(a->region.w, 10);
	assert_int_equal(a->region.h, 20);
	actions_destroy(a);
	a = parse("{\"dialect\": \"vitrine\", \"action\": \"screenshot\"}");
	assert_int_equal(a->kind, ACTION_SCREENSHOT);
	actions_destroy(a);
	a = parse("{\"dialect\": \"vitrine\", \"action\": \"cursor_position\"}");
	assert_int_equal(a->kind, ACTION_CURSOR_POSITION);
	actions_destroy(a);
}

/* ---- common fields ---- */

static void test_common_fields(void **state)
{
	struct action *a;

	(void)state;
	a = parse("{\"action\": \"screenshot\", \"id\": \"req-7\", \"screenshot\": true}");
	assert_string_equal(json_string_value(a->id), "req-7");
	assert_true(a->want_screenshot);
	assert_null(a->screenshot_opts);
	actions_destroy(a);

	a = parse("{\"type\": \"wait\", \"id\": 42, \"screenshot\": {\"format\": \"png\"}}");
	assert_int_equal(json_integer_value(a->id), 42);
	assert_true(a->want_screenshot);
	assert_string_equal(json_string_value(json_object_get(a->screenshot_opts, "format")),
			    "png");
	actions_destroy(a);

	a = parse("{\"action\": \"wait\", \"screenshot\": false}");
	assert_false(a->want_screenshot);
	assert_null(a->id);
	actions_destroy(a);

	/* Explicit dialects. */
	a = parse("{\"dialect\": \"anthropic\", \"action\": \"type\", \"text\": \"x\"}");
	assert_int_equal(a->dialect, ACTIONS_DIALECT_ANTHROPIC);
	actions_destroy(a);
	a = parse("{\"dialect\": \"openai\", \"type\": \"type\", \"text\": \"x\"}");
	assert_int_equal(a->dialect, ACTIONS_DIALECT_OPENAI);
	actions_destroy(a);

	/* Screenshot space: a 1024x640 screenshot of the 1280x800 screen. */
	a = parse("{\"action\": \"left_click\", \"coordinate\": [1023, 639], \"coordinate_space\": "
		  "\"screenshot\", \"screenshot_width\": 1024, \"screenshot_height\": 640}");
	expect_point(a, 1279, 799);
	actions_destroy(a);
	a = parse("{\"type\": \"click\", \"x\": 512, \"y\": 320, \"coordinate_space\": "
		  "\"screenshot\", \"screenshot_width\": 1024, \"screenshot_height\": 640}");
	expect_point(a, 640, 400);
	actions_destroy(a);
	a = parse("{\"action\": \"zoom\", \"region\": [0, 0, 1024, 640], \"coordinate_space\": "
		  "\"screenshot\", \"screenshot_width\": 1024, \"screenshot_height\": 640}");
	assert_int_equal(a->region.w, 1280);
	assert_int_equal(a->region.h, 800);
	actions_destroy(a);
	a = parse("{\"action\": \"left_click_drag\", \"start_coordinate\": [0, 0], \"coordinate\": "
		  "[1023, 639], \"coordinate_space\": \"screenshot\", \"screenshot_width\": 1024, "
		  "\"screenshot_height\": 640}");
	assert_int_equal(a->path[1].x, 1279);
	assert_int_equal(a->path[1].y, 799);
	actions_destroy(a);

	/* A session-wide default space, and an action overriding it. */
	{
		struct actions_ctx ctx = screen_1280;

		ctx.default_space = (struct actions_space){ ACTIONS_SPACE_SCREENSHOT, 640, 400 };
		a = parse_ctx("{\"action\": \"mouse_move\", \"coordinate\": [639, 399]}", &ctx);
		expect_point(a, 1279, 799);
		actions_destroy(a);
		a = parse_ctx("{\"action\": \"mouse_move\", \"coordinate\": [639, 399], "
			      "\"coordinate_space\": \"screen\"}",
			      &ctx);
		expect_point(a, 639, 399);
		actions_destroy(a);
		expect_error_ctx("{\"action\": \"mouse_move\", \"coordinate\": [640, 0]}", &ctx,
				 ACTIONS_E_OUT_OF_RANGE, "coordinate");
	}
}

/* ---- errors ---- */

static void test_errors(void **state)
{
	char big[ACTIONS_MAX_TEXT_BYTES + 64];
	char path[16 * (ACTIONS_MAX_PATH + 2) + 64];
	json_t *j;
	struct actions_error err;

	(void)state;
	/* shape */
	j = json_array();
	assert_null(actions_parse(j, &screen_1280, &err));
	assert_int_equal(err.code, ACTIONS_E_INVALID_ARGUMENT);
	json_decref(j);
	expect_error("{}", ACTIONS_E_MISSING_FIELD, "action");
	expect_error("{\"action\": 5}", ACTIONS_E_INVALID_ARGUMENT, "action");
	expect_error("{\"dialect\": \"anthropic\", \"type\": \"click\"}", ACTIONS_E_MISSING_FIELD,
		     "action");
	expect_error("{\"dialect\": 1, \"action\": \"wait\"}", ACTIONS_E_INVALID_ARGUMENT,
		     "dialect");

	/* unknown dialect / action */
	expect_error("{\"dialect\": \"gemini\", \"action\": \"wait\"}", ACTIONS_E_UNKNOWN_DIALECT,
		     "dialect");
	expect_error("{\"action\": \"teleport\"}", ACTIONS_E_UNKNOWN_ACTION, "action");
	expect_error("{\"type\": \"left_click\", \"x\": 1, \"y\": 1}", ACTIONS_E_UNKNOWN_ACTION,
		     "type");
	expect_error("{\"dialect\": \"anthropic\", \"action\": \"move_mouse\"}",
		     ACTIONS_E_UNKNOWN_ACTION, "action");

	/* missing fields */
	expect_error("{\"action\": \"key\"}", ACTIONS_E_MISSING_FIELD, "text");
	expect_error("{\"action\": \"type\"}", ACTIONS_E_MISSING_FIELD, "text");
	expect_error("{\"action\": \"mouse_move\"}", ACTIONS_E_MISSING_FIELD, "coordinate");
	expect_error("{\"action\": \"left_click_drag\", \"start_coordinate\": [1, 1]}",
		     ACTIONS_E_MISSING_FIELD, "coordinate");
	expect_error("{\"action\": \"scroll\", \"coordinate\": [1, 1]}", ACTIONS_E_MISSING_FIELD,
		     "scroll_direction");
	expect_error("{\"action\": \"hold_key\", \"text\": \"shift\"}", ACTIONS_E_MISSING_FIELD,
		     "duration");
	expect_error("{\"action\": \"zoom\"}", ACTIONS_E_MISSING_FIELD, "region");
	expect_error("{\"type\": \"click\", \"x\": 1}", ACTIONS_E_MISSING_FIELD, "y");
	expect_error("{\"type\": \"click\"}", ACTIONS_E_MISSING_FIELD, "x");
	expect_error("{\"type\": \"scroll\", \"x\": 1, \"y\": 1, \"scroll_x\": 0}",
		     ACTIONS_E_MISSING_FIELD, "scroll_y");
	expect_error("{\"type\": \"keypress\"}", ACTIONS_E_MISSING_FIELD, "keys");
	expect_error("{\"type\": \"drag\"}", ACTIONS_E_MISSING_FIELD, "path");
	expect_error("{\"action\": \"press\"}", ACTIONS_E_MISSING_FIELD, "keys");
	expect_error("{\"action\": \"move_mouse\"}", ACTIONS_E_MISSING_FIELD, "x");
	expect_error("{\"dialect\": \"vitrine\", \"action\": \"wait\"}", ACTIONS_E_MISSING_FIELD,
		     "duration_ms");
	expect_error("{\"action\": \"drag\", \"to\": [1, 1]}", ACTIONS_E_MISSING_FIELD, "from");
	expect_error("{\"action\": \"drag\", \"from\": [1, 1]}", ACTIONS_E_MISSING_FIELD, "to");
	expect_error("{\"action\": \"drag\"}", ACTIONS_E_MISSING_FIELD, "path");
	expect_error("{\"dialect\": \"vitrine\", \"action\": \"scroll\"}", ACTIONS_E_MISSING_FIELD,
		     "dy");
	expect_error("{\"action\": \"left_click\", \"coordinate\": [1, 1], \"coordinate_space\": "
		     "\"screenshot\", \"screenshot_height\": 10}",
		     ACTIONS_E_MISSING_FIELD, "screenshot_width");
	expect_error("{\"action\": \"left_click\", \"coordinate\": [1, 1], \"coordinate_space\": "
		     "\"screenshot\", \"screenshot_width\": 10}",
		     ACTIONS_E_MISSING_FIELD, "screenshot_height");

	/* wrong types and shapes */
	expect_error("{\"action\": \"type\", \"text\": 5}", ACTIONS_E_INVALID_ARGUMENT, "text");
	expect_error("{\"action\": \"mouse_move\", \"coordinate\": [1]}",
		     ACTIONS_E_INVALID_ARGUMENT, "coordinate");
	expect_error("{\"action\": \"mouse_move\", \"coordinate\": [\"1\", 2]}",
		     ACTIONS_E_INVALID_ARGUMENT, "coordinate");
	expect_error("{\"action\": \"mouse_move\", \"coordinate\": {\"x\": 1, \"y\": 2}}",
		     ACTIONS_E_INVALID_ARGUMENT, "coordinate");
	expect_error("{\"type\": \"click\", \"x\": \"1\", \"y\": 1}", ACTIONS_E_INVALID_ARGUMENT,
		     "x");
	expect_error("{\"type\": \"click\", \"x\": 1, \"y\": 1, \"button\": \"thumb\"}",
		     ACTIONS_E_INVALID_ARGUMENT, "button");
	expect_error("{\"type\": \"keypress\", \"keys\": \"ctrl\"}", ACTIONS_E_INVALID_ARGUMENT,
		     "keys");
	expect_error("{\"type\": \"keypress\", \"keys\": []}", ACTIONS_E_INVALID_ARGUMENT, "keys");
	expect_error("{\"type\": \"keypress\", \"keys\": [1]}", ACTIONS_E_INVALID_ARGUMENT, "keys");
	expect_error("{\"type\": \"drag\", \"path\": [{\"x\": 1, \"y\": 1}]}",
		     ACTIONS_E_INVALID_ARGUMENT, "path");
	expect_error("{\"type\": \"drag\", \"path\": {}}", ACTIONS_E_INVALID_ARGUMENT, "path");
	expect_error("{\"type\": \"drag\", \"path\": [{\"x\": 1}, {\"x\": 1, \"y\": 1}]}",
		     ACTIONS_E_INVALID_ARGUMENT, "path");
	expect_error("{\"action\": \"scroll\", \"scroll_direction\": \"sideways\"}",
		     ACTIONS_E_INVALID_ARGUMENT, "scroll_direction");
	expect_error("{\"action\": \"scroll\", \"scroll_direction\": \"up\", \"scroll_amount\": "
		     "1.5}",
		     ACTIONS_E_INVALID_ARGUMENT, "scroll_amount");
	expect_error("{\"action\": \"wait\", \"duration\": \"2\"}", ACTIONS_E_INVALID_ARGUMENT,
		     "duration");
	expect_error("{\"action\": \"wait\", \"id\": [1]}", ACTIONS_E_INVALID_ARGUMENT, "id");
	expect_error("{\"action\": \"wait\", \"screenshot\": \"yes\"}", ACTIONS_E_INVALID_ARGUMENT,
		     "screenshot");
	expect_error("{\"action\": \"wait\", \"coordinate_space\": \"window\"}",
		     ACTIONS_E_INVALID_ARGUMENT, "coordinate_space");
	expect_error("{\"action\": \"wait\", \"screenshot_width\": 100}",
		     ACTIONS_E_INVALID_ARGUMENT, "screenshot_width");
	expect_error("{\"action\": \"zoom\", \"region\": [0, 0, 10]}", ACTIONS_E_INVALID_ARGUMENT,
		     "region");
	expect_error("{\"action\": \"left_click\", \"text\": \"shift\", \"key\": \"ctrl\"}",
		     ACTIONS_E_INVALID_ARGUMENT, "key");
	expect_error("{\"action\": \"type\", \"text\": \"a\\u0000b\"}", ACTIONS_E_INVALID_ARGUMENT,
		     "text");
	expect_error("{\"action\": \"key\", \"text\": \"ctrl+\"}", ACTIONS_E_INVALID_ARGUMENT,
		     "text");
	expect_error("{\"action\": \"key\", \"text\": \"  \"}", ACTIONS_E_INVALID_ARGUMENT, "text");
	expect_error("{\"action\": \"move\", \"x\": 1, \"y\": 1, \"coordinate\": [1, 1]}",
		     ACTIONS_E_INVALID_ARGUMENT, "coordinate");
	expect_error("{\"action\": \"scroll\", \"dy\": 1, \"direction\": \"up\"}",
		     ACTIONS_E_INVALID_ARGUMENT, "direction");
	expect_error("{\"action\": \"drag\", \"path\": [[0, 0], [1, 1]], \"from\": [1, 1]}",
		     ACTIONS_E_INVALID_ARGUMENT, "path");
	expect_error("{\"action\": \"press\", \"keys\": 7}", ACTIONS_E_INVALID_ARGUMENT, "keys");
	expect_error("{\"action\": \"press\", \"keys\": []}", ACTIONS_E_INVALID_ARGUMENT, "keys");
	expect_error("{\"action\": \"click\", \"count\": \"2\"}", ACTIONS_E_INVALID_ARGUMENT,
		     "count");
	expect_error("{\"action\": \"click\", \"modifiers\": 3}", ACTIONS_E_INVALID_ARGUMENT,
		     "modifiers");
	/* Vitrine is strict about fields. */
	expect_error("{\"action\": \"move_mouse\", \"x\": 1, \"y\": 1, \"speed\": 2}",
		     ACTIONS_E_INVALID_ARGUMENT, "speed");
	expect_error("{\"action\": \"press\", \"keys\": \"a\", \"text\": \"a\"}",
		     ACTIONS_E_INVALID_ARGUMENT, "text");

	/* unknown keys */
	expect_error("{\"action\": \"key\", \"text\": \"ctrl+Hyper_Q\"}", ACTIONS_E_UNKNOWN_KEY,
		     "text");
	expect_error("{\"type\": \"keypress\", \"keys\": [\"CTRL\", \"BOGUS\"]}",
		     ACTIONS_E_UNKNOWN_KEY, "keys");
	expect_error("{\"action\": \"left_click\", \"text\": \"hyper\"}", ACTIONS_E_UNKNOWN_KEY,
		     "text");
	expect_error("{\"action\": \"click\", \"modifiers\": [\"ctl\"]}", ACTIONS_E_UNKNOWN_KEY,
		     "modifiers");

	/* out of range */
	expect_error("{\"action\": \"mouse_move\", \"coordinate\": [1280, 0]}",
		     ACTIONS_E_OUT_OF_RANGE, "coordinate");
	expect_error("{\"action\": \"mouse_move\", \"coordinate\": [0, 800]}",
		     ACTIONS_E_OUT_OF_RANGE, "coordinate");
	expect_error("{\"action\": \"mouse_move\", \"coordinate\": [-1, 0]}",
		     ACTIONS_E_OUT_OF_RANGE, "coordinate");
	expect_error("{\"action\": \"mouse_move\", \"coordinate\": [1e300, 0]}",
		     ACTIONS_E_OUT_OF_RANGE, "coordinate");
	expect_error("{\"action\": \"mouse_move\", \"coordinate\": [99999999999999, 0]}",
		     ACTIONS_E_OUT_OF_RANGE, "coordinate");
	expect_error("{\"type\": \"click\", \"x\": 1280, \"y\": 0}", ACTIONS_E_OUT_OF_RANGE, "x");
	expect_error("{\"action\": \"left_click_drag\", \"start_coordinate\": [0, 900], "
		     "\"coordinate\": [1, 1]}",
		     ACTIONS_E_OUT_OF_RANGE, "start_coordinate");
	expect_error("{\"type\": \"drag\", \"path\": [{\"x\": 1, \"y\": 1}, {\"x\": 1, \"y\": "
		     "-1}]}",
		     ACTIONS_E_OUT_OF_RANGE, "path");
	expect_error(
		"{\"action\": \"left_click\", \"coordinate\": [1024, 0], \"coordinate_space\": "
		"\"screenshot\", \"screenshot_width\": 1024, \"screenshot_height\": 640}",
		ACTIONS_E_OUT_OF_RANGE, "coordinate");
	expect_error("{\"action\": \"wait\", \"coordinate_space\": \"screenshot\", "
		     "\"screenshot_width\": 0, \"screenshot_height\": 10}",
		     ACTIONS_E_OUT_OF_RANGE, "screenshot_width");
	expect_error("{\"action\": \"wait\", \"coordinate_space\": \"screenshot\", "
		     "\"screenshot_width\": 10, \"screenshot_height\": 20000}",
		     ACTIONS_E_OUT_OF_RANGE, "screenshot_height");
	expect_error("{\"action\": \"wait\", \"duration\": -1}", ACTIONS_E_OUT_OF_RANGE,
		     "duration");
	expect_error("{\"action\": \"wait\", \"duration\": 100.001}", ACTIONS_E_OUT_OF_RANGE,
		     "duration");
	expect_error("{\"action\": \"hold_key\", \"text\": \"a\", \"duration\": 1e9}",
		     ACTIONS_E_OUT_OF_RANGE, "duration");
	expect_error("{\"dialect\": \"vitrine\", \"action\": \"wait\", \"duration_ms\": -5}",
		     ACTIONS_E_OUT_OF_RANGE, "duration_ms");
	expect_error("{\"dialect\": \"vitrine\", \"action\": \"wait\", \"duration_ms\": 100001}",
		     ACTIONS_E_OUT_OF_RANGE, "duration_ms");
	expect_error("{\"action\": \"scroll\", \"scroll_direction\": \"up\", \"scroll_amount\": "
		     "101}",
		     ACTIONS_E_OUT_OF_RANGE, "scroll_amount");
	expect_error("{\"action\": \"scroll\", \"scroll_direction\": \"up\", \"scroll_amount\": "
		     "-1}",
		     ACTIONS_E_OUT_OF_RANGE, "scroll_amount");
	expect_error("{\"type\": \"scroll\", \"x\": 1, \"y\": 1, \"scroll_x\": 0, \"scroll_y\": "
		     "10051}",
		     ACTIONS_E_OUT_OF_RANGE, "scroll_y");
	expect_error("{\"action\": \"scroll\", \"dx\": 0, \"dy\": -101}", ACTIONS_E_OUT_OF_RANGE,
		     "dy");
	expect_error("{\"action\": \"key\", \"text\": \"a\", \"repeat\": 0}",
		     ACTIONS_E_OUT_OF_RANGE, "repeat");
	expect_error("{\"action\": \"click\", \"count\": 4}", ACTIONS_E_OUT_OF_RANGE, "count");
	expect_error("{\"action\": \"zoom\", \"region\": [10, 10, 10, 20]}", ACTIONS_E_OUT_OF_RANGE,
		     "region");
	expect_error("{\"action\": \"zoom\", \"region\": [0, 0, 1281, 20]}", ACTIONS_E_OUT_OF_RANGE,
		     "region");

	/* too long */
	memset(big, 'a', sizeof(big));
	snprintf(big, sizeof(big), "{\"action\": \"type\", \"text\": \"");
	big[strlen(big)] = 'a';
	memcpy(big + sizeof(big) - 4, "\"}", 3);
	expect_error(big, ACTIONS_E_TOO_LONG, "text");
	{
		size_t used = (size_t)snprintf(path, sizeof(path),
					       "{\"type\": \"drag\", \"path\": [");

		for (int i = 0; i <= ACTIONS_MAX_PATH; i++)
			used += (size_t)snprintf(path + used, sizeof(path) - used, "%s[1,1]",
						 i ? "," : "");
		snprintf(path + used, sizeof(path) - used, "]}");
		expect_error(path, ACTIONS_E_TOO_LONG, "path");
	}
	expect_error("{\"action\": \"key\", \"text\": \"a+b+c+d+e+f+g+h+i\"}", ACTIONS_E_TOO_LONG,
		     "text");
	expect_error(
		"{\"action\": \"key\", \"text\": \"a a a a a a a a a a a a a a a a a a a a a a "
		"a a a a a a a a a a a\"}",
		ACTIONS_E_TOO_LONG, "text");

	/* a screen of unknown size */
	{
		struct actions_ctx none = { 0 };

		expect_error_ctx("{\"action\": \"wait\"}", &none, ACTIONS_E_INVALID_ARGUMENT, "");
	}
	assert_string_equal(actions_errc_name(ACTIONS_E_OUT_OF_RANGE), "out_of_range");
	assert_string_equal(actions_errc_name(ACTIONS_E_UNKNOWN_ACTION), "unknown_action");
	actions_destroy(NULL);
}

/* ---- mapping ---- */

/* Every screenshot pixel of a downscaled screenshot lands on a screen pixel
 * inside the area it shows ([x*W/w, (x+1)*W/w)), corners on corners, and the
 * mapping never goes backwards. */
static void test_map_every_pixel(void **state)
{
	static const int pairs[][2] = {
		/* screenshot, screen */
		{ 1024, 1280 }, { 640, 800 },  { 1280, 1280 }, { 1366, 1920 }, { 1024, 3840 },
		{ 768, 1080 },	{ 1, 1280 },   { 2, 3 },       { 997, 1000 },  { 100, 1999 },
		{ 1280, 1281 }, { 333, 1280 }, { 1456, 1920 }, { 819, 1080 },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		int w = pairs[k][0], sw = pairs[k][1];
		struct actions_space sp = { ACTIONS_SPACE_SCREENSHOT, w, w };
		int prev = -1;

		for (int x = 0; x < w; x++) {
			struct action_point p;
			long long lo = (long long)x * sw, hi = (long long)(x + 1) * sw;

			assert_int_equal(actions_map_point(&sp, sw, sw, x, x, &p), 0);
			/* pixel p overlaps [lo/w, hi/w) */
			if (!((long long)p.x * w < hi && ((long long)p.x + 1) * w > lo) ||
			    p.x != p.y || p.x < prev || p.x >= sw)
				fail_msg("%d -> %d screen: pixel %d -> %d", w, sw, x, p.x);
			prev = p.x;
		}
		if (w > 1) {
			struct action_point p;

			assert_int_equal(actions_map_point(&sp, sw, sw, 0, w - 1, &p), 0);
			assert_int_equal(p.x, 0);
			assert_int_equal(p.y, sw - 1);
		}
	}
}

static void test_map_edges(void **state)
{
	struct actions_space screen = { ACTIONS_SPACE_SCREEN, 0, 0 };
	struct actions_space up = { ACTIONS_SPACE_SCREENSHOT, 2560, 1600 };
	struct actions_space one = { ACTIONS_SPACE_SCREENSHOT, 1, 1 };
	struct actions_space bad = { ACTIONS_SPACE_SCREENSHOT, 0, 10 };
	struct action_point p;

	(void)state;
	assert_int_equal(actions_map_point(&screen, 1280, 800, 1279, 799, &p), 0);
	assert_int_equal(p.x, 1279);
	assert_int_equal(p.y, 799);
	assert_int_equal(actions_map_point(&screen, 1280, 800, 1280, 0, &p), -ERANGE);
	assert_int_equal(actions_map_point(&screen, 1280, 800, 0, -1, &p), -ERANGE);
	/* Upscaled screenshots: corners still map to corners. */
	assert_int_equal(actions_map_point(&up, 1280, 800, 2559, 1599, &p), 0);
	assert_int_equal(p.x, 1279);
	assert_int_equal(p.y, 799);
	assert_int_equal(actions_map_point(&up, 1280, 800, 0, 0, &p), 0);
	assert_int_equal(p.x, 0);
	assert_int_equal(actions_map_point(&up, 1280, 800, 1280, 800, &p), 0);
	assert_int_equal(p.x, 640);
	assert_int_equal(p.y, 400);
	/* A one-pixel screenshot maps to the middle. */
	assert_int_equal(actions_map_point(&one, 1280, 800, 0, 0, &p), 0);
	assert_int_equal(p.x, 639);
	assert_int_equal(p.y, 399);
	assert_int_equal(actions_map_point(&bad, 1280, 800, 0, 0, &p), -EINVAL);
	assert_int_equal(actions_map_point(&screen, 0, 800, 0, 0, &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anthropic_keys_and_text),
		cmocka_unit_test(test_anthropic_pointer),
		cmocka_unit_test(test_anthropic_other),
		cmocka_unit_test(test_openai),
		cmocka_unit_test(test_vitrine),
		cmocka_unit_test(test_common_fields),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_map_every_pixel),
		cmocka_unit_test(test_map_edges),
	};

	return cmocka_run_group_tests_name("actions", tests, NULL, NULL);
}
