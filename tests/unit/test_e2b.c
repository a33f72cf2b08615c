/* tests/unit/test_e2b.c: the pure parts of the E2B drop-in (gateway/e2b/,
 * common/chunked.c): Connect's envelope, error codes and end-of-stream
 * message; the events envd streams; the control plane's bodies and
 * routes; the sandbox of a Host, the live view's Origin; the user of an envd call; Process.Start
 * and the calls on a running process; the list's metadata filter; a
 * /files' encodings (gzip); chunked request bodies; watching: the
 * requests, the guest watcher's lines, its end, envd's watch messages. */
#include "common/base64.h"
#include "common/chunked.h"
#include "gateway/e2b/connect.h"
#include "gateway/e2b/e2b_fs.h"
#include "gateway/e2b/e2b_msg.h"
#include "gateway/e2b/e2b_req.h"
#include "gateway/e2b/e2b_route.h"
#include "gateway/e2b/e2b_watch.h"
#include "gateway/guest/exec.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define S(lit) lit, sizeof(lit) - 1

static void test_frames(void **state)
{
	const uint8_t *msg;
	uint8_t flags, buf[16], h[CONNECT_HEADER];
	size_t len;

	(void)state;
	connect_frame_header(h, 0, 3);
	assert_memory_equal(h, "\0\0\0\0\3", 5);
	memcpy(buf, h, 5);
	memcpy(buf + 5, "{}x", 3);
	for (size_t n = 0; n < 8; n++) /* a short prefix needs more */
		assert_int_equal(connect_frame_parse(buf, n, 100, &flags, &msg, &len), 0);
	assert_int_equal(connect_frame_parse(buf, 8, 100, &flags, &msg, &len), 8);
	assert_int_equal(flags, 0);
	assert_int_equal(len, 3);
	assert_ptr_equal(msg, buf + 5);
	assert_int_equal(connect_frame_parse(buf, 8, 2, &flags, &msg, &len), -E2BIG);
	connect_frame_header(h, CONNECT_FLAG_END, 0x01020304);
	assert_memory_equal(h, "\2\1\2\3\4", 5);
	assert_int_equal(connect_frame_parse(h, 5, ~(size_t)0, &flags, &msg, &len), -E2BIG);
	buf[0] = CONNECT_FLAG_COMPRESSED;
	assert_int_equal(connect_frame_parse(buf, 8, 100, &flags, &msg, &len), -EPROTO);
	buf[0] = CONNECT_FLAG_END;
	assert_int_equal(connect_frame_parse(buf, 8, 100, &flags, &msg, &len), 8);
	assert_int_equal(flags, CONNECT_FLAG_END);
}

static void test_codes(void **state)
{
	char *s;

	(void)state;
	assert_string_equal(connect_code_name(CONNECT_INVALID_ARGUMENT), "invalid_argument");
	assert_string_equal(connect_code_name(CONNECT_UNAUTHENTICATED), "unauthenticated");
	assert_string_equal(connect_code_name((enum connect_code)99), "unknown");
	assert_int_equal(connect_code_http(CONNECT_NOT_FOUND), 404);
	assert_int_equal(connect_code_http(CONNECT_UNIMPLEMENTED), 501);
	assert_int_equal(connect_code_http(CONNECT_UNAUTHENTICATED), 401);
	assert_int_equal(connect_code_http(CONNECT_DEADLINE_EXCEEDED), 504);
	s = connect_end_json(CONNECT_OK, "ignored");
	assert_string_equal(s, "{}");
	free(s);
	s = connect_end_json(CONNECT_NOT_FOUND, "no \"such\"");
	assert_string_equal(s,
			    "{\"error\":{\"code\":\"not_found\",\"message\":\"no \\\"such\\\"\"}}");
	free(s);
	s = connect_error_json(CONNECT_INTERNAL, NULL);
	assert_string_equal(s, "{\"code\":\"internal\",\"message\":\"\"}");
	free(s);
}

/* The JSON of the n-th frame of b (0-based), NUL-terminated in out. */
static uint8_t nth_frame(const struct bytebuf *b, int n, char *out, size_t cap)
{
	const uint8_t *msg;
	uint8_t flags = 0xff;
	size_t len, off = 0;
	int used;

	for (int i = 0; i <= n; i++) {
		used = connect_frame_parse(b->data + off, b->len - off, 1 << 20, &flags, &msg,
					   &len);
		assert_true(used > 0);
		off += (size_t)used;
	}
	assert_true(len < cap);
	memcpy(out, msg, len);
	out[len] = '\0';
	return flags;
}

static void test_events(void **state)
{
	struct bytebuf b = { 0 };
	char j[256];

	(void)state;
	assert_int_equal(e2b_msg_frame(&b, 0, e2b_msg_start(4321)), 0);
	assert_int_equal(e2b_msg_frame(&b, 0, e2b_msg_data(false, "\0\xff", 2)), 0);
	assert_int_equal(e2b_msg_frame(&b, 0, e2b_msg_data(true, "e", 1)), 0);
	assert_int_equal(e2b_msg_frame(&b, 0, e2b_msg_end(3, 0, NULL)), 0);
	assert_int_equal(e2b_msg_frame(&b, 0, e2b_msg_end(-1, 9, "killed")), 0);
	assert_int_equal(e2b_msg_frame(&b, 0, e2b_msg_keepalive()), 0);
	assert_int_equal(e2b_msg_end_stream(&b, CONNECT_OK, NULL), 0);
	assert_int_equal(e2b_msg_frame(&b, 0, NULL), -ENOMEM);
	assert_int_equal(nth_frame(&b, 0, j, sizeof(j)), 0);
	assert_string_equal(j, "{\"event\":{\"start\":{\"pid\":4321}}}");
	nth_frame(&b, 1, j, sizeof(j));
	assert_string_equal(j, "{\"event\":{\"data\":{\"stdout\":\"AP8=\"}}}");
	nth_frame(&b, 2, j, sizeof(j));
	assert_string_equal(j, "{\"event\":{\"data\":{\"stderr\":\"ZQ==\"}}}");
	nth_frame(&b, 3, j, sizeof(j));
	assert_string_equal(
		j,
		"{\"event\":{\"end\":{\"exitCode\":3,\"exited\":true,\"status\":\"exit status 3\"}}}");
	nth_frame(&b, 4, j, sizeof(j));
	assert_string_equal(j, "{\"event\":{\"end\":{\"exitCode\":-1,\"exited\":false,\"status\":"
			       "\"signal: killed\",\"error\":\"killed\"}}}");
	nth_frame(&b, 5, j, sizeof(j));
	assert_string_equal(j, "{\"event\":{\"keepalive\":{}}}");
	assert_int_equal(nth_frame(&b, 6, j, sizeof(j)), CONNECT_FLAG_END);
	assert_string_equal(j, "{}");
	bytebuf_free(&b);
}

