/* tests/unit/test_toolset.c: Claude's computer toolset (gateway/action/toolset.c
 * and its batch, batch.c): every member's form (a tool_use block, its name
 * and input, a list, an assistant message's content), a turn stopped in the
 * middle with its exact error results, screenshots fitted to the image
 * limits and coordinates mapped back and forth at several screen sizes,
 * cursor_position in screenshot pixels, zoom at display resolution, the
 * member configs, and the tool_result blocks. */
#include "display/encode.h"
#include "gateway/action/batch.h"
#include "gateway/action/toolset.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *load(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	if (!j)
		fail_msg("bad JSON in the test: %s: %s", jerr.text, text);
	return j;
}

/* The batch of body, its calls parsed in the frame of a screen_w x
 * screen_h screen under the default limits. */
static struct action_batch *turn_at(const char *body, int screen_w, int screen_h,
				    struct toolset_frame *frame)
{
	struct actions_ctx ctx = { .screen_width = screen_w, .screen_height = screen_h };
	struct toolset_limits lim = toolset_default_limits();
	struct actions_error err;
	struct action_batch *b;
	json_t *j = load(body);
	long index;

	b = batch_parse(j, &ctx, &err, &index);
	json_decref(j);
	if (!b)
		fail_msg("refused: %s (%s)", err.message, body);
	assert_non_null(b->turn);
	assert_true(b->is_batch);
	if (b->turn->has_limits)
		lim = b->turn->limits;
	toolset_frame_init(frame, screen_w, screen_h, &lim);
	ctx.default_space = (struct actions_space){ ACTIONS_SPACE_SCREENSHOT, frame->shot_w,
						    frame->shot_h };
	assert_int_equal(batch_resolve_toolset(b, &ctx, b->turn->disabled), 0);
	return b;
}

static void test_forms(void **state)
{
	struct toolset_frame f;
	struct action_batch *b;
	static const char *const one[] = {
		/* a tool_use block as the API returns it */
		"{\"type\": \"tool_use\", \"id\": \"toolu_1\", \"name\": \"left_click\", "
		"\"toolset_name\": \"computer\", \"input\": {\"coordinate\": [10, 20]}}",
		/* its name and input alone */
		"{\"name\": \"left_click\", \"input\": {\"coordinate\": [10, 20]}, \"id\": \"toolu_1\"}",
		/* a list of one */
		"{\"actions\": [{\"type\": \"tool_use\", \"id\": \"toolu_1\", \"name\": \"left_click\", "
		"\"input\": {\"coordinate\": [10, 20]}}]}",
		/* an assistant message: text and another tool's call skipped */
		"{\"role\": \"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"Clicking.\"}, "
		"{\"type\": \"tool_use\", \"id\": \"toolu_9\", \"name\": \"bash\", \"input\": {}}, "
		"{\"type\": \"tool_use\", \"id\": \"toolu_1\", \"name\": \"left_click\", "
		"\"toolset_name\": \"computer\", \"input\": {\"coordinate\": [10, 20]}}]}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		b = turn_at(one[i], 1280, 800, &f);
		assert_int_equal(b->turn->n, 1);
		assert_int_equal(b->n, 1);
		assert_false(b->refused);
		assert_int_equal(b->actions[0]->kind, ACTION_CLICK);
		assert_int_equal(b->actions[0]->point.x, 10);
		assert_int_equal(b->actions[0]->point.y, 20);
		assert_string_equal(json_string_value(b->turn->calls[0].id), "toolu_1");
		batch_destroy(b);
	}
}

