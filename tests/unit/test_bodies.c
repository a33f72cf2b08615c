/* tests/unit/test_bodies.c: the small request bodies parsed apart from
 * their handlers (gateway/api/bodies.h): clipboard, open, launch, pause,
 * the empty bodies of resume and fork, and one action; each accepted form,
 * and each refusal with its exact code and message (what the client
 * reads). */
#include "gateway/action/actions.h"
#include "gateway/action/run.h"
#include "gateway/api/bodies.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define BAD_JSON "the body must be a JSON object"
#define BAD_CLIP "the body is {\"text\": \"...\"}: a string without NUL characters"
#define BAD_OPEN                                                                                   \
	"the body is {\"url\": ...}: http://, https://, file:// or about:blank, up to 1024 bytes"
#define BAD_LAUNCH "the body is {\"command\": \"NAME\", \"args\": [up to 32 strings]}"
#define BAD_WS_MSG                                                                                 \
	"messages are binary stdin, {\"type\":\"eof\"} or {\"type\":\"signal\",\"signal\":N}"

/* what is the input, for the failure's message */
static void expect_error(const struct api_error *e, const char *code, const char *message,
			 const char *what)
{
	if (e->status != 400 || strcmp(e->code, code) || strcmp(e->message, message))
		fail_msg("%s: %d %s '%s', not 400 %s '%s'", what ? what : "(null)", e->status,
			 e->code, e->message, code, message);
}

/* body may hold NULs: its length is given. */
static void clip_bad(const char *body, size_t len, const char *code, const char *message)
{
	struct clipboard_body b;
	struct api_error e;

	assert_int_equal(api_clipboard_parse(body, len, &b, &e), -EINVAL);
	assert_null(b.json);
	expect_error(&e, code, message, body);
}

#define S(lit) lit, sizeof(lit) - 1

static void test_clipboard(void **state)
{
	struct clipboard_body b;
	struct api_error e;

	(void)state;
	assert_int_equal(api_clipboard_parse(S("{\"text\": \"Gr\\u00fc\\u00dfe \\u2713\"}"), &b,
					     &e),
			 0);
	assert_string_equal(b.text, "Grüße ✓");
	assert_int_equal(b.len, strlen("Grüße ✓"));
	json_decref(b.json);
	assert_int_equal(api_clipboard_parse(S("{\"text\": \"\"}"), &b, &e), 0);
	assert_int_equal(b.len, 0);
	json_decref(b.json);

	clip_bad(NULL, 0, "invalid_json", BAD_JSON);
	clip_bad(S("[\"text\"]"), "invalid_json", BAD_JSON);
	clip_bad(S("{\"text\": \"a\", \"text\": \"b\"}"), "invalid_json", BAD_JSON);
	clip_bad(S("{\"text\": \"a\"}\0"), "invalid_json", BAD_JSON);
	clip_bad(S("{}"), "invalid_argument", BAD_CLIP);
	clip_bad(S("{\"text\": 1}"), "invalid_argument", BAD_CLIP);
	clip_bad(S("{\"text\": null}"), "invalid_argument", BAD_CLIP);
	/* jansson refuses \u0000 itself */
	clip_bad(S("{\"text\": \"a\\u0000b\"}"), "invalid_json", BAD_JSON);
	clip_bad(S("{\"text\": \"a\", \"x\": 1}"), "invalid_argument", BAD_CLIP);
}

static void open_bad(const char *body, size_t len, const char *code, const char *message)
{
	struct open_body b;
	struct api_error e;

	assert_int_equal(api_open_parse(body, len, &b, &e), -EINVAL);
	expect_error(&e, code, message, body);
}