static void test_create(void **state)
{
	struct e2b_create c;
	char err[160];

	(void)state;
	assert_int_equal(e2b_create_parse(S("{\"templateID\":\"tiny\",\"timeout\":60,\"metadata\":"
					    "{\"a\":\"b\"},\"envVars\":{\"X\":\"1\"},\"autoPause\":"
					    "true,\"mcp\":null,\"secure\":true}"),
					  &c, err, sizeof(err)),
			 0);
	assert_string_equal(c.template_id, "tiny");
	assert_int_equal(c.timeout_s, 60);
	assert_true(c.auto_pause);
	assert_string_equal(json_string_value(json_object_get(c.metadata, "a")), "b");
	assert_string_equal(json_string_value(json_object_get(c.env_vars, "X")), "1");
	e2b_create_free(&c);
	/* an empty body: the defaults */
	assert_int_equal(e2b_create_parse(NULL, 0, &c, err, sizeof(err)), 0);
	assert_string_equal(c.template_id, "");
	assert_int_equal(c.timeout_s, E2B_DEFAULT_TIMEOUT_S);
	assert_false(c.auto_pause);
	assert_int_equal(json_object_size(c.metadata), 0);
	e2b_create_free(&c);
	assert_int_equal(e2b_create_parse(S("{\"timeout\":0}"), &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "timeout must be whole seconds in 1..86400");
	assert_int_equal(e2b_create_parse(S("{\"timeout\":86401}"), &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(e2b_create_parse(S("{\"metadata\":{\"a\":1}}"), &c, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_create_parse(S("{\"envVars\":{\"A=B\":\"1\"}}"), &c, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_create_parse(S("{\"autoPause\":\"yes\"}"), &c, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_create_parse(S("[]"), &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(e2b_create_parse(S("{\"templateID\":\"a\",\"templateID\":\"b\"}"), &c, err,
					  sizeof(err)),
			 -EINVAL);
}

static void test_timeout(void **state)
{
	char err[160];
	int t;

	(void)state;
	assert_int_equal(e2b_timeout_parse(S("{\"timeout\":30}"), true, &t, err, sizeof(err)), 0);
	assert_int_equal(t, 30);
	assert_int_equal(e2b_timeout_parse(S("{}"), true, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(e2b_timeout_parse(S("{}"), false, &t, err, sizeof(err)), 0);
	assert_int_equal(t, -1);
	assert_int_equal(e2b_timeout_parse(NULL, 0, false, &t, err, sizeof(err)), 0);
	assert_int_equal(e2b_timeout_parse(S("{\"timeout\":-1}"), false, &t, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_timeout_parse(S("{\"timeout\":1.5}"), true, &t, err, sizeof(err)),
			 -EINVAL);
}

static void test_host(void **state)
{
	char id[40];
	int port;

	(void)state;
	assert_int_equal(e2b_host_sandbox("49983-vmabc123.e2b.example.com", &port, id, sizeof(id)),
			 0);
	assert_int_equal(port, 49983);
	assert_string_equal(id, "vmabc123");
	assert_int_equal(e2b_host_sandbox("6080-x1.d:443", &port, id, sizeof(id)), 0);
	assert_int_equal(port, 6080);
	assert_string_equal(id, "x1");
	assert_int_equal(e2b_host_sandbox("127.0.0.1:8080", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(e2b_host_sandbox("49983-.d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(e2b_host_sandbox("49983-abc", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(e2b_host_sandbox("49983-abc.", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(e2b_host_sandbox("49983-ab-c.d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(e2b_host_sandbox("99999-abc.d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(e2b_host_sandbox("-abc.d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(e2b_host_sandbox("49983-abcd.d", &port, id, 4), -EINVAL);
	assert_int_equal(e2b_host_sandbox(NULL, &port, id, sizeof(id)), -EINVAL);
}

/* The live view's own page may open its session's stream socket: the
 * Origin "http(s)://PORT-{id}." on the Host the socket is asked on, or on
 * the public URL's host; never another sandbox's, port's or site's. */
static void test_live_origin(void **state)
{
	const char *pub = "https://sbx.example.org";

	(void)state;
	assert_true(e2b_live_origin("https://6080-vmab1.sbx.example.org",
				    "6080-vmab1.sbx.example.org", NULL, "vmab1", 6080));
	assert_true(e2b_live_origin("http://6080-vmab1.localhost:8080", "6080-vmab1.localhost:8080",
				    "http://127.0.0.1:8080", "vmab1", 6080));
	assert_true(e2b_live_origin("https://6080-vmab1.SBX.example.org",
				    "6080-vmab1.sbx.example.org", NULL, "vmab1", 6080));
	/* a proxy that passes another Host: the public URL's domain */
	assert_true(e2b_live_origin("https://6080-vmab1.sbx.example.org", "127.0.0.1:8080", pub,
				    "vmab1", 6080));
	assert_true(e2b_live_origin("https://7000-vmab1.sbx.example.org", "127.0.0.1:8080",
				    "https://sbx.example.org/", "vmab1", 7000));
	/* another sandbox, another port, another site, a sub-path or an opaque origin */
	assert_false(e2b_live_origin("https://6080-vmother.sbx.example.org",
				     "6080-vmother.sbx.example.org", pub, "vmab1", 6080));
	assert_false(e2b_live_origin("https://6080-vmab12.sbx.example.org",
				     "6080-vmab12.sbx.example.org", pub, "vmab1", 6080));
	assert_false(e2b_live_origin("https://7000-vmab1.sbx.example.org",
				     "7000-vmab1.sbx.example.org", pub, "vmab1", 6080));
	assert_false(e2b_live_origin("https://6080-vmab1.evil.example",
				     "6080-vmab1.sbx.example.org", pub, "vmab1", 6080));
	assert_false(e2b_live_origin("https://6080-vmab1.evil.example", "127.0.0.1:8080", pub,
				     "vmab1", 6080));
	assert_false(e2b_live_origin("https://6080-vmab1.sbx.example.org.evil", "127.0.0.1:8080",
				     pub, "vmab1", 6080));
	assert_false(e2b_live_origin("https://6080-vmab1.sbx.example.org:444", "127.0.0.1:8080",
				     pub, "vmab1", 6080));
	assert_false(e2b_live_origin("https://evil.example", "6080-vmab1.sbx.example.org", pub,
				     "vmab1", 6080));
	assert_false(
		e2b_live_origin("https://sbx.example.org", "sbx.example.org", pub, "vmab1", 6080));
	assert_false(e2b_live_origin("https://6080-vmab1.sbx.example.org/x",
				     "6080-vmab1.sbx.example.org", pub, "vmab1", 6080));
	assert_false(e2b_live_origin("null", "6080-vmab1.sbx.example.org", pub, "vmab1", 6080));
	assert_false(e2b_live_origin("ftp://6080-vmab1.sbx.example.org",
				     "6080-vmab1.sbx.example.org", pub, "vmab1", 6080));
	assert_false(e2b_live_origin("", "6080-vmab1.sbx.example.org", pub, "vmab1", 6080));
	assert_false(e2b_live_origin(NULL, "6080-vmab1.sbx.example.org", pub, "vmab1", 6080));
}

static void test_user(void **state)
{
	bool root;

	(void)state;
	assert_int_equal(e2b_user_parse(NULL, NULL, &root), 0);
	assert_false(root);
	assert_int_equal(e2b_user_parse("Basic dXNlcjo=", NULL, &root), 0); /* "user:" */
	assert_false(root);
	assert_int_equal(e2b_user_parse("Basic cm9vdDo=", "user", &root), 0); /* "root:" */
	assert_true(root);
	assert_int_equal(e2b_user_parse("", "root", &root), 0);
	assert_true(root);
	assert_int_equal(e2b_user_parse("Basic Ym9iOg==", NULL, &root), -EINVAL); /* "bob:" */
	assert_int_equal(e2b_user_parse("Bearer abc", NULL, &root), -EINVAL);
	assert_int_equal(e2b_user_parse("Basic !!", NULL, &root), -EINVAL);
	assert_int_equal(e2b_user_parse(NULL, "nobody", &root), -EINVAL);
	/* longer than the name buffer (found by fuzz_e2b) */
	assert_int_equal(
		e2b_user_parse("Basic cm9vdDpPT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT"
			       "09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09"
			       "PT09PT09PT09PT09",
			       NULL, &root),
		-EINVAL);
}

static void test_start(void **state)
{
	json_t *env = json_pack("{s:s, s:s}", "A", "sandbox", "B", "sandbox"), *config, *body;
	char err[160], tag[E2B_TAG_MAX], *text;
	struct e2b_pty_size pty;
	bool keep;
	struct api_error e;
	struct exec_job *j;
	const char *const *argv, *const *envv;
	int seen = 0;

	(void)state;
	body = e2b_start_parse(
		S("{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"echo "
		  "hi\"],\"envs\":{\"B\":\"mine\"},\"cwd\":\"/tmp\"},\"stdin\":true,"
		  "\"tag\":\"t1\"}"),
		env, false, &config, tag, sizeof(tag), &keep, &pty, err, sizeof(err));
	assert_non_null(body);
	assert_true(keep);
	assert_string_equal(tag, "t1");
	assert_string_equal(json_string_value(json_object_get(config, "cmd")), "/bin/bash");
	assert_string_equal(json_string_value(json_object_get(config, "cwd")), "/tmp");
	/* what runs: bash where there is one, the same arguments */
	text = json_dumps(body, JSON_COMPACT);
	j = exec_parse(text, strlen(text), &e);
	free(text);
	assert_non_null(j);
	argv = exec_argv(j);
	assert_string_equal(argv[0], "/bin/sh");
	assert_string_equal(argv[1], "-c");
	assert_non_null(strstr(argv[2], "exec bash \"$@\""));
	assert_string_equal(argv[3], "bash");
	assert_string_equal(argv[4], "-l");
	assert_string_equal(argv[5], "-c");
	assert_string_equal(argv[6], "echo hi");
	assert_null(argv[7]);
	assert_string_equal(exec_cwd(j), "/tmp");
	assert_false(exec_as_root(j));
	for (envv = exec_env(j); *envv; envv++) {
		seen |= !strcmp(*envv, "A=sandbox") ? 1 : 0;
		seen |= !strcmp(*envv, "B=mine") ? 2 : 0;
		assert_string_not_equal(*envv, "B=sandbox"); /* the request's envs win */
	}
	assert_int_equal(seen, 3);
	exec_free(j);
	json_decref(body);
	json_decref(config);

	body = e2b_start_parse(S("{\"process\":{\"cmd\":\"ls\"}}"), NULL, true, &config, tag,
			       sizeof(tag), &keep, &pty, err, sizeof(err));
	assert_non_null(body);
	assert_false(keep);
	assert_string_equal(tag, "");
	assert_string_equal(json_string_value(json_object_get(body, "user")), "root");
	assert_string_equal(json_string_value(json_object_get(body, "cmd")), "ls");
	assert_int_equal(json_array_size(json_object_get(body, "args")), 0);
	json_decref(body);
	json_decref(config);

	assert_null(e2b_start_parse(S("{\"process\":{\"cmd\":42}}"), env, false, &config, tag,
				    sizeof(tag), &keep, &pty, err, sizeof(err)));
	assert_string_equal(err, "process.cmd must be a non-empty string");
	assert_null(config);
	assert_null(e2b_start_parse(S("{\"process\":{\"cmd\":\"x\",\"args\":[1]}}"), env, false,
				    &config, tag, sizeof(tag), &keep, &pty, err, sizeof(err)));
	assert_null(e2b_start_parse(S("{\"process\":{\"cmd\":\"x\"},\"pty\":{\"size\":{}}}"), env,
				    false, &config, tag, sizeof(tag), &keep, &pty, err,
				    sizeof(err)));
	assert_string_equal(err, "pty.size must be {cols, rows}, each 1 to 65535");
	assert_null(e2b_start_parse(
		S("{\"process\":{\"cmd\":\"x\"},\"pty\":{\"size\":{\"cols\":0,\"rows\":24}}}"), env,
		false, &config, tag, sizeof(tag), &keep, &pty, err, sizeof(err)));
	assert_int_equal(pty.cols, 0);
	assert_null(e2b_start_parse(
		S("{\"process\":{\"cmd\":\"x\"},\"pty\":{\"size\":{\"cols\":80,\"rows\":65536}}}"),
		env, false, &config, tag, sizeof(tag), &keep, &pty, err, sizeof(err)));
	/* the SDK's pty.create: a terminal, whose stdin stays open */
	body = e2b_start_parse(S("{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-i\",\"-l\"]},"
				 "\"pty\":{\"size\":{\"cols\":100,\"rows\":30}}}"),
			       env, false, &config, tag, sizeof(tag), &keep, &pty, err,
			       sizeof(err));
	assert_non_null(body);
	assert_int_equal(pty.cols, 100);
	assert_int_equal(pty.rows, 30);
	assert_true(keep);
	json_decref(body);
	json_decref(config);
	/* a refusal after the tag was read leaves no tag (found by fuzz_e2b) */
	assert_null(e2b_start_parse(S("{\"process\":{\"cmd\":\"x\",\"envs\":[]},\"tag\":\"t\"}"),
				    env, false, &config, tag, sizeof(tag), &keep, &pty, err,
				    sizeof(err)));
	assert_string_equal(tag, "");
	assert_null(e2b_start_parse(S("{\"process\":{\"cmd\":\"x\",\"cwd\":\"rel\"}}"), env, false,
				    &config, tag, sizeof(tag), &keep, &pty, err, sizeof(err)));
	assert_null(e2b_start_parse(S("{\"process\":{\"cmd\":\"x\",\"envs\":{\"=\":\"\"}}}"), env,
				    false, &config, tag, sizeof(tag), &keep, &pty, err,
				    sizeof(err)));
	assert_null(e2b_start_parse(S("nope"), env, false, &config, tag, sizeof(tag), &keep, &pty,
				    err, sizeof(err)));
	json_decref(env);
}

static void test_proc_calls(void **state)
{
	struct e2b_proc_req q;
	char err[160];

	(void)state;
	assert_int_equal(e2b_proc_req_parse(E2B_CALL_CONNECT, S("{\"process\":{\"pid\":42}}"), &q,
					    err, sizeof(err)),
			 0);
	assert_int_equal(q.pid, 42);
	e2b_proc_req_free(&q);
	assert_int_equal(e2b_proc_req_parse(E2B_CALL_CONNECT, S("{\"process\":{\"pid\":\"42\"}}"),
					    &q, err, sizeof(err)),
			 0);
	assert_int_equal(q.pid, 42);
	assert_int_equal(e2b_proc_req_parse(E2B_CALL_CLOSE_STDIN,
					    S("{\"process\":{\"tag\":\"t\"}}"), &q, err,
					    sizeof(err)),
			 0);
	assert_int_equal(q.pid, 0);
	assert_string_equal(q.tag, "t");
	assert_int_equal(
		e2b_proc_req_parse(E2B_CALL_SEND_SIGNAL,
				   S("{\"process\":{\"pid\":7},\"signal\":\"SIGNAL_SIGKILL\"}"), &q,
				   err, sizeof(err)),
		0);
	assert_int_equal(q.signal, 9);
	assert_int_equal(e2b_proc_req_parse(E2B_CALL_SEND_SIGNAL,
					    S("{\"process\":{\"pid\":7},\"signal\":15}"), &q, err,
					    sizeof(err)),
			 0);
	assert_int_equal(q.signal, 15);
	assert_int_equal(e2b_proc_req_parse(E2B_CALL_SEND_SIGNAL,
					    S("{\"process\":{\"pid\":7},\"signal\":2}"), &q, err,
					    sizeof(err)),
			 -EINVAL);
	assert_int_equal(
		e2b_proc_req_parse(E2B_CALL_SEND_INPUT,
				   S("{\"process\":{\"pid\":7},\"input\":{\"stdin\":\"AP8K\"}}"),
				   &q, err, sizeof(err)),
		0);
	assert_int_equal(q.input_len, 3);
	assert_memory_equal(q.input, "\0\xff\n", 3);
	e2b_proc_req_free(&q);
	assert_int_equal(
		e2b_proc_req_parse(E2B_CALL_SEND_INPUT,
				   S("{\"process\":{\"pid\":7},\"input\":{\"stdin\":\"*\"}}"), &q,
				   err, sizeof(err)),
		-EINVAL);
	assert_int_equal(e2b_proc_req_parse(E2B_CALL_CONNECT, S("{\"process\":{\"pid\":0}}"), &q,
					    err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_proc_req_parse(E2B_CALL_CONNECT,
					    S("{\"process\":{\"pid\":4294967296}}"), &q, err,
					    sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_proc_req_parse(E2B_CALL_CONNECT, S("{}"), &q, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "process must select a pid or a tag");
	/* a terminal's input, its size */
	assert_int_equal(
		e2b_proc_req_parse(E2B_CALL_SEND_INPUT,
				   S("{\"process\":{\"pid\":7},\"input\":{\"pty\":\"bHMK\"}}"), &q,
				   err, sizeof(err)),
		0);
	assert_true(q.pty_input);
	assert_int_equal(q.input_len, 3);
	assert_memory_equal(q.input, "ls\n", 3);
	e2b_proc_req_free(&q);
	assert_int_equal(
		e2b_proc_req_parse(
			E2B_CALL_UPDATE,
			S("{\"process\":{\"pid\":7},\"pty\":{\"size\":{\"cols\":120,\"rows\":40}}}"),
			&q, err, sizeof(err)),
		0);
	assert_int_equal(q.pty.cols, 120);
	assert_int_equal(q.pty.rows, 40);
	assert_int_equal(e2b_proc_req_parse(E2B_CALL_UPDATE, S("{\"process\":{\"pid\":7}}"), &q,
					    err, sizeof(err)),
			 0);
	assert_int_equal(q.pty.cols, 0);
	assert_int_equal(
		e2b_proc_req_parse(
			E2B_CALL_UPDATE,
			S("{\"process\":{\"pid\":7},\"pty\":{\"size\":{\"cols\":\"80\"}}}"), &q,
			err, sizeof(err)),
		-EINVAL);
}

/* Appends a Connect envelope of text (flags) to buf at *n. */
static void envelope(unsigned char *buf, size_t *n, uint8_t flags, const char *text)
{
	connect_frame_header(buf + *n, flags, (uint32_t)strlen(text));
	memcpy(buf + *n + CONNECT_HEADER, text, strlen(text));
	*n += CONNECT_HEADER + strlen(text);
}

static void test_stream_input(void **state)
{
	unsigned char b[512];
	struct e2b_proc_req q;
	char err[160];
	size_t n = 0;

	(void)state;
	envelope(b, &n, 0, "{\"start\":{\"process\":{\"pid\":9}}}");
	envelope(b, &n, 0, "{\"data\":{\"input\":{\"stdin\":\"aGk=\"}}}");
	envelope(b, &n, 0, "{\"keepalive\":{}}");
	envelope(b, &n, 0, "{\"data\":{\"input\":{\"pty\":\"IQo=\"}}}");
	envelope(b, &n, CONNECT_FLAG_END, "{}");
	assert_int_equal(e2b_stream_input_parse(b, n, &q, err, sizeof(err)), 0);
	assert_int_equal(q.pid, 9);
	assert_int_equal(q.input_len, 4);
	assert_memory_equal(q.input, "hi!\n", 4);
	e2b_proc_req_free(&q);
	/* cut inside the last envelope */
	assert_int_equal(e2b_stream_input_parse(b, n - 1, &q, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "the body ends inside an envelope");
	assert_null(q.input);
	/* data before start; no start; two starts; an unknown message */
	n = 0;
	envelope(b, &n, 0, "{\"data\":{\"input\":{\"stdin\":\"aGk=\"}}}");
	assert_int_equal(e2b_stream_input_parse(b, n, &q, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "data before start");
	n = 0;
	envelope(b, &n, 0, "{\"keepalive\":{}}");
	assert_int_equal(e2b_stream_input_parse(b, n, &q, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "the stream has no start");
	assert_int_equal(e2b_stream_input_parse(b, 0, &q, err, sizeof(err)), -EINVAL);
	n = 0;
	envelope(b, &n, 0, "{\"start\":{\"process\":{\"pid\":9}}}");
	envelope(b, &n, 0, "{\"start\":{\"process\":{\"pid\":9}}}");
	assert_int_equal(e2b_stream_input_parse(b, n, &q, err, sizeof(err)), -EINVAL);
	n = 0;
	envelope(b, &n, 0, "{\"start\":{\"process\":{\"pid\":9}}}");
	envelope(b, &n, 0, "{\"other\":{}}");
	assert_int_equal(e2b_stream_input_parse(b, n, &q, err, sizeof(err)), -EINVAL);
	/* a compressed envelope */
	n = 0;
	envelope(b, &n, CONNECT_FLAG_COMPRESSED, "{}");
	assert_int_equal(e2b_stream_input_parse(b, n, &q, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "compressed messages are not supported");
}

static void test_metadata(void **state)
{
	json_t *m = json_pack("{s:s, s:s}", "suite", "e2b", "k y", "a&b=c");

	(void)state;
	assert_true(e2b_metadata_match(m, NULL));
	assert_true(e2b_metadata_match(m, ""));
	assert_true(e2b_metadata_match(m, "suite=e2b"));
	assert_false(e2b_metadata_match(m, "suite=other"));
	assert_false(e2b_metadata_match(m, "missing=e2b"));
	/* the SDK encodes keys and values once more */
	assert_true(e2b_metadata_match(m, "k%2520y=a%2526b%253Dc&suite=e2b"));
	assert_true(e2b_metadata_match(m, "k+y=a%26b%3Dc"));
	assert_false(e2b_metadata_match(m, "suite"));
	assert_false(e2b_metadata_match(NULL, "suite=e2b"));
	json_decref(m);
}

static void test_encodings(void **state)
{
	bool gz = true;

	(void)state;
	/* as envd's parseAcceptEncoding */
	assert_int_equal(e2b_accept_gzip("gzip", &gz), 0);
	assert_true(gz);
	assert_int_equal(e2b_accept_gzip("GZIP;q=0.5, identity;q=0.9", &gz), 0);
	assert_false(gz);
	assert_int_equal(e2b_accept_gzip("br, gzip;q=0.8", &gz), 0);
	assert_true(gz);
	assert_int_equal(e2b_accept_gzip("gzip;q=0", &gz), 0);
	assert_false(gz);
	assert_int_equal(e2b_accept_gzip("*", &gz), 0);
	assert_false(gz);
	assert_int_equal(e2b_accept_gzip("*, identity;q=0", &gz), 0);
	assert_true(gz);
	assert_int_equal(e2b_accept_gzip("br, identity;q=0", &gz), -EINVAL);
	assert_int_equal(e2b_accept_gzip("", &gz), 0);
	assert_false(gz);
	/* as envd's parseContentEncoding */
	assert_int_equal(e2b_content_gzip("gzip", &gz), 0);
	assert_true(gz);
	assert_int_equal(e2b_content_gzip(" Gzip ", &gz), 0);
	assert_true(gz);
	assert_int_equal(e2b_content_gzip("identity", &gz), 0);
	assert_false(gz);
	assert_int_equal(e2b_content_gzip("br", &gz), -EINVAL);
}

static void test_routes(void **state)
{
	struct e2b_route r;

	(void)state;
	assert_int_equal(e2b_route_parse("POST", "/v2/sandboxes", false).kind, E2B_CREATE);
	assert_int_equal(e2b_route_parse("POST", "/sandboxes", false).kind, E2B_CREATE);
	assert_int_equal(e2b_route_parse("GET", "/v2/sandboxes", false).kind, E2B_LIST);
	assert_int_equal(e2b_route_parse("PUT", "/sandboxes", false).kind, E2B_BAD_METHOD);
	r = e2b_route_parse("GET", "/sandboxes/vm123", false);
	assert_int_equal(r.kind, E2B_GET);
	assert_string_equal(r.id, "vm123");
	assert_int_equal(e2b_route_parse("DELETE", "/sandboxes/vm123", false).kind, E2B_KILL);
	assert_int_equal(e2b_route_parse("POST", "/sandboxes/vm1/timeout", false).kind,
			 E2B_TIMEOUT);
	assert_int_equal(e2b_route_parse("POST", "/sandboxes/vm1/pause", false).kind, E2B_PAUSE);
	assert_int_equal(e2b_route_parse("POST", "/sandboxes/vm1/resume", false).kind, E2B_CONNECT);
	assert_int_equal(e2b_route_parse("POST", "/sandboxes/vm1/connect", false).kind,
			 E2B_CONNECT);
	r = e2b_route_parse("POST", "/v2/sandboxes/vm1/connect", false);
	assert_int_equal(r.kind, E2B_CONNECT);
	assert_string_equal(r.id, "vm1");
	assert_int_equal(e2b_route_parse("POST", "/v2/sandboxes/vm1/pause", false).kind, E2B_NONE);
	assert_int_equal(e2b_route_parse("GET", "/v2/sandboxes/vm1", false).kind, E2B_NONE);
	assert_int_equal(e2b_route_parse("GET", "/sandboxes/vm1/logs", false).kind, E2B_NONE);
	assert_int_equal(e2b_route_parse("GET", "/sandboxes/a.b", false).kind, E2B_NONE);
	assert_int_equal(e2b_route_parse("GET", "/sandboxesX", false).kind, E2B_NONE);
	assert_int_equal(e2b_route_parse("GET", "/v1/sessions", false).kind, E2B_NONE);
	assert_int_equal(e2b_route_parse("GET", "/process.Process/Start", false).kind, E2B_NONE);
	/* envd */
	assert_int_equal(e2b_route_parse("GET", "/health", true).kind, E2B_ENVD_HEALTH);
	assert_int_equal(e2b_route_parse("POST", "/files", true).kind, E2B_ENVD_FILES);
	assert_int_equal(e2b_route_parse("DELETE", "/files", true).kind, E2B_BAD_METHOD);
	r = e2b_route_parse("POST", "/process.Process/Start", true);
	assert_int_equal(r.kind, E2B_ENVD_RPC);
	assert_string_equal(r.rpc, "process.Process/Start");
	assert_int_equal(e2b_route_parse("GET", "/process.Process/Start", true).kind,
			 E2B_BAD_METHOD);
	assert_int_equal(e2b_route_parse("POST", "/process.Process/", true).kind,
			 E2B_ENVD_NOT_FOUND);
	assert_int_equal(e2b_route_parse("POST", "/a/b/c", true).kind, E2B_ENVD_NOT_FOUND);
	assert_int_equal(e2b_route_parse("POST", "/sandboxes", true).kind, E2B_ENVD_NOT_FOUND);
}

/* Decodes text in pieces of step bytes into out; returns the length or -1. */
static long decode_steps(const char *text, size_t len, size_t step, char *out, bool *done)
{
	struct chunked c = { 0 };
	long total = 0;

	for (size_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;
		long got = chunked_decode(&c, text + off, n, out + total);

		if (got < 0)
			return -1;
		total += got;
	}
	*done = chunked_done(&c);
	return total;
}

static void test_chunked(void **state)
{
	static const char good[] = "15\r\n{\"templateID\":\"tiny\"}\r\n3;ext=1\r\nabc\r\n0\r\nX-T: "
				   "1\r\n\r\n";
	char out[128];
	bool done;

	(void)state;
	for (size_t step = 1; step <= sizeof(good); step++) {
		memset(out, 0, sizeof(out));
		assert_int_equal(decode_steps(good, sizeof(good) - 1, step, out, &done), 24);
		assert_memory_equal(out, "{\"templateID\":\"tiny\"}abc", 24);
		assert_true(done);
	}
	assert_int_equal(decode_steps(S("5\r\nabc"), 2, out, &done), 3);
	assert_false(done);
	assert_int_equal(decode_steps(S("0\r\n\r\n"), 64, out, &done), 0);
	assert_true(done);
	assert_int_equal(decode_steps(S("3\r\nabcX\r\n0\r\n\r\n"), 64, out, &done), -1);
	assert_int_equal(decode_steps(S("\r\n"), 64, out, &done), -1);
	assert_int_equal(decode_steps(S("1234567890123456\r\n"), 64, out, &done), -1);
	assert_int_equal(decode_steps(S("0\r\n\r\nmore"), 64, out, &done), -1);
}

static void test_fs(void **state)
{
	struct e2b_fs_req q;
	enum e2b_fs_call call;
	char err[160];
	json_t *e, *a;

	(void)state;
	assert_int_equal(e2b_fs_call_of("filesystem.Filesystem/ListDir", &call), 0);
	assert_int_equal(call, E2B_FS_LIST_DIR);
	assert_int_equal(e2b_fs_call_of("filesystem.Filesystem/WatchDir", &call), -ENOENT);
	assert_int_equal(e2b_fs_call_of("process.Process/Stat", &call), -ENOENT);
	assert_int_equal(e2b_fs_req_parse(E2B_FS_LIST_DIR, S("{\"path\":\"docs\",\"depth\":3}"),
					  "/home/vitrine", &q, err, sizeof(err)),
			 0);
	assert_string_equal(q.path, "/home/vitrine/docs");
	assert_int_equal(q.depth, 3);
	assert_int_equal(e2b_fs_req_parse(E2B_FS_LIST_DIR, S("{\"path\":\"/\",\"depth\":0}"),
					  "/root", &q, err, sizeof(err)),
			 0);
	assert_int_equal(q.depth, 1); /* proto3's default */
	assert_int_equal(e2b_fs_req_parse(E2B_FS_MOVE,
					  S("{\"source\":\"/a\",\"destination\":\"b\"}"), "/root",
					  &q, err, sizeof(err)),
			 0);
	assert_string_equal(q.path, "/a");
	assert_string_equal(q.dest, "/root/b");
	assert_int_equal(e2b_fs_req_parse(E2B_FS_MOVE, S("{\"source\":\"/a\"}"), "/root", &q, err,
					  sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_fs_req_parse(E2B_FS_STAT, S("{\"path\":\"\"}"), "/root", &q, err,
					  sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_fs_req_parse(E2B_FS_LIST_DIR, S("{\"path\":\"/\",\"depth\":-1}"),
					  "/root", &q, err, sizeof(err)),
			 -EINVAL);

	e = e2b_fs_entry(S("regular file\t5\t644\t-rw-r--r--\tvitrine\tvitrine\t1796165076\t/tmp/"
			   "a b\tc.txt"));
	assert_non_null(e);
	assert_string_equal(json_string_value(json_object_get(e, "name")), "a b\tc.txt");
	assert_string_equal(json_string_value(json_object_get(e, "path")), "/tmp/a b\tc.txt");
	assert_string_equal(json_string_value(json_object_get(e, "type")), "FILE_TYPE_FILE");
	assert_string_equal(json_string_value(json_object_get(e, "size")), "5");
	assert_int_equal(json_integer_value(json_object_get(e, "mode")), 0644);
	assert_string_equal(json_string_value(json_object_get(e, "permissions")), "-rw-r--r--");
	assert_string_equal(json_string_value(json_object_get(e, "owner")), "vitrine");
	assert_string_equal(json_string_value(json_object_get(e, "modifiedTime")),
			    "2026-12-01T22:44:36Z");
	json_decref(e);
	e = e2b_fs_entry(S("directory\t40\t1777\tdrwxrwxrwt\troot\troot\t0\t/tmp"));
	assert_string_equal(json_string_value(json_object_get(e, "type")), "FILE_TYPE_DIRECTORY");
	assert_string_equal(json_string_value(json_object_get(e, "modifiedTime")),
			    "1970-01-01T00:00:00Z");
	json_decref(e);
	assert_null(e2b_fs_entry(S("fifo\t0\t644\tprw-r--r--\tu\tg\t1\t/tmp/p")));
	assert_null(e2b_fs_entry(S("regular file\tx\t644\t-\tu\tg\t1\t/tmp/p")));
	assert_null(e2b_fs_entry(S("regular file\t1\t999\t-\tu\tg\t1\t/tmp/p")));
	assert_null(e2b_fs_entry(S("regular file\t1\t644\t-\tu\tg\t1\trelative")));
	assert_null(e2b_fs_entry(S("regular file\t1\t644\t-\tu\tg")));
	a = e2b_fs_answer(E2B_FS_LIST_DIR,
			  S("garbage\nregular empty file\t0\t600\t-rw-------\tu\tg\t1\t/x/e\n"
			    "symbolic link\t4\t777\tlrwxrwxrwx\tu\tg\t1\t/x/l\n"));
	assert_int_equal(json_array_size(json_object_get(a, "entries")), 2);
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(json_object_get(a, "entries"),
								   1),
						    "type")),
			    "FILE_TYPE_SYMLINK");
	json_decref(a);
	a = e2b_fs_answer(E2B_FS_STAT, S("directory\t40\t755\td\tu\tg\t1\t/x\n"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(a, "entry"), "name")),
			    "x");
	json_decref(a);
	a = e2b_fs_answer(E2B_FS_REMOVE, NULL, 0);
	assert_int_equal(json_object_size(a), 0);
	json_decref(a);
	/* symlinks: the target's line amends the link's entry, as envd's
	 * EntryInfo: the resolved target, its type and mode */
	a = e2b_fs_answer(E2B_FS_LIST_DIR, S("symbolic link\t1\t777\tlrwxrwxrwx\tu\tg\t1\t/d/l\n"
					     "\tL\tregular file\t640\t/d/f\tx\n"
					     "symbolic link\t4\t777\tlrwxrwxrwx\tu\tg\t1\t/d/dead\n"
					     "\tL\tnone\t0\t/d/dead\n"
					     "symbolic link\t3\t777\tlrwxrwxrwx\tu\tg\t1\t/d/ld\n"
					     "\tL\tdirectory\t755\t/d/sub\n"
					     "\tL\tdirectory\t755\t/stray\n"
					     "regular file\t1\t644\t-rw-r--r--\tu\tg\t1\t/d/f\n"
					     "\tL\tdirectory\t755\t/not-a-link\n"));
	e = json_object_get(a, "entries");
	assert_int_equal(json_array_size(e), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "type")),
			    "FILE_TYPE_FILE");
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(e, 0), "symlinkTarget")),
			    "/d/f\tx");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(e, 0), "mode")), 0640);
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 1), "type")),
			    "FILE_TYPE_UNSPECIFIED");
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(e, 1), "symlinkTarget")),
			    "/d/dead");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(e, 1), "mode")), 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 2), "type")),
			    "FILE_TYPE_DIRECTORY");
	assert_null(json_object_get(json_array_get(e, 3), "symlinkTarget"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 3), "type")),
			    "FILE_TYPE_FILE");
	json_decref(a);
	a = e2b_fs_answer(E2B_FS_STAT, S("symbolic link\t1\t777\tlrwxrwxrwx\tu\tg\t1\t/d/l\n"
					 "\tL\tregular file\t644\t/d/f\n"));
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(a, "entry"), "symlinkTarget")),
			    "/d/f");
	json_decref(a);
	/* malformed targets' lines change nothing */
	e = e2b_fs_entry(S("symbolic link\t1\t777\tlrwxrwxrwx\tu\tg\t1\t/d/l"));
	assert_int_equal(e2b_fs_link_amend(e, S("\tL\tregular file\t644\trelative")), -EINVAL);
	assert_int_equal(e2b_fs_link_amend(e, S("\tL\tregular file\t9999\t/x")), -EINVAL);
	assert_int_equal(e2b_fs_link_amend(e, S("\tL\tregular file")), -EINVAL);
	assert_int_equal(e2b_fs_link_amend(e, S("\tX\tregular file\t644\t/x")), -EINVAL);
	assert_string_equal(json_string_value(json_object_get(e, "type")), "FILE_TYPE_SYMLINK");
	assert_null(json_object_get(e, "symlinkTarget"));
	json_decref(e);
}