/* Every member, as the model sends it, on a 1280x800 screen (1:1). */
static void test_members(void **state)
{
	static const struct {
		const char *call;
		enum action_kind kind;
		const char *ack; /* NULL: an image or a point */
	} cases[] = {
		{ "{\"name\": \"key\", \"input\": {\"text\": \"ctrl+s\", \"repeat\": 2}}",
		  ACTION_KEY, "Pressed ctrl+s." },
		{ "{\"name\": \"hold_key\", \"input\": {\"text\": \"shift\", \"duration\": 2}}",
		  ACTION_HOLD_KEY, "Held shift for 2s." },
		{ "{\"name\": \"type\", \"input\": {\"text\": \"hello\"}}", ACTION_TYPE, "Typed." },
		{ "{\"name\": \"cursor_position\", \"input\": {}}", ACTION_CURSOR_POSITION, NULL },
		{ "{\"name\": \"mouse_move\", \"input\": {\"coordinate\": [5, 6]}}", ACTION_MOVE,
		  "Moved the mouse." },
		{ "{\"name\": \"left_mouse_down\", \"input\": {}}", ACTION_MOUSE_DOWN,
		  "Left mouse button pressed." },
		{ "{\"name\": \"left_mouse_up\", \"input\": {\"coordinate\": [5, 6]}}",
		  ACTION_MOUSE_UP, "Left mouse button released." },
		{ "{\"name\": \"left_click\", \"input\": {\"coordinate\": [5, 6], \"text\": \"ctrl\"}}",
		  ACTION_CLICK, "Clicked." },
		{ "{\"name\": \"left_click_drag\", \"input\": {\"start_coordinate\": [1, 2], "
		  "\"coordinate\": [300, 400]}}",
		  ACTION_DRAG, "Dragged." },
		{ "{\"name\": \"right_click\", \"input\": {\"coordinate\": [5, 6]}}", ACTION_CLICK,
		  "Right-clicked." },
		{ "{\"name\": \"middle_click\", \"input\": {}}", ACTION_CLICK, "Middle-clicked." },
		{ "{\"name\": \"double_click\", \"input\": {\"coordinate\": [5, 6]}}", ACTION_CLICK,
		  "Double-clicked." },
		{ "{\"name\": \"triple_click\", \"input\": {\"coordinate\": [5, 6]}}", ACTION_CLICK,
		  "Triple-clicked." },
		{ "{\"name\": \"scroll\", \"input\": {\"coordinate\": [5, 6], \"scroll_direction\": "
		  "\"down\", \"scroll_amount\": 3}}",
		  ACTION_SCROLL, "Scrolled down." },
		{ "{\"name\": \"wait\", \"input\": {\"duration\": 0.5}}", ACTION_WAIT,
		  "Waited 0.5s." },
		{ "{\"name\": \"screenshot\", \"input\": {}}", ACTION_SCREENSHOT, NULL },
		{ "{\"name\": \"zoom\", \"input\": {\"region\": [0, 0, 640, 400]}}", ACTION_ZOOM,
		  NULL },
	};

	(void)state;
	assert_int_equal(sizeof(cases) / sizeof(cases[0]), TOOLSET_N_MEMBERS);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct toolset_frame f;
		struct action_batch *b = turn_at(cases[i].call, 1280, 800, &f);
		json_t *res;

		assert_int_equal(b->n, 1);
		assert_int_equal(b->actions[0]->kind, cases[i].kind);
		assert_string_equal(b->actions[0]->name,
				    toolset_member_name(b->turn->calls[0].member));
		if (cases[i].ack) {
			res = toolset_result_ack(&b->turn->calls[0]);
			assert_string_equal(json_string_value(json_object_get(
						    json_array_get(json_object_get(res, "content"),
								   0),
						    "text")),
					    cases[i].ack);
			assert_string_equal(json_string_value(json_object_get(res, "toolset_name")),
					    "computer");
			assert_null(json_object_get(res, "is_error"));
			json_decref(res);
		}
		batch_destroy(b);
	}
	assert_int_equal(toolset_member_index("computer"), -1);
	assert_null(toolset_member_name(TOOLSET_N_MEMBERS));
}

/* The 2nd of 4 calls is refused: the first runs, its own result is the
 * error, the last two are answered with the fixed words. */
