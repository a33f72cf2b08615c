/* tests/unit/test_log.c: the log's two line formats, read back from what
 * log_msg wrote to stderr: a dated text line, and one JSON object a line
 * that jansson parses (with quotes, backslashes and control characters in
 * the message escaped). */
#include "common/log.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Runs one log_msg with stderr going to a file; its text into out. */
static void capture(enum log_format f, const char *msg, char *out, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	log_set_format(f);
	log_info("comp", "%s", msg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, len - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

static void test_text(void **state)
{
	char out[512];
	int y, mo, d, h, mi, s, ms;

	(void)state;
	capture(LOG_FORMAT_TEXT, "hello", out, sizeof(out));
	assert_int_equal(sscanf(out, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &y, &mo, &d, &h, &mi, &s, &ms),
			 7);
	assert_true(y >= 2024 && mo >= 1 && mo <= 12);
	assert_string_equal(out + 24, " info  comp: hello\n");
}

static void test_json(void **state)
{
	char out[512];
	json_t *j;
	json_error_t e;

	(void)state;
	capture(LOG_FORMAT_JSON, "a \"quoted\" \\ back\tslash\x01", out, sizeof(out));
	assert_true(strlen(out) > 2 && out[strlen(out) - 1] == '\n');
	assert_true(strchr(out, 0x0a) + 1 == out + strlen(out)); /* one line */
	j = json_loads(out, 0, &e);
	if (!j)
		fail_msg("not JSON: %s (%s)", out, e.text);
	assert_string_equal(json_string_value(json_object_get(j, "level")), "info");
	assert_string_equal(json_string_value(json_object_get(j, "component")), "comp");
	assert_string_equal(json_string_value(json_object_get(j, "msg")),
			    "a \"quoted\" \\ back\tslash\x01");
	assert_int_equal(strlen(json_string_value(json_object_get(j, "time"))), 24);
	json_decref(j);
}

static void test_parse(void **state)
{
	enum log_format f = LOG_FORMAT_TEXT;

	(void)state;
	assert_int_equal(log_format_parse("json", &f), 0);
	assert_int_equal(f, LOG_FORMAT_JSON);
	assert_int_equal(log_format_parse("text", &f), 0);
	assert_int_equal(f, LOG_FORMAT_TEXT);
	assert_int_equal(log_format_parse("xml", &f), -1);
	assert_int_equal(log_format_parse(NULL, &f), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
