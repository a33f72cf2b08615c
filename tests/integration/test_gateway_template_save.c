/* tests/integration/test_gateway_template_save.c: templates from running
 * sessions (POST /v1/templates {"name", "from_session"}, `vitrine template
 * save`), with the tiny guest given a small disk (an image of this test's
 * own, in a VITRINE_HOME of its own: the tiny image has none, and chains
 * are chains of disks): the answer's shape and the errors; the session
 * runs on, busy "saving" for the moment its state is written, and its
 * events say so; sessions restore from the new template; a template from a
 * session restored from it is a chain (parent, backing, depth); past the
 * gateway's --template-chain-max 2 the disk is flattened onto the rootfs;
 * a template in use by a session or by another template is not deleted
 * (409 naming who). */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/test_home.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static char home[128], tpl[48];

static int setup(void **state)
{
	static const char *const args[] = { "--template-chain-max", "2", NULL };

	(void)state;
	snprintf(tpl, sizeof(tpl), "tsave-%d", (int)getpid());
	if (test_home_make(home, sizeof(home), "tplsave", true) != 0)
		return -1;
	setenv("VITRINE_HOME", home, 1);
	return gateway_proc_start(&gw, args);
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	gateway_proc_stop(&gw);
	fs_rm_rf(home); /* its templates too */
	return 0;
}

static struct http_resp req(const char *method, const char *path, const char *body, int status,
			    const char *code)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, gw.key, body,
			      body ? strlen(body) : 0, 60, &r);

	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("%s %s -> %d %.400s (want %d %s)", method, path, r.status,
			 r.body ? r.body : "", status, code ? code : "");
	return r;
}

static const char *str(const struct http_resp *r, const char *key)
{
	const char *v = json_string_value(json_object_get(r->json, key));

	return v ? v : "";
}

static json_int_t num(const struct http_resp *r, const char *key)
{
	return json_integer_value(json_object_get(r->json, key));
}

static void new_session(const char *body, struct gateway_session *s)
{
	if (gateway_proc_create_session(&gw, body, 120, s) < 0)
		fail_msg("cannot create a session from %s", body);
}

static void session_from(const char *name, struct gateway_session *s)
{
	char body[128];

	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", name);
	new_session(body, s);
}

/* POST the save and wait until the template is made; its JSON in *out. */
static void save(const char *id, const char *name, struct http_resp *out)
{
	char body[160], path[96];
	struct http_resp r;

	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"from_session\":\"%s\"}", name, id);
	r = req("POST", "/v1/templates", body, 202, NULL);
	assert_string_equal(str(&r, "status"), "building");
	assert_string_equal(str(&r, "from_session"), id);
	assert_string_equal(str(&r, "image"), "tinyd");
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	for (int i = 0;; i++) {
		r = req("GET", path, NULL, 200, NULL);
		if (strcmp(str(&r, "status"), "building"))
			break;
		http_resp_free(&r);
		if (i > 1500)
			fail_msg("template %s still building after 300 s", name);
		usleep(200 * 1000);
	}
	if (strcmp(str(&r, "status"), "ready"))
		fail_msg("template %s: %s", name, r.body);
	*out = r;
}

static void del(const char *what, const char *name, int status, const char *code,
		const char *in_message)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/%s/%s", what, name);
	r = req("DELETE", path, NULL, status, code);
	if (in_message && !strstr(r.body, in_message))
		fail_msg("DELETE %s: %s does not name %s", path, r.body, in_message);
	http_resp_free(&r);
}

/* The disk's backing file, as qemu-img sees it, into out ("" for none). */
static void backing_of(const char *name, char *out, size_t len)
{
	char cmd[512];
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "qemu-img info -U --output=json %s/templates/%s/disk.qcow2 | "
		 "sed -n 's/.*\"backing-filename\": \"\\([^\"]*\\)\".*/\\1/p'",
		 home, name);
	out[0] = '\0';
	f = popen(cmd, "r");
	assert_non_null(f);
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	pclose(f);
}

static void test_errors(void **state)
{
	struct gateway_session a;
	struct http_resp r;
	char body[200], path[128];

	(void)state;
	new_session("{\"image\":\"tinyd\",\"memory_mib\":256}", &a);
	r = req("POST", "/v1/templates", "{\"name\":\"x\",\"from_session\":\"nosuchsession0\"}",
		404, "not_found");
	http_resp_free(&r);
	snprintf(body, sizeof(body), "{\"name\":\"Bad Name\",\"from_session\":\"%s\"}", a.id);
	r = req("POST", "/v1/templates", body, 400, "invalid_argument");
	http_resp_free(&r);
	snprintf(body, sizeof(body), "{\"from_session\":\"%s\"}", a.id);
	r = req("POST", "/v1/templates", body, 400, "invalid_argument");
	http_resp_free(&r);
	snprintf(body, sizeof(body), "{\"name\":\"%s-e\",\"from_session\":\"%s\",\"url\":\"x\"}",
		 tpl, a.id);
	r = req("POST", "/v1/templates", body, 400, "invalid_argument");
	http_resp_free(&r);
	/* paused on disk: no guest runs to be saved */
	snprintf(path, sizeof(path), "/v1/sessions/%s/pause", a.id);
	r = req("POST", path, "{\"mode\":\"disk\"}", 200, NULL);
	http_resp_free(&r);
	snprintf(body, sizeof(body), "{\"name\":\"%s-e\",\"from_session\":\"%s\"}", tpl, a.id);
	r = req("POST", "/v1/templates", body, 409, "session_not_running");
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/templates/%s-e", tpl);
	r = req("GET", path, NULL, 404, "unknown_template"); /* nothing was left */
	http_resp_free(&r);
	del("sessions", a.id, 200, NULL, NULL);
}

