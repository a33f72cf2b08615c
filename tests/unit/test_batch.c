/* tests/unit/test_batch.c: batches of actions (gateway/action/batch.c): one
 * action is a batch of one, the elements in order in any dialect, OpenAI's
 * computer call verbatim, the bound, and which index a refusal names. */
#include "gateway/action/batch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const struct actions_ctx ctx = { .screen_width = 1280, .screen_height = 800 };

static struct action_batch *parse(const char *text, struct actions_error *err, long *index)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);
	struct action_batch *b;

	assert_non_null(j);
	b = batch_parse(j, &ctx, err, index);
	json_decref(j);
	return b;
}

/* text is refused whole: nothing runs, with code, field and index. */
static void refused(const char *text, enum actions_errc code, const char *field, long want_index)
{
	struct actions_error err;
	long index = 99;

	assert_null(parse(text, &err, &index));
	assert_int_equal(err.code, code);
	assert_string_equal(err.field, field);
	assert_int_equal(index, want_index);
	assert_true(err.message[0] != '\0');
}

static void test_one_action(void **state)
{
	struct actions_error err;
	long index;
	struct action_batch *b;

	(void)state;
	b = parse("{\"action\": \"left_click\", \"coordinate\": [1, 2], \"id\": \"x\", "
		  "\"screenshot\": {\"quality\": 5}}",
		  &err, &index);
	assert_non_null(b);
	assert_false(b->is_batch);
	assert_false(b->refused);
	assert_int_equal(b->n, 1);
	assert_int_equal(b->actions[0]->kind, ACTION_CLICK);
	assert_string_equal(json_string_value(b->id), "x");
	assert_true(b->want_screenshot);
	assert_int_equal(json_integer_value(json_object_get(b->screenshot_opts, "quality")), 5);
	batch_destroy(b);
	/* one bad action: its own error, no index */
	refused("{\"action\": \"left_click\", \"coordinate\": [1280, 2]}", ACTIONS_E_OUT_OF_RANGE,
		"coordinate", -1);
}

static void test_in_order(void **state)
{
	struct actions_error err;
	long index;
	struct action_batch *b;

	(void)state;
	/* all three dialects in one batch, in order */
	b = parse("{\"actions\": [{\"action\": \"left_click\", \"coordinate\": [1, 2]},"
		  " {\"type\": \"type\", \"text\": \"hi\"},"
		  " {\"action\": \"scroll\", \"dy\": 2, \"x\": 3, \"y\": 4, \"id\": 7},"
		  " {\"action\": \"cursor_position\"}], \"id\": 9, \"screenshot\": true}",
		  &err, &index);
	assert_non_null(b);
	assert_true(b->is_batch);
	assert_false(b->refused);
	assert_int_equal(b->n, 4);
	assert_int_equal(b->actions[0]->dialect, ACTIONS_DIALECT_ANTHROPIC);
	assert_int_equal(b->actions[0]->point.x, 1);
	assert_int_equal(b->actions[1]->dialect, ACTIONS_DIALECT_OPENAI);
	assert_string_equal(b->actions[1]->text, "hi");
	assert_int_equal(b->actions[2]->dialect, ACTIONS_DIALECT_VITRINE);
	assert_int_equal(b->actions[2]->scroll_dy, 2);
	assert_int_equal(json_integer_value(b->actions[2]->id), 7);
	assert_int_equal(b->actions[3]->kind, ACTION_CURSOR_POSITION);
	assert_int_equal(json_integer_value(b->id), 9);
	assert_true(b->want_screenshot);
	assert_null(b->screenshot_opts);
	batch_destroy(b);
}

/* An OpenAI computer_call output item, as the Responses API sends it. */
static void test_openai_call(void **state)
{
	struct actions_error err;
	long index;
	struct action_batch *b;

	(void)state;
	b = parse(
		"{\"type\": \"computer_call\", \"id\": \"cu_1\", \"call_id\": \"call_1\","
		" \"status\": \"completed\", \"pending_safety_checks\": [],"
		" \"actions\": [{\"type\": \"click\", \"button\": \"left\", \"x\": 10, \"y\": 20},"
		" {\"type\": \"keypress\", \"keys\": [\"CTRL\", \"A\"]},"
		" {\"type\": \"drag\", \"path\": [{\"x\": 1, \"y\": 1}, {\"x\": 9, \"y\": 9}]},"
		" {\"type\": \"screenshot\"}]}",
		&err, &index);
	assert_non_null(b);
	assert_int_equal(b->n, 4);
	assert_int_equal(b->actions[0]->point.y, 20);
	assert_int_equal(b->actions[1]->kind, ACTION_KEY);
	assert_int_equal(b->actions[2]->path_len, 2);
	assert_int_equal(b->actions[3]->kind, ACTION_SCREENSHOT);
	assert_string_equal(json_string_value(b->id), "cu_1");
	batch_destroy(b);
	/* call_id is OpenAI's, only in a computer_call */
	refused("{\"call_id\": \"c\", \"actions\": [{\"type\": \"wait\"}]}",
		ACTIONS_E_INVALID_ARGUMENT, "call_id", -1);
}

/* dialect, coordinate_space and the screenshot's size given once for the
 * whole batch: each action that does not set its own takes them. */
