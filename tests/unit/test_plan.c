/* tests/unit/test_plan.c: actions -> step plans (gateway/plan.c): key and
 * button order, modifiers around pointer actions, click timing, wheel notches,
 * drag interpolation, text that keys cannot express. */
#include "gateway/action/plan.h"

#include "vmm-qemu/input.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define W 1280
#define H 800

static const struct actions_ctx ctx = { .screen_width = W, .screen_height = H };

struct buf {
	char s[16384];
	size_t len;
};

__attribute__((format(printf, 2, 3))) static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	b->len += (size_t)vsnprintf(b->s + b->len, sizeof(b->s) - b->len, fmt, ap);
	va_end(ap);
	assert_true(b->len < sizeof(b->s));
}

/* One input-send-event argument object as words: "move(x,y)", "+k:ctrl",
 * "-b:left". Checks the shape QMP wants on the way. */
static void describe_event(struct buf *b, const json_t *ev)
{
	const json_t *events = json_object_get(ev, "events"), *e;
	size_t i;
	int x = -1, y = -1;

	assert_true(json_is_array(events));
	assert_true(json_array_size(events) > 0);
	json_array_foreach(events, i, e)
	{
		const char *type = json_string_value(json_object_get(e, "type"));
		const json_t *data = json_object_get(e, "data");

		assert_non_null(type);
		assert_true(json_is_object(data));
		if (strcmp(type, "abs") == 0) {
			const char *axis = json_string_value(json_object_get(data, "axis"));
			int v = (int)json_integer_value(json_object_get(data, "value"));

			assert_true(v >= 0 && v <= VMM_ABS_MAX);
			/* The guest's mapping (libinput): floor(v * size / 32768). */
			if (strcmp(axis, "x") == 0)
				x = (int)((long long)v * W / (VMM_ABS_MAX + 1));
			else
				y = (int)((long long)v * H / (VMM_ABS_MAX + 1));
		} else if (strcmp(type, "btn") == 0) {
			put(b, "%s%sb:%s", b->len ? " " : "",
			    json_is_true(json_object_get(data, "down")) ? "+" : "-",
			    json_string_value(json_object_get(data, "button")));
		} else if (strcmp(type, "key") == 0) {
			const json_t *k = json_object_get(data, "key");

			assert_string_equal(json_string_value(json_object_get(k, "type")), "qcode");
			put(b, "%s%sk:%s", b->len ? " " : "",
			    json_is_true(json_object_get(data, "down")) ? "+" : "-",
			    json_string_value(json_object_get(k, "data")));
		} else {
			fail_msg("unexpected event type %s", type);
		}
	}
	if (x >= 0 || y >= 0) {
		assert_true(x >= 0 && y >= 0);
		put(b, "%smove(%d,%d)", b->len ? " " : "", x, y);
	}
}

static const char *describe(const struct plan *p, struct buf *b)
{
	b->len = 0;
	b->s[0] = '\0';
	for (size_t i = 0; i < p->len; i++) {
		const struct plan_step *s = &p->steps[i];
		const char *sp = b->len ? " " : "";

		switch (s->kind) {
		case PLAN_INPUT:
			describe_event(b, s->event);
			break;
		case PLAN_DELAY:
			put(b, "%sdelay(%d)", sp, s->ms);
			break;
		case PLAN_WAIT:
			put(b, "%swait(%d)", sp, s->ms);
			break;
		case PLAN_X_SYNC:
			put(b, "%sxsync(%u)", sp, s->x_mask);
			break;
		case PLAN_GUEST_SYNC:
			put(b, "%sgsync", sp);
			break;
		case PLAN_TYPE_TEXT:
			put(b, "%stext(%s)", sp, s->text);
			break;
		case PLAN_SCREENSHOT:
			put(b, "%sscreenshot", sp);
			break;
		case PLAN_CURSOR_POSITION:
			put(b, "%scursor", sp);
			break;
		case PLAN_ZOOM:
			put(b, "%szoom(%d,%d,%d,%d)", sp, s->region.x, s->region.y, s->region.w,
			    s->region.h);
			break;
		}
	}
	return b->s;
}

static const struct vmm_keymap *plan_keymap; /* expect_plan's layout: NULL is US */