static void test_open(void **state)
{
	static const char *const good[] = { "https://example.org/a?b=c", "http://x",
					    "file:///tmp/a", "about:blank" };
	char body[VMM_MAX_URL + 64], url[VMM_MAX_URL + 2];
	struct open_body b;
	struct api_error e;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(body, sizeof(body), "{\"url\": \"%s\"}", good[i]);
		assert_int_equal(api_open_parse(body, strlen(body), &b, &e), 0);
		assert_string_equal(b.url, good[i]);
		assert_true(b.js[0]);
	}
	/* The longest URL: 1024 bytes; one more is refused. */
	memset(url, 'a', sizeof(url) - 1);
	memcpy(url, "http://", 7);
	url[VMM_MAX_URL] = '\0';
	snprintf(body, sizeof(body), "{\"url\": \"%s\"}", url);
	assert_int_equal(api_open_parse(body, strlen(body), &b, &e), 0);
	assert_int_equal(strlen(b.url), VMM_MAX_URL);
	url[VMM_MAX_URL] = 'a';
	url[VMM_MAX_URL + 1] = '\0';
	snprintf(body, sizeof(body), "{\"url\": \"%s\"}", url);
	open_bad(body, strlen(body), "invalid_argument", BAD_OPEN);

	open_bad(S(""), "invalid_json", BAD_JSON);
	open_bad(S("\"https://x\""), "invalid_json", BAD_JSON);
	open_bad(S("{}"), "invalid_argument", BAD_OPEN);
	open_bad(S("{\"url\": 7}"), "invalid_argument", BAD_OPEN);
	open_bad(S("{\"url\": \"data:text/html,x\"}"), "invalid_argument", BAD_OPEN);
	open_bad(S("{\"url\": \"javascript:alert(1)\"}"), "invalid_argument", BAD_OPEN);
	open_bad(S("{\"url\": \"about:blankx\"}"), "invalid_argument", BAD_OPEN);
	open_bad(S("{\"url\": \"HTTP://x\"}"), "invalid_argument", BAD_OPEN);
	open_bad(S("{\"url\": \"https://x\", \"wait\": true}"), "invalid_argument", BAD_OPEN);
}

static void launch_bad(const char *body, size_t len, const char *code, const char *message)
{
	struct launch_body b;
	struct api_error e;

	assert_int_equal(api_launch_parse(body, len, &b, &e), -EINVAL);
	assert_null(b.json);
	expect_error(&e, code, message, body);
}

static void test_launch(void **state)
{
	char body[1024];
	struct launch_body b;
	struct api_error e;
	size_t n;

	(void)state;
	assert_int_equal(api_launch_parse(S("{\"command\": \"xterm\"}"), &b, &e), 0);
	assert_int_equal(b.argc, 1);
	assert_string_equal(b.argv[0], "xterm");
	assert_null(b.argv[1]);
	json_decref(b.json);
	assert_int_equal(
		api_launch_parse(S("{\"args\": [\"-e\", \"top\", \"\"], \"command\": \"xterm\"}"),
				 &b, &e),
		0);
	assert_int_equal(b.argc, 4);
	assert_string_equal(b.argv[1], "-e");
	assert_string_equal(b.argv[2], "top");
	assert_string_equal(b.argv[3], "");
	assert_null(b.argv[4]);
	json_decref(b.json);
	assert_int_equal(api_launch_parse(S("{\"command\": \"a\", \"args\": []}"), &b, &e), 0);
	assert_int_equal(b.argc, 1);
	json_decref(b.json);
	/* 32 args fit; 33 do not. */
	n = (size_t)snprintf(body, sizeof(body), "{\"command\": \"a\", \"args\": [\"0\"");
	for (int i = 1; i < API_LAUNCH_MAX_ARGS; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, ",\"%d\"", i);
	snprintf(body + n, sizeof(body) - n, "]}");
	assert_int_equal(api_launch_parse(body, strlen(body), &b, &e), 0);
	assert_int_equal(b.argc, API_LAUNCH_MAX_ARGS + 1);
	assert_string_equal(b.argv[API_LAUNCH_MAX_ARGS], "31");
	assert_null(b.argv[API_LAUNCH_MAX_ARGS + 1]);
	json_decref(b.json);
	snprintf(body + n, sizeof(body) - n, ",\"x\"]}");
	launch_bad(body, strlen(body), "invalid_argument", BAD_LAUNCH);

	launch_bad(S("{\"command\": \"a\""), "invalid_json", BAD_JSON);
	launch_bad(S("[]"), "invalid_json", BAD_JSON);
	launch_bad(S("{}"), "invalid_argument", BAD_LAUNCH);
	launch_bad(S("{\"command\": \"\"}"), "invalid_argument", BAD_LAUNCH);
	launch_bad(S("{\"command\": \"a\\u0000\"}"), "invalid_json", BAD_JSON);
	launch_bad(S("{\"command\": [\"xterm\"]}"), "invalid_argument", BAD_LAUNCH);
	launch_bad(S("{\"command\": \"a\", \"args\": \"-e\"}"), "invalid_argument", BAD_LAUNCH);
	launch_bad(S("{\"command\": \"a\", \"args\": null}"), "invalid_argument", BAD_LAUNCH);
	launch_bad(S("{\"command\": \"a\", \"cwd\": \"/\"}"), "invalid_argument", BAD_LAUNCH);
	launch_bad(S("{\"command\": \"a\", \"args\": [], \"x\": 1}"), "invalid_argument",
		   BAD_LAUNCH);
	launch_bad(S("{\"command\": \"a\", \"args\": [1]}"), "invalid_argument",
		   "args must be strings");
	launch_bad(S("{\"command\": \"a\", \"args\": [\"b\", \"c\\u0000\"]}"), "invalid_json",
		   BAD_JSON);
}

