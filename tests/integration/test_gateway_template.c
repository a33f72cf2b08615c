/* tests/integration/test_gateway_template.c: sessions restored from a
 * template through the gateway (`"template": NAME`), with the tiny guest: a
 * restored session is ready within its request (?wait=ready), shows the template's screen, takes
 * exact clicks; two sessions from one template do not see each other's
 * changes; template mismatches and unknown templates get their errors;
 * templates are listed, inspected and deleted through the API. */
#include "common/base64.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static char tpl[64];

static int vitrine(const char *args)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null 2>&1", bin, args);
	return system(cmd);
}

static int setup(void **state)
{
	char args[256];

	(void)state;
	snprintf(tpl, sizeof(tpl), "test-gw-%d", (int)getpid());
	snprintf(args, sizeof(args),
		 "template create %s --image tiny --width 800 --height 600 "
		 "--settle 1",
		 tpl);
	if (vitrine(args) != 0) {
		fprintf(stderr, "vitrine %s failed\n", args);
		return -1;
	}
	return gateway_proc_start(&gw, NULL);
}

static int teardown(void **state)
{
	char args[128];

	(void)state;
	gateway_proc_stop(&gw);
	/* test_templates_api deletes it; this is for a run that failed before. */
	snprintf(args, sizeof(args), "template rm %s", tpl);
	vitrine(args);
	return 0;
}

static struct http_resp req(const char *method, const char *path, const char *body, int status,
			    const char *code)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, gw.key, body,
			      body ? strlen(body) : 0, 60, &r);

	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("%s %s -> %d %.300s (want %d %s)", method, path, r.status,
			 r.body ? r.body : "", status, code ? code : "");
	return r;
}

/* Clicks (x, y) in session id and returns the settled screenshot. */
static void click(const char *id, int x, int y, struct ppm *img)
{
	char path[128], body[256];
	struct http_resp r;
	const char *b64;
	unsigned char *raw;
	size_t n;

	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", id);
	snprintf(
		body, sizeof(body),
		"{\"action\":\"left_click\",\"coordinate\":[%d,%d],\"screenshot\":{\"format\":\"png\"}}",
		x, y);
	r = req("POST", path, body, 200, NULL);
	b64 = json_string_value(json_object_get(json_object_get(r.json, "screenshot"), "data"));
	raw = malloc(strlen(b64));
	assert_int_equal(base64_decode(b64, strlen(b64), raw, strlen(b64), &n), 0);
	assert_int_equal(png_decode(raw, n, img), 0);
	free(raw);
	http_resp_free(&r);
}

/* boot (a session's "boot" or a template's "build") ended in outcome
 * with exactly the phases want, in order, adding up to its elapsed_ms. */
static void expect_phases(const json_t *boot, const char *outcome, const char *const *want)
{
	json_int_t sum = 0;
	size_t i = 0;
	json_t *ph;

	if (!boot)
		fail_msg("no phases");
	assert_string_equal(json_string_value(json_object_get(boot, "phase")), outcome);
	json_array_foreach(json_object_get(boot, "phases"), i, ph)
	{
		if (!want[i])
			fail_msg("more phases than expected: %s",
				 json_string_value(json_object_get(ph, "phase")));
		assert_string_equal(json_string_value(json_object_get(ph, "phase")), want[i]);
		sum += json_integer_value(json_object_get(ph, "ms"));
	}
	assert_null(want[i]);
	assert_int_equal(sum, json_integer_value(json_object_get(boot, "elapsed_ms")));
}

