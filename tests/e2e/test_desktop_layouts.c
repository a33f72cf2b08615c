/* tests/e2e/test_desktop_layouts.c: keyboard layouts on the real desktop
 * guest. The e2e tests' shared template (US, as the image boots;
 * tests/lib/e2e_template.h) is restored twice with
 * keyboard_layout given at create, German and French: GET shows the layout,
 * key actions name keysyms (z types z on QWERTZ, from the key where US has
 * y; "at" types @ with AltGr; a/q on AZERTY), and `type` of each layout's
 * own characters arrives exactly, by its keys or, for what needs a dead
 * key, through the agent. Page state is read over the guest agent, as in
 * test_desktop_actions.c. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/e2e_template.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/page_eval.h"
#include "vmm-qemu/run_dir.h"

#include <dirent.h>
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
static char tpl[64];
/* The session under test. */
static struct gateway_session sess;
static char qga_path[512];

static json_t *eval(const char *expr)
{
	char err[1024];
	json_t *j = page_eval(qga_path, expr, err, sizeof(err));

	if (!j)
		fail_msg("%s", err);
	return j;
}

/* Polls expr until its JSON text is want (10 s at most: an action's answer
 * comes once its events are sent, the guest may still be at them). */
static void expect_eval(const char *expr, const char *want)
{
	char *got = NULL;

	for (int i = 0; i < 100; i++) {
		json_t *v = eval(expr);

		free(got);
		got = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		json_decref(v);
		if (got && !strcmp(got, want))
			break;
		usleep(100 * 1000);
	}
	if (!got || strcmp(got, want))
		fail_msg("%s is %s, want %s", expr, got ? got : "?", want);
	free(got);
}

/* Empties the field and the log and focuses the field; the page is put in
 * place first when the template's page is another one (a reused template). */
static void reset(void)
{
	expect_eval(
		"(window.kbdReset || (document.body.innerHTML = '<input id=in>', window.kbdKeys = [], "
		"document.getElementById('in').addEventListener('keydown', e => "
		"window.kbdKeys.push({key: e.key, code: e.code})), window.kbdReset = () => { "
		"const i = document.getElementById('in'); i.value = ''; window.kbdKeys = []; "
		"i.focus(); return document.activeElement === i; }))()",
		"true");
}

/* POSTs one action (JSON text) to the session; 200 or the test fails. */
static void act(const char *body)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", sess.id);
	if (http_request("127.0.0.1", gw.port, "POST", path, sess.control, body, strlen(body), 120,
			 &r) < 0)
		fail_msg("POST %s: no answer", body);
	if (r.status != 200)
		fail_msg("POST %s: %d %s", body, r.status, r.body ? r.body : "");
	http_resp_free(&r);
}

static void type(const char *text)
{
	json_t *j = json_pack("{s:s, s:s}", "action", "type", "text", text);
	char *body = json_dumps(j, JSON_COMPACT);

	act(body);
	free(body);
	json_decref(j);
}

/* The value the field must hold, as JSON text. */
static void expect_field(const char *utf8)
{
	json_t *s = json_string(utf8);
	char *want = json_dumps(s, JSON_ENCODE_ANY | JSON_COMPACT);

	expect_eval("document.getElementById('in').value", want);
	free(want);
	json_decref(s);
}

/* Restores the template as a session with keyboard_layout layout and
 * finds its guest's qemu-ga socket (the run dir labelled with its id). */
static void start(const char *layout)
{
	char body[256], path[128];
	struct http_resp r;
	DIR *d;
	struct dirent *e;

	snprintf(body, sizeof(body), "{\"template\":\"%s\",\"keyboard_layout\":\"%s\"}", tpl,
		 layout);
	if (gateway_proc_create_session(&gw, body, 600, &sess) < 0)
		fail_msg("create %s", body);
	snprintf(path, sizeof(path), "/v1/sessions/%s", sess.id);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, gw.key, NULL, 0, 30, &r),
			 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(json_object_get(r.json, "keyboard_layout")), layout);
	http_resp_free(&r);
	qga_path[0] = '\0';
	d = opendir(gw.run_base);
	while (d && (e = readdir(d))) {
		char dir[PATH_MAX], label_path[PATH_MAX + 8], *label = NULL;

		if (strncmp(e->d_name, "vm-", 3))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", gw.run_base, e->d_name);
		snprintf(label_path, sizeof(label_path), "%s/label", dir);
		if (fs_read_file(label_path, 256, &label, NULL) == 0 &&
		    !strncmp(label, sess.id, strlen(sess.id)))
			vmm_run_dir_socket(dir, VMM_SOCKET_QGA, qga_path, sizeof(qga_path));
		free(label);
	}
	if (d)
		closedir(d);
	if (!qga_path[0])
		fail_msg("no run dir labelled %s in %s", sess.id, gw.run_base);
}

