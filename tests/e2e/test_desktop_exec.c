/* tests/e2e/test_desktop_exec.c: POST /v1/sessions/{id}/exec on the desktop
 * guest: exit codes, stdout and stderr apart, every byte value through
 * base64, 1 MiB of output, a timeout that kills the command, the
 * unprivileged user by default and root on request, cwd, env, stdin, argv
 * without a shell, the runtimes the image carries (node, npm, a venv with
 * pip, git, cc), and the refusals; files uploaded and downloaded with
 * every byte value, directories listed, paths outside the user's home and
 * /tmp and bodies over 1 MiB refused; a guest's ports: python3's
 * http.server and a WebSocket echo server started in the guest answer by
 * path and by host name, and a wrong token is refused. One desktop session,
 * restored from the shared template (tests/lib/e2e_template.h), serves the
 * group. */
#include "common/base64.h"
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/e2e_template.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/net.h"
#include "tests/lib/ws_client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static char tpl[64]; /* the shared desktop template */
static char path_exec[128], ctl[64], view[64];

static int setup(void **state)
{
	/* uploads stop at 1 MiB here, so test_files sees its 413 */
	static const char *const args[] = { "--files-max-bytes", "1048576", "--public-domain",
					    "ports.test", NULL };
	char body[160];
	struct gateway_session created;

	(void)state;
	if (gateway_proc_start(&gw, args) < 0)
		return -1;
	if (e2e_template_get(&gw, tpl, sizeof(tpl), NULL) < 0)
		return -1;
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	if (gateway_proc_create_session(&gw, body, 300, &created) < 0)
		return -1;
	snprintf(path_exec, sizeof(path_exec), "/v1/sessions/%s/exec", created.id);
	snprintf(ctl, sizeof(ctl), "%s", created.control);
	snprintf(view, sizeof(view), "%s", created.view);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw); /* a template in use cannot go */
	e2e_template_release(&gw, tpl);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* Runs body; fails unless the answer has status want. */
static json_t *run_as(const char *token, const char *body, int want)
{
	struct http_resp r;
	json_t *j;

	if (http_request("127.0.0.1", gw.port, "POST", path_exec, token, body, strlen(body), 120,
			 &r) < 0 ||
	    r.status != want)
		fail_msg("exec %s -> %d %.300s (want %d)", body, r.status, r.body ? r.body : "",
			 want);
	j = json_incref(r.json);
	http_resp_free(&r);
	return j;
}

static json_t *run(const char *body)
{
	return run_as(ctl, body, 200);
}

static const char *str(json_t *j, const char *k)
{
	const char *s = json_string_value(json_object_get(j, k));

	return s ? s : "";
}

static void test_exit_codes_and_streams(void **state)
{
	json_t *j;

	(void)state;
	j = run("{\"cmd\":\"echo out; echo err >&2; exit 3\"}");
	assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 3);
	assert_string_equal(str(j, "stdout"), "out\n");
	assert_string_equal(str(j, "stderr"), "err\n");
	assert_false(json_is_true(json_object_get(j, "timed_out")));
	json_decref(j);
	j = run("{\"cmd\":\"true\"}");
	assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 0);
	json_decref(j);
	/* A program (no shell), with arguments that keep their spaces. */
	j = run("{\"cmd\":\"/bin/echo\",\"args\":[\"a  b\",\"$HOME\"]}");
	assert_string_equal(str(j, "stdout"), "a  b $HOME\n");
	json_decref(j);
}

static void test_binary_output_and_size(void **state)
{
	unsigned char raw[512];
	size_t n;
	json_t *j;

	(void)state;
	/* Every byte value, twice over: comes back base64. */
	j = run("{\"cmd\":\"i=0; while [ $i -lt 256 ]; do printf \\\"\\\\\\\\$(printf %o $i)\\\"; "
		"i=$((i+1)); done; i=0; while [ $i -lt 256 ]; do printf \\\"\\\\\\\\$(printf %o $i)\\\"; "
		"i=$((i+1)); done\"}");
	assert_string_equal(str(j, "stdout_encoding"), "base64");
	assert_int_equal(base64_decode(str(j, "stdout"), strlen(str(j, "stdout")), raw, sizeof(raw),
				       &n),
			 0);
	assert_int_equal(n, 512);
	for (int i = 0; i < 512; i++)
		assert_int_equal(raw[i], i % 256);
	json_decref(j);
	/* 1 MiB of output. */
	j = run("{\"cmd\":\"head -c 1048576 /dev/zero | tr '\\\\0' a\"}");
	assert_int_equal(strlen(str(j, "stdout")), 1048576);
	assert_false(json_is_true(json_object_get(j, "truncated")));
	json_decref(j);
}

