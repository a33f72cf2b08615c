/* tests/integration/test_gateway_actions.c: screenshots and actions through
 * `vitrine serve` on a tiny guest, checked by pixels: screenshots decode and
 * say their geometry (scaled ones keep the aspect ratio); clicks land on the
 * exact pixel, corners included, also from the scaled screenshot space; the
 * settled screenshot in an action's reply already shows the action's effect;
 * tokens are scoped; malformed actions get their errors and change nothing;
 * a batch runs its actions in order, a bad one stops it with its index
 * (those before it ran, those after did not) and the bound is kept;
 * the trajectory (GET .../trajectory) holds every step sent, over HTTP and
 * the control socket, with its image, and the example converter reads it;
 * a gateway with a small --trajectory-max-steps keeps the newest, counting
 * the dropped. */
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

/* Whether img shows a click's mark at (x, y): white centre, red beside. */
static bool has_mark(const struct ppm *img, int x, int y)
{
	return ppm_pixel(img, x, y) == 0xFFFFFF && ppm_pixel(img, x - 1, y) == 0xFF0000;
}

/* The screen now, settled, as PNG. */
static void settled_screen(struct ppm *img)
{
	struct http_resp r = act(ctl,
				 "{\"action\":\"wait\",\"duration_ms\":200,"
				 "\"screenshot\":{\"format\":\"png\"}}",
				 200, NULL);

	reply_image(&r, img);
	http_resp_free(&r);
}

/* A batch with row y's five points at x = 300, 400, ... 700, in order: a
 * click of each, with its position asked after it. */
static void five_clicks(char *buf, size_t size, int y, const char *third, const char *tail)
{
	size_t n = (size_t)snprintf(buf, size, "{\"id\":\"b1\",\"actions\":[");

	for (int i = 0; i < 5; i++) {
		if (i == 2 && third)
			n += (size_t)snprintf(buf + n, size - n, "%s,", third);
		else
			n += (size_t)snprintf(buf + n, size - n,
					      "{\"type\":\"click\",\"button\":\"left\",\"x\":%d,"
					      "\"y\":%d},{\"action\":\"cursor_position\"},",
					      300 + 100 * i, y);
	}
	snprintf(buf + n - 1, size - n + 1, "]%s}", tail);
}