static void test_watch_req(void **state)
{
	struct e2b_watch_req q;
	enum e2b_watch_call call;
	const char *argv[6];
	char err[160];

	(void)state;
	assert_int_equal(e2b_watch_call_of("filesystem.Filesystem/WatchDir", &call), 0);
	assert_int_equal(call, E2B_WATCH_DIR);
	assert_int_equal(e2b_watch_call_of("filesystem.Filesystem/CreateWatcher", &call), 0);
	assert_int_equal(call, E2B_WATCH_CREATE);
	assert_int_equal(e2b_watch_call_of("filesystem.Filesystem/GetWatcherEvents", &call), 0);
	assert_int_equal(call, E2B_WATCH_GET);
	assert_int_equal(e2b_watch_call_of("filesystem.Filesystem/RemoveWatcher", &call), 0);
	assert_int_equal(call, E2B_WATCH_REMOVE);
	assert_int_equal(e2b_watch_call_of("filesystem.Filesystem/Stat", &call), -ENOENT);
	assert_int_equal(e2b_watch_call_of("process.Process/WatchDir", &call), -ENOENT);

	/* what the SDK sends (with the options envd 0.5.7 does not have) */
	assert_int_equal(
		e2b_watch_req_parse(E2B_WATCH_DIR,
				    S("{\"path\":\"/tmp/w\",\"recursive\":true,"
				      "\"includeEntry\":false,\"allowNetworkMounts\":false}"),
				    "/home/vitrine", &q, err, sizeof(err)),
		0);
	assert_string_equal(q.path, "/tmp/w");
	assert_true(q.recursive);
	e2b_watch_argv(&q, argv);
	assert_string_equal(argv[0], "vitrine-agent");
	assert_string_equal(argv[1], "watch");
	assert_string_equal(argv[2], "--recursive");
	assert_string_equal(argv[3], "--");
	assert_string_equal(argv[4], "/tmp/w");
	assert_null(argv[5]);
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_CREATE, S("{\"path\":\"-rf\"}"), "/root", &q,
					     err, sizeof(err)),
			 0);
	assert_string_equal(q.path, "/root/-rf");
	assert_false(q.recursive);
	e2b_watch_argv(&q, argv);
	assert_string_equal(argv[2], "--");
	assert_string_equal(argv[3], "/root/-rf");
	assert_null(argv[4]);
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_DIR,
					     S("{\"path\":\"/a\",\"recursive\":null}"), "/root", &q,
					     err, sizeof(err)),
			 0);
	assert_false(q.recursive);
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_DIR,
					     S("{\"path\":\"/a\",\"include_entry\":true}"), "/root",
					     &q, err, sizeof(err)),
			 0);
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_DIR, S("{\"path\":\"/a\",\"recursive\":1}"),
					     "/root", &q, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "recursive, includeEntry and allowNetworkMounts are booleans");
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_DIR, S("{\"recursive\":true}"), "/root", &q,
					     err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_DIR, S("{\"path\":\"a\\u0000b\"}"), "/root",
					     &q, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_DIR, S("[]"), "/root", &q, err, sizeof(err)),
			 -EINVAL);

	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_GET, S("{\"watcherId\":\"w12\"}"), "/", &q,
					     err, sizeof(err)),
			 0);
	assert_string_equal(q.id, "w12");
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_REMOVE, S("{\"watcher_id\":\"w3\"}"), "/",
					     &q, err, sizeof(err)),
			 0);
	assert_string_equal(q.id, "w3");
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_GET, S("{}"), "/", &q, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(e2b_watch_req_parse(E2B_WATCH_GET, S("{\"watcherId\":7}"), "/", &q, err,
					     sizeof(err)),
			 -EINVAL);
	assert_int_equal(
		e2b_watch_req_parse(E2B_WATCH_GET,
				    S("{\"watcherId\":\"w0123456789012345678901234567890\"}"), "/",
				    &q, err, sizeof(err)),
		-EINVAL);
}

