/* tests/e2e/test_desktop_agent.c: the guest agent path on the real desktop
 * guest: guest-exec round trips through vmm-qemu/qga_client.c, Unicode text
 * typed with vitrine-type (DevTools insertText) arriving exactly in the
 * focused input, a missing focus reported as a failure, and the
 * page's state read back with vitrine-ready eval. Prints the timings. One
 * session serves the group, restored through the gateway from the shared
 * desktop template (tests/lib/e2e_template.h), which then opens
 * tests/e2e/pages/input.html, put in the guest with the files API; the
 * test talks to the guest's qemu-ga socket itself. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/e2e_template.h"
#include "tests/lib/gateway_proc.h"
#include "vmm-qemu/qga_client.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define EXEC_TIMEOUT_MS 30000

static struct gateway_proc gw;
static char tpl[64];
static struct qga_client *agent;

/* Calls path (under session s) with its control token; -1 unless 200. */
static int call_ok(const struct gateway_session *s, const char *method, const char *sub,
		   const char *body, size_t len)
{
	char path[256];
	struct http_resp r;
	bool ok;

	snprintf(path, sizeof(path), "/v1/sessions/%s/%s", s->id, sub);
	if (http_request("127.0.0.1", gw.port, method, path, s->control, body, len, 120, &r) < 0)
		return -1;
	if (!(ok = r.status == 200))
		fprintf(stderr, "%s %s: %d %s\n", method, path, r.status, r.body ? r.body : "");
	http_resp_free(&r);
	return ok ? 0 : -1;
}

/* A session restored from the shared template, with input.html put in the
 * guest and opened (POST .../open answers once it has loaded and painted);
 * then qemu-ga, which the gateway has no further use for. */