static void pause_bad(const char *body, size_t len, const char *code, const char *message)
{
	enum sess_pause how;
	struct api_error e;

	assert_int_equal(api_pause_parse(body, len, &how, &e), -EINVAL);
	expect_error(&e, code, message, body);
}

static void test_pause(void **state)
{
	enum sess_pause how = SESS_PAUSE_DISK;
	struct api_error e;

	(void)state;
	assert_int_equal(api_pause_parse(NULL, 0, &how, &e), 0);
	assert_int_equal(how, SESS_PAUSE_MEMORY);
	assert_int_equal(api_pause_parse(S("{}"), &how, &e), 0);
	assert_int_equal(how, SESS_PAUSE_MEMORY);
	assert_int_equal(api_pause_parse(S("{\"mode\": \"disk\"}"), &how, &e), 0);
	assert_int_equal(how, SESS_PAUSE_DISK);
	assert_int_equal(api_pause_parse(S(" {\"mode\": \"memory\"} "), &how, &e), 0);
	assert_int_equal(how, SESS_PAUSE_MEMORY);

	pause_bad(S("disk"), "invalid_json", BAD_JSON);
	pause_bad(S("[\"disk\"]"), "invalid_json", BAD_JSON);
	pause_bad(S("{\"mode\": \"disk\", \"mode\": \"memory\"}"), "invalid_json", BAD_JSON);
	pause_bad(S("{\"mode\": \"Disk\"}"), "invalid_argument",
		  "mode must be \"memory\" or \"disk\"");
	pause_bad(S("{\"mode\": null}"), "invalid_argument", "mode must be \"memory\" or \"disk\"");
	pause_bad(S("{\"mode\": 1}"), "invalid_argument", "mode must be \"memory\" or \"disk\"");
	pause_bad(S("{\"to_disk\": true}"), "invalid_argument", "unknown field: only 'mode'");
	pause_bad(S("{\"mode\": \"disk\", \"x\": 1}"), "invalid_argument",
		  "unknown field: only 'mode'");
}