static void test_inherited(void **state)
{
	struct actions_error err;
	long index;
	struct action_batch *b;

	(void)state;
	b = parse(
		"{\"coordinate_space\": \"screenshot\", \"screenshot_width\": 640,"
		" \"screenshot_height\": 400, \"dialect\": \"openai\","
		" \"actions\": [{\"type\": \"click\", \"x\": 639, \"y\": 399},"
		" {\"type\": \"move\", \"x\": 10, \"y\": 10, \"coordinate_space\": \"screen\"},"
		" {\"action\": \"left_click\", \"coordinate\": [0, 0], \"dialect\": \"anthropic\"}]}",
		&err, &index);
	assert_non_null(b);
	assert_false(b->refused);
	assert_int_equal(b->n, 3);
	/* the screenshot's far corner is the screen's */
	assert_int_equal(b->actions[0]->dialect, ACTIONS_DIALECT_OPENAI);
	assert_int_equal(b->actions[0]->point.x, 1279);
	assert_int_equal(b->actions[0]->point.y, 799);
	/* an action's own space wins */
	assert_int_equal(b->actions[1]->point.x, 10);
	assert_int_equal(b->actions[1]->point.y, 10);
	assert_int_equal(b->actions[2]->dialect, ACTIONS_DIALECT_ANTHROPIC);
	assert_int_equal(b->actions[2]->point.x, 0);
	batch_destroy(b);
	/* an inherited field is checked as an action's own: the first refuses */
	refused("{\"coordinate_space\": \"pixels\", \"actions\": [{\"type\": \"wait\"}]}",
		ACTIONS_E_INVALID_ARGUMENT, "coordinate_space", 0);
	refused("{\"coordinate_space\": \"screenshot\", \"actions\": [{\"type\": \"click\","
		" \"x\": 1, \"y\": 1}]}",
		ACTIONS_E_MISSING_FIELD, "screenshot_width", 0);
}

static void test_refusals(void **state)
{
	struct actions_error err;
	long index;
	struct action_batch *b;
	char big[8192];
	size_t len;

	(void)state;
	/* the third is off the screen: two run, index 2 is refused */
	b = parse("{\"actions\": [{\"type\": \"move\", \"x\": 1, \"y\": 1},"
		  " {\"type\": \"move\", \"x\": 2, \"y\": 2},"
		  " {\"type\": \"click\", \"x\": 1280, \"y\": 2, \"id\": \"c\"},"
		  " {\"type\": \"move\", \"x\": 3, \"y\": 3}]}",
		  &err, &index);
	assert_non_null(b);
	assert_int_equal(b->n, 2);
	assert_true(b->refused);
	assert_int_equal(b->refusal.code, ACTIONS_E_OUT_OF_RANGE);
	assert_string_equal(json_string_value(b->refused_id), "c");
	batch_destroy(b);
	/* an unknown kind, second */
	b = parse("{\"actions\": [{\"type\": \"wait\"}, {\"type\": \"fly\"}]}", &err, &index);
	assert_non_null(b);
	assert_int_equal(b->n, 1);
	assert_true(b->refused);
	assert_int_equal(b->refusal.code, ACTIONS_E_UNKNOWN_ACTION);
	batch_destroy(b);
	/* the first refused: nothing runs, index 0 */
	refused("{\"actions\": [{\"type\": \"fly\"}, {\"type\": \"wait\"}]}",
		ACTIONS_E_UNKNOWN_ACTION, "type", 0);
	refused("{\"actions\": [3]}", ACTIONS_E_INVALID_ARGUMENT, "actions", 0);
	/* an element's own screenshot: the batch's comes at the end */
	b = parse(
		"{\"actions\": [{\"type\": \"wait\"}, {\"type\": \"wait\", \"screenshot\": true}]}",
		&err, &index);
	assert_non_null(b);
	assert_int_equal(b->n, 1);
	assert_int_equal(b->refusal.code, ACTIONS_E_INVALID_ARGUMENT);
	assert_string_equal(b->refusal.field, "screenshot");
	batch_destroy(b);
	/* the batch itself */
	refused("{\"actions\": []}", ACTIONS_E_INVALID_ARGUMENT, "actions", -1);
	refused("{\"actions\": {\"type\": \"wait\"}}", ACTIONS_E_INVALID_ARGUMENT, "actions", -1);
	refused("{\"actions\": [{\"type\": \"wait\"}], \"text\": \"hi\"}",
		ACTIONS_E_INVALID_ARGUMENT, "text", -1);
	refused("{\"actions\": [{\"type\": \"wait\"}], \"screenshot\": 3}",
		ACTIONS_E_INVALID_ARGUMENT, "screenshot", -1);
	refused("{\"actions\": [{\"type\": \"wait\"}], \"id\": 1.5}", ACTIONS_E_INVALID_ARGUMENT,
		"id", -1);
	/* the bound: 64 pass, 65 are refused whole */
	for (int n = ACTIONS_MAX_BATCH; n <= ACTIONS_MAX_BATCH + 1; n++) {
		len = (size_t)snprintf(big, sizeof(big), "{\"actions\": [");
		for (int i = 0; i < n; i++)
			len += (size_t)snprintf(big + len, sizeof(big) - len,
						"%s{\"type\": \"wait\"}", i ? ", " : "");
		snprintf(big + len, sizeof(big) - len, "]}");
		b = parse(big, &err, &index);
		if (n == ACTIONS_MAX_BATCH) {
			assert_non_null(b);
			assert_int_equal(b->n, ACTIONS_MAX_BATCH);
			batch_destroy(b);
		} else {
			assert_null(b);
			assert_int_equal(err.code, ACTIONS_E_TOO_LONG);
			assert_int_equal(index, -1);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_action),  cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_openai_call), cmocka_unit_test(test_inherited),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
