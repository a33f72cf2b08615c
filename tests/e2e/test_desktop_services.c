/* tests/e2e/test_desktop_services.c: the desktop guest's services beyond
 * commands, through the gateway: the clipboard (set, read back, and pasted
 * into a page input with Ctrl+V, non-ASCII text), opening a URL in
 * Chromium, launching an installed application (xterm: its window
 * appears), and egress: a session without rules reaches nothing; with an
 * allowlist a test server on this host, reached by a name the operator
 * maps to 127.0.0.1, answers commands (plain HTTP and CONNECT) and
 * Chromium; other names, other ports, raw addresses and the gateway's own
 * port are refused; everything is in the session's connection log. One
 * desktop session, restored from the shared template
 * (tests/lib/e2e_template.h), serves the group. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/e2e_template.h"
#include "tests/lib/gateway_proc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static char tpl[64]; /* the shared desktop template */
static char base[128], ctl[64];
static int web_port, web_fd = -1;
static pthread_t web_thread;

#define WEB_BODY "<!doctype html><title>host</title><p id=t>hello from the host</p>"

/* The test server: every request gets WEB_BODY, then the connection closes. */
static void *web_serve(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(web_fd, NULL, NULL);
		char req[4096], resp[512];
		size_t n = 0;

		if (c < 0)
			return NULL;
		while (n < sizeof(req) - 1) {
			ssize_t r = recv(c, req + n, sizeof(req) - 1 - n, 0);

			if (r <= 0)
				break;
			n += (size_t)r;
			req[n] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		snprintf(resp, sizeof(resp),
			 "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s",
			 strlen(WEB_BODY), WEB_BODY);
		if (send(c, resp, strlen(resp), MSG_NOSIGNAL) < 0) {
			/* the client went: nothing to do */
		}
		close(c);
	}
}