struct lines_seen {
	char text[512]; /* the lines, each ended by '|' (a long one as "LONG") */
	int n;
	size_t last_len;
};

static void note_line(void *ud, const char *line, size_t len)
{
	struct lines_seen *seen = ud;
	size_t at = strlen(seen->text);

	seen->last_len = len;
	if (len > 64) {
		line = "LONG";
		len = 4;
	}
	assert_true(at + len + 1 < sizeof(seen->text));
	memcpy(seen->text + at, line, len);
	seen->text[at + len] = '|';
	seen->text[at + len + 1] = '\0';
	seen->n++;
}

static void test_watch_lines(void **state)
{
	static const char out[] = "ready\nc a.txt\nw a.txt\n\nr sub/x\nd .\npartial";
	struct e2b_watch_lines *l = calloc(1, sizeof(*l));
	struct lines_seen whole = { 0 }, split = { 0 };
	char *big = malloc(E2B_WATCH_LINE_MAX + 2);

	(void)state;
	assert_non_null(l);
	assert_non_null(big);
	assert_int_equal(e2b_watch_feed(l, out, sizeof(out) - 1, note_line, &whole), 0);
	assert_string_equal(whole.text, "ready|c a.txt|w a.txt||r sub/x|d .|");
	/* the same lines however the bytes are cut */
	for (size_t cut = 0; cut < sizeof(out); cut++) {
		memset(l, 0, sizeof(*l));
		memset(&split, 0, sizeof(split));
		e2b_watch_feed(l, out, cut, note_line, &split);
		e2b_watch_feed(l, out + cut, sizeof(out) - 1 - cut, note_line, &split);
		assert_string_equal(split.text, whole.text);
		assert_int_equal(l->len, 7); /* "partial" waits for its newline */
	}
	/* a line over the limit is dropped whole, and only it */
	memset(l, 0, sizeof(*l));
	memset(&split, 0, sizeof(split));
	memset(big, 'x', E2B_WATCH_LINE_MAX + 1);
	big[0] = 'c';
	big[1] = ' ';
	big[E2B_WATCH_LINE_MAX + 1] = '\n';
	assert_int_equal(e2b_watch_feed(l, big, 100, note_line, &split), 0);
	assert_int_equal(e2b_watch_feed(l, big + 100, E2B_WATCH_LINE_MAX + 2 - 100, note_line,
					&split),
			 1);
	assert_int_equal(e2b_watch_feed(l, S("c ok\n"), note_line, &split), 0);
	assert_string_equal(split.text, "c ok|");
	/* one exactly at the limit is kept */
	memset(&split, 0, sizeof(split));
	big[E2B_WATCH_LINE_MAX] = '\n';
	assert_int_equal(e2b_watch_feed(l, big, E2B_WATCH_LINE_MAX + 1, note_line, &split), 0);
	assert_string_equal(split.text, "LONG|");
	assert_int_equal(split.last_len, E2B_WATCH_LINE_MAX);
	free(big);
	free(l);
}