static void test_batches(void **state)
{
	static const char *const bad[] = {
		"{\"action\":\"left_click\",\"coordinate\":[1280,10]}",
		"{\"action\":\"fly\"}",
	};
	struct http_resp r;
	struct ppm img;
	json_t *results, *err;
	char body[8192];
	size_t n;

	(void)state;
	/* Five clicks, each followed by cursor_position: all five marks, in
	 * order, and the one screenshot at the end shows them. */
	five_clicks(body, sizeof(body), 650, NULL, ",\"screenshot\":{\"format\":\"png\"}");
	r = act(ctl, body, 200, NULL);
	assert_string_equal(json_string_value(json_object_get(r.json, "id")), "b1");
	assert_int_equal(json_integer_value(json_object_get(r.json, "ran")), 10);
	results = json_object_get(r.json, "results");
	assert_int_equal(json_array_size(results), 10);
	for (int i = 0; i < 5; i++) {
		json_t *click = json_array_get(results, 2 * (size_t)i);
		json_t *pos = json_object_get(json_array_get(results, 2 * (size_t)i + 1), "result");

		assert_string_equal(json_string_value(json_object_get(click, "action")), "click");
		assert_int_equal(json_integer_value(json_object_get(click, "index")), 2 * i);
		assert_int_equal(json_integer_value(json_object_get(pos, "x")), 300 + 100 * i);
		assert_int_equal(json_integer_value(json_object_get(pos, "y")), 650);
	}
	assert_true(
		json_is_true(json_object_get(json_object_get(r.json, "screenshot"), "settled")));
	reply_image(&r, &img);
	for (int i = 0; i < 5; i++)
		if (!has_mark(&img, 300 + 100 * i, 650))
			fail_msg("batch: click %d left no mark", i);
	ppm_free(&img);
	http_resp_free(&r);

	/* A bad third element (off the screen, an unknown kind): 400 with index
	 * 4 (the third click's place in the list), the two clicks before it ran
	 * and the ones after did not. */
	for (int k = 0; k < 2; k++) {
		int y = 700 + 40 * k;

		five_clicks(body, sizeof(body), y, bad[k], "");
		r = act(ctl, body, 400, k == 0 ? "out_of_range" : "unknown_action");
		err = json_object_get(r.json, "error");
		assert_int_equal(json_integer_value(json_object_get(err, "index")), 4);
		assert_int_equal(json_integer_value(json_object_get(r.json, "ran")), 4);
		assert_int_equal(json_array_size(json_object_get(r.json, "results")), 4);
		assert_null(json_object_get(r.json, "screenshot"));
		http_resp_free(&r);
		settled_screen(&img);
		for (int i = 0; i < 5; i++)
			if (has_mark(&img, 300 + 100 * i, y) != (i < 2))
				fail_msg("bad batch %d: click %d %s", k, i,
					 i < 2 ? "did not run" : "ran");
		ppm_free(&img);
	}
	/* The same with the bad action third in the list: index 2. */
	r = act(ctl,
		"{\"actions\":[{\"type\":\"move\",\"x\":5,\"y\":5},"
		"{\"type\":\"move\",\"x\":6,\"y\":6},{\"type\":\"fly\"},"
		"{\"type\":\"move\",\"x\":7,\"y\":7}]}",
		400, "unknown_action");
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(r.json, "error"), "index")),
			 2);
	assert_int_equal(json_integer_value(json_object_get(r.json, "ran")), 2);
	http_resp_free(&r);

	/* Over the bound (64): refused whole, its clicks never ran. */
	n = (size_t)snprintf(body, sizeof(body), "{\"actions\":[");
	for (int i = 0; i < 65; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n,
				      "%s{\"action\":\"left_click\",\"coordinate\":[1000,650]}",
				      i ? "," : "");
	snprintf(body + n, sizeof(body) - n, "]}");
	r = act(ctl, body, 400, "too_long");
	http_resp_free(&r);
	settled_screen(&img);
	assert_false(has_mark(&img, 1000, 650));
	ppm_free(&img);
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
	/* Batches too: one that runs, one that stops at its index 1. */
	assert_int_equal(ws_send_text(fd, "{\"id\":4,\"actions\":[{\"type\":\"move\",\"x\":700,"
					  "\"y\":500},{\"action\":\"cursor_position\"}]}"),
			 0);
	assert_int_equal(ws_send_text(fd, "{\"id\":5,\"actions\":[{\"type\":\"move\",\"x\":700,"
					  "\"y\":500},{\"type\":\"move\",\"x\":-1,\"y\":1}]}"),
			 0);
	j = recv_json(fd);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 4);
	assert_true(json_is_true(json_object_get(j, "ok")));
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(json_array_get(json_object_get(j, "results"), 1),
						 "result"),
				 "x")),
			 700);
	json_decref(j);
	j = recv_json(fd);
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 5);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "error"), "index")),
			 1);
	assert_int_equal(json_integer_value(json_object_get(j, "ran")), 1);
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

/* A member of a tar archive (the trajectory), by name: its bytes, or NULL.
 * Checks each header's checksum on the way. */
static const unsigned char *tar_member(const struct http_resp *r, const char *name, size_t *size)
{
	const unsigned char *b = (const unsigned char *)r->body;

	for (size_t off = 0; off + 512 <= r->body_len && b[off];) {
		size_t n = strtoul((const char *)b + off + 124, NULL, 8);
		unsigned sum = 0;

		for (size_t i = 0; i < 512; i++)
			sum += i >= 148 && i < 156 ? ' ' : b[off + i];
		assert_int_equal(strtoul((const char *)b + off + 148, NULL, 8), sum);
		if (!strcmp((const char *)b + off, name)) {
			*size = n;
			assert_true(off + 512 + n <= r->body_len);
			return b + off + 512;
		}
		off += 512 + (n + 511) / 512 * 512;
	}
	return NULL;
}