static void test_restored_sessions(void **state)
{
	struct http_resp a, b, r;
	char body[128], path[128], ida[64], idb[64];
	struct ppm img;

	(void)state;
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	/* Restoring runs on a job thread: ?wait=ready answers once it runs. */
	a = req("POST", "/v1/sessions?wait=ready", body, 201, NULL);
	assert_string_equal(json_string_value(json_object_get(a.json, "status")), "ready");
	assert_int_equal(json_integer_value(json_object_get(a.json, "width")), 800);
	snprintf(ida, sizeof(ida), "%s", json_string_value(json_object_get(a.json, "id")));
	/* A restore's phases: QEMU reads the template's state, then the screen. */
	expect_phases(json_object_get(a.json, "boot"), "ready",
		      (const char *[]){ "queued", "preparing", "spawning", "connecting_monitor",
					"loading_state", "preparing_guest", "connecting_screen",
					NULL });
	b = req("POST", "/v1/sessions?wait=ready", body, 201, NULL);
	snprintf(idb, sizeof(idb), "%s", json_string_value(json_object_get(b.json, "id")));
	assert_int_equal(gateway_proc_guests(&gw), 2);

	/* The template's screen, and exact clicks, in each. */
	click(ida, 100, 100, &img);
	assert_int_equal(ppm_pixel(&img, 0, 0), 0x00FF00);
	assert_int_equal(ppm_pixel(&img, 100, 100), 0xFFFFFF);
	ppm_free(&img);
	click(idb, 700, 500, &img);
	assert_int_equal(ppm_pixel(&img, 700, 500), 0xFFFFFF);
	/* a's click is not in b. */
	assert_int_not_equal(ppm_pixel(&img, 100, 100), 0xFFFFFF);
	ppm_free(&img);

	snprintf(path, sizeof(path), "/v1/sessions/%s", ida);
	r = req("DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s", idb);
	r = req("DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);
	assert_int_equal(gateway_proc_guests(&gw), 0);
	http_resp_free(&a);
	http_resp_free(&b);
}

static void test_template_errors(void **state)
{
	struct http_resp r;
	char body[160];

	(void)state;
	r = req("POST", "/v1/sessions", "{\"template\":\"no-such-template\"}", 404,
		"unknown_template");
	http_resp_free(&r);
	snprintf(body, sizeof(body), "{\"template\":\"%s\",\"width\":1024}", tpl);
	r = req("POST", "/v1/sessions", body, 400, "invalid_argument");
	http_resp_free(&r);
	snprintf(body, sizeof(body), "{\"template\":\"%s\",\"url\":\"https://example.org\"}", tpl);
	r = req("POST", "/v1/sessions", body, 400, "invalid_argument");
	http_resp_free(&r);
	assert_int_equal(gateway_proc_guests(&gw), 0);
}

static void test_templates_api(void **state)
{
	struct http_resp r;
	char path[128];
	bool listed = false;
	json_t *v;
	size_t i;

	(void)state;
	r = req("GET", "/v1/templates", NULL, 200, NULL);
	json_array_foreach(json_object_get(r.json, "templates"), i, v)
		listed |= !strcmp(json_string_value(json_object_get(v, "name")), tpl);
	assert_true(listed);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
	r = req("GET", path, NULL, 200, NULL);
	assert_string_equal(json_string_value(json_object_get(r.json, "image")), "tiny");
	assert_int_equal(json_integer_value(json_object_get(r.json, "width")), 800);
	assert_int_equal(json_integer_value(json_object_get(r.json, "height")), 600);
	http_resp_free(&r);
	r = req("GET", "/v1/templates/no-such-template", NULL, 404, "unknown_template");
	http_resp_free(&r);
	r = req("POST", path, "{}", 405, "method_not_allowed");
	http_resp_free(&r);
	r = req("DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);
	r = req("DELETE", path, NULL, 404, "unknown_template");
	http_resp_free(&r);
	r = req("GET", path, NULL, 404, "unknown_template");
	http_resp_free(&r);
}

/* A build through the API shows its phase while it builds, in the order
 * vmm_template_create goes, with its time; it is then a template. */
static void test_build_phases(void **state)
{
	static const char *const order[] = { "preparing",     "spawning", "connecting_monitor",
					     "booting_guest", "settling", "saving_state" };
	char body[160], path[128], seen[256] = "";
	int last = -1, polls = 0;
	json_int_t elapsed = -1;
	struct http_resp r;

	(void)state;
	snprintf(body, sizeof(body), "{\"name\":\"%s-api\",\"image\":\"tiny\"}", tpl);
	snprintf(path, sizeof(path), "/v1/templates/%s-api", tpl);
	r = req("POST", "/v1/templates", body, 202, NULL);
	assert_non_null(json_object_get(r.json, "build"));
	http_resp_free(&r);
	for (;; polls++) {
		json_t *build;
		const char *phase;
		json_int_t e;
		int at = -1;

		r = req("GET", path, NULL, 200, NULL);
		if (strcmp(json_string_value(json_object_get(r.json, "status")), "building"))
			break;
		build = json_object_get(r.json, "build");
		phase = json_string_value(json_object_get(build, "phase"));
		for (int i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++)
			if (phase && !strcmp(order[i], phase))
				at = i;
		if (at < 0 || at < last)
			fail_msg("build phase %s after%s", phase ? phase : "(none)", seen);
		if (at > last)
			snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), " %s", phase);
		last = at;
		e = json_integer_value(json_object_get(build, "elapsed_ms"));
		assert_true(e >= elapsed);
		assert_true(json_integer_value(json_object_get(build, "phase_ms")) <= e);
		elapsed = e;
		http_resp_free(&r);
		if (polls > 3000)
			fail_msg("still building after %d polls:%s", polls, seen);
		usleep(20 * 1000);
	}
	print_message("build phases seen:%s\n", seen);
	assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ready");
	http_resp_free(&r);
	/* booting and settling take seconds: polling every 20 ms sees both */
	if (!strstr(seen, "booting_guest") || !strstr(seen, "settling"))
		fail_msg("build phases seen:%s", seen);
	r = req("DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restored_sessions),
		cmocka_unit_test(test_template_errors),
		cmocka_unit_test(test_templates_api),
		cmocka_unit_test(test_build_phases),
	};

	return cmocka_run_group_tests_name("gateway sessions from templates", tests, setup,
					   teardown);
}