static void test_timeout_kills(void **state)
{
	int64_t t0 = fs_now_ms();
	json_t *j = run("{\"cmd\":\"sleep 300\",\"timeout\":2}");

	(void)state;
	assert_true(json_is_true(json_object_get(j, "timed_out")));
	assert_true(json_is_null(json_object_get(j, "exit_code")));
	assert_true(fs_now_ms() - t0 >= 2000);
	json_decref(j);
	j = run("{\"cmd\":\"pgrep -x sleep || echo none\"}");
	assert_string_equal(str(j, "stdout"), "none\n");
	json_decref(j);
}

static void test_user_cwd_env_stdin(void **state)
{
	json_t *j;

	(void)state;
	j = run("{\"cmd\":\"id -u; pwd\"}");
	assert_string_equal(str(j, "stdout"), "1000\n/home/vitrine\n");
	json_decref(j);
	/* root needs the "root" scope: the agent's control token lacks it */
	json_decref(run_as(ctl, "{\"cmd\":\"id -u\",\"user\":\"root\"}", 403));
	j = run_as(gw.key, "{\"cmd\":\"id -u; pwd\",\"user\":\"root\",\"cwd\":\"/tmp\"}", 200);
	assert_string_equal(str(j, "stdout"), "0\n/tmp\n");
	json_decref(j);
	j = run("{\"cmd\":\"echo \\\"$GREETING\\\"; cat\",\"env\":{\"GREETING\":\"Grüße ✓\"},"
		"\"stdin\":\"from stdin\"}");
	assert_string_equal(str(j, "stdout"), "Grüße ✓\nfrom stdin");
	json_decref(j);
	/* Files persist across commands. */
	json_decref(run("{\"cmd\":\"echo kept > note.txt\"}"));
	j = run("{\"cmd\":\"cat /home/vitrine/note.txt\"}");
	assert_string_equal(str(j, "stdout"), "kept\n");
	json_decref(j);
}

/* The runtimes the desktop image carries for coding agents (issue 16):
 * Node.js and npm, a Python venv with pip, git and a C compiler, all
 * offline. */
static void test_runtimes(void **state)
{
	json_t *j;

	(void)state;
	j = run("{\"cmd\":\"node -e 'console.log(6 * 7)' && npm --version >/dev/null && echo npm\"}");
	assert_string_equal(str(j, "stdout"), "42\nnpm\n");
	json_decref(j);
	j = run("{\"cmd\":\"python3 -m venv /tmp/venv && . /tmp/venv/bin/activate && "
		"python -c 'import sys; print(sys.prefix)' && pip --version | cut -d' ' -f1\","
		"\"timeout\":150}");
	assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 0);
	assert_string_equal(str(j, "stdout"), "/tmp/venv\npip\n");
	json_decref(j);
	j = run("{\"cmd\":\"cd /tmp && git init -q repo && cd repo && echo x > f && git add f && "
		"git -c user.name=t -c user.email=t@t commit -qm one && git log --format=%s\"}");
	assert_string_equal(str(j, "stdout"), "one\n");
	json_decref(j);
	j = run("{\"cmd\":\"printf 'int main(void){return 7;}' > /tmp/t.c && cc -o /tmp/t /tmp/t.c "
		"&& /tmp/t; echo $?\",\"timeout\":120}");
	assert_string_equal(str(j, "stdout"), "7\n");
	json_decref(j);
}

static void test_refusals_and_round_trip(void **state)
{
	int64_t ms[7];
	json_t *j;

	(void)state;
	json_decref(run_as(ctl, "{\"cmd\":\"\"}", 400));
	json_decref(run_as(ctl, "{\"cmd\":\"x\",\"user\":\"admin\"}", 400));
	json_decref(run_as(ctl, "{\"cmd\":\"x\",\"timeout\":0}", 400));
	json_decref(run_as(ctl, "{\"cmd\":\"x\",\"cwd\":\"relative\"}", 400));
	json_decref(run_as(ctl, "{\"cmd\":\"x\",\"args\":[1]}", 400));
	json_decref(run_as(ctl, "{\"cmd\":\"x\",\"shell\":true}", 400));
	json_decref(run_as(ctl, "[]", 400));
	json_decref(run_as(view, "{\"cmd\":\"true\"}", 403));
	json_decref(run_as("", "{\"cmd\":\"true\"}", 401));
	for (int i = 0; i < 7; i++) {
		int64_t t0 = fs_now_ms();

		j = run("{\"cmd\":\"true\",\"args\":[]}");
		ms[i] = fs_now_ms() - t0;
		json_decref(j);
	}
	print_message("exec `true` round trips (ms): %lld %lld %lld %lld %lld %lld %lld\n",
		      (long long)ms[0], (long long)ms[1], (long long)ms[2], (long long)ms[3],
		      (long long)ms[4], (long long)ms[5], (long long)ms[6]);
}