static struct http_resp get_trajectory(int port, const char *id, const char *token)
{
	struct http_resp r;
	char path[160], v[64];

	snprintf(path, sizeof(path), "/v1/sessions/%s/trajectory", id);
	assert_int_equal(http_request("127.0.0.1", port, "GET", path, token, NULL, 0, 60, &r), 0);
	if (r.status != 200)
		fail_msg("GET %s: %d %.300s", path, r.status, r.body ? r.body : "");
	assert_string_equal(http_header(&r, "content-type", v, sizeof(v)), "application/x-tar");
	assert_int_equal(r.body_len % 512, 0);
	return r;
}

static json_t *tar_json(const struct http_resp *r, const char *name)
{
	size_t n;
	const unsigned char *p = tar_member(r, name, &n);
	json_t *j = p ? json_loadb((const char *)p, n, 0, NULL) : NULL;

	if (!j)
		fail_msg("no JSON %s in the archive", name);
	return j;
}

/* The archive's steps, one JSON object each. */
static json_t *tar_steps(const struct http_resp *r)
{
	size_t n;
	const unsigned char *p = tar_member(r, "trajectory.jsonl", &n);
	json_t *all = json_array();

	assert_non_null(p);
	for (size_t at = 0; at < n;) {
		const unsigned char *nl = memchr(p + at, '\n', n - at);
		json_t *line;

		assert_non_null(nl);
		line = json_loadb((const char *)p + at, (size_t)(nl - (p + at)), 0, NULL);
		assert_non_null(line);
		json_array_append_new(all, line);
		at = (size_t)(nl - p) + 1;
	}
	return all;
}

/* What the script sent, step by step, and what each step must show. */
struct sent {
	const char *action;
	const char *channel, *dialect;
	int status;
	const char *image_source; /* NULL: no image */
	const char *format;
	int image_w; /* of the image, 0: any */
};

/* How many of a converter's output items are of type (blocks in messages
 * for Anthropic, items for --openai). */
static size_t count_type(const json_t *out, const char *type)
{
	const json_t *items = json_is_array(out) ? out : json_object_get(out, "messages");
	size_t n = 0, i, k;
	json_t *it, *b;

	json_array_foreach(items, i, it)
	{
		if (!strcmp(json_string_value(json_object_get(it, "type")) ?: "", type))
			n++;
		json_array_foreach(json_object_get(it, "content"), k, b)
			n += !strcmp(json_string_value(json_object_get(b, "type")) ?: "", type);
	}
	return n;
}

/* Runs clients/trajectory_to_messages.py on the archive in r. */
static json_t *convert(const struct http_resp *r, bool openai)
{
	char path[] = "/tmp/test_trajectory_XXXXXX", cmd[256];
	int fd = mkstemp(path);
	json_t *out;
	FILE *f;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, r->body, r->body_len), (ssize_t)r->body_len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 clients/trajectory_to_messages.py %s %s", path,
		 openai ? "--openai" : "");
	f = popen(cmd, "r");
	assert_non_null(f);
	out = json_loadf(f, 0, NULL);
	assert_int_equal(pclose(f), 0);
	unlink(path);
	assert_non_null(out);
	return out;
}

