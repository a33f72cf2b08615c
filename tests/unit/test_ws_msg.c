/* tests/unit/test_ws_msg.c: what clients send on the control and
 * streaming-exec WebSockets, parsed apart from the sockets
 * (gateway/api/ws_msg.h): the control socket's token message, and the
 * exec stream's first message, eof, signals and stdin; each accepted form,
 * and each refusal with the exact reason the socket closes with. */
#include "gateway/api/ws_msg.h"
#include "gateway/guest/exec.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#define S(lit) lit, sizeof(lit) - 1
#define BAD_WS_MSG                                                                                 \
	"messages are binary stdin, {\"type\":\"eof\"} or {\"type\":\"signal\",\"signal\":N}"

static void test_control_auth(void **state)
{
	char token[160], small[4];

	(void)state;
	assert_int_equal(control_auth_parse(S("{\"token\": \"Zr1abc\"}"), token, sizeof(token)), 0);
	assert_string_equal(token, "Zr1abc");
	assert_int_equal(control_auth_parse(S("{\"token\": \"abc\", \"name\": \"x\"}"), small,
					    sizeof(small)),
			 0); /* other fields are ignored; 3 bytes and the NUL fit */
	assert_string_equal(small, "abc");
	assert_int_equal(control_auth_parse(S("{\"token\": \"abcd\"}"), small, sizeof(small)),
			 -EINVAL);
	assert_int_equal(control_auth_parse(NULL, 0, token, sizeof(token)), -EINVAL);
	assert_int_equal(control_auth_parse(S("{}"), token, sizeof(token)), -EINVAL);
	assert_int_equal(control_auth_parse(S("{\"token\": 5}"), token, sizeof(token)), -EINVAL);
	assert_int_equal(control_auth_parse(S("[\"token\"]"), token, sizeof(token)), -EINVAL);
	assert_int_equal(control_auth_parse(S("{\"action\": \"screenshot\"}"), token,
					    sizeof(token)),
			 -EINVAL);
	/* a token cut at a NUL is not the token */
	assert_int_equal(control_auth_parse(S("{\"token\": \"abc\\u0000x\"}"), token,
					    sizeof(token)),
			 -EINVAL);
}

static void ws_bad(bool started, bool binary, const char *msg, size_t len, const char *why)
{
	struct exec_ws_msg m;

	assert_int_equal(exec_ws_msg_parse(started, binary, msg, len, &m), -EINVAL);
	assert_null(m.job);
	assert_string_equal(m.why, why);
}

static void test_exec_ws(void **state)
{
	struct exec_ws_msg m;

	(void)state;
	/* the first message: the command */
	assert_int_equal(exec_ws_msg_parse(false, false, S("{\"cmd\": \"cat\"}"), &m), 0);
	assert_int_equal(m.kind, EXEC_WS_START);
	assert_non_null(m.job);
	assert_string_equal(exec_argv(m.job)[2], "cat");
	exec_free(m.job);
	ws_bad(false, true, S("{\"cmd\": \"cat\"}"),
	       "the first message is the command (JSON text)");
	ws_bad(false, false, S("{}"), "cmd must be a non-empty string");
	ws_bad(false, false, S("{\"type\": \"eof\"}"), "unknown field 'type'");
	/* then */
	assert_int_equal(exec_ws_msg_parse(true, true, S("\0\1binary"), &m), 0);
	assert_int_equal(m.kind, EXEC_WS_STDIN);
	assert_int_equal(exec_ws_msg_parse(true, true, NULL, 0, &m), 0);
	assert_int_equal(m.kind, EXEC_WS_STDIN);
	assert_int_equal(exec_ws_msg_parse(true, false, S("{\"type\": \"eof\"}"), &m), 0);
	assert_int_equal(m.kind, EXEC_WS_EOF);
	assert_int_equal(exec_ws_msg_parse(true, false, S("{\"type\": \"signal\", \"signal\": 15}"),
					   &m),
			 0);
	assert_int_equal(m.kind, EXEC_WS_SIGNAL);
	assert_int_equal(m.signal, 15);
	assert_int_equal(exec_ws_msg_parse(true, false, S("{\"signal\": 64, \"type\": \"signal\"}"),
					   &m),
			 0);
	assert_int_equal(m.signal, 64);
	assert_int_equal(exec_ws_msg_parse(true, false, S("{\"type\": \"signal\", \"signal\": 1}"),
					   &m),
			 0);
	assert_int_equal(m.signal, 1);
	ws_bad(true, false, S("{\"type\": \"signal\", \"signal\": 0}"), BAD_WS_MSG);
	ws_bad(true, false, S("{\"type\": \"signal\", \"signal\": 65}"), BAD_WS_MSG);
	ws_bad(true, false, S("{\"type\": \"signal\", \"signal\": -9}"), BAD_WS_MSG);
	ws_bad(true, false, S("{\"type\": \"signal\", \"signal\": \"9\"}"), BAD_WS_MSG);
	ws_bad(true, false, S("{\"type\": \"signal\", \"signal\": 9.0}"), BAD_WS_MSG);
	ws_bad(true, false, S("{\"type\": \"signal\"}"), BAD_WS_MSG);
	ws_bad(true, false, S("{\"type\": \"kill\"}"), BAD_WS_MSG);
	ws_bad(true, false, S("{\"type\": \"EOF\"}"), BAD_WS_MSG);
	ws_bad(true, false, S("eof"), BAD_WS_MSG);
	ws_bad(true, false, S(""), BAD_WS_MSG);
	ws_bad(true, false, S("{\"cmd\": \"cat\"}"), BAD_WS_MSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control_auth),
		cmocka_unit_test(test_exec_ws),
	};

	return cmocka_run_group_tests_name("socket messages", tests, NULL, NULL);
}