static void expect_plan(const char *json, const char *want)
{
	struct actions_ctx c = ctx;
	json_t *j = json_loads(json, 0, NULL);
	struct actions_error err;
	struct action *a;
	struct plan *p;
	struct buf b;

	if (!j)
		fail_msg("bad test JSON %s", json);
	c.keymap = plan_keymap;
	a = actions_parse(j, &c, &err);
	json_decref(j);
	if (!a)
		fail_msg("%s: %s", json, err.message);
	p = plan_build(a, W, H);
	assert_non_null(p);
	describe(p, &b);
	if (strcmp(b.s, want) != 0)
		fail_msg("%s\n  got:  %s\n  want: %s", json, b.s, want);
	plan_destroy(p);
	actions_destroy(a);
}

static void test_keys(void **state)
{
	(void)state;
	expect_plan("{\"action\": \"key\", \"text\": \"ctrl+shift+t\"}",
		    "+k:ctrl +k:shift +k:t -k:t -k:shift -k:ctrl");
	expect_plan("{\"action\": \"key\", \"text\": \"Return\"}", "+k:ret -k:ret");
	expect_plan("{\"action\": \"key\", \"text\": \"ctrl+a Delete\", \"repeat\": 2}",
		    "+k:ctrl +k:a -k:a -k:ctrl +k:delete -k:delete "
		    "+k:ctrl +k:a -k:a -k:ctrl +k:delete -k:delete");
	expect_plan("{\"type\": \"keypress\", \"keys\": [\"CTRL\", \"A\"]}",
		    "+k:ctrl +k:a -k:a -k:ctrl");
	expect_plan("{\"action\": \"press\", \"keys\": \"ctrl++\"}",
		    "+k:ctrl +k:shift +k:equal -k:equal -k:shift -k:ctrl");
	expect_plan("{\"action\": \"hold_key\", \"text\": \"shift\", \"duration\": 1.5}",
		    "+k:shift delay(1500) -k:shift");
	expect_plan("{\"dialect\": \"vitrine\", \"action\": \"hold_key\", \"keys\": [\"alt\", "
		    "\"tab\"], \"duration_ms\": 300}",
		    "+k:alt +k:tab delay(300) -k:tab -k:alt");
}

static void test_type(void **state)
{
	(void)state;
	expect_plan("{\"action\": \"type\", \"text\": \"aB!\\n\"}",
		    "+k:a -k:a +k:shift +k:b -k:b -k:shift +k:shift +k:1 -k:1 -k:shift "
		    "+k:ret -k:ret");
	expect_plan("{\"action\": \"type\", \"text\": \"h\xc3\xa9\xe2\x82\xac!\"}",
		    "text(h\xc3\xa9\xe2\x82\xac!)"); /* all or nothing through the agent */
	expect_plan("{\"action\": \"type\", \"text\": \"\xf0\x9f\x98\x80\"}",
		    "text(\xf0\x9f\x98\x80)");
	expect_plan("{\"action\": \"type\", \"text\": \"\xc3\xa9 \xc3\xa9\"}",
		    "text(\xc3\xa9 \xc3\xa9)");
	expect_plan("{\"action\": \"type\", \"text\": \"\"}", "");
	/* A long text goes in pieces that fit the guest's input queue (56 of
	 * its 64 events: a plain key is 4, a shifted one 8), a ping between. */
	expect_plan("{\"action\": \"type\", \"text\": \"aaaaaaaaaaaaaaaA\"}",
		    "+k:a -k:a +k:a -k:a +k:a -k:a +k:a -k:a +k:a -k:a +k:a -k:a +k:a -k:a "
		    "+k:a -k:a +k:a -k:a +k:a -k:a +k:a -k:a +k:a -k:a +k:a -k:a +k:a -k:a "
		    "gsync +k:a -k:a +k:shift +k:a -k:a -k:shift");
}

/* On a German and a French layout (keymap.h): keys by keysym, typed
 * characters with shift and AltGr, what no key types through the agent. */
static void test_layouts(void **state)
{
	char err[256];

	(void)state;
	plan_keymap = vmm_keymap_get("de", err, sizeof(err));
	assert_non_null(plan_keymap);
	expect_plan("{\"action\": \"key\", \"text\": \"z\"}", "+k:y -k:y");
	expect_plan("{\"action\": \"key\", \"text\": \"at\"}", "+k:alt_r +k:q -k:q -k:alt_r");
	expect_plan("{\"action\": \"key\", \"text\": \"ctrl+y Return\"}",
		    "+k:ctrl +k:z -k:z -k:ctrl +k:ret -k:ret");
	expect_plan("{\"action\": \"type\", \"text\": \"z@\xc3\x84\"}",
		    "+k:y -k:y +k:alt_r +k:q -k:q -k:alt_r +k:shift +k:apostrophe -k:apostrophe "
		    "-k:shift");
	/* ^ is a dead key on de: the whole text goes through the agent. */
	expect_plan("{\"action\": \"type\", \"text\": \"a^\"}", "text(a^)");
	plan_keymap = vmm_keymap_get("fr", err, sizeof(err));
	assert_non_null(plan_keymap);
	expect_plan("{\"action\": \"key\", \"text\": \"ctrl+a\"}", "+k:ctrl +k:q -k:q -k:ctrl");
	expect_plan("{\"action\": \"type\", \"text\": \"a\xc3\xa9\"}", "+k:q -k:q +k:2 -k:2");
	plan_keymap = NULL;
}

