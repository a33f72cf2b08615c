/* tests/integration/test_gateway_loop.c: the gateway's event loop never waits
 * on one session's slow work. Functional, not timed: session A's
 * screenshots, actions and status are answered while session B is still
 * "starting" (its QEMU start slowed on purpose by the test hook
 * VITRINE_TEST_SLOW_START_MS, docs/vmm.md), while B pauses and resumes,
 * and while a client asks for B's screen at many sizes and qualities at
 * once (the encoder pool); deleting B while it boots answers once its
 * guest is gone, and a screenshot asked far larger than the frame-size cap
 * is made within it. Tiny guests. */
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"
#include "tests/lib/ppm.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Each start of QEMU waits this long twice (before qemu-img, before the
 * QMP greeting): a booting session stays "starting" for seconds. */
#define SLOW_START_MS "2500"

static struct gateway_proc gw;
static struct gateway_session a;

static struct http_resp req(const char *method, const char *path, const char *token,
			    const char *body, int status)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, token, body,
			      body ? strlen(body) : 0, 120, &r);

	if (rc < 0 || r.status != status)
		fail_msg("%s %s -> rc %d, %d %.300s (want %d)", method, path, rc, r.status,
			 r.body ? r.body : "", status);
	return r;
}

static const char *status_of(const char *id, char *buf, size_t len)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s", id);
	r = req("GET", path, gw.key, NULL, 200);
	snprintf(buf, len, "%s", json_string_value(json_object_get(r.json, "status")));
	http_resp_free(&r);
	return buf;
}

/* One screenshot and one click on A, both answered (the click's reply
 * carries its settled screenshot). */
static void serve_a(void)
{
	char path[160];
	struct http_resp r;
	struct ppm img;

	snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot?format=png", a.id);
	r = req("GET", path, a.control, NULL, 200);
	assert_int_equal(png_decode(r.body, r.body_len, &img), 0);
	assert_int_equal(img.width, 1280);
	ppm_free(&img);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", a.id);
	r = req("POST", path, a.control,
		"{\"action\":\"left_click\",\"coordinate\":[100,100],\"screenshot\":true}", 200);
	assert_non_null(json_object_get(r.json, "screenshot"));
	http_resp_free(&r);
}

static int setup(void **state)
{
	(void)state;
	setenv("VITRINE_TEST_SLOW_START_MS", SLOW_START_MS, 1);
	if (gateway_proc_start(&gw, NULL) < 0)
		return -1;
	unsetenv("VITRINE_TEST_SLOW_START_MS");
	return gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &a);
}

static int teardown(void **state)
{
	(void)state;
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static void test_served_while_another_boots(void **state)
{
	struct http_resp r;
	char id[64], path[128], st[32];

	(void)state;
	r = req("POST", "/v1/sessions", gw.key, "{\"image\":\"tiny\"}", 201);
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
	/* Before the fix, the POST itself took the slow start (on the loop). */
	assert_string_equal(status_of(id, st, sizeof(st)), "starting");
	serve_a();
	serve_a();
	/* A was served in full while B had not even got its QEMU going. */
	assert_string_equal(status_of(id, st, sizeof(st)), "starting");

	/* Deleted while booting: answered once B's guest is gone. */
	snprintf(path, sizeof(path), "/v1/sessions/%s", id);
	r = req("DELETE", path, gw.key, NULL, 200);
	http_resp_free(&r);
	assert_int_equal(gateway_proc_guests(&gw), 1);
	serve_a();
}

static void test_served_while_another_pauses(void **state)
{
	struct gateway_session b;
	struct http_resp r;
	char path[160], st[32];

	(void)state;
	assert_int_equal(gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &b), 0);
	snprintf(path, sizeof(path), "/v1/sessions/%s/pause", b.id);
	r = req("POST", path, b.control, "{\"mode\":\"memory\"}", 200);
	http_resp_free(&r);
	assert_string_equal(status_of(b.id, st, sizeof(st)), "paused");
	serve_a();
	snprintf(path, sizeof(path), "/v1/sessions/%s/resume", b.id);
	r = req("POST", path, b.control, NULL, 200);
	http_resp_free(&r);
	assert_string_equal(status_of(b.id, st, sizeof(st)), "ready");
	serve_a();
	snprintf(path, sizeof(path), "/v1/sessions/%s", b.id);
	r = req("DELETE", path, gw.key, NULL, 200);
	http_resp_free(&r);
	assert_int_equal(gateway_proc_guests(&gw), 1);
}

#define SHOTS 16

struct shot {
	pthread_t t;
	char path[200];
	const char *token;
	int want_w;
	struct http_resp r;
	int rc;
};

static void *take(void *arg)
{
	struct shot *s = arg;

	s->rc = http_request("127.0.0.1", gw.port, "GET", s->path, s->token, NULL, 0, 120, &s->r);
	return NULL;
}

static void test_served_while_another_is_encoded_many_ways(void **state)
{
	struct gateway_session b;
	struct shot shots[SHOTS];
	struct http_resp r;
	char path[200];

	(void)state;
	assert_int_equal(gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 180, &b), 0);
	/* Sixteen encodings of B's one frame at once: every width and quality
	 * differs, so none comes from the encode cache. */
	for (int i = 0; i < SHOTS; i++) {
		shots[i].want_w = 320 + 40 * i;
		shots[i].token = b.control;
		snprintf(shots[i].path, sizeof(shots[i].path),
			 "/v1/sessions/%s/screenshot?format=%s&width=%d&quality=%d", b.id,
			 i % 2 ? "png" : "jpeg", shots[i].want_w, 40 + 3 * i);
		assert_int_equal(pthread_create(&shots[i].t, NULL, take, &shots[i]), 0);
	}
	serve_a();
	for (int i = 0; i < SHOTS; i++) {
		struct ppm img;

		pthread_join(shots[i].t, NULL);
		assert_int_equal(shots[i].rc, 0);
		assert_int_equal(shots[i].r.status, 200);
		assert_int_equal(i % 2 ? png_decode(shots[i].r.body, shots[i].r.body_len, &img)
				       : jpeg_decode(shots[i].r.body, shots[i].r.body_len, &img),
				 0);
		assert_int_equal(img.width, shots[i].want_w);
		ppm_free(&img);
		http_resp_free(&shots[i].r);
	}
	/* Asked far past the frame-size cap (16384x16384 would upscale the
	 * screen to 168 Mpixel): what is made stays within the cap. */
	snprintf(path, sizeof(path),
		 "/v1/sessions/%s/screenshot?width=16384&height=16384&quality=30", b.id);
	r = req("GET", path, b.control, NULL, 200);
	{
		struct ppm big;

		assert_int_equal(jpeg_decode(r.body, r.body_len, &big), 0);
		assert_true(big.width > 1280);
		assert_true(big.width <= 8192 && big.height <= 8192);
		assert_true((long)big.width * big.height <= 16L << 20);
		ppm_free(&big);
	}
	http_resp_free(&r);
	serve_a();
	snprintf(path, sizeof(path), "/v1/sessions/%s", b.id);
	r = req("DELETE", path, gw.key, NULL, 200);
	http_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_served_while_another_boots),
		cmocka_unit_test(test_served_while_another_pauses),
		cmocka_unit_test(test_served_while_another_is_encoded_many_ways),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
