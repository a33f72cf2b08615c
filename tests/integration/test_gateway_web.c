/* tests/integration/test_gateway_web.c: the web viewer's files under /web
 * (gateway/api/web.c) come with their security headers: nosniff, no
 * framing, no referrer, and a Content-Security-Policy that allows the
 * viewer's own scripts and styles and WebSockets to the same origin, and
 * nothing else. A `vitrine serve` of its own; no guest. */
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static struct gateway_proc gw;

static int setup(void **state)
{
	(void)state;
	return gateway_proc_start(&gw, NULL) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_stop(&gw);
	return 0;
}

static void expect_header(const struct http_resp *r, const char *path, const char *name,
			  const char *want)
{
	char buf[1024];
	const char *v = http_header(r, name, buf, sizeof(buf));

	if (!v || strcmp(v, want))
		fail_msg("GET %s: %s is '%s', want '%s'", path, name, v ? v : "(absent)", want);
}

static void expect_secured(const char *path, const char *type)
{
	struct http_resp r;
	char csp[1024], want[128], ctype[128];

	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, NULL, NULL, 0, 10, &r), 0);
	if (r.status != 200)
		fail_msg("GET %s: %d", path, r.status);
	assert_non_null(http_header(&r, "content-type", ctype, sizeof(ctype)));
	if (!strstr(ctype, type))
		fail_msg("GET %s: content-type '%s', want %s", path, ctype, type);
	expect_header(&r, path, "x-content-type-options", "nosniff");
	expect_header(&r, path, "x-frame-options", "DENY");
	expect_header(&r, path, "referrer-policy", "no-referrer");
	assert_non_null(http_header(&r, "content-security-policy", csp, sizeof(csp)));
	for (const char *const *part =
		     (const char *const[]){ "default-src 'none'", "script-src 'self'",
					    "style-src 'self'", "frame-ancestors 'none'",
					    "base-uri 'none'", "connect-src 'self'", NULL };
	     *part; part++)
		if (!strstr(csp, *part))
			fail_msg("GET %s: CSP '%s' lacks %s", path, csp, *part);
	/* the stream's WebSocket: ws:// (and wss://) to the same host and port */
	snprintf(want, sizeof(want), "ws://127.0.0.1:%d", gw.port);
	if (!strstr(csp, want))
		fail_msg("GET %s: CSP '%s' lacks %s", path, csp, want);
	/* no script from anywhere else, nothing inline or evaluated */
	if (strstr(csp, "unsafe-eval") || strstr(csp, "*"))
		fail_msg("GET %s: CSP '%s' too wide", path, csp);
	if (strstr(strstr(csp, "script-src"), ";") &&
	    strstr(csp, "script-src 'self' 'unsafe-inline'"))
		fail_msg("GET %s: CSP '%s' lets inline scripts run", path, csp);
	http_resp_free(&r);
}

static void test_web_headers(void **state)
{
	(void)state;
	expect_secured("/web/index.html", "text/html");
	expect_secured("/web/", "text/html");
	expect_secured("/web/app.js", "javascript");
	expect_secured("/web/stream.js", "javascript");
	expect_secured("/web/input.js", "javascript");
	expect_secured("/web/style.css", "text/css");
}

/* The API's own answers are JSON, not pages: they stay as they were. */
static void test_api_unchanged(void **state)
{
	struct http_resp r;
	char buf[256];

	(void)state;
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", "/v1/sessions", gw.key, NULL, 0,
				      10, &r),
			 0);
	assert_int_equal(r.status, 200);
	assert_null(http_header(&r, "content-security-policy", buf, sizeof(buf)));
	http_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_web_headers),
		cmocka_unit_test(test_api_unchanged),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