static void test_clicks(void **state)
{
	(void)state;
	expect_plan("{\"action\": \"left_click\", \"coordinate\": [500, 300]}",
		    "move(500,300) +b:left -b:left");
	expect_plan(
		"{\"action\": \"left_click\", \"coordinate\": [500, 300], \"text\": "
		"\"ctrl+shift\"}",
		"move(500,300) +k:ctrl +k:shift xsync(5) delay(100) +b:left -b:left delay(100) -k:shift "
		"-k:ctrl");
	expect_plan("{\"action\": \"right_click\"}", "+b:right -b:right");
	expect_plan("{\"action\": \"middle_click\", \"coordinate\": [0, 0]}",
		    "move(0,0) +b:middle -b:middle");
	expect_plan("{\"action\": \"double_click\", \"coordinate\": [1279, 799]}",
		    "move(1279,799) +b:left -b:left delay(60) +b:left -b:left");
	expect_plan("{\"action\": \"triple_click\", \"coordinate\": [1, 2]}",
		    "move(1,2) +b:left -b:left delay(60) +b:left -b:left delay(60) +b:left "
		    "-b:left");
	expect_plan("{\"type\": \"click\", \"button\": \"back\", \"x\": 3, \"y\": 4}",
		    "move(3,4) +b:side -b:side");
	expect_plan("{\"type\": \"click\", \"button\": \"forward\", \"x\": 3, \"y\": 4, \"keys\": "
		    "[\"alt\"]}",
		    "move(3,4) +k:alt xsync(8) delay(100) +b:extra -b:extra delay(100) -k:alt");
	/* the barrier waits for modifiers X knows on every layout only */
	expect_plan(
		"{\"action\": \"left_click\", \"coordinate\": [1, 1], \"text\": \"super\"}",
		"move(1,1) +k:meta_l xsync(64) delay(100) +b:left -b:left delay(100) -k:meta_l");
	expect_plan("{\"action\": \"left_click\", \"coordinate\": [1, 1], \"text\": \"a\"}",
		    "move(1,1) +k:a delay(100) +b:left -b:left delay(100) -k:a");
	expect_plan("{\"type\": \"click\", \"button\": \"wheel\", \"x\": 3, \"y\": 4}",
		    "move(3,4) +b:middle -b:middle");
	expect_plan("{\"action\": \"left_mouse_down\", \"coordinate\": [7, 8]}",
		    "move(7,8) +b:left");
	expect_plan("{\"action\": \"left_mouse_up\"}", "-b:left");
	expect_plan("{\"action\": \"mouse_move\", \"coordinate\": [640, 400]}", "move(640,400)");
	expect_plan("{\"type\": \"move\", \"x\": 1, \"y\": 1, \"keys\": [\"shift\"]}",
		    "+k:shift xsync(1) delay(100) move(1,1) delay(100) -k:shift");
	/* In screenshot space: the screenshot's corner is the screen's corner. */
	expect_plan("{\"action\": \"left_click\", \"coordinate\": [1023, 639], "
		    "\"coordinate_space\": \"screenshot\", \"screenshot_width\": 1024, "
		    "\"screenshot_height\": 640}",
		    "move(1279,799) +b:left -b:left");
}

