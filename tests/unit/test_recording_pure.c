/* tests/unit/test_recording_pure.c: the pure parts of session recordings:
 * the index's lines (round trips, malformed and out-of-range lines
 * refused), the ffconcat list that gives each frame its duration, the
 * recording routes and the "record" field of a session's request. */
#include "gateway/api/routes.h"
#include "gateway/session/session_spec.h"
#include "gateway/stream/rec_index.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_frame_line_round_trip(void **state)
{
	struct rec_frame f = { .i = 4000000000u,
			       .t_ms = 86400000ll * 365,
			       .offset = 5000000000ull,
			       .bytes = REC_FRAME_MAX_BYTES,
			       .width = 8192,
			       .height = 1 },
			 g;
	char line[REC_LINE_MAX];
	const char *json = NULL;
	size_t json_len = 0;
	int n;

	(void)state;
	n = rec_index_frame_line(&f, line, sizeof(line));
	assert_true(n > 0 && n < REC_LINE_MAX);
	assert_int_equal(line[n - 1], '\n');
	assert_int_equal(rec_index_parse_line(line, (size_t)n, &g, &json, &json_len),
			 REC_LINE_FRAME);
	assert_int_equal(g.i, f.i);
	assert_int_equal(g.t_ms, f.t_ms);
	assert_int_equal(g.offset, f.offset);
	assert_int_equal(g.bytes, f.bytes);
	assert_int_equal(g.width, f.width);
	assert_int_equal(g.height, f.height);
	/* Without its newline too. */
	assert_int_equal(rec_index_parse_line(line, (size_t)n - 1, &g, &json, &json_len),
			 REC_LINE_FRAME);
	assert_int_equal(rec_index_frame_line(&f, line, 10), -ENOSPC);
	assert_string_equal((rec_index_frame_line(&(struct rec_frame){ 0, 0, 0, 1, 2, 3 }, line,
						  sizeof(line)),
			     line),
			    "F 0 0 0 1 2 3\n");
}

static void test_entry_line(void **state)
{
	static const char line[] = "E {\"kind\":\"action\",\"t_ms\":5}\n";
	struct rec_frame f;
	const char *json = NULL;
	size_t json_len = 0;

	(void)state;
	assert_int_equal(rec_index_parse_line(line, strlen(line), &f, &json, &json_len),
			 REC_LINE_ENTRY);
	assert_ptr_equal(json, line + 2);
	assert_int_equal(json_len, strlen(line) - 3);
}

static void test_bad_lines(void **state)
{
	static const char *const bad[] = {
		"",
		"F",
		"F ",
		"F 1 2 3 4 5",
		"F 1 2 3 4 5 6 7",
		"F 1 2 3 0 5 6", /* an empty frame */
		"F 1 2 3 4 0 6",
		"F 1 2 3 4 5 8193", /* over the display's side */
		"F 1 2 3 67108865 5 6", /* over REC_FRAME_MAX_BYTES */
		"F 4294967296 2 3 4 5 6", /* i over 32 bits */
		"F 1 99999999999999999999 3 4 5 6", /* 20 digits */
		"F 1 -2 3 4 5 6",
		"F 1  2 3 4 5 6",
		"F 1 2 3 4 5 6 ",
		"F 1 2 3 4 5 6x",
		"F\t1 2 3 4 5 6",
		"X 1 2 3 4 5 6",
		"E ",
		"E [1]",
		"E {\"a\":1",
		"E {}\n{}",
		"E{}",
	};
	struct rec_frame f;
	const char *json;
	size_t json_len;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rec_index_parse_line(bad[i], strlen(bad[i]), &f, &json, &json_len) != -EINVAL)
			fail_msg("accepted: '%s'", bad[i]);
	/* A NUL inside is not a digit. */
	assert_int_equal(rec_index_parse_line("F 1 2\0003 4 5 6", 13, &f, &json, &json_len),
			 -EINVAL);
}