static int setup(void **state)
{
	static const char open[] = "{\"url\":\"file:///home/vitrine/input.html\"}";
	char body[160], path[PATH_MAX], err[512], *page = NULL;
	struct gateway_session s;
	size_t len = 0;
	int rc;

	(void)state;
	if (gateway_proc_start(&gw, NULL) < 0 || e2e_template_get(&gw, tpl, sizeof(tpl), NULL) < 0)
		return -1;
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	if (gateway_proc_create_session(&gw, body, 300, &s) < 0)
		return -1;
	rc = fs_read_file("tests/e2e/pages/input.html", 1 << 16, &page, &len);
	if (rc == 0 && (call_ok(&s, "PUT", "files?path=input.html", page, len) < 0 ||
			call_ok(&s, "POST", "open", open, strlen(open)) < 0))
		rc = -1;
	free(page);
	if (rc < 0 || gateway_proc_qga_socket(&gw, path, sizeof(path)) < 0)
		return -1;
	if (qga_client_connect(path, 5000, &agent, err, sizeof(err)) < 0) {
		fprintf(stderr, "qga: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	qga_client_destroy(agent);
	gateway_proc_delete_sessions(&gw); /* a template in use cannot go */
	e2e_template_release(&gw, tpl);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* Runs argv in the guest; fails the test unless the agent ran it. */
static void run(const char *const *argv, const char *const *env, struct qga_exec_result *r,
		int64_t *ms)
{
	int64_t t0 = fs_now_ms();
	char err[512];
	int rc = qga_client_exec(agent, argv, env, NULL, 0, EXEC_TIMEOUT_MS, r, err, sizeof(err));

	if (ms)
		*ms = fs_now_ms() - t0;
	if (rc < 0)
		fail_msg("guest-exec %s: %s", argv[0], err);
}

/* vitrine-ready eval: 0 with the JSON value in *value (caller decrefs), or
 * the exit status with stderr in why. */
static int eval(const char *expr, json_t **value, char *why, size_t whylen)
{
	const char *argv[] = { "/usr/local/bin/vitrine-ready", "eval", "9222", expr, NULL };
	struct qga_exec_result r;
	json_error_t jerr;
	int status;

	run(argv, NULL, &r, NULL);
	status = r.exit_code;
	snprintf(why, whylen, "%s", r.err);
	*value = NULL;
	if (status == 0) {
		*value = json_loads(r.out, JSON_DECODE_ANY, &jerr);
		if (!*value)
			fail_msg("eval printed no JSON: '%s' (%s)", r.out, jerr.text);
	}
	qga_exec_result_free(&r);
	return status;
}

/* Evaluates expr until it returns the string want, for up to 10 s; returns
 * the ms it took, or fails with the last value. */
static int64_t wait_string(const char *expr, const char *want)
{
	int64_t t0 = fs_now_ms();
	char last[512] = "", why[512];

	while (fs_now_ms() - t0 < 10000) {
		json_t *v;

		if (eval(expr, &v, why, sizeof(why)) != 0)
			fail_msg("eval %s: %s", expr, why);
		snprintf(last, sizeof(last), "%s",
			 json_is_string(v) ? json_string_value(v) : "(not a string)");
		json_decref(v);
		if (!strcmp(last, want))
			return fs_now_ms() - t0;
		usleep(50 * 1000);
	}
	fail_msg("%s is '%s', want '%s'", expr, last, want);
	return -1;
}

static void test_exec_round_trip(void **state)
{
	const char *argv[] = { "echo", "hi", NULL };
	int64_t ms[5];

	(void)state;
	for (int i = 0; i < 5; i++) {
		struct qga_exec_result r;

		run(argv, NULL, &r, &ms[i]);
		assert_true(r.exited);
		assert_int_equal(r.exit_code, 0);
		assert_int_equal(r.out_len, 3);
		assert_string_equal(r.out, "hi\n");
		assert_int_equal(r.err_len, 0);
		qga_exec_result_free(&r);
	}
	printf("guest-exec 'echo hi' round trip: %lld ms (first), then %lld, %lld, %lld, %lld ms\n",
	       (long long)ms[0], (long long)ms[1], (long long)ms[2], (long long)ms[3],
	       (long long)ms[4]);
	{
		json_t *ret = NULL;
		int64_t t0 = fs_now_ms();
		char err[512];

		assert_int_equal(qga_client_call(agent, "guest-ping", NULL, &ret, 5000, err,
						 sizeof(err)),
				 0);
		printf("guest-ping round trip: %lld ms\n", (long long)(fs_now_ms() - t0));
		json_decref(ret);
	}
}

static void test_type_unicode_into_input(void **state)
{
	const char *text = "Grüße, 世界 ✓ — test";
	const char *argv[] = { "/usr/local/bin/vitrine-type", text, NULL };
	struct qga_exec_result r;
	int64_t ms, settle;

	(void)state;
	/* The autofocused input has the focus, and the page the keyboard. */
	wait_string("document.activeElement.id + '|' + document.hasFocus()", "in|true");
	run(argv, NULL, &r, &ms);
	if (r.exit_code != 0)
		fail_msg("vitrine-type exited %d: %s", r.exit_code, r.err);
	qga_exec_result_free(&r);
	settle = wait_string("document.activeElement.value", text);
	printf("vitrine-type of '%s': %lld ms (exec round trip); value complete %lld ms later\n",
	       text, (long long)ms, (long long)settle);
}

static void test_type_twenty_characters(void **state)
{
	/* 20 characters: ASCII, Latin-1, CJK, a check mark and an em dash. */
	const char *text = "Hi wörld 世界 ✓ — 1234";
	const char *argv[] = { "/usr/local/bin/vitrine-type", text, NULL };
	struct qga_exec_result r;
	json_t *v;
	char why[512];
	int64_t ms, settle;

	(void)state;
	assert_int_equal(eval("document.getElementById('ta').focus(), document.activeElement.id",
			      &v, why, sizeof(why)),
			 0);
	assert_string_equal(json_string_value(v), "ta");
	json_decref(v);
	assert_int_equal(
		eval("[...document.getElementById('ta').value].length + [...'Hi wörld 世界 ✓ — 1234'].length",
		     &v, why, sizeof(why)),
		0);
	assert_int_equal(json_integer_value(v), 20);
	json_decref(v);
	run(argv, NULL, &r, &ms);
	if (r.exit_code != 0)
		fail_msg("vitrine-type exited %d: %s", r.exit_code, r.err);
	qga_exec_result_free(&r);
	settle = wait_string("document.getElementById('ta').value", text);
	printf("vitrine-type of 20 characters: %lld ms (exec round trip); value complete %lld ms later\n",
	       (long long)ms, (long long)settle);
}

static void test_type_reports_failure(void **state)
{
	const char *argv[] = { "/usr/local/bin/vitrine-type", "x", NULL };
	const char *usage[] = { "/usr/local/bin/vitrine-type", NULL };
	struct qga_exec_result r;
	json_t *v;
	char why[512];

	(void)state;
	/* Nothing editable has the focus: the failure is the exit status. */
	assert_int_equal(eval("document.activeElement.blur(), document.activeElement.tagName", &v,
			      why, sizeof(why)),
			 0);
	assert_string_equal(json_string_value(v), "BODY");
	json_decref(v);
	run(argv, NULL, &r, NULL);
	assert_true(r.exited);
	if (r.exit_code == 0 || !strstr(r.err, "no editable element"))
		fail_msg("vitrine-type without a focused field: exit %d, stderr '%s'", r.exit_code,
			 r.err);
	qga_exec_result_free(&r);
	run(usage, NULL, &r, NULL);
	assert_int_equal(r.exit_code, 2);
	assert_non_null(strstr(r.err, "usage"));
	qga_exec_result_free(&r);
}

static void test_eval_values_and_errors(void **state)
{
	char why[512];
	json_t *v;

	(void)state;
	assert_int_equal(eval("({a: [1, 'x', null], b: 1.5, c: '\"quoted\" \\\\ \\n'})", &v, why,
			      sizeof(why)),
			 0);
	{
		char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);

		assert_string_equal(
			s, "{\"a\":[1,\"x\",null],\"b\":1.5,\"c\":\"\\\"quoted\\\" \\\\ \\n\"}");
		free(s);
	}
	json_decref(v);
	/* A promise is awaited. */
	assert_int_equal(eval("new Promise(r => setTimeout(() => r(7), 50))", &v, why, sizeof(why)),
			 0);
	assert_int_equal(json_integer_value(v), 7);
	json_decref(v);
	/* undefined prints null. */
	assert_int_equal(eval("undefined", &v, why, sizeof(why)), 0);
	assert_true(json_is_null(v));
	json_decref(v);
	/* Exceptions, thrown or rejected, and syntax errors: exit 1, stderr. */
	assert_int_equal(eval("(() => { throw new Error('boom-42') })()", &v, why, sizeof(why)), 1);
	assert_null(v);
	if (!strstr(why, "boom-42"))
		fail_msg("stderr '%s' does not name the error", why);
	printf("eval of a throwing expression: exit 1, '%.*s'\n", (int)strcspn(why, "\n"), why);
	assert_int_equal(eval("Promise.reject(new TypeError('nope-7'))", &v, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "nope-7"));
	assert_int_equal(eval("1 +", &v, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "SyntaxError"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_round_trip),
		cmocka_unit_test(test_type_unicode_into_input),
		cmocka_unit_test(test_type_twenty_characters),
		cmocka_unit_test(test_type_reports_failure),
		cmocka_unit_test(test_eval_values_and_errors),
	};

	return cmocka_run_group_tests_name("desktop guest agent", tests, setup, teardown);
}