static void test_scroll(void **state)
{
	(void)state;
	expect_plan("{\"action\": \"scroll\", \"coordinate\": [500, 300], \"scroll_direction\": "
		    "\"down\", \"scroll_amount\": 3}",
		    "move(500,300) +b:wheel-down -b:wheel-down +b:wheel-down -b:wheel-down "
		    "+b:wheel-down -b:wheel-down");
	expect_plan("{\"action\": \"scroll\", \"scroll_direction\": \"up\", \"scroll_amount\": 1, "
		    "\"text\": \"ctrl\"}",
		    "+k:ctrl xsync(4) delay(100) +b:wheel-up -b:wheel-up delay(100) -k:ctrl");
	expect_plan("{\"type\": \"scroll\", \"x\": 10, \"y\": 10, \"scroll_x\": -200, "
		    "\"scroll_y\": 0}",
		    "move(10,10) +b:wheel-left -b:wheel-left +b:wheel-left -b:wheel-left");
	expect_plan("{\"action\": \"scroll\", \"dx\": 1, \"dy\": 1}",
		    "+b:wheel-down -b:wheel-down +b:wheel-right -b:wheel-right");
	expect_plan("{\"action\": \"scroll\", \"scroll_direction\": \"up\", \"scroll_amount\": 0}",
		    "");
}

static void test_drag(void **state)
{
	(void)state;
	/* A left drag past the threshold: the wait for the drag session after
	 * the first move past it, the settle and nudge over the end. */
	expect_plan("{\"action\": \"left_click_drag\", \"start_coordinate\": [0, 0], "
		    "\"coordinate\": [100, 0]}",
		    "move(0,0) +b:left delay(50) delay(10) move(20,0) delay(500) delay(10) "
		    "move(40,0) delay(10) move(60,0) delay(10) move(80,0) delay(10) move(100,0) "
		    "delay(400) move(101,0) delay(10) move(100,0) delay(400) -b:left");
	/* from the pointer (where it is is unknown: the move counts as past the
	 * threshold), modifiers around it all */
	expect_plan(
		"{\"action\": \"left_click_drag\", \"coordinate\": [100, 0], \"text\": "
		"\"shift\"}",
		"+k:shift xsync(1) delay(100) +b:left delay(50) move(100,0) delay(500) delay(400) "
		"move(101,0) delay(10) move(100,0) delay(400) -b:left delay(100) -k:shift");
	/* within the threshold: no drag session, no waits for one */
	expect_plan("{\"type\": \"drag\", \"path\": [{\"x\": 10, \"y\": 10}, {\"x\": 10, \"y\": "
		    "10}, {\"x\": 13, \"y\": 14}]}",
		    "move(10,10) +b:left delay(50) delay(10) move(10,10) delay(10) move(13,14) "
		    "delay(50) -b:left");
	/* the first move past it along y only (5 > 4), then a path's corner */
	expect_plan("{\"type\": \"drag\", \"path\": [[10, 10], [10, 15], [30, 15]]}",
		    "move(10,10) +b:left delay(50) delay(10) move(10,15) delay(500) delay(10) "
		    "move(30,15) delay(400) move(31,15) delay(10) move(30,15) delay(400) -b:left");
	/* the nudge at the screen's right edge goes left */
	expect_plan("{\"action\": \"drag\", \"from\": [1259, 5], \"to\": [1279, 5]}",
		    "move(1259,5) +b:left delay(50) delay(10) move(1279,5) delay(500) "
		    "delay(400) move(1278,5) delay(10) move(1279,5) delay(400) -b:left");
	/* other buttons start no native drag: as fast as before */
	expect_plan("{\"action\": \"drag\", \"from\": [0, 0], \"to\": [30, 40], \"button\": "
		    "\"right\"}",
		    "move(0,0) +b:right delay(50) delay(10) move(10,13) delay(10) move(20,27) "
		    "delay(10) move(30,40) delay(50) -b:right");
}

/* Long drags: bounded move count, every move inside the screen, ends exact. */
static void test_drag_bounds(void **state)
{
	char json[8192];
	size_t used;
	json_t *j;
	struct actions_error err;
	struct action *a;
	struct plan *p;
	size_t moves = 0;

	(void)state;
	used = (size_t)snprintf(json, sizeof(json), "{\"type\": \"drag\", \"path\": [");
	for (int i = 0; i < 200; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used, "%s[%d, %d]",
					 i ? "," : "", i % 2 ? 1279 : 0, i % 2 ? 799 : 0);
	snprintf(json + used, sizeof(json) - used, "]}");
	j = json_loads(json, 0, NULL);
	assert_non_null(j);
	a = actions_parse(j, &ctx, &err);
	json_decref(j);
	assert_non_null(a);
	p = plan_build(a, W, H);
	assert_non_null(p);
	for (size_t i = 0; i < p->len; i++)
		if (p->steps[i].kind == PLAN_INPUT &&
		    strcmp(json_string_value(
				   json_object_get(json_array_get(json_object_get(p->steps[i].event,
										  "events"),
								  0),
						   "type")),
			   "abs") == 0)
			moves++;
	if (moves > PLAN_DRAG_MAX_MOVES + a->path_len)
		fail_msg("%zu moves for a %zu-point path", moves, a->path_len);
	assert_true(moves >= a->path_len);
	plan_destroy(p);
	actions_destroy(a);
}

