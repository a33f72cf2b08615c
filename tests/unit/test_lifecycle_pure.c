/* tests/unit/test_lifecycle_pure.c: the pure parts of session lifecycles:
 * the pause/resume/fork/events routes, the lifetime fields of a session
 * request, the body of POST /v1/templates, the event ring, and the
 * navigation script a restored guest runs. */
#include "gateway/api/routes.h"
#include "gateway/session/events.h"
#include "gateway/session/session_spec.h"
#include "vmm-qemu/guest_prep.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void test_routes(void **state)
{
	struct route r;

	(void)state;
	r = route_parse(M_POST, "/v1/sessions/s_1/pause");
	assert_int_equal(r.kind, R_SESSION_PAUSE);
	assert_string_equal(r.id, "s_1");
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/resume").kind, R_SESSION_RESUME);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/fork").kind, R_SESSION_FORK);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/events").kind, R_SESSION_EVENTS);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/pause").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/events").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_DELETE, "/v1/sessions/s_1/fork").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/pause/x").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_POST, "/v1/templates").kind, R_TEMPLATES_CREATE);
	assert_int_equal(route_parse(M_GET, "/v1/templates").kind, R_TEMPLATES_LIST);
	assert_int_equal(route_parse(M_DELETE, "/v1/templates").kind, R_METHOD_NOT_ALLOWED);
}

static int parse(const char *body, struct session_request *req, struct api_error *e)
{
	return session_request_parse(body, strlen(body), req, e);
}

static void test_lifetime_fields(void **state)
{
	struct session_request req;
	struct api_error e;

	(void)state;
	assert_int_equal(parse("{\"image\":\"tiny\",\"timeout_s\":60,\"idle_timeout_s\":10,"
			       "\"on_expiry\":\"pause\"}",
			       &req, &e),
			 0);
	assert_int_equal(req.timeout_s, 60);
	assert_int_equal(req.idle_timeout_s, 10);
	assert_true(req.expire_pause);
	session_request_free(&req);
	assert_int_equal(parse("{\"on_expiry\":\"kill\"}", &req, &e), 0);
	assert_false(req.expire_pause);
	session_request_free(&req);
	assert_int_equal(parse("{\"on_expiry\":\"later\"}", &req, &e), -EINVAL);
	assert_string_equal(e.code, "invalid_argument");
	assert_int_equal(parse("{\"on_expiry\":1}", &req, &e), -EINVAL);
	assert_int_equal(parse("{\"idle_timeout_s\":0}", &req, &e), -EINVAL);
	assert_int_equal(parse("{\"idle_timeout_s\":604801}", &req, &e), -EINVAL);
	assert_int_equal(parse("{\"idle_timeout_s\":\"5\"}", &req, &e), -EINVAL);
}

static int tparse(const char *body, char *name, struct session_request *req, struct api_error *e)
{
	return template_request_parse(body, strlen(body), name, 72, req, e);
}

static void test_template_request(void **state)
{
	struct session_request req;
	struct api_error e;
	char name[72];

	(void)state;
	assert_int_equal(tparse("{\"name\":\"demo_1\",\"image\":\"desktop\",\"page\":\"<p>hi\","
				"\"width\":1024,\"height\":768}",
				name, &req, &e),
			 0);
	assert_string_equal(name, "demo_1");
	assert_string_equal(req.image, "desktop");
	assert_int_equal(req.width, 1024);
	assert_string_equal(req.page, "<p>hi");
	session_request_free(&req);
	assert_int_equal(tparse("{\"image\":\"desktop\"}", name, &req, &e), -EINVAL);
	assert_int_equal(tparse("{\"name\":\"\"}", name, &req, &e), -EINVAL);
	assert_int_equal(tparse("{\"name\":\"../x\"}", name, &req, &e), -EINVAL);
	assert_int_equal(tparse("{\"name\":7}", name, &req, &e), -EINVAL);
	assert_int_equal(tparse("{\"name\":\"x\",\"template\":\"y\"}", name, &req, &e), -EINVAL);
	assert_int_equal(tparse("{\"name\":\"x\",\"timeout_s\":5}", name, &req, &e), -EINVAL);
	assert_int_equal(tparse("{\"name\":\"x\",\"colour\":5}", name, &req, &e), -EINVAL);
	assert_int_equal(tparse("{\"name\":\"x\",\"name\":\"y\"}", name, &req, &e), -EINVAL);
	assert_string_equal(e.code, "invalid_json");
	assert_int_equal(tparse("[]", name, &req, &e), -EINVAL);
	assert_int_equal(
		tparse("{\"name\":\"0123456789012345678901234567890123456789012345678901234567890123X\"}",
		       name, &req, &e),
		-EINVAL);
	/* only the names a session can be created from: no upper case, at
	 * most 63 (a session's "template" is [a-z0-9_-]{1,63}) */
	assert_int_equal(tparse("{\"name\":\"Demo\"}", name, &req, &e), -EINVAL);
	assert_int_equal(
		tparse("{\"name\":\"0123456789012345678901234567890123456789012345678901234567890123\"}",
		       name, &req, &e),
		-EINVAL);
	assert_int_equal(
		tparse("{\"name\":\"012345678901234567890123456789012345678901234567890123456789012\"}",
		       name, &req, &e),
		0);
	session_request_free(&req);
	{
		struct session_request sr;

		assert_int_equal(
			session_request_parse(
				"{\"template\":\"012345678901234567890123456789012345678901234567890123456789012\"}",
				strlen("{\"template\":\"012345678901234567890123456789012345678901234567890123456789012\"}"),
				&sr, &e),
			0);
		session_request_free(&sr);
	}
}

static void test_events(void **state)
{
	struct event_log l = { 0 };
	json_t *a;

	(void)state;
	assert_int_equal(events_last(&l), 0);
	assert_int_equal(events_add(&l, "state", json_pack("{s:s}", "status", "ready")), 1);
	assert_int_equal(events_add(&l, "expiring", NULL), 2);
	a = events_since(&l, 0);
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "status")),
			    "ready");
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 1), "type")),
			    "expiring");
	assert_true(json_integer_value(json_object_get(json_array_get(a, 1), "at_ms")) > 0);
	json_decref(a);
	a = events_since(&l, 2);
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
	/* Past EVENTS_KEPT, the oldest go. */
	for (int i = 0; i < EVENTS_KEPT + 10; i++)
		events_add(&l, "tick", NULL);
	assert_int_equal(events_last(&l), EVENTS_KEPT + 12);
	a = events_since(&l, 0);
	assert_int_equal(json_array_size(a), EVENTS_KEPT);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "seq")), 13);
	json_decref(a);
	a = events_since(&l, EVENTS_KEPT + 10);
	assert_int_equal(json_array_size(a), 2);
	json_decref(a);
	events_clear(&l);
}

static void test_nav_js(void **state)
{
	char js[256];

	(void)state;
	assert_int_equal(guest_prep_nav_js("https://example.org/a?b=\"c\"&d=</script>", js,
					   sizeof(js)),
			 0);
	assert_string_equal(
		js,
		"(window.__vitrineOld = 1, "
		"location.assign(\"https:\\/\\/example.org\\/a?b=\\\"c\\\"&d=<\\/script>\"), 1)");
	assert_int_equal(guest_prep_nav_js("https://example.org/", js, 20), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),		 cmocka_unit_test(test_lifetime_fields),
		cmocka_unit_test(test_template_request), cmocka_unit_test(test_events),
		cmocka_unit_test(test_nav_js),
	};

	return cmocka_run_group_tests_name("session lifecycle (pure)", tests, NULL, NULL);
}
