/* tests/integration/test_gateway_actions.c: screenshots and actions through
 * `vitrine serve` on a tiny guest, checked by pixels: screenshots decode and
 * say their geometry (scaled ones keep the aspect ratio); clicks land on the
 * exact pixel, corners included, also from the scaled screenshot space; the
 * settled screenshot in an action's reply already shows the action's effect;
 * tokens are scoped; malformed actions get their errors and change nothing. */
#include "common/base64.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"
#include "tests/lib/ws_client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define W 1280
#define H 800

static struct gateway_proc gw;
static char sid[64], ctl[64], view[64], path_actions[128], path_shot[160];

static int setup(void **state)
{
	struct gateway_session created;
	const char *body = "{\"image\":\"tiny\",\"width\":1280,\"height\":800}";

	(void)state;
	if (gateway_proc_start(&gw, NULL) < 0)
		return -1;
	if (gateway_proc_create_session(&gw, body, 120, &created) < 0)
		return -1;
	snprintf(sid, sizeof(sid), "%s", created.id);
	snprintf(ctl, sizeof(ctl), "%s", created.control);
	snprintf(view, sizeof(view), "%s", created.view);
	snprintf(path_actions, sizeof(path_actions), "/v1/sessions/%s/actions", sid);
	snprintf(path_shot, sizeof(path_shot), "/v1/sessions/%s/screenshot", sid);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static struct http_resp act(const char *token, const char *action, int status, const char *code)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, "POST", path_actions, token, action,
			      strlen(action), 60, &r);

	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("%s -> %d %.300s (want %d %s)", action, r.status, r.body ? r.body : "",
			 status, code ? code : "");
	return r;
}

/* Decodes the screenshot of an action reply. */
static void reply_image(const struct http_resp *r, struct ppm *img)
{
	json_t *shot = json_object_get(r->json, "screenshot");
	const char *b64 = json_string_value(json_object_get(shot, "data"));
	const char *fmt = json_string_value(json_object_get(shot, "format"));
	size_t n = 0, cap;
	unsigned char *raw;

	assert_non_null(b64);
	cap = strlen(b64);
	raw = malloc(cap);
	assert_int_equal(base64_decode(b64, strlen(b64), raw, cap, &n), 0);
	if (!strcmp(fmt, "png"))
		assert_int_equal(png_decode(raw, n, img), 0);
	else
		assert_int_equal(jpeg_decode(raw, n, img), 0);
	free(raw);
}

static void test_screenshot_endpoint(void **state)
{
	struct http_resp r;
	struct ppm img;
	char v[64], path[256];

	(void)state;
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path_shot, view, NULL, 0, 30,
				      &r),
			 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(http_header(&r, "content-type", v, sizeof(v)), "image/jpeg");
	assert_string_equal(http_header(&r, "x-vitrine-screen", v, sizeof(v)), "1280x800");
	assert_int_equal(jpeg_decode(r.body, r.body_len, &img), 0);
	assert_int_equal(img.width, W);
	/* JPEG is lossy: the corner squares are still clearly their colours. */
	assert_true(ppm_close(ppm_pixel(&img, 10, 10), 0x00FF00, 40));
	assert_true(ppm_close(ppm_pixel(&img, W - 10, H - 10), 0xFF00FF, 40));
	ppm_free(&img);
	http_resp_free(&r);

	snprintf(path, sizeof(path), "%s?format=png&width=640", path_shot);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, view, NULL, 0, 30, &r), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(http_header(&r, "x-vitrine-width", v, sizeof(v)), "640");
	assert_string_equal(http_header(&r, "x-vitrine-height", v, sizeof(v)), "400");
	assert_string_equal(http_header(&r, "x-vitrine-scale", v, sizeof(v)), "0.500000");
	assert_int_equal(png_decode(r.body, r.body_len, &img), 0);
	assert_int_equal(img.width, 640);
	assert_int_equal(img.height, 400);
	assert_true(ppm_close(ppm_pixel(&img, 5, 5), 0x00FF00, 8));
	ppm_free(&img);
	http_resp_free(&r);

	snprintf(path, sizeof(path), "%s?format=gif", path_shot);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, view, NULL, 0, 30, &r), 0);
	assert_int_equal(r.status, 400);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "%s?quality=0", path_shot);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path, view, NULL, 0, 30, &r), 0);
	assert_int_equal(r.status, 400);
	assert_string_equal(http_error_code(&r), "invalid_argument");
	http_resp_free(&r);
}

/* Clicks through the API and checks the reply's own settled screenshot. */
static void click_shows_mark(const char *action, int x, int y)
{
	struct http_resp r = act(ctl, action, 200, NULL);
	struct ppm img;

	assert_true(json_is_true(json_object_get(r.json, "ok")));
	assert_true(
		json_is_true(json_object_get(json_object_get(r.json, "screenshot"), "settled")));
	reply_image(&r, &img);
	if (ppm_pixel(&img, x, y) != 0xFFFFFF)
		fail_msg("%s: no white centre at (%d,%d): %06x", action, x, y,
			 ppm_pixel(&img, x, y));
	if (ppm_pixel(&img, x == 0 ? 1 : x - 1, y) != 0xFF0000)
		fail_msg("%s: no red beside (%d,%d)", action, x, y);
	ppm_free(&img);
	http_resp_free(&r);
}