static void test_trajectory(void **state)
{
	static const struct sent script[] = {
		{ "{\"action\":\"left_click\",\"coordinate\":[200,300],"
		  "\"screenshot\":{\"format\":\"png\",\"width\":640}}",
		  "http", "anthropic", 200, "action", "png", 640 },
		{ "{\"type\":\"move\",\"x\":400,\"y\":100}", "http", "openai", 200, "screenshot",
		  "jpeg", W },
		{ "{\"action\":\"click\",\"x\":1300,\"y\":5}", "http", NULL, 400, NULL, NULL, 0 },
		{ "{\"id\":7,\"action\":\"drag\",\"path\":[[10,10],[20,30]]}", "control", "vitrine",
		  200, NULL, NULL, 0 },
		{ "{\"type\":\"click\",\"x\":10,\"y\":20,\"button\":\"left\","
		  "\"screenshot\":true}",
		  "control", "openai", 200, "action", "jpeg", W },
		/* a batch is one step, its body as sent, its one screenshot */
		{ "{\"actions\":[{\"type\":\"move\",\"x\":50,\"y\":60},"
		  "{\"action\":\"cursor_position\"}],\"screenshot\":true}",
		  "control", NULL, 200, "action", "jpeg", W },
	};
	const size_t k = sizeof(script) / sizeof(script[0]);
	struct http_resp r;
	json_t *meta, *steps, *out;
	int64_t n0;
	char path[128], origin[128];
	int fd, status;

	(void)state;
	r = get_trajectory(gw.port, sid, view);
	meta = tar_json(&r, "meta.json");
	n0 = json_integer_value(json_object_get(meta, "last_step")); /* the tests before */
	assert_int_equal(json_integer_value(json_object_get(meta, "dropped")), 0);
	json_decref(meta);
	http_resp_free(&r);

	/* The script: HTTP (a screenshot fetched between), then the socket. */
	r = act(ctl, script[0].action, 200, NULL);
	http_resp_free(&r);
	r = act(ctl, script[1].action, 200, NULL);
	http_resp_free(&r);
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path_shot, view, NULL, 0, 30,
				      &r),
			 0);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	r = act(ctl, script[2].action, 400, "out_of_range");
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/control", sid);
	snprintf(origin, sizeof(origin), "http://127.0.0.1:%d", gw.port);
	fd = ws_connect(gw.port, path, ctl, origin, &status);
	assert_true(fd >= 0);
	for (size_t i = 3; i < k; i++) {
		json_t *j;

		assert_int_equal(ws_send_text(fd, script[i].action), 0);
		j = recv_json(fd);
		assert_true(json_is_true(json_object_get(j, "ok")));
		json_decref(j);
	}
	close(fd);
	/* A step that returned its own image keeps it. */
	assert_int_equal(http_request("127.0.0.1", gw.port, "GET", path_shot, view, NULL, 0, 30,
				      &r),
			 0);
	http_resp_free(&r);

	r = get_trajectory(gw.port, sid, view);
	meta = tar_json(&r, "meta.json");
	steps = tar_steps(&r);
	assert_int_equal(json_integer_value(json_object_get(meta, "last_step")), n0 + (int64_t)k);
	assert_int_equal(json_integer_value(json_object_get(meta, "steps")), n0 + (int64_t)k);
	assert_int_equal(json_array_size(steps), n0 + (int64_t)k);
	assert_string_equal(json_string_value(json_object_get(meta, "session")), sid);
	for (size_t i = 0; i < k; i++) {
		json_t *st = json_array_get(steps, (size_t)n0 + i);
		json_t *sent = json_loads(script[i].action, 0, NULL);
		const char *img = json_string_value(json_object_get(st, "image"));
		int64_t t0 = json_integer_value(json_object_get(st, "received_ms"));

		assert_int_equal(json_integer_value(json_object_get(st, "step")),
				 n0 + 1 + (int64_t)i);
		assert_true(json_equal(json_object_get(st, "action"), sent));
		assert_string_equal(json_string_value(json_object_get(st, "channel")),
				    script[i].channel);
		if (script[i].dialect)
			assert_string_equal(json_string_value(json_object_get(st, "dialect")),
					    script[i].dialect);
		assert_int_equal(json_integer_value(json_object_get(st, "status")),
				 script[i].status);
		assert_true(t0 > 1700000000000 &&
			    json_integer_value(json_object_get(st, "finished_ms")) >= t0);
		assert_null(json_object_get(json_object_get(json_object_get(st, "result"),
							    "screenshot"),
					    "data"));
		if (!script[i].image_source) {
			assert_true(json_is_null(json_object_get(st, "image")));
		} else {
			size_t n;
			const unsigned char *p;
			struct ppm pic;
			char want[64];

			snprintf(want, sizeof(want), "images/%06lld.%s",
				 (long long)(n0 + 1 + (int64_t)i), script[i].format);
			assert_non_null(img);
			assert_string_equal(img, want);
			assert_string_equal(json_string_value(json_object_get(st, "image_source")),
					    script[i].image_source);
			p = tar_member(&r, img, &n);
			assert_non_null(p);
			if (!strcmp(script[i].format, "png")) {
				assert_memory_equal(p, "\x89PNG", 4);
				assert_int_equal(png_decode(p, n, &pic), 0);
			} else {
				assert_memory_equal(p, "\xff\xd8\xff", 3);
				assert_int_equal(jpeg_decode(p, n, &pic), 0);
			}
			assert_int_equal(pic.width, script[i].image_w);
			ppm_free(&pic);
		}
		json_decref(sent);
	}
	/* the screen coordinates each resolved to */
	{
		json_t *want = json_pack("[i, i]", 200, 300);

		assert_true(json_equal(json_object_get(json_object_get(json_array_get(steps,
										      (size_t)n0),
								       "coordinates"),
						       "point"),
				       want));
		json_decref(want);
	}
	assert_int_equal(json_array_size(
				 json_object_get(json_object_get(json_array_get(steps,
										(size_t)n0 + 3),
								 "coordinates"),
						 "path")),
			 2);
	/* The converter: one call per step, in both forms. */
	out = convert(&r, false);
	assert_int_equal(count_type(out, "tool_use"), json_array_size(steps));
	assert_int_equal(count_type(out, "tool_result"), json_array_size(steps));
	json_decref(out);
	out = convert(&r, true);
	assert_int_equal(count_type(out, "computer_call"), json_array_size(steps));
	json_decref(out);
	json_decref(steps);
	json_decref(meta);
	http_resp_free(&r);
}