static void test_save_chain_flatten(void **state)
{
	char t1[64], t2[64], t3[64], path[128], body[200], backing[512], rootfs[256];
	struct gateway_session a, b, c, d;
	struct http_resp r;
	bool busy = false, saved = false;

	(void)state;
	snprintf(t1, sizeof(t1), "%s-1", tpl);
	snprintf(t2, sizeof(t2), "%s-2", tpl);
	snprintf(t3, sizeof(t3), "%s-3", tpl);
	snprintf(rootfs, sizeof(rootfs), "%s/images/tinyd/rootfs.img", home);
	new_session("{\"image\":\"tinyd\",\"memory_mib\":256}", &a);

	/* A template from a session booted from its image: one layer. */
	save(a.id, t1, &r);
	assert_string_equal(str(&r, "image"), "tinyd");
	assert_string_equal(str(&r, "from_session"), a.id);
	assert_null(json_object_get(r.json, "parent"));
	assert_null(json_object_get(r.json, "backing"));
	assert_int_equal(num(&r, "depth"), 1);
	assert_int_equal(num(&r, "memory_mib"), 256);
	assert_true(num(&r, "size_bytes") > 0);
	http_resp_free(&r);
	backing_of(t1, backing, sizeof(backing));
	assert_string_equal(backing, rootfs);
	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"from_session\":\"%s\"}", t1, a.id);
	r = req("POST", "/v1/templates", body, 409, "template_exists");
	http_resp_free(&r);

	/* The original ran on: ready, not busy, and its events tell the save. */
	snprintf(path, sizeof(path), "/v1/sessions/%s", a.id);
	r = req("GET", path, NULL, 200, NULL);
	assert_string_equal(str(&r, "status"), "ready");
	assert_null(json_object_get(r.json, "busy"));
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/events", a.id);
	r = req("GET", path, NULL, 200, NULL);
	for (size_t i = 0; i < json_array_size(json_object_get(r.json, "events")); i++) {
		json_t *ev = json_array_get(json_object_get(r.json, "events"), i);
		const char *type = json_string_value(json_object_get(ev, "type"));

		if (!strcmp(type, "busy") &&
		    !strcmp(json_string_value(json_object_get(ev, "busy")), "saving"))
			busy = true;
		if (!strcmp(type, "saved") && busy &&
		    !strcmp(json_string_value(json_object_get(ev, "template")), t1) &&
		    json_is_true(json_object_get(ev, "ok")))
			saved = true;
	}
	if (!saved)
		fail_msg("no busy \"saving\" then \"saved\" event: %s", r.body);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot", a.id);
	r = req("GET", path, NULL, 200, NULL);
	http_resp_free(&r);

	/* From a session restored from it: a chain of two. */
	session_from(t1, &b);
	save(b.id, t2, &r);
	assert_string_equal(str(&r, "parent"), t1);
	assert_string_equal(str(&r, "backing"), t1);
	assert_int_equal(num(&r, "depth"), 2);
	http_resp_free(&r);
	backing_of(t2, backing, sizeof(backing));
	if (!strstr(backing, t1))
		fail_msg("%s's disk is backed by %s, not %s's", t2, backing, t1);

	/* Past --template-chain-max 2: flattened onto the rootfs. */
	session_from(t2, &c);
	save(c.id, t3, &r);
	assert_string_equal(str(&r, "parent"), t2);
	assert_null(json_object_get(r.json, "backing"));
	assert_int_equal(num(&r, "depth"), 1);
	http_resp_free(&r);
	backing_of(t3, backing, sizeof(backing));
	assert_string_equal(backing, rootfs);
	session_from(t3, &d); /* and it restores */
	snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot", d.id);
	r = req("GET", path, NULL, 200, NULL);
	http_resp_free(&r);

	/* In use: by a session, then by a template made on it. */
	del("templates", t1, 409, "template_in_use", b.id);
	del("sessions", b.id, 200, NULL, NULL);
	del("templates", t1, 409, "template_in_use", t2);
	del("templates", t3, 409, "template_in_use", d.id);
	del("sessions", d.id, 200, NULL, NULL);
	del("templates", t3, 200, NULL, NULL); /* flattened: nobody's backing */
	del("templates", t2, 409, "template_in_use", c.id);
	del("sessions", c.id, 200, NULL, NULL);
	del("templates", t2, 200, NULL, NULL);
	del("templates", t1, 200, NULL, NULL);
	del("sessions", a.id, 200, NULL, NULL);
}

/* `vitrine template save ID NAME` waits and prints the template. */
static void test_cli(void **state)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	struct gateway_session a;
	char name[64];
	int rc;

	(void)state;
	snprintf(name, sizeof(name), "%s-cli", tpl);
	new_session("{\"image\":\"tinyd\",\"memory_mib\":256}", &a);
	rc = test_sh("VITRINE_URL=http://127.0.0.1:%d %s template save --api-key-file %s %s %s "
		     "| grep -q '\"status\": \"ready\"'",
		     gw.port, bin, gw.key_file, a.id, name);
	assert_int_equal(rc, 0);
	rc = test_sh("VITRINE_URL=http://127.0.0.1:%d %s template save --api-key-file %s %s %s "
		     ">/dev/null 2>&1",
		     gw.port, bin, gw.key_file, a.id, name);
	assert_int_not_equal(rc, 0); /* the name is taken */
	del("sessions", a.id, 200, NULL, NULL);
	del("templates", name, 200, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_save_chain_flatten),
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests_name("templates from running sessions", tests, setup,
					   teardown);
}