static void test_turn_stops(void **state)
{
	struct toolset_frame f;
	struct action_batch *b;
	json_t *done, *all;
	static const char *const expect[] = { NULL, "field \"coordinate\"", TOOLSET_NOT_EXECUTED,
					      TOOLSET_NOT_EXECUTED };

	(void)state;
	b = turn_at(
		"{\"actions\": ["
		"{\"type\": \"tool_use\", \"id\": \"t1\", \"name\": \"left_click\", "
		"\"input\": {\"coordinate\": [10, 10]}},"
		"{\"type\": \"tool_use\", \"id\": \"t2\", \"name\": \"left_click\", "
		"\"input\": {\"coordinate\": [5000, 10]}},"
		"{\"type\": \"tool_use\", \"id\": \"t3\", \"name\": \"type\", "
		"\"input\": {\"text\": \"secret on screen\"}},"
		"{\"type\": \"tool_use\", \"id\": \"t4\", \"name\": \"screenshot\", \"input\": {}}]}",
		1280, 800, &f);
	assert_int_equal(b->n, 1);
	assert_true(b->refused);
	assert_int_equal(b->refusal.code, ACTIONS_E_OUT_OF_RANGE);
	assert_string_equal(json_string_value(b->refused_id), "t2");
	done = json_pack("[o]", toolset_result_ack(&b->turn->calls[0]));
	all = toolset_results_stopped(b->turn, done, b->n, b->refusal.message);
	assert_int_equal(json_array_size(all), 4);
	for (size_t i = 0; i < 4; i++) {
		const json_t *r = json_array_get(all, i);
		char id[4];

		snprintf(id, sizeof(id), "t%zu", i + 1);
		assert_string_equal(json_string_value(json_object_get(r, "type")), "tool_result");
		assert_string_equal(json_string_value(json_object_get(r, "tool_use_id")), id);
		assert_string_equal(json_string_value(json_object_get(r, "toolset_name")),
				    "computer");
		if (!expect[i]) {
			assert_null(json_object_get(r, "is_error"));
			continue;
		}
		assert_true(json_is_true(json_object_get(r, "is_error")));
		if (i >= 2) /* exactly the fixed words, nothing else */
			assert_string_equal(json_string_value(json_object_get(r, "content")),
					    "Not executed: an earlier computer action in this turn "
					    "failed.");
		else
			assert_non_null(strstr(json_string_value(json_object_get(r, "content")),
					       expect[i]));
	}
	json_decref(all);
	json_decref(done);
	batch_destroy(b);
}

/* The screenshot sizes the default limits give, as the encoder makes them. */
static void test_fit(void **state)
{
	static const struct {
		int w, h, sw, sh;
	} cases
		[] = {
			{ 1280, 800, 1280, 800 }, /* fits: 1:1 */
			{ 1920, 1080, 1920, 1080 },
			{ 2560, 1600, 2419, 1512 }, /* the tokens bind: 2420x1513 would be 4785 */
			{ 3840, 2160, 2576, 1449 }, /* the long edge binds (4784 tokens exactly) */
			{ 800, 1280, 800, 1280 },
			{ 1440, 3200, 1159, 2576 },
			{ 5120, 1440, 2576, 725 },
		};
	struct toolset_limits lim = toolset_default_limits();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int w, h, ew, eh, w2, h2;
		double scale;

		toolset_fit(cases[i].w, cases[i].h, &lim, &w, &h, &ew, &eh);
		print_message("%dx%d -> %dx%d\n", cases[i].w, cases[i].h, w, h);
		assert_int_equal(w, cases[i].sw);
		assert_int_equal(h, cases[i].sh);
		assert_true(w <= TOOLSET_DEFAULT_LONG_EDGE && h <= TOOLSET_DEFAULT_LONG_EDGE);
		assert_true(((w + 27) / 28) * ((h + 27) / 28) <= TOOLSET_DEFAULT_VISUAL_TOKENS);
		/* what the encoder is asked makes exactly that size */
		display_scale_fit(cases[i].w, cases[i].h, ew, eh, &w2, &h2, &scale);
		assert_int_equal(w2, w);
		assert_int_equal(h2, h);
	}
	/* a smaller limit, set per session */
	lim = (struct toolset_limits){ 1568, 1568 };
	{
		int w, h, ew, eh;

		toolset_fit(1920, 1080, &lim, &w, &h, &ew, &eh);
		assert_true(((w + 27) / 28) * ((h + 27) / 28) <= 1568);
		assert_true(w <= 1568);
		assert_int_equal(w, 1456);
		assert_int_equal(h, 819);
	}
}