static void test_other(void **state)
{
	(void)state;
	expect_plan("{\"action\": \"wait\", \"duration\": 2}", "wait(2000)");
	expect_plan("{\"type\": \"wait\"}", "wait(1000)");
	expect_plan("{\"action\": \"screenshot\"}", "screenshot");
	expect_plan("{\"type\": \"screenshot\"}", "screenshot");
	expect_plan("{\"action\": \"cursor_position\"}", "cursor");
	expect_plan("{\"action\": \"zoom\", \"region\": [0, 0, 400, 300]}", "zoom(0,0,400,300)");
	expect_plan("{\"action\": \"zoom\", \"region\": [0, 0, 512, 320], \"coordinate_space\": "
		    "\"screenshot\", \"screenshot_width\": 1024, \"screenshot_height\": 640}",
		    "zoom(0,0,640,400)");
}

/* What a run cut short after `sent` steps of json's plan lets go of. */
static void expect_release(const char *json, size_t sent, const char *want)
{
	json_t *j = json_loads(json, 0, NULL), *up;
	struct actions_error err;
	struct action *a = actions_parse(j, &ctx, &err);
	struct plan *p;
	struct buf b = { .len = 0 };

	json_decref(j);
	assert_non_null(a);
	p = plan_build(a, W, H);
	assert_non_null(p);
	up = plan_release_held(p, sent);
	if (up)
		describe_event(&b, up);
	if (strcmp(b.s, want) != 0)
		fail_msg("%s after %zu steps\n  got:  %s\n  want: %s", json, sent, b.s, want);
	json_decref(up);
	plan_destroy(p);
	actions_destroy(a);
}

static void test_release_held(void **state)
{
	static const char drag[] = "{\"dialect\":\"anthropic\",\"action\":\"left_click_drag\","
				   "\"start_coordinate\":[10,10],\"coordinate\":[400,300],"
				   "\"text\":\"ctrl+shift\"}";
	static const char hold[] = "{\"dialect\":\"anthropic\",\"action\":\"hold_key\","
				   "\"text\":\"shift\",\"duration\":3}";

	(void)state;
	/* nothing sent, or everything: nothing held */
	expect_release(drag, 0, "");
	expect_release(hold, 0, "");
	/* a hold cut during its wait: the key goes up */
	expect_release(hold, 1, "-k:shift");
	/* a modifier drag cut after its button went down: the button first,
	 * then the keys, the last pressed first */
	{
		json_t *j = json_loads(drag, 0, NULL);
		struct actions_error err;
		struct action *a = actions_parse(j, &ctx, &err);
		struct plan *p = plan_build(a, W, H);
		size_t at = 0;
		struct buf b = { .len = 0 };

		json_decref(j);
		/* the step after the button press */
		for (size_t i = 0; i < p->len && !at; i++) {
			b.len = 0;
			b.s[0] = '\0';
			if (p->steps[i].kind == PLAN_INPUT) {
				describe_event(&b, p->steps[i].event);
				if (strstr(b.s, "+b:left"))
					at = i + 1;
			}
		}
		assert_true(at > 0);
		expect_release(drag, at, "-b:left -k:shift -k:ctrl");
		/* the whole plan sent: everything came up by itself */
		expect_release(drag, p->len, "");
		plan_destroy(p);
		actions_destroy(a);
	}
}

static void test_api_edges(void **state)
{
	struct action a = { .kind = ACTION_SCREENSHOT };

	(void)state;
	assert_null(plan_build(&a, 0, 800));
	assert_null(plan_build(&a, 1280, -1));
	plan_destroy(NULL);
	assert_string_equal(plan_step_kind_name(PLAN_TYPE_TEXT), "type_text");
	assert_string_equal(plan_step_kind_name(PLAN_INPUT), "input");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),	    cmocka_unit_test(test_type),
		cmocka_unit_test(test_layouts),	    cmocka_unit_test(test_clicks),
		cmocka_unit_test(test_scroll),	    cmocka_unit_test(test_drag),
		cmocka_unit_test(test_drag_bounds), cmocka_unit_test(test_other),
		cmocka_unit_test(test_api_edges),   cmocka_unit_test(test_release_held),
	};

	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