static struct http_resp files(const char *method, const char *path, const void *body, size_t len,
			      int want)
{
	char url[1400];
	struct http_resp r;

	snprintf(url, sizeof(url), "%.*sfiles?path=%s", (int)(strlen(path_exec) - 4), path_exec,
		 path);
	if (http_request("127.0.0.1", gw.port, method, url, ctl, body, len, 120, &r) < 0 ||
	    r.status != want)
		fail_msg("%s %s -> %d %.300s (want %d)", method, url, r.status,
			 r.body ? r.body : "", want);
	return r;
}

static void test_files(void **state)
{
	static unsigned char data[1024], big[(1 << 20) + 16];
	struct http_resp r;
	bool listed = false;
	json_t *e, *j;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i % 256);
	r = files("PUT", "up/every-byte.bin", data, sizeof(data), 200);
	assert_string_equal(json_string_value(json_object_get(r.json, "path")),
			    "/home/vitrine/up/every-byte.bin");
	http_resp_free(&r);
	r = files("GET", "/home/vitrine/up/every-byte.bin", NULL, 0, 200);
	assert_int_equal(r.body_len, sizeof(data));
	assert_memory_equal(r.body, data, sizeof(data));
	http_resp_free(&r);
	/* A command sees it, owned by the desktop's user. */
	j = run("{\"cmd\":\"stat -c '%u %s' up/every-byte.bin\"}");
	assert_string_equal(str(j, "stdout"), "1000 1024\n");
	json_decref(j);
	r = files("GET", "up", NULL, 0, 200);
	json_array_foreach(json_object_get(r.json, "entries"), i, e)
		listed |= !strcmp(json_string_value(json_object_get(e, "name")),
				  "every-byte.bin") &&
			  json_integer_value(json_object_get(e, "size")) == 1024 &&
			  !strcmp(json_string_value(json_object_get(e, "type")), "file");
	assert_true(listed);
	http_resp_free(&r);
	r = files("GET", "no-such-file", NULL, 0, 404);
	http_resp_free(&r);
	r = files("GET", "../../etc/passwd", NULL, 0, 400);
	http_resp_free(&r);
	r = files("PUT", "/etc/evil", data, 10, 400);
	http_resp_free(&r);
	r = files("PUT", "big.bin", big, sizeof(big), 413);
	http_resp_free(&r);
}

static void echo_round(int fd, const char *text)
{
	static unsigned char big[200 * 1000];
	struct ws_msg m;

	assert_int_equal(ws_send_text(fd, text), 0);
	assert_int_equal(ws_recv_message(fd, 120000, &m), 0);
	assert_int_equal(m.opcode, WS_TEXT);
	assert_string_equal((char *)m.data, text);
	ws_msg_free(&m);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7 + i / 251);
	assert_int_equal(ws_send(fd, WS_BINARY, big, sizeof(big)), 0);
	assert_int_equal(ws_recv_message(fd, 120000, &m), 0);
	assert_int_equal(m.opcode, WS_BINARY);
	assert_int_equal(m.len, sizeof(big));
	assert_memory_equal(m.data, big, sizeof(big));
	ws_msg_free(&m);
}

/* A web server and a WebSocket echo server started in the guest (python3
 * -m http.server, a stdlib echo server) answer through both port routes
 * (/v1/sessions/{id}/ports/{port}/... and {port}-{id}.ports.test) with
 * the session's token; a wrong token is refused on both. */