/* Screenshot pixel -> screen -> screenshot pixel is the identity, screen
 * pixel -> screenshot -> screen lands within the screenshot pixel's area,
 * corners map to corners, at several sizes. */
static void test_round_trips(void **state)
{
	static const int sizes[][2] = { { 1280, 800 },	{ 1920, 1080 }, { 2560, 1600 },
					{ 3840, 2160 }, { 1440, 3200 }, { 5120, 1440 },
					{ 1, 1 },	{ 640, 1 } };
	struct toolset_limits lim = toolset_default_limits();

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int W = sizes[i][0], H = sizes[i][1];
		struct toolset_frame f;
		struct actions_space space;
		struct action_point p;
		int sx, sy;

		toolset_frame_init(&f, W, H, &lim);
		space = (struct actions_space){ ACTIONS_SPACE_SCREENSHOT, f.shot_w, f.shot_h };
		for (int x = 0; x < f.shot_w; x += 1 + f.shot_w / 97) {
			int y = (x * 7) % f.shot_h;

			assert_int_equal(actions_map_point(&space, W, H, x, y, &p), 0);
			toolset_to_shot(&f, W, H, p.x, p.y, &sx, &sy);
			assert_int_equal(sx, x);
			assert_int_equal(sy, y);
		}
		for (int X = 0; X < W; X += 1 + W / 89) {
			int Y = (X * 3) % H;

			toolset_to_shot(&f, W, H, X, Y, &sx, &sy);
			assert_int_equal(actions_map_point(&space, W, H, sx, sy, &p), 0);
			/* within one screenshot pixel's span of screen pixels */
			assert_true(abs(p.x - X) * (f.shot_w > 1 ? f.shot_w - 1 : 1) <= W);
			assert_true(abs(p.y - Y) * (f.shot_h > 1 ? f.shot_h - 1 : 1) <= H);
		}
		assert_int_equal(actions_map_point(&space, W, H, f.shot_w - 1, f.shot_h - 1, &p),
				 0);
		if (f.shot_w > 1) {
			assert_int_equal(p.x, W - 1);
			assert_int_equal(p.y, H > 1 && f.shot_h > 1 ? H - 1 : p.y);
		}
	}
}

/* cursor_position answers in screenshot pixels: on a 3840x2160 screen
 * (2576x1449 screenshots) the pointer at the screen's middle and corners. */
static void test_cursor_position(void **state)
{
	struct toolset_limits lim = toolset_default_limits();
	struct toolset_frame f;
	struct toolset_call c = { 0 };
	json_t *res;
	int sx, sy;

	(void)state;
	toolset_frame_init(&f, 3840, 2160, &lim);
	toolset_to_shot(&f, 3840, 2160, 0, 0, &sx, &sy);
	assert_int_equal(sx, 0);
	assert_int_equal(sy, 0);
	toolset_to_shot(&f, 3840, 2160, 3839, 2159, &sx, &sy);
	assert_int_equal(sx, 2575);
	assert_int_equal(sy, 1448);
	toolset_to_shot(&f, 3840, 2160, 1920, 1080, &sx, &sy);
	assert_int_equal(sx, 1288); /* round(1920 * 2575 / 3839) */
	assert_int_equal(sy, 724); /* round(1080 * 1448 / 2159) */
	c.member = toolset_member_index("cursor_position");
	c.input = json_object();
	c.id = json_string("toolu_c");
	res = toolset_result_point(&c, sx, sy);
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(json_object_get(res, "content"),
								   0),
						    "text")),
			    "X=1288,Y=724");
	assert_string_equal(json_string_value(json_object_get(res, "tool_use_id")), "toolu_c");
	json_decref(res);
	json_decref(c.input);
	json_decref(c.id);
}

/* zoom's region is in screenshot pixels; it is captured at display
 * resolution: the region's screen pixels, not scaled down while they fit. */