static void test_watch_line(void **state)
{
	char name[64];

	(void)state;
	assert_int_equal(e2b_watch_line_parse(S("ready"), name, sizeof(name)), 0);
	assert_int_equal(e2b_watch_line_parse(S("c a.txt"), name, sizeof(name)), E2B_EVENT_CREATE);
	assert_string_equal(name, "a.txt");
	assert_int_equal(e2b_watch_line_parse(S("w sub/deep.txt"), name, sizeof(name)),
			 E2B_EVENT_WRITE);
	assert_string_equal(name, "sub/deep.txt");
	assert_int_equal(e2b_watch_line_parse(S("d ."), name, sizeof(name)), E2B_EVENT_REMOVE);
	assert_string_equal(name, ".");
	assert_int_equal(e2b_watch_line_parse(S("r a b"), name, sizeof(name)), E2B_EVENT_RENAME);
	assert_string_equal(name, "a b");
	assert_int_equal(e2b_watch_line_parse(S("m x"), name, sizeof(name)), E2B_EVENT_CHMOD);
	assert_int_equal(e2b_watch_line_parse(S("c new\\nline\\\\x"), name, sizeof(name)),
			 E2B_EVENT_CREATE);
	assert_string_equal(name, "new\nline\\x");
	assert_int_equal(e2b_watch_line_parse(S("c Gr\xc3\xbc\xc3\x9f\xff"), name, sizeof(name)),
			 E2B_EVENT_CREATE);
	assert_string_equal(name, "Gr\xc3\xbc\xc3\x9f?"); /* UTF-8 kept, the rest '?' */
	assert_int_equal(e2b_watch_line_parse(S("c a\\t"), name, sizeof(name)), -EINVAL);
	assert_int_equal(e2b_watch_line_parse(S("c a\\"), name, sizeof(name)), -EINVAL);
	assert_int_equal(e2b_watch_line_parse(S("x a"), name, sizeof(name)), -EINVAL);
	assert_int_equal(e2b_watch_line_parse(S("c "), name, sizeof(name)), -EINVAL);
	assert_int_equal(e2b_watch_line_parse(S("ca.txt"), name, sizeof(name)), -EINVAL);
	assert_int_equal(e2b_watch_line_parse(S("c a\0b"), name, sizeof(name)), -EINVAL);
	assert_int_equal(e2b_watch_line_parse(S("ready "), name, sizeof(name)), -EINVAL);
	assert_int_equal(e2b_watch_line_parse(S("c 12345"), name, 5), -EINVAL);
	assert_int_equal(e2b_watch_line_parse(S("c 1234"), name, 5), E2B_EVENT_CREATE);
}