static void test_guest_ports(void **state)
{
	static const char echo_py[] =
		"import base64, hashlib, socketserver, struct\n"
		"class H(socketserver.StreamRequestHandler):\n"
		"    def handle(self):\n"
		"        head = b''\n"
		"        while not head.endswith(b'\\r\\n\\r\\n'):\n"
		"            c = self.rfile.read(1)\n"
		"            if not c: return\n"
		"            head += c\n"
		"        key = [l.split(b':', 1)[1].strip() for l in head.split(b'\\r\\n')\n"
		"               if l.lower().startswith(b'sec-websocket-key:')][0]\n"
		"        acc = base64.b64encode(hashlib.sha1(key + "
		"b'258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest())\n"
		"        self.wfile.write(b'HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket"
		"\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: ' + acc + b'\\r\\n\\r\\n')\n"
		"        while True:\n"
		"            h = self.rfile.read(2)\n"
		"            if len(h) < 2: return\n"
		"            n = h[1] & 127\n"
		"            if n == 126: n = struct.unpack('>H', self.rfile.read(2))[0]\n"
		"            elif n == 127: n = struct.unpack('>Q', self.rfile.read(8))[0]\n"
		"            mask = self.rfile.read(4)\n"
		"            p = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))\n"
		"            b0 = h[0] if h[0] & 15 != 9 else 0x8a\n"
		"            if n < 126: l = bytes([n])\n"
		"            elif n < 65536: l = bytes([126]) + struct.pack('>H', n)\n"
		"            else: l = bytes([127]) + struct.pack('>Q', n)\n"
		"            self.wfile.write(bytes([b0]) + l + p)\n"
		"            if h[0] & 15 == 8: return\n"
		"socketserver.ThreadingTCPServer.allow_reuse_address = True\n"
		"socketserver.ThreadingTCPServer(('127.0.0.1', 8765), H).serve_forever()\n";
	char id[64], base[160], path[256], host[128], extra[256], *cmd, *body = NULL;
	struct http_resp r;
	json_t *j;
	int fd, st, status = -1;

	(void)state;
	snprintf(id, sizeof(id), "%.*s", (int)(strrchr(path_exec, '/') - path_exec - 13),
		 path_exec + 13);
	snprintf(base, sizeof(base), "/v1/sessions/%s/ports", id);
	/* the servers, in the background of a command that ends */
	assert_non_null(cmd = malloc(4096));
	snprintf(cmd, 4096,
		 "mkdir -p /tmp/www && echo hello-desktop > /tmp/www/index.html && "
		 "cat > /tmp/wsecho.py && cd /tmp/www && "
		 "(setsid python3 -m http.server 8000 --bind 127.0.0.1 "
		 "</dev/null >/dev/null 2>&1 &) && "
		 "(setsid python3 /tmp/wsecho.py </dev/null >/tmp/wsecho.log 2>&1 &)");
	j = json_pack("{s:s, s:s}", "cmd", cmd, "stdin", echo_py);
	free(cmd);
	cmd = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	json_decref(run(cmd));
	free(cmd);
	/* python starts slowly under TCG: until the page answers (a bound,
	 * not a measure) */
	snprintf(path, sizeof(path), "%s/8000/index.html", base);
	for (int i = 0; i < 120 && status != 200; i++) {
		assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, ctl, NULL, 0, 60,
					      &r),
				 0);
		status = r.status;
		if (status == 200)
			assert_string_equal(r.body, "hello-desktop\n");
		else
			usleep(500 * 1000);
		http_resp_free(&r);
	}
	assert_int_equal(status, 200);
	/* by host name */
	snprintf(host, sizeof(host), "8000-%s.ports.test", id);
	assert_int_equal(net_get_host(gw.port, host, "/index.html", ctl, &body), 200);
	assert_string_equal(body, "hello-desktop\n");
	free(body);
	/* a wrong token, on both routes */
	assert_int_equal(net_get_host(gw.port, host, "/index.html", "wrong", &body), 401);
	free(body);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, "wrong", NULL, 0, 60, &r),
			 0);
	assert_int_equal(r.status, 401);
	http_resp_free(&r);

	/* the WebSocket echo server: by path, until it listens */
	snprintf(path, sizeof(path), "%s/8765/echo", base);
	for (int i = 0; i < 120; i++) {
		struct ws_msg m;

		assert_true((fd = ws_connect(gw.port, path, ctl, NULL, &st)) >= 0);
		if (ws_send_text(fd, "probe") == 0 && ws_recv_message(fd, 120000, &m) == 0) {
			int op = m.opcode;

			ws_msg_free(&m);
			if (op == WS_TEXT)
				break;
		}
		close(fd); /* nothing listens yet: closed with 1011 */
		fd = -1;
		usleep(500 * 1000);
	}
	assert_true(fd >= 0);
	echo_round(fd, "by path");
	close(fd);
	/* by host name */
	snprintf(extra, sizeof(extra), "Authorization: Bearer %s\r\n", ctl);
	snprintf(host, sizeof(host), "8765-%s.ports.test", id);
	assert_true((fd = ws_connect_with(gw.port, host, "/echo", extra, &st)) >= 0);
	echo_round(fd, "by host name");
	close(fd);
	/* a wrong token, on both routes; a view token */
	assert_int_equal(ws_connect(gw.port, path, "wrong", NULL, &st), -1);
	assert_int_equal(st, 401);
	assert_int_equal(ws_connect(gw.port, path, view, NULL, &st), -1);
	assert_int_equal(st, 403);
	assert_int_equal(ws_connect_with(gw.port, host, "/echo", "Authorization: Bearer nope\r\n",
					 &st),
			 -1);
	assert_int_equal(st, 401);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_codes_and_streams),
		cmocka_unit_test(test_binary_output_and_size),
		cmocka_unit_test(test_timeout_kills),
		cmocka_unit_test(test_user_cwd_env_stdin),
		cmocka_unit_test(test_runtimes),
		cmocka_unit_test(test_refusals_and_round_trip),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_guest_ports),
	};

	return cmocka_run_group_tests_name("desktop exec", tests, setup, teardown);
}