static int start_web(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	web_fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(web_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(web_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(web_fd, 16) < 0 ||
	    getsockname(web_fd, (struct sockaddr *)&sa, &len) < 0)
		return -1;
	web_port = ntohs(sa.sin_port);
	return pthread_create(&web_thread, NULL, web_serve, NULL) ? -1 : 0;
}

static int setup(void **state)
{
	const char *args[] = { "--egress-map", "web.test=127.0.0.1", NULL };
	char body[160];
	struct gateway_session created;

	(void)state;
	if (start_web() < 0 || gateway_proc_start(&gw, args) < 0)
		return -1;
	if (e2e_template_get(&gw, tpl, sizeof(tpl), NULL) < 0)
		return -1;
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	if (gateway_proc_create_session(&gw, body, 300, &created) < 0)
		return -1;
	snprintf(base, sizeof(base), "/v1/sessions/%s", created.id);
	snprintf(ctl, sizeof(ctl), "%s", created.control);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	shutdown(web_fd, SHUT_RDWR);
	close(web_fd);
	pthread_join(web_thread, NULL);
	gateway_proc_delete_sessions(&gw); /* a template in use cannot go */
	e2e_template_release(&gw, tpl);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* method base+sub with body and token; fails unless the status is want. */
static json_t *call_as(const char *token, const char *method, const char *sub, const char *body,
		       int want)
{
	char url[512];
	struct http_resp r;
	json_t *j;

	snprintf(url, sizeof(url), "%s%s", base, sub);
	if (http_request("127.0.0.1", gw.port, method, url, token, body, body ? strlen(body) : 0,
			 120, &r) < 0 ||
	    r.status != want)
		fail_msg("%s %s %s -> %d %.400s (want %d)", method, url, body ? body : "", r.status,
			 r.body ? r.body : "", want);
	j = json_incref(r.json);
	http_resp_free(&r);
	return j;
}

/* The same with the control token, the agent's. */
static json_t *call(const char *method, const char *sub, const char *body, int want)
{
	return call_as(ctl, method, sub, body, want);
}

/* A shell command's stdout (exit code in *code). */
static char *sh(const char *cmd, int *code)
{
	json_t *body = json_pack("{s:s}", "cmd", cmd), *j;
	char *text = json_dumps(body, JSON_COMPACT), *out;

	j = call("POST", "/exec", text, 200);
	out = strdup(json_string_value(json_object_get(j, "stdout")) ?: "");
	if (code)
		*code = (int)json_integer_value(json_object_get(j, "exit_code"));
	json_decref(j);
	json_decref(body);
	free(text);
	return out;
}

/* The value of a JavaScript expression in the page Chromium shows (JSON). */
static char *page_eval(const char *expr)
{
	char cmd[1024];
	int code;
	char *out;

	snprintf(cmd, sizeof(cmd), "vitrine-ready eval 9222 \"%s\"", expr);
	out = sh(cmd, &code);
	assert_int_equal(code, 0);
	out[strcspn(out, "\n")] = '\0';
	return out;
}

static void test_clipboard_paste(void **state)
{
	static const char page[] = "<!doctype html><input id=i style='position:absolute;left:40px;"
				   "top:40px;width:600px;height:60px;font-size:30px'>";
	const char *text = "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac "
			   "\xf0\x9f\x98\x80";
	char url[512], *v, want[256] = "";
	struct http_resp r;
	json_t *j, *set;
	char *s;

	(void)state;
	snprintf(url, sizeof(url), "%s/files?path=paste.html", base);
	assert_int_equal(http_request("127.0.0.1", gw.port, "PUT", url, ctl, page, strlen(page), 60,
				      &r),
			 0);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	json_decref(call("POST", "/open", "{\"url\":\"file:///home/vitrine/paste.html\"}", 200));
	set = json_pack("{s:s}", "text", text);
	s = json_dumps(set, JSON_COMPACT);
	j = call("PUT", "/clipboard", s, 200);
	assert_true(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	j = call("GET", "/clipboard", NULL, 200);
	assert_string_equal(json_string_value(json_object_get(j, "text")), text);
	json_decref(j);
	/* Focus the input, Ctrl+V: the page's value is the text. */
	free(page_eval("document.getElementById('i').focus() || document.activeElement.id"));
	json_decref(call("POST", "/actions", "{\"action\":\"key\",\"text\":\"ctrl+v\"}", 200));
	/* vitrine-ready prints JSON (non-ASCII as \u escapes) */
	for (int i = 0; i < 50; i++) {
		json_t *val;

		v = page_eval("document.getElementById('i').value");
		val = json_loads(v, JSON_DECODE_ANY, NULL);
		snprintf(want, sizeof(want), "%s", json_string_value(val) ?: "");
		json_decref(val);
		free(v);
		if (!strcmp(want, text))
			break;
		usleep(100 * 1000);
	}
	assert_string_equal(want, text);
	free(s);
	json_decref(set);
	json_decref(call("PUT", "/clipboard", "{\"text\":5}", 400));
	json_decref(call("PUT", "/clipboard", "[]", 400));
}

static void test_open_and_launch(void **state)
{
	json_t *j;
	char *out;
	int code;

	(void)state;
	json_decref(call("POST", "/open", "{\"url\":\"data:text/html,x\"}", 400));
	json_decref(call("POST", "/open", "{\"url\":\"javascript:alert(1)\"}", 400));
	json_decref(call("POST", "/open", "{}", 400));
	j = call("POST", "/launch",
		 "{\"command\":\"xterm\",\"args\":[\"-title\",\"vitrine-launched\"]}", 200);
	assert_true(json_integer_value(json_object_get(j, "pid")) > 0);
	json_decref(j);
	out = sh("for i in $(seq 100); do xdotool search --name vitrine-launched && exit 0; "
		 "sleep 0.2; done; exit 1",
		 &code);
	assert_int_equal(code, 0);
	assert_true(strlen(out) > 0);
	free(out);
	free(sh("pkill -f vitrine-launched", NULL));
	json_decref(call("POST", "/launch", "{\"command\":\"no-such-app\"}", 404));
	json_decref(call("POST", "/launch", "{\"command\":\"\"}", 400));
	json_decref(call("POST", "/launch", "{\"command\":\"xterm\",\"args\":\"-e\"}", 400));
}

/* The log's entry for host:port (the last), or NULL. */
static json_t *log_entry(json_t *log, const char *host, int port)
{
	json_t *e, *found = NULL;
	size_t i;

	json_array_foreach(json_object_get(log, "entries"), i,
			   e) if (!strcmp(json_string_value(json_object_get(e, "host")) ?: "",
					  host) &&
				  json_integer_value(json_object_get(e, "port")) == port) found = e;
	return found;
}

static void test_egress(void **state)
{
	char cmd[512], body[256], *out, *v;
	json_t *j, *log, *e;
	int code;

	(void)state;
	/* No network device at all: only lo. */
	out = sh("ls /sys/class/net", &code);
	assert_string_equal(out, "lo\n");
	free(out);
	/* No rules: refused by the proxy (403), and direct connections have
	 * nowhere to go. */
	j = call("GET", "/egress", NULL, 200);
	assert_int_equal(json_array_size(json_object_get(j, "allow")), 0);
	json_decref(j);
	snprintf(cmd, sizeof(cmd), "curl -s -o /dev/null -w '%%{http_code}' http://web.test:%d/",
		 web_port);
	out = sh(cmd, &code);
	assert_string_equal(out, "403");
	free(out);
	snprintf(cmd, sizeof(cmd), "curl -s --noproxy '*' -m 5 http://10.0.2.2:%d/", web_port);
	free(sh(cmd, &code));
	assert_int_not_equal(code, 0);

	/* An allowlist: the mapped name on its port, through plain HTTP and a
	 * CONNECT tunnel. */
	snprintf(body, sizeof(body), "{\"allow\":[\"web.test:%d\",\"*.example.org\"]}", web_port);
	/* the agent's token cannot widen its own rules: the operator's can */
	json_decref(call("PUT", "/egress", body, 403));
	j = call_as(gw.key, "PUT", "/egress", body, 200);
	assert_int_equal(json_array_size(json_object_get(j, "allow")), 2);
	json_decref(j);
	snprintf(cmd, sizeof(cmd), "curl -s -m 20 http://web.test:%d/plain", web_port);
	out = sh(cmd, &code);
	assert_int_equal(code, 0);
	assert_string_equal(out, WEB_BODY);
	free(out);
	snprintf(cmd, sizeof(cmd), "curl -s -m 20 -p http://web.test:%d/tunnel", web_port);
	out = sh(cmd, &code);
	assert_int_equal(code, 0);
	assert_string_equal(out, WEB_BODY);
	free(out);
	/* Chromium goes the same way. */
	snprintf(body, sizeof(body), "{\"url\":\"http://web.test:%d/page\"}", web_port);
	json_decref(call("POST", "/open", body, 200));
	v = page_eval("document.getElementById('t').textContent");
	assert_string_equal(v, "\"hello from the host\"");
	free(v);

	/* Refused: another port of the name, a raw address, the gateway's
	 * own port even when all ports of the name are allowed. */
	snprintf(cmd, sizeof(cmd), "curl -s -o /dev/null -w '%%{http_code}' http://web.test:%d/",
		 gw.port);
	out = sh(cmd, NULL);
	assert_string_equal(out, "403");
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "curl -s -o /dev/null -w '%%{http_code}' --noproxy '' "
		 "-x http://127.0.0.1:3128 http://127.0.0.1:%d/",
		 web_port);
	out = sh(cmd, NULL);
	assert_string_equal(out, "403");
	free(out);
	json_decref(call_as(gw.key, "PUT", "/egress", "{\"allow\":[\"web.test:*\"]}", 200));
	snprintf(cmd, sizeof(cmd),
		 "curl -s -o /dev/null -w '%%{http_code}' http://web.test:%d/healthz", gw.port);
	out = sh(cmd, NULL);
	assert_string_equal(out, "403");
	free(out);
	json_decref(call_as(gw.key, "PUT", "/egress", "{\"allow\":[\"bad host\"]}", 400));
	json_decref(call_as(gw.key, "PUT", "/egress", "{\"allow\":[]}", 200));
	snprintf(cmd, sizeof(cmd), "curl -s -o /dev/null -w '%%{http_code}' http://web.test:%d/",
		 web_port);
	out = sh(cmd, NULL);
	assert_string_equal(out, "403");
	free(out);

	/* The log: each connection with its verdict, reason and bytes. */
	usleep(300 * 1000); /* the last connection's end is logged as it closes */
	log = call("GET", "/egress/log?limit=1000", NULL, 200);
	e = log_entry(log, "web.test", web_port);
	assert_non_null(e);
	assert_string_equal(json_string_value(json_object_get(e, "verdict")), "denied");
	assert_string_equal(json_string_value(json_object_get(e, "reason")), "no_network");
	{
		size_t i;
		json_t *x;
		int allowed = 0, gwport = 0, raw = 0;

		json_array_foreach(json_object_get(log, "entries"), i, x)
		{
			const char *h = json_string_value(json_object_get(x, "host"));
			const char *why = json_string_value(json_object_get(x, "reason"));
			int p = (int)json_integer_value(json_object_get(x, "port"));

			if (!strcmp(h, "web.test") && p == web_port && !strcmp(why, "allowed") &&
			    json_is_true(json_object_get(x, "ended")) &&
			    json_integer_value(json_object_get(x, "bytes_down")) >=
				    (json_int_t)strlen(WEB_BODY)) {
				allowed++;
				assert_string_equal(json_string_value(
							    json_object_get(x, "address")),
						    "127.0.0.1");
			}
			gwport += !strcmp(h, "web.test") && p == gw.port &&
				  !strcmp(why, "gateway_port");
			raw += !strcmp(h, "127.0.0.1") && p == web_port &&
			       !strcmp(why, "not_in_allowlist");
		}
		assert_true(allowed >= 3); /* plain, tunnel, Chromium */
		assert_int_equal(gwport, 1);
		assert_int_equal(raw, 1);
	}
	json_decref(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clipboard_paste),
		cmocka_unit_test(test_open_and_launch),
		cmocka_unit_test(test_egress),
	};

	return cmocka_run_group_tests_name("desktop services", tests, setup, teardown);
}