static void test_empty_body(void **state)
{
	struct api_error e;

	(void)state;
	assert_int_equal(api_empty_body_parse(NULL, 0, &e), 0);
	assert_int_equal(api_empty_body_parse(S("{}"), &e), 0);
	assert_int_equal(api_empty_body_parse(S(" { } "), &e), 0);
	assert_int_equal(api_empty_body_parse(S("{\"a\": 1}"), &e), -EINVAL);
	expect_error(&e, "invalid_argument", "this route takes no body (or {})", NULL);
	assert_int_equal(api_empty_body_parse(S("[]"), &e), -EINVAL);
	expect_error(&e, "invalid_argument", "this route takes no body (or {})", NULL);
	assert_int_equal(api_empty_body_parse(S("nope"), &e), -EINVAL);
	expect_error(&e, "invalid_argument", "this route takes no body (or {})", NULL);
}

/* text is refused with status and exactly the error JSON want (compact, keys sorted). */
static void action_bad(const char *text, size_t len, int status, const char *want)
{
	struct shot_opts o;
	json_t *error = NULL;
	int got = 0;
	char *dump;

	assert_null(api_action_parse(text, len, 1280, 800, &o, &got, &error));
	assert_int_equal(got, status);
	assert_non_null(error);
	dump = json_dumps(error, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(dump, want);
	free(dump);
	json_decref(error);
}

static void test_action(void **state)
{
	struct shot_opts o;
	struct action *a;
	json_t *error = NULL;
	int status = 0;

	(void)state;
	a = api_action_parse(S("{\"action\": \"left_click\", \"coordinate\": [10, 20], \"id\": 7}"),
			     1280, 800, &o, &status, &error);
	assert_non_null(a);
	assert_int_equal(a->kind, ACTION_CLICK);
	assert_int_equal(a->point.x, 10);
	assert_int_equal(a->point.y, 20);
	assert_int_equal(json_integer_value(a->id), 7);
	assert_int_equal(o.enc.quality, 80); /* the defaults */
	actions_destroy(a);
	a = api_action_parse(S("{\"action\": \"screenshot\", \"screenshot\": {\"quality\": 50}}"),
			     1280, 800, &o, &status, &error);
	assert_non_null(a);
	assert_int_equal(o.enc.quality, 50);
	actions_destroy(a);

	action_bad(S(""), 400,
		   "{\"error\":{\"code\":\"invalid_json\",\"message\":\"the body must be one JSON "
		   "action object: unexpected token near end of file\"}}");
	action_bad(S("[1]"), 400,
		   "{\"error\":{\"code\":\"invalid_json\",\"message\":\"the body must be one JSON "
		   "action object\"}}");
	action_bad(S("\"left_click\""), 400,
		   "{\"error\":{\"code\":\"invalid_json\",\"message\":\"the body must be one JSON "
		   "action object\"}}");
	/* off the 1280x800 screen; the id comes back */
	action_bad(S("{\"action\": \"left_click\", \"coordinate\": [1280, 0], \"id\": \"a1\"}"),
		   400,
		   "{\"error\":{\"code\":\"out_of_range\",\"field\":\"coordinate\",\"message\":"
		   "\"field \\\"coordinate\\\": (1280, 0) is outside the 1280x800 screen\"},\"id\":"
		   "\"a1\"}");
	action_bad(S("{\"action\": \"fly\", \"id\": 3}"), 400,
		   "{\"error\":{\"code\":\"unknown_action\",\"field\":\"action\",\"message\":"
		   "\"field \\\"action\\\": unknown Anthropic action \\\"fly\\\"\"},\"id\":3}");
	action_bad(
		S("{\"action\": \"screenshot\", \"screenshot\": {\"quality\": 101}}"), 400,
		"{\"error\":{\"code\":\"out_of_range\",\"message\":\"screenshot: quality 1..100, "
		"width/height 1..16384, quiet_ms 0..10000, timeout_ms 0..60000\"}}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clipboard),  cmocka_unit_test(test_open),
		cmocka_unit_test(test_launch),	   cmocka_unit_test(test_pause),
		cmocka_unit_test(test_empty_body), cmocka_unit_test(test_action),
	};

	return cmocka_run_group_tests_name("request bodies", tests, NULL, NULL);
}