static void test_zoom(void **state)
{
	struct toolset_frame f;
	struct action_batch *b;
	int w, h, ew, eh;

	(void)state;
	/* 3840x2160 -> 2576x1449: the screenshot's left half, top half */
	b = turn_at("{\"name\": \"zoom\", \"input\": {\"region\": [0, 0, 1288, 724]}}", 3840, 2160,
		    &f);
	/* corners to corners: the edge pixels 1287, 723 are screen pixels 1919, 1078 */
	assert_int_equal(b->actions[0]->region.x, 0);
	assert_int_equal(b->actions[0]->region.y, 0);
	assert_int_equal(b->actions[0]->region.w, 1920);
	assert_int_equal(b->actions[0]->region.h, 1079);
	toolset_fit(b->actions[0]->region.w, b->actions[0]->region.h, &f.limits, &w, &h, &ew, &eh);
	assert_int_equal(w, 1920); /* display resolution */
	assert_int_equal(h, 1079);
	batch_destroy(b);
	/* a region of the whole 3840x2160 screen is over the limits: fitted */
	b = turn_at("{\"name\": \"zoom\", \"input\": {\"region\": [0, 0, 2576, 1449]}}", 3840, 2160,
		    &f);
	assert_int_equal(b->actions[0]->region.w, 3840);
	toolset_fit(3840, 2160, &f.limits, &w, &h, &ew, &eh);
	assert_int_equal(w, 2576);
	batch_destroy(b);
	/* 1:1 on 1280x800 */
	b = turn_at("{\"name\": \"zoom\", \"input\": {\"region\": [100, 50, 420, 250]}}", 1280, 800,
		    &f);
	assert_int_equal(b->actions[0]->region.x, 100);
	assert_int_equal(b->actions[0]->region.w, 320);
	assert_int_equal(b->actions[0]->region.h, 200);
	batch_destroy(b);
}

/* A click in a scaled screenshot lands on the mapped screen pixel. */
static void test_scaled_click(void **state)
{
	struct toolset_frame f;
	struct action_batch *b;

	(void)state;
	b = turn_at("{\"name\": \"left_click\", \"input\": {\"coordinate\": [2575, 1448]}}", 3840,
		    2160, &f);
	assert_int_equal(f.shot_w, 2576);
	assert_int_equal(b->actions[0]->point.x, 3839);
	assert_int_equal(b->actions[0]->point.y, 2159);
	batch_destroy(b);
	b = turn_at("{\"name\": \"left_click\", \"input\": {\"coordinate\": [2576, 0]}}", 3840,
		    2160, &f);
	assert_true(b->refused); /* past the screenshot: refused, not clamped */
	assert_int_equal(b->refusal.code, ACTIONS_E_OUT_OF_RANGE);
	batch_destroy(b);
	/* a smaller limit set for the session */
	b = turn_at("{\"name\": \"left_click\", \"input\": {\"coordinate\": [1455, 818]}, "
		    "\"image_limits\": {\"max_long_edge\": 1568, \"max_visual_tokens\": 1568}}",
		    1920, 1080, &f);
	assert_int_equal(f.shot_w, 1456);
	assert_int_equal(b->actions[0]->point.x, 1919);
	assert_int_equal(b->actions[0]->point.y, 1079);
	batch_destroy(b);
}