static void test_concat_list(void **state)
{
	const struct rec_frame frames[] = {
		{ 0, 0, 0, 100, 640, 480 },
		{ 1, 250, 100, 50, 640, 480 },
		{ 2, 250, 150, 70, 640, 480 }, /* same time: held 1 ms */
	};
	char *text;

	(void)state;
	text = rec_concat_list(frames, 3, 2251, "/s/rec's/frames.bin");
	assert_non_null(text);
	assert_string_equal(text, "ffconcat version 1.0\n"
				  "file 'subfile,,start,0,end,100,,:/s/rec'\\''s/frames.bin'\n"
				  "duration 0.250\n"
				  "file 'subfile,,start,100,end,150,,:/s/rec'\\''s/frames.bin'\n"
				  "duration 0.001\n"
				  "file 'subfile,,start,150,end,220,,:/s/rec'\\''s/frames.bin'\n"
				  "duration 2.001\n"
				  "file 'subfile,,start,150,end,220,,:/s/rec'\\''s/frames.bin'\n");
	free(text);
	assert_null(rec_concat_list(frames, 0, 10, "/f"));
	assert_null(rec_concat_list(frames, 1, 10, "/a\nb"));
	/* Many frames grow the text past its first allocation. */
	{
		struct rec_frame many[200];

		for (int i = 0; i < 200; i++)
			many[i] = (struct rec_frame){ (uint32_t)i, i * 200, (uint64_t)i * 1000,
						      1000,	   8,	    8 };
		text = rec_concat_list(many, 200, 40000, "/f");
		assert_non_null(text);
		assert_non_null(strstr(text, "file 'subfile,,start,199000,end,200000,,:/f'\n"
					     "duration 0.200\n"
					     "file 'subfile,,start,199000,end,200000,,:/f'\n"));
		free(text);
	}
}

static void test_routes(void **state)
{
	struct route r;

	(void)state;
	r = route_parse(M_GET, "/v1/sessions/abc/recording");
	assert_int_equal(r.kind, R_SESSION_RECORDING);
	assert_string_equal(r.id, "abc");
	assert_int_equal(route_parse(M_POST, "/v1/sessions/abc/recording").kind,
			 R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/abc/recording/start").kind,
			 R_SESSION_RECORDING_START);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/abc/recording/start").kind,
			 R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/abc/recording/stop").kind,
			 R_SESSION_RECORDING_STOP);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/abc/recording.webm").kind,
			 R_SESSION_RECORDING_WEBM);
	r = route_parse(M_GET, "/v1/sessions/abc/recording/frames/123456789");
	assert_int_equal(r.kind, R_SESSION_RECORDING_FRAME);
	assert_string_equal(r.sub, "123456789");
	assert_int_equal(route_parse(M_GET, "/v1/sessions/abc/recording/frames/1234567890").kind,
			 R_NOT_FOUND);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/abc/recording/frames/").kind,
			 R_NOT_FOUND);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/abc/recording/frames/-1").kind,
			 R_NOT_FOUND);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/abc/recording/frames/1x").kind,
			 R_NOT_FOUND);
	assert_string_equal(route_kind_names[R_SESSION_RECORDING_WEBM], "session_recording_webm");
}

static void test_record_field(void **state)
{
	struct session_request req;
	struct api_error e;
	static const char ok[] = "{\"image\":\"tiny\",\"record\":true}",
			  off[] = "{\"image\":\"tiny\",\"record\":false}",
			  bad[] = "{\"image\":\"tiny\",\"record\":\"yes\"}";

	(void)state;
	assert_int_equal(session_request_parse(ok, strlen(ok), &req, &e), 0);
	assert_true(req.record);
	session_request_free(&req);
	assert_int_equal(session_request_parse(off, strlen(off), &req, &e), 0);
	assert_false(req.record);
	session_request_free(&req);
	assert_int_equal(session_request_parse("{}", 2, &req, &e), 0);
	assert_false(req.record);
	session_request_free(&req);
	assert_int_equal(session_request_parse(bad, strlen(bad), &req, &e), -EINVAL);
	assert_int_equal(e.status, 400);
	session_request_free(&req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_line_round_trip),
		cmocka_unit_test(test_entry_line),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_concat_list),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_record_field),
	};

	return cmocka_run_group_tests_name("recording (pure)", tests, NULL, NULL);
}
