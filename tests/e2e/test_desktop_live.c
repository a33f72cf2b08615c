/* tests/e2e/test_desktop_live.c: the live view on the real desktop guest
 * (Chromium), one session for the group: a viewer's first frame matches a
 * screenshot, the guest's pointer shape arrives (X draws a hardware cursor,
 * which QEMU hands over as a RichCursor), and a person who takes control
 * clicks in the page through the stream while the agent is refused. The
 * session is restored from the shared template (tests/lib/e2e_template.h)
 * and opens tests/e2e/pages/live.html, put in the guest with the files API. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/e2e_template.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"
#include "tests/lib/stream_client.h"
#include "tests/lib/ws_client.h"

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
static char sid[64], ctl[64], view[64], path_stream[128], tpl[64];

/* Calls path (under the session) with the control token; -1 unless 200. */
static int call_ok(const char *method, const char *sub, const char *body, size_t len)
{
	char path[256];
	struct http_resp r;
	bool ok;

	snprintf(path, sizeof(path), "/v1/sessions/%s/%s", sid, sub);
	if (http_request("127.0.0.1", gw.port, method, path, ctl, body, len, 60, &r) < 0)
		return -1;
	if (!(ok = r.status == 200))
		fprintf(stderr, "%s %s: %d %s\n", method, path, r.status, r.body ? r.body : "");
	http_resp_free(&r);
	return ok ? 0 : -1;
}

/* Puts live.html in the guest, opens it and waits until it shows. */
static int open_page(void)
{
	static const char open[] = "{\"url\":\"file:///home/vitrine/live.html\"}";
	char *page = NULL;
	size_t len = 0;
	int64_t deadline = fs_now_ms() + 60000;
	int rc = -1;

	if (fs_read_file("tests/e2e/pages/live.html", 1 << 16, &page, &len) < 0 ||
	    call_ok("PUT", "files?path=live.html", page, len) < 0 ||
	    call_ok("POST", "open", open, strlen(open)) < 0)
		goto out;
	while (rc < 0 && fs_now_ms() < deadline) {
		struct ppm img;

		if (gateway_proc_screenshot(&gw, sid, view, &img) == 0) {
			if (ppm_close(ppm_pixel(&img, 300, 300), 0x3366CC, 8))
				rc = 0;
			ppm_free(&img);
		}
		if (rc < 0)
			usleep(200 * 1000);
	}
	if (rc < 0)
		fprintf(stderr, "live.html did not show within 60 s\n");
out:
	free(page);
	return rc;
}

static int setup(void **state)
{
	char body[160];
	struct gateway_session created;

	(void)state;
	if (gateway_proc_start(&gw, NULL) < 0 || e2e_template_get(&gw, tpl, sizeof(tpl), NULL) < 0)
		return -1;
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	if (gateway_proc_create_session(&gw, body, 300, &created) < 0)
		return -1;
	snprintf(sid, sizeof(sid), "%s", created.id);
	snprintf(ctl, sizeof(ctl), "%s", created.control);
	snprintf(view, sizeof(view), "%s", created.view);
	snprintf(path_stream, sizeof(path_stream), "/v1/sessions/%s/stream", sid);
	return open_page();
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw); /* a template in use cannot go */
	e2e_template_release(&gw, tpl);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static struct ppm screenshot_png(void)
{
	struct ppm img;

	assert_int_equal(gateway_proc_screenshot(&gw, sid, view, &img), 0);
	return img;
}

static int connect_with(const char *token)
{
	int st, fd = ws_connect(gw.port, path_stream, token, NULL, &st);

	if (fd < 0)
		fail_msg("stream upgrade refused: %d", st);
	return fd;
}

static void pointer(int fd, int x, int y, int buttons)
{
	assert_int_equal(sc_send_json(fd, json_pack("{s:s, s:i, s:i, s:i}", "type", "pointer", "x",
						    x, "y", y, "buttons", buttons)),
			 0);
}

static void test_live_view_on_chromium(void **state)
{
	struct sc_screen s = { 0 }, sc = { 0 };
	struct ppm shot;
	uint64_t sum = 0;
	int64_t deadline;
	int fd, c;
	json_t *j;

	(void)state;
	/* A viewer sees what a screenshot shows. */
	fd = connect_with(view);
	assert_int_equal(sc_wait_frame(fd, &s, 0, 90000),
			 0); /* generous: TCG guests on a shared machine */
	shot = screenshot_png();
	assert_int_equal(s.img.width, shot.width);
	for (size_t i = 0; i < (size_t)shot.width * shot.height * 3; i++)
		sum += (uint64_t)abs((int)shot.rgb[i] - (int)s.img.rgb[i]);
	if (sum > (uint64_t)shot.width * shot.height * 3 * 3)
		fail_msg("stream and screenshot differ: mean %.2f",
			 (double)sum / ((double)shot.width * shot.height * 3));
	ppm_free(&shot);

	/* A person takes control and clicks in the page. */
	c = connect_with(ctl);
	assert_int_equal(ws_send(c, 1, "{\"type\":\"take\"}", 15), 0);
	j = sc_wait_json(c, "control", &sc, 20000);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "you")));
	json_decref(j);
	{
		char path[160], code[64] = "";
		const char *a = "{\"action\":\"left_click\",\"coordinate\":[300,300]}";
		struct http_resp r;

		snprintf(path, sizeof(path), "/v1/sessions/%s/actions", sid);
		assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path, ctl, a, strlen(a),
					      30, &r),
				 0);
		assert_int_equal(r.status, 409);
		snprintf(code, sizeof(code), "%s", http_error_code(&r));
		assert_string_equal(code, "controlled_by_viewer");
		http_resp_free(&r);
	}
	pointer(c, 300, 300, 0);
	pointer(c, 300, 300, 1);
	pointer(c, 300, 300, 0);
	/* The watcher sees the page react (Chromium under TCG takes a while). */
	deadline = fs_now_ms() + 60000;
	while (!ppm_close(ppm_pixel(&s.img, 300, 300), 0xFF0000, 60)) {
		if (fs_now_ms() > deadline || sc_wait_frame(fd, &s, s.seq, 10000) < 0)
			fail_msg("the click never showed: %06x at (300,300)",
				 ppm_pixel(&s.img, 300, 300));
	}
	/* X's pointer is a hardware cursor: its shape came as a message. */
	deadline = fs_now_ms() + 10000;
	while (!s.shapes && fs_now_ms() < deadline)
		sc_wait_frame(fd, &s, s.seq, 1000);
	printf("    pointer shapes received: %d (last %dx%d); cursor at (%d,%d)\n", s.shapes,
	       s.shape_w, s.shape_h, s.cursor_x, s.cursor_y);
	assert_true(s.shapes > 0);
	assert_int_equal(s.cursor_x, 300);
	assert_int_equal(s.cursor_y, 300);
	close(c);
	close(fd);
	sc_screen_free(&s);
	sc_screen_free(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_view_on_chromium),
	};

	return cmocka_run_group_tests_name("live view on the desktop guest", tests, setup,
					   teardown);
}