static void test_clicks_land_exactly(void **state)
{
	(void)state;
	click_shows_mark("{\"action\":\"left_click\",\"coordinate\":[0,0],"
			 "\"screenshot\":{\"format\":\"png\"}}",
			 0, 0);
	click_shows_mark("{\"action\":\"left_click\",\"coordinate\":[1279,799],"
			 "\"screenshot\":{\"format\":\"png\"}}",
			 1279, 799);
	click_shows_mark("{\"type\":\"click\",\"x\":1279,\"y\":0,\"button\":\"left\","
			 "\"screenshot\":{\"format\":\"png\"}}",
			 1279, 0);
	click_shows_mark("{\"type\":\"click\",\"x\":0,\"y\":799,\"button\":\"right\","
			 "\"screenshot\":{\"format\":\"png\"}}",
			 0, 799);
	click_shows_mark("{\"action\":\"left_click\",\"coordinate\":[640,400],"
			 "\"screenshot\":{\"format\":\"png\"}}",
			 640, 400);
	/* In the space of a 640x400 screenshot: (50,100) is screen (100,200). */
	click_shows_mark("{\"action\":\"left_click\",\"coordinate\":[50,100],"
			 "\"coordinate_space\":\"screenshot\",\"screenshot_width\":640,"
			 "\"screenshot_height\":400,\"screenshot\":{\"format\":\"png\"}}",
			 100, 200);
}

static void test_cursor_position_and_scaled_reply(void **state)
{
	struct http_resp r;

	(void)state;
	r = act(ctl, "{\"action\":\"mouse_move\",\"coordinate\":[321,123]}", 200, NULL);
	assert_null(json_object_get(r.json, "screenshot"));
	http_resp_free(&r);
	r = act(ctl, "{\"action\":\"cursor_position\",\"id\":\"q1\"}", 200, NULL);
	assert_string_equal(json_string_value(json_object_get(r.json, "id")), "q1");
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(r.json, "result"), "x")),
			 321);
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(r.json, "result"), "y")),
			 123);
	http_resp_free(&r);
	r = act(ctl, "{\"action\":\"screenshot\",\"screenshot\":{\"width\":320}}", 200, NULL);
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(r.json, "screenshot"), "width")),
			 320);
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(r.json, "screenshot"), "height")),
			 200);
	http_resp_free(&r);
}

static void test_zoom_and_wait(void **state)
{
	struct http_resp r;
	struct ppm img;

	(void)state;
	/* zoom: the region at full resolution (x1, y1 exclusive). */
	r = act(ctl,
		"{\"action\":\"zoom\",\"region\":[1216,0,1280,64],"
		"\"screenshot\":{\"format\":\"png\"}}",
		200, NULL);
	reply_image(&r, &img);
	assert_int_equal(img.width, 64);
	assert_int_equal(img.height, 64);
	assert_int_equal(ppm_pixel(&img, 0, 0), 0x0000FF); /* the blue top-right square */
	assert_int_equal(ppm_pixel(&img, 63, 63), 0x0000FF);
	ppm_free(&img);
	http_resp_free(&r);
	/* wait: pauses, then answers with a screenshot, as Anthropic's tool does. */
	r = act(ctl, "{\"action\":\"wait\",\"duration\":0.3}", 200, NULL);
	assert_true(json_integer_value(json_object_get(r.json, "elapsed_ms")) >= 300);
	assert_non_null(json_object_get(r.json, "screenshot"));
	http_resp_free(&r);
}

static void test_tokens_and_errors(void **state)
{
	struct http_resp r;

	(void)state;
	r = act(view, "{\"action\":\"left_click\",\"coordinate\":[1,1]}", 403, "forbidden");
	http_resp_free(&r);
	r = act(NULL, "{\"action\":\"left_click\",\"coordinate\":[1,1]}", 401, "unauthorized");
	http_resp_free(&r);
	r = act("not-a-token-at-all", "{\"action\":\"screenshot\"}", 401, "unauthorized");
	http_resp_free(&r);
	r = act(gw.key, "{\"action\":\"screenshot\"}", 200, NULL);
	http_resp_free(&r);
	r = act(ctl, "{nope", 400, "invalid_json");
	http_resp_free(&r);
	r = act(ctl, "[]", 400, "invalid_json");
	http_resp_free(&r);
	r = act(ctl, "{\"action\":\"fly\"}", 400, "unknown_action");
	http_resp_free(&r);
	r = act(ctl, "{\"action\":\"left_click\",\"coordinate\":[1280,0]}", 400, "out_of_range");
	http_resp_free(&r);
	r = act(ctl, "{\"action\":\"left_click\",\"coordinate\":[1]}", 400, NULL);
	http_resp_free(&r);
	r = act(ctl, "{\"action\":\"key\",\"text\":\"ctrl+nosuchkey\"}", 400, "unknown_key");
	http_resp_free(&r);
	r = act(ctl, "{\"action\":\"screenshot\",\"screenshot\":{\"quality\":500}}", 400,
		"out_of_range");
	http_resp_free(&r);
	/* Text a keymap cannot type goes whole through the guest agent, which
	 * the tiny guest lacks: an error, and nothing typed. */
	r = act(ctl, "{\"action\":\"type\",\"text\":\"ab\\u00fc\"}", 502, "type_failed");
	http_resp_free(&r);
	/* The session is still usable after all that. */
	click_shows_mark("{\"action\":\"left_click\",\"coordinate\":[900,600],"
			 "\"screenshot\":{\"format\":\"png\"}}",
			 900, 600);
}