/* A gateway that keeps 3 steps: the newest 3 of 5, 2 counted as dropped.
 * The steps fail to parse, so the session need not be ready. */
static void test_trajectory_bounds(void **state)
{
	const char *const args[] = { "--trajectory-max-steps", "3", NULL };
	struct gateway_proc g2;
	struct http_resp r;
	json_t *meta, *steps;
	char id[64], token[64], path[128], body[64];

	(void)state;
	assert_int_equal(gateway_proc_start(&g2, args), 0);
	assert_int_equal(http_request("127.0.0.1", g2.port, "POST", "/v1/sessions", g2.key,
				      "{\"image\":\"tiny\"}", 16, 30, &r),
			 0);
	assert_int_equal(r.status, 201);
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(r.json, "id")));
	snprintf(token, sizeof(token), "%s",
		 json_string_value(json_object_get(json_object_get(r.json, "tokens"), "control")));
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", id);
	for (int i = 1; i <= 5; i++) {
		snprintf(body, sizeof(body), "{\"action\":\"bogus\",\"n\":%d}", i);
		assert_int_equal(http_request("127.0.0.1", g2.port, "POST", path, token, body,
					      strlen(body), 30, &r),
				 0);
		assert_int_equal(r.status, 400);
		http_resp_free(&r);
	}
	r = get_trajectory(g2.port, id, token);
	meta = tar_json(&r, "meta.json");
	steps = tar_steps(&r);
	assert_int_equal(json_integer_value(json_object_get(meta, "dropped")), 2);
	assert_int_equal(json_integer_value(json_object_get(meta, "steps")), 3);
	assert_int_equal(json_integer_value(json_object_get(meta, "first_step")), 3);
	assert_int_equal(json_array_size(steps), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(json_integer_value(
					 json_object_get(json_object_get(json_array_get(steps,
											(size_t)i),
									 "action"),
							 "n")),
				 i + 3);
	json_decref(steps);
	json_decref(meta);
	http_resp_free(&r);
	assert_int_equal(gateway_proc_stop(&g2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_screenshot_endpoint),
		cmocka_unit_test(test_clicks_land_exactly),
		cmocka_unit_test(test_cursor_position_and_scaled_reply),
		cmocka_unit_test(test_zoom_and_wait),
		cmocka_unit_test(test_tokens_and_errors),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_control_websocket),
		cmocka_unit_test(test_trajectory),
		cmocka_unit_test(test_trajectory_bounds),
	};

	return cmocka_run_group_tests_name("gateway actions (tiny guest)", tests, setup, teardown);
}