/* configs: a member turned off is refused; bad entries, inputs and turns. */
static void test_refusals(void **state)
{
	struct actions_ctx ctx = { .screen_width = 1280, .screen_height = 800 };
	struct toolset_frame f;
	struct action_batch *b;
	struct actions_error err;
	long index;
	static const char *const bad[] = {
		"{\"name\": \"open_app\", \"input\": {}}",
		"{\"name\": \"left_click\", \"input\": 3}",
		"{\"name\": \"left_click\", \"input\": {}, \"tool\": {\"type\": \"computer_20251124\"}}",
		"{\"name\": \"left_click\", \"input\": {}, \"tool\": {\"type\": "
		"\"computer_toolset_20260801\", \"configs\": {\"launch\": {\"enabled\": false}}}}",
		"{\"name\": \"left_click\", \"input\": {}, \"image_limits\": {\"max_long_edge\": 0}}",
		"{\"type\": \"tool_use\", \"name\": \"left_click\", \"toolset_name\": \"browser\", "
		"\"input\": {}}",
		"{\"actions\": [{\"type\": \"tool_use\", \"name\": \"screenshot\", \"input\": {}}, "
		"{\"action\": \"screenshot\"}]}",
		"{\"content\": [{\"type\": \"text\", \"text\": \"done\"}]}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = load(bad[i]);

		assert_null(batch_parse(j, &ctx, &err, &index));
		assert_true(err.message[0] != '\0');
		json_decref(j);
	}
	/* zoom turned off by the entry given with the turn */
	b = turn_at("{\"name\": \"zoom\", \"input\": {\"region\": [0, 0, 10, 10]}, \"tools\": "
		    "[{\"type\": \"bash_20250124\", \"name\": \"bash\"}, {\"type\": "
		    "\"computer_toolset_20260801\", \"configs\": {\"zoom\": {\"enabled\": false}, "
		    "\"screenshot\": {\"enabled\": true}}}]}",
		    1280, 800, &f);
	assert_true(b->refused);
	assert_int_equal(b->n, 0);
	assert_int_equal(b->refusal.code, ACTIONS_E_UNKNOWN_ACTION);
	batch_destroy(b);
	/* a field of no member's, or of another action, is refused */
	b = turn_at("{\"name\": \"left_click\", \"input\": {\"coordinate\": [1, 1], "
		    "\"coordinate_space\": \"screen\"}}",
		    1280, 800, &f);
	assert_true(b->refused);
	assert_string_equal(b->refusal.field, "coordinate_space");
	batch_destroy(b);
	b = turn_at("{\"name\": \"type\", \"input\": {\"text\": \"x\", \"action\": \"key\"}}", 1280,
		    800, &f);
	assert_true(b->refused);
	batch_destroy(b);
}

/* An image result, as the Messages API takes it. */
static void test_image_result(void **state)
{
	struct toolset_call c = { .member = 15 };
	json_t *res;
	const json_t *src;

	(void)state;
	assert_string_equal(toolset_member_name(c.member), "screenshot");
	c.id = json_string("toolu_s");
	c.input = json_object();
	res = toolset_result_image(&c, json_string("iVBORw0KGgo="), "image/png");
	src = json_object_get(json_array_get(json_object_get(res, "content"), 0), "source");
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(json_object_get(res, "content"),
								   0),
						    "type")),
			    "image");
	assert_string_equal(json_string_value(json_object_get(src, "type")), "base64");
	assert_string_equal(json_string_value(json_object_get(src, "media_type")), "image/png");
	assert_string_equal(json_string_value(json_object_get(src, "data")), "iVBORw0KGgo=");
	json_decref(res);
	json_decref(c.id);
	json_decref(c.input);
}

/* OpenAI's preview computer call, one "action" object, is a batch of one
 * whose answer carries the computer_call_output (a screenshot). */
static void test_openai_single_action(void **state)
{
	struct actions_ctx ctx = { .screen_width = 1280, .screen_height = 800 };
	struct actions_error err;
	long index;
	json_t *j = load(
		"{\"type\": \"computer_call\", \"id\": \"cu_1\", \"call_id\": \"call_1\", "
		"\"status\": \"completed\", \"pending_safety_checks\": [], "
		"\"action\": {\"type\": \"click\", \"button\": \"left\", \"x\": 3, \"y\": 4}}");
	struct action_batch *b = batch_parse(j, &ctx, &err, &index);

	(void)state;
	assert_non_null(b);
	assert_int_equal(b->n, 1);
	assert_int_equal(b->actions[0]->point.x, 3);
	assert_string_equal(json_string_value(b->call_id), "call_1");
	assert_true(b->want_screenshot);
	batch_destroy(b);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_turn_stops),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_cursor_position),
		cmocka_unit_test(test_zoom),
		cmocka_unit_test(test_scaled_click),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_image_result),
		cmocka_unit_test(test_openai_single_action),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