static void test_watch_messages(void **state)
{
	struct bytebuf b = { 0 };
	const char *what;
	char j[256];

	(void)state;
	assert_string_equal(e2b_event_type_name(E2B_EVENT_CHMOD), "EVENT_TYPE_CHMOD");
	assert_null(e2b_event_type_name(0));
	assert_null(e2b_event_type_name(6));
	assert_null(e2b_watch_event(0, "a"));
	assert_int_equal(e2b_msg_frame(&b, 0, e2b_watch_msg_start()), 0);
	assert_int_equal(e2b_msg_frame(&b, 0,
				       e2b_watch_msg_event(
					       e2b_watch_event(E2B_EVENT_RENAME, "s/a"))),
			 0);
	assert_int_equal(e2b_msg_frame(&b, 0, e2b_watch_msg_keepalive()), 0);
	assert_int_equal(e2b_msg_frame(&b, 0, e2b_watch_msg_event(NULL)), -ENOMEM);
	assert_int_equal(e2b_msg_end_stream(&b, CONNECT_NOT_FOUND, "/x: no such"), 0);
	assert_int_equal(nth_frame(&b, 0, j, sizeof(j)), 0);
	assert_string_equal(j, "{\"start\":{}}");
	nth_frame(&b, 1, j, sizeof(j));
	assert_string_equal(j,
			    "{\"filesystem\":{\"name\":\"s/a\",\"type\":\"EVENT_TYPE_RENAME\"}}");
	nth_frame(&b, 2, j, sizeof(j));
	assert_string_equal(j, "{\"keepalive\":{}}");
	assert_int_equal(nth_frame(&b, 3, j, sizeof(j)), CONNECT_FLAG_END);
	assert_string_equal(j, "{\"error\":{\"code\":\"not_found\",\"message\":\"/x: no such\"}}");
	bytebuf_free(&b);

	/* how a watcher's end reads */
	assert_int_equal(e2b_watch_exit_code(E2B_WATCH_EXIT_MISSING, false, &what),
			 CONNECT_NOT_FOUND);
	assert_int_equal(e2b_watch_exit_code(E2B_WATCH_EXIT_NOT_DIR, false, &what),
			 CONNECT_INVALID_ARGUMENT);
	assert_int_equal(e2b_watch_exit_code(E2B_WATCH_EXIT_USAGE, false, &what),
			 CONNECT_UNIMPLEMENTED);
	assert_int_equal(e2b_watch_exit_code(E2B_WATCH_EXIT_OVERFLOW, true, &what),
			 CONNECT_INTERNAL);
	assert_string_equal(what, "the guest's event queue overflowed: events were lost");
	/* once ready, the codes of a start mean nothing more */
	assert_int_equal(e2b_watch_exit_code(E2B_WATCH_EXIT_MISSING, true, &what),
			 CONNECT_INTERNAL);
	assert_int_equal(e2b_watch_exit_code(-1, true, &what), CONNECT_INTERNAL);
	assert_string_equal(what, "the watcher was killed");
	assert_int_equal(e2b_watch_exit_code(127, false, &what), CONNECT_INTERNAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames),	    cmocka_unit_test(test_codes),
		cmocka_unit_test(test_events),	    cmocka_unit_test(test_create),
		cmocka_unit_test(test_timeout),	    cmocka_unit_test(test_host),
		cmocka_unit_test(test_user),	    cmocka_unit_test(test_start),
		cmocka_unit_test(test_proc_calls),  cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_encodings),   cmocka_unit_test(test_routes),
		cmocka_unit_test(test_chunked),	    cmocka_unit_test(test_fs),
		cmocka_unit_test(test_watch_req),   cmocka_unit_test(test_watch_lines),
		cmocka_unit_test(test_watch_line),  cmocka_unit_test(test_watch_messages),
		cmocka_unit_test(test_live_origin), cmocka_unit_test(test_stream_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