static json_t *recv_json(int fd)
{
	char *text = ws_recv_text(fd, 30000);
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;

	if (!j)
		fail_msg("no JSON message on the control socket (got %s)", text ? text : "nothing");
	free(text);
	return j;
}

static void test_control_websocket(void **state)
{
	char path[128], origin[128];
	int fd, status;
	json_t *j;

	(void)state;
	snprintf(path, sizeof(path), "/v1/sessions/%s/control", sid);
	snprintf(origin, sizeof(origin), "http://127.0.0.1:%d", gw.port);
	/* Refused upgrades: wrong token, view token, foreign Origin, unknown session. */
	assert_int_equal(ws_connect(gw.port, path, "wrong-token-wrong", NULL, &status), -1);
	assert_int_equal(ws_connect(gw.port, path, view, NULL, &status), -1);
	assert_int_equal(ws_connect(gw.port, path, ctl, "http://evil.example", &status), -1);
	assert_int_equal(ws_connect(gw.port, "/v1/sessions/s_nope/control", ctl, NULL, &status),
			 -1);

	/* Header auth: actions in order, ids echoed, errors per message. */
	fd = ws_connect(gw.port, path, ctl, origin, &status);
	assert_true(fd >= 0);
	assert_int_equal(
		ws_send_text(fd, "{\"id\":1,\"action\":\"mouse_move\",\"coordinate\":[10,10]}"), 0);
	assert_int_equal(ws_send_text(fd, "{\"id\":2,\"action\":\"bogus\"}"), 0);
	assert_int_equal(ws_send_text(fd,
				      "{\"id\":\"three\",\"type\":\"click\",\"x\":700,\"y\":500,"
				      "\"button\":\"left\",\"screenshot\":{\"format\":\"png\"}}"),
			 0);
	j = recv_json(fd);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 1);
	assert_true(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	j = recv_json(fd);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 2);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "error"), "code")),
			    "unknown_action");
	json_decref(j);
	j = recv_json(fd);
	assert_string_equal(json_string_value(json_object_get(j, "id")), "three");
	{
		struct http_resp fake = { .json = j };
		struct ppm img;

		reply_image(&fake, &img);
		assert_int_equal(ppm_pixel(&img, 700, 500), 0xFFFFFF);
		ppm_free(&img);
	}
	json_decref(j);
	close(fd);

	/* Browser-style: no header, the token as the first message. */
	fd = ws_connect(gw.port, path, NULL, origin, &status);
	assert_true(fd >= 0);
	assert_int_equal(ws_send_text(fd, "{\"action\":\"cursor_position\"}"), 0);
	j = recv_json(fd);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "error"), "code")),
			    "unauthorized");
	json_decref(j);
	/* one try: then the socket closes (1008) */
	{
		struct ws_msg m;

		assert_int_equal(ws_recv(fd, 10000, &m), 0);
		assert_int_equal(m.opcode, WS_CLOSE);
		assert_int_equal(m.close_code, 1008);
		ws_msg_free(&m);
	}
	close(fd);
	fd = ws_connect(gw.port, path, NULL, origin, &status);
	assert_true(fd >= 0);
	{
		char msg[128];

		snprintf(msg, sizeof(msg), "{\"token\":\"%s\"}", ctl);
		assert_int_equal(ws_send_text(fd, msg), 0);
	}
	j = recv_json(fd);
	assert_true(json_is_true(json_object_get(j, "authenticated")));
	json_decref(j);
	assert_int_equal(ws_send_text(fd, "{\"action\":\"cursor_position\"}"), 0);
	j = recv_json(fd);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "result"), "x")),
			 700);
	json_decref(j);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_screenshot_endpoint),
		cmocka_unit_test(test_clicks_land_exactly),
		cmocka_unit_test(test_cursor_position_and_scaled_reply),
		cmocka_unit_test(test_zoom_and_wait),
		cmocka_unit_test(test_tokens_and_errors),
		cmocka_unit_test(test_control_websocket),
	};

	return cmocka_run_group_tests_name("gateway actions (tiny guest)", tests, setup, teardown);
}