static void stop(void)
{
	gateway_proc_delete_sessions(&gw);
	memset(&sess, 0, sizeof(sess));
}

static void test_german(void **state)
{
	(void)state;
	start("de");
	reset();
	/* z is where US has y; the page sees the key a German keyboard has there. */
	act("{\"action\":\"key\",\"text\":\"z\"}");
	expect_field("z");
	expect_eval("window.kbdKeys[0]", "{\"key\":\"z\",\"code\":\"KeyY\"}");
	act("{\"action\":\"key\",\"text\":\"y\"}");
	act("{\"action\":\"key\",\"text\":\"at\"}");
	act("{\"type\":\"keypress\",\"keys\":[\"EuroSign\"]}");
	act("{\"action\":\"key\",\"text\":\"shift+adiaeresis\"}");
	expect_field("zy@\xe2\x82\xac\xc3\x84");
	expect_eval("window.kbdKeys[1].code", "\"KeyZ\"");
	/* type: by keys (all of these are keys of the layout) ... */
	reset();
	type("\xc3\xa4\xc3\xb6\xc3\xbc\xc3\x9f@\xe2\x82\xac Zyx");
	expect_field("\xc3\xa4\xc3\xb6\xc3\xbc\xc3\x9f@\xe2\x82\xac Zyx");
	expect_eval("window.kbdKeys[0]", "{\"key\":\"\xc3\xa4\",\"code\":\"Quote\"}");
	/* ... and, with a character only a dead key makes, through the agent. */
	reset();
	type("^1 \xc3\xa2");
	expect_field("^1 \xc3\xa2");
	stop();
}

static void test_french(void **state)
{
	(void)state;
	start("fr");
	reset();
	act("{\"action\":\"key\",\"text\":\"a\"}");
	expect_field("a");
	expect_eval("window.kbdKeys[0]", "{\"key\":\"a\",\"code\":\"KeyQ\"}");
	act("{\"action\":\"key\",\"text\":\"q\"}");
	act("{\"action\":\"key\",\"text\":\"eacute\"}");
	act("{\"action\":\"key\",\"text\":\"exclam\"}");
	act("{\"action\":\"key\",\"text\":\"@\"}");
	expect_field("aq\xc3\xa9!@");
	expect_eval("window.kbdKeys[1].code", "\"KeyA\"");
	reset();
	type("\xc3\xa9\xc3\xa8\xc3\xa0\xc3\xa7\xc3\xb9 Azerty 1@\xe2\x82\xac");
	expect_field("\xc3\xa9\xc3\xa8\xc3\xa0\xc3\xa7\xc3\xb9 Azerty 1@\xe2\x82\xac");
	expect_eval("window.kbdKeys[0]", "{\"key\":\"\xc3\xa9\",\"code\":\"Digit2\"}");
	stop();
}

/* A layout xkb does not have is refused before anything starts. */
static void test_bad_layout(void **state)
{
	char body[256];
	struct http_resp r;

	(void)state;
	snprintf(body, sizeof(body), "{\"template\":\"%s\",\"keyboard_layout\":\"xx(yy)\"}", tpl);
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", "/v1/sessions", gw.key, body,
				      strlen(body), 30, &r),
			 0);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body, "keyboard_layout"));
	http_resp_free(&r);
}

static int teardown_each(void **state)
{
	(void)state;
	return gateway_proc_delete_sessions(&gw);
}

static int setup(void **state)
{
	(void)state;
	return gateway_proc_start(&gw, NULL) == 0 &&
			       e2e_template_get(&gw, tpl, sizeof(tpl), NULL) == 0
		       ? 0
		       : -1;
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw); /* a template in use cannot go */
	e2e_template_release(&gw, tpl);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_layout),
		cmocka_unit_test_teardown(test_german, teardown_each),
		cmocka_unit_test_teardown(test_french, teardown_each),
	};

	return cmocka_run_group_tests_name("desktop keyboard layouts", tests, setup, teardown);
}
