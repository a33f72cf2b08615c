/* tests/integration/test_gateway_recording.c: session recordings through
 * `vitrine serve` on one tiny guest created with "record": true: the
 * timeline lists the actions, a command and events in time order; the
 * frame recorded at the end of each action shows what that action's own
 * screenshot showed (pixels of both JPEGs compared); the WebM decodes
 * (ffprobe) at the screen's size and the timeline's duration; start and
 * stop over the API with their 409s, a start replacing a stopped
 * recording; 404 for a session that never recorded; the files go with the
 * session. (The bytes per minute and the gateway's CPU while a static and a
 * changing screen are recorded: bench_observe, `make bench-observe`.) */
#include "common/base64.h"
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"
#include "tests/lib/ppm.h"
#include "tests/lib/stream_client.h"
#include "tests/lib/ws_client.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define W 800
#define H 600
/* Mean absolute difference per channel allowed between the recorded frame
 * (JPEG quality 60) and the action's screenshot (JPEG quality 80). */
#define MAX_MEAN_DIFF 6.0
/* The same in the 5x5 mark of a click: close in the frame after it,
 * far in the frame before. */
#define MAX_BOX_DIFF 35.0 /* seen: 19 to 22 */
#define MIN_MARK_DIFF 50.0 /* seen: 71 to 91 */

static struct gateway_proc gw;
static struct gateway_session sess;
/* A second gateway whose recordings may hold 4096 bytes, with a session
 * not recorded from its start (created in setup, not waited for). */
static struct gateway_proc small;
static char small_id[40];

static int setup(void **state)
{
	static const char *const small_args[] = { "--record-max-bytes", "4096", NULL };
	struct http_resp r;

	(void)state;
	if (gateway_proc_start(&gw, NULL) < 0 || gateway_proc_start(&small, small_args) < 0)
		return -1;
	if (http_request("127.0.0.1", small.port, "POST", "/v1/sessions", small.key,
			 "{\"image\":\"tiny\"}", 16, 30, &r) < 0 ||
	    r.status != 201) {
		http_resp_free(&r);
		return -1;
	}
	snprintf(small_id, sizeof(small_id), "%s",
		 json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
	return gateway_proc_create_session(&gw,
					   "{\"image\":\"tiny\",\"width\":800,\"height\":600,"
					   "\"record\":true}",
					   120, &sess);
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	gateway_proc_delete_sessions(&small);
	return gateway_proc_stop(&gw) == 0 && gateway_proc_stop(&small) == 0 ? 0 : -1;
}

/* method /v1/sessions/{id}SUFFIX on gateway g with token and body; fails
 * the test unless the status is want. */
static struct http_resp call_on(const struct gateway_proc *g, const char *method, const char *id,
				const char *suffix, const char *token, const char *body, int want)
{
	struct http_resp r;
	char path[256];

	snprintf(path, sizeof(path), "/v1/sessions/%s%s", id, suffix);
	if (http_request("127.0.0.1", g->port, method, path, token, body, body ? strlen(body) : 0,
			 120, &r) < 0 ||
	    r.status != want)
		fail_msg("%s %s -> %d %.300s (want %d)", method, path, r.status,
			 r.body ? r.body : "", want);
	return r;
}

static struct http_resp call(const char *method, const char *id, const char *suffix,
			     const char *token, const char *body, int want)
{
	return call_on(&gw, method, id, suffix, token, body, want);
}

static json_t *recording(void)
{
	struct http_resp r = call("GET", sess.id, "/recording", sess.view, NULL, 200);
	json_t *j = json_incref(r.json);

	http_resp_free(&r);
	return j;
}

static void decode_b64_jpeg(const char *b64, struct ppm *img)
{
	size_t n = 0, cap = strlen(b64);
	unsigned char *raw = malloc(cap);

	assert_int_equal(base64_decode(b64, cap, raw, cap, &n), 0);
	assert_int_equal(jpeg_decode(raw, n, img), 0);
	free(raw);
}

/* Mean absolute difference per channel of a and b in the 5x5 box at (x, y):
 * a click's mark. */
static double box_diff(const struct ppm *a, const struct ppm *b, int x, int y)
{
	long sum = 0, n = 0;

	for (int dy = -2; dy <= 2; dy++)
		for (int dx = -2; dx <= 2; dx++) {
			uint32_t p = ppm_pixel(a, x + dx, y + dy), q = ppm_pixel(b, x + dx, y + dy);

			for (int c = 0; c < 24; c += 8)
				sum += labs((long)((p >> c) & 0xff) - (long)((q >> c) & 0xff));
			n += 3;
		}
	return (double)sum / (double)n;
}

/* The frame of rec showing the screen at t_ms: the last one at or before it. */
static int frame_at(const json_t *rec, int64_t t_ms)
{
	const json_t *frames = json_object_get(rec, "frames"), *f;
	size_t i;
	int at = -1;

	json_array_foreach(frames, i, f)
	{
		if (json_integer_value(json_object_get(f, "t_ms")) <= t_ms)
			at = (int)json_integer_value(json_object_get(f, "i"));
	}
	return at;
}

static void test_never_recorded(void **state)
{
	struct http_resp r;

	(void)state;
	r = call_on(&small, "GET", small_id, "/recording", small.key, NULL, 404);
	assert_string_equal(http_error_code(&r), "no_recording");
	http_resp_free(&r);
	r = call_on(&small, "GET", small_id, "/recording.webm", small.key, NULL, 404);
	http_resp_free(&r);
	r = call_on(&small, "GET", small_id, "/recording/frames/0", small.key, NULL, 404);
	http_resp_free(&r);
	r = call_on(&small, "POST", small_id, "/recording/stop", small.key, NULL, 409);
	assert_string_equal(http_error_code(&r), "not_recording");
	http_resp_free(&r);
	/* "record" takes a boolean only. */
	assert_int_equal(http_request("127.0.0.1", small.port, "POST", "/v1/sessions", small.key,
				      "{\"image\":\"tiny\",\"record\":1}", 28, 30, &r),
			 0);
	assert_int_equal(r.status, 400);
	http_resp_free(&r);
}

static void test_timeline_matches_screenshots(void **state)
{
	static const int pts[3][2] = { { 100, 100 }, { 400, 300 }, { 700, 500 } };
	json_t *shots[3], *rec, *entries, *e, *j;
	struct http_resp r;
	int64_t prev_t = -1;
	int actions = 0, commands = 0, events = 0, deadline = 100, fd, status;
	int taken = 0, released = 0, over_ws = 0, refused = 0;
	char path[160], *text;
	size_t i;

	(void)state;
	/* The first frame comes with the screen. */
	while (rec = recording(), json_array_size(json_object_get(rec, "frames")) == 0) {
		json_decref(rec);
		assert_true(--deadline > 0);
		usleep(100 * 1000);
	}
	assert_true(json_is_true(json_object_get(rec, "recording")));
	assert_int_equal(json_integer_value(json_object_get(rec, "width")), W);
	assert_int_equal(json_integer_value(json_object_get(rec, "height")), H);
	assert_int_equal(json_integer_value(
				 json_object_get(json_array_get(json_object_get(rec, "frames"), 0),
						 "t_ms")),
			 0);
	json_decref(rec);
	for (int k = 0; k < 3; k++) {
		char body[160];

		snprintf(body, sizeof(body),
			 "{\"action\":\"left_click\",\"coordinate\":[%d,%d],\"id\":%d,"
			 "\"screenshot\":true}",
			 pts[k][0], pts[k][1], k);
		r = call("POST", sess.id, "/actions", sess.control, body, 200);
		shots[k] = json_incref(json_object_get(r.json, "screenshot"));
		assert_non_null(shots[k]);
		http_resp_free(&r);
	}
	r = call("POST", sess.id, "/exec", sess.control, "{\"cmd\":\"echo recorded\"}", 200);
	http_resp_free(&r);
	/* A streamed command: noted when its socket closes. */
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec/stream", sess.id);
	fd = ws_connect(gw.port, path, sess.control, NULL, &status);
	assert_true(fd >= 0);
	assert_int_equal(ws_send_text(fd, "{\"cmd\":\"exit 3\"}"), 0);
	while ((text = ws_recv_text(fd, 30000))) {
		bool done = strstr(text, "\"exit\"") != NULL;

		free(text);
		if (done)
			break;
	}
	close(fd);
	/* An action refused is on the timeline too, with its status. */
	r = call("POST", sess.id, "/actions", sess.control, "{\"action\":\"fly\"}", 400);
	http_resp_free(&r);
	/* One over the control socket. */
	snprintf(path, sizeof(path), "/v1/sessions/%s/control", sess.id);
	fd = ws_connect(gw.port, path, sess.control, NULL, &status);
	assert_true(fd >= 0);
	assert_int_equal(ws_send_text(fd, "{\"action\":\"mouse_move\",\"coordinate\":[5,5],"
					  "\"id\":\"ws\"}"),
			 0);
	text = ws_recv_text(fd, 30000);
	assert_non_null(text);
	j = json_loads(text, 0, NULL);
	assert_true(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	free(text);
	close(fd);
	/* A person takes control in the live view, and gives it back; an
	 * action meanwhile is refused 409. */
	snprintf(path, sizeof(path), "/v1/sessions/%s/stream", sess.id);
	fd = ws_connect(gw.port, path, sess.control, NULL, &status);
	assert_true(fd >= 0);
	assert_int_equal(ws_send_text(fd, "{\"type\":\"take\"}"), 0);
	j = sc_wait_json(fd, "control", NULL, 30000);
	while (j && !json_is_true(json_object_get(j, "you"))) {
		json_decref(j);
		j = sc_wait_json(fd, "control", NULL, 30000);
	}
	assert_non_null(j);
	json_decref(j);
	r = call("POST", sess.id, "/actions", sess.control,
		 "{\"action\":\"mouse_move\","
		 "\"coordinate\":[6,6]}",
		 409);
	http_resp_free(&r);
	assert_int_equal(ws_send_text(fd, "{\"type\":\"release\"}"), 0);
	j = sc_wait_json(fd, "control", NULL, 30000);
	while (j && !json_is_null(json_object_get(j, "controller"))) {
		json_decref(j);
		j = sc_wait_json(fd, "control", NULL, 30000);
	}
	assert_non_null(j);
	json_decref(j);
	close(fd);

	rec = recording();
	/* Frames: numbered in order, in time order, of the screen's size. */
	json_array_foreach(json_object_get(rec, "frames"), i, e)
	{
		int64_t t = json_integer_value(json_object_get(e, "t_ms"));

		assert_int_equal(json_integer_value(json_object_get(e, "i")), (json_int_t)i);
		assert_true(t >= prev_t);
		prev_t = t;
		assert_int_equal(json_integer_value(json_object_get(e, "width")), W);
		assert_true(json_integer_value(json_object_get(e, "bytes")) > 0);
	}
	prev_t = -1;
	entries = json_object_get(rec, "entries");
	json_array_foreach(entries, i, e)
	{
		const char *kind = json_string_value(json_object_get(e, "kind"));
		int64_t t = json_integer_value(json_object_get(e, "t_ms"));

		assert_true(t >= prev_t); /* in time order */
		prev_t = t;
		if (!strcmp(kind, "event")) {
			assert_non_null(json_string_value(json_object_get(e, "type")));
			assert_true(json_is_integer(json_object_get(e, "seq")));
			events++;
		} else if (!strcmp(kind, "control")) {
			const char *change = json_string_value(json_object_get(e, "change"));

			assert_non_null(change);
			assert_true(json_is_integer(json_object_get(e, "viewer")));
			taken += !strcmp(change, "taken");
			released += !strcmp(change, "released") && taken; /* after the take */
		} else if (!strcmp(kind, "command")) {
			/* The POST's, then the exec socket's (status: the upgrade's). */
			assert_string_equal(json_string_value(json_object_get(e, "cmd")),
					    commands ? "exit 3" : "echo recorded");
			assert_string_equal(json_string_value(
						    json_array_get(json_object_get(e, "argv"), 0)),
					    "/bin/sh");
			assert_int_equal(json_integer_value(json_object_get(e, "exit_code")),
					 commands ? 3 : 0);
			assert_int_equal(json_integer_value(json_object_get(e, "status")),
					 commands ? 101 : 200);
			commands++;
		} else if (!strcmp(kind, "action")) {
			const json_t *a = json_object_get(e, "action");
			int st = (int)json_integer_value(json_object_get(e, "status"));
			int64_t end = t + json_integer_value(json_object_get(e, "ms"));
			struct ppm shot, frame, before;
			char suffix[64];
			int k, fi;

			assert_true(json_is_object(a));
			if (st == 400) {
				assert_string_equal(json_string_value(json_object_get(a, "action")),
						    "fly");
				refused++;
				continue;
			}
			if (!strcmp(json_string_value(json_object_get(e, "via")), "control")) {
				assert_string_equal(json_string_value(json_object_get(a, "id")),
						    "ws");
				assert_int_equal(st, 200);
				over_ws++;
				continue;
			}
			if (st == 409) {
				assert_int_equal(taken, 1); /* while the person held control */
				assert_int_equal(released, 0);
				refused++;
				continue;
			}
			assert_int_equal(st, 200);
			k = (int)json_integer_value(json_object_get(a, "id"));
			assert_true(k >= 0 && k < 3);
			assert_int_equal(actions, k); /* the clicks in their order */
			/* The frame on screen when the action answered is its screenshot. */
			fi = frame_at(rec, end);
			assert_true(fi >= 0);
			snprintf(suffix, sizeof(suffix), "/recording/frames/%d", fi);
			r = call("GET", sess.id, suffix, sess.view, NULL, 200);
			assert_int_equal(jpeg_decode(r.body, r.body_len, &frame), 0);
			http_resp_free(&r);
			decode_b64_jpeg(json_string_value(json_object_get(shots[k], "data")),
					&shot);
			assert_int_equal(frame.width, shot.width);
			assert_int_equal(frame.height, shot.height);
			if (ppm_mean_diff(&frame, &shot) > MAX_MEAN_DIFF)
				fail_msg("action %d: frame %d differs from its screenshot by %.2f",
					 k, fi, ppm_mean_diff(&frame, &shot));
			/* Where this click left its mark, too (a whole-screen mean
			 * hardly sees a 5x5 mark): close to the screenshot, unlike the
			 * frame before the click. */
			fi = frame_at(rec, t - 1);
			assert_true(fi >= 0);
			snprintf(suffix, sizeof(suffix), "/recording/frames/%d", fi);
			r = call("GET", sess.id, suffix, sess.view, NULL, 200);
			assert_int_equal(jpeg_decode(r.body, r.body_len, &before), 0);
			http_resp_free(&r);
			if (box_diff(&frame, &shot, pts[k][0], pts[k][1]) > MAX_BOX_DIFF ||
			    box_diff(&before, &shot, pts[k][0], pts[k][1]) < MIN_MARK_DIFF)
				fail_msg("action %d: around its click, frame %.1f, frame before "
					 "%.1f from the screenshot",
					 k, box_diff(&frame, &shot, pts[k][0], pts[k][1]),
					 box_diff(&before, &shot, pts[k][0], pts[k][1]));
			ppm_free(&before);
			ppm_free(&frame);
			ppm_free(&shot);
			actions++;
		}
	}
	assert_int_equal(actions, 3);
	assert_int_equal(refused, 2);
	assert_int_equal(over_ws, 1);
	assert_int_equal(taken, 1);
	assert_int_equal(released, 1);
	assert_int_equal(commands, 2);
	assert_true(events >= 1); /* recording_started at least */
	for (int k = 0; k < 3; k++)
		json_decref(shots[k]);
	json_decref(rec);
	r = call("GET", sess.id, "/recording/frames/999999", sess.view, NULL, 404);
	http_resp_free(&r);
}

/* ffprobe's view of a WebM file: codec, size, duration. */
static void probe(const char *path, char *codec, size_t len, int *w, int *h, double *duration)
{
	char cmd[512];
	FILE *p;
	json_t *j, *st;
	json_error_t err;
	const char *d;

	snprintf(cmd, sizeof(cmd),
		 "ffprobe -v error -show_entries stream=width,height,codec_name "
		 "-show_entries format=duration -of json %s",
		 path);
	p = popen(cmd, "r");
	assert_non_null(p);
	j = json_loadf(p, 0, &err);
	pclose(p);
	if (!j)
		fail_msg("ffprobe: %s", err.text);
	st = json_array_get(json_object_get(j, "streams"), 0);
	snprintf(codec, len, "%s", json_string_value(json_object_get(st, "codec_name")));
	*w = (int)json_integer_value(json_object_get(st, "width"));
	*h = (int)json_integer_value(json_object_get(st, "height"));
	d = json_string_value(json_object_get(json_object_get(j, "format"), "duration"));
	*duration = d ? atof(d) : 0;
	json_decref(j);
}

static void test_stop_webm_start(void **state)
{
	struct http_resp r;
	char tmp[] = "/tmp/vitrine-rec-XXXXXX", codec[32], ct[64];
	int fd, w, h;
	double duration, want;
	json_t *rec;
	int64_t t0;
	long long frames;

	(void)state;
	r = call("POST", sess.id, "/recording/start", sess.control, NULL, 409);
	assert_string_equal(http_error_code(&r), "already_recording");
	http_resp_free(&r);
	r = call("POST", sess.id, "/recording/stop", sess.view, NULL, 403);
	http_resp_free(&r);
	r = call("POST", sess.id, "/recording/stop", sess.control, NULL, 200);
	assert_true(json_is_false(json_object_get(r.json, "recording")));
	assert_true(json_integer_value(json_object_get(r.json, "frame_count")) >= 4);
	http_resp_free(&r);
	r = call("POST", sess.id, "/recording/stop", sess.control, NULL, 409);
	assert_string_equal(http_error_code(&r), "not_recording");
	http_resp_free(&r);

	rec = recording();
	assert_true(json_is_false(json_object_get(rec, "recording")));
	want = (double)json_integer_value(json_object_get(rec, "duration_ms")) / 1000.0;
	frames = json_integer_value(json_object_get(rec, "frame_count"));
	json_decref(rec);
	t0 = fs_now_ms();
	r = call("GET", sess.id, "/recording.webm", sess.view, NULL, 200);
	printf("# webm export: %lld ms for %lld frames, %zu bytes\n", (long long)(fs_now_ms() - t0),
	       frames, r.body_len);
	assert_string_equal(http_header(&r, "content-type", ct, sizeof(ct)), "video/webm");
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, r.body, r.body_len), (ssize_t)r.body_len);
	close(fd);
	http_resp_free(&r);
	probe(tmp, codec, sizeof(codec), &w, &h, &duration);
	unlink(tmp);
	assert_string_equal(codec, "vp8");
	assert_int_equal(w, W);
	assert_int_equal(h, H);
	printf("# webm: %.3f s, timeline %.3f s\n", duration, want);
	if (duration < want - 0.5 || duration > want + 0.5)
		fail_msg("the video lasts %.3f s, the timeline %.3f s", duration, want);
	/* Kept: the same bytes again, without ffmpeg. */
	t0 = fs_now_ms();
	r = call("GET", sess.id, "/recording.webm", sess.view, NULL, 200);
	printf("# webm again: %lld ms\n", (long long)(fs_now_ms() - t0));
	http_resp_free(&r);
}

/* Starting again replaces the stopped recording (its files go too:
 * test_gone_with_session). What a recording costs (bytes a minute, the
 * gateway's CPU) is measured by bench/bench_observe.c, not here. */
static void test_start_replaces_stopped(void **state)
{
	struct http_resp r;

	(void)state;
	r = call("POST", sess.id, "/recording/start", sess.control, NULL, 200);
	assert_true(json_is_true(json_object_get(r.json, "recording")));
	assert_int_equal(json_integer_value(json_object_get(r.json, "frame_count")), 0);
	http_resp_free(&r);
}

/* Past --record-max-bytes the recording stops, and says why. */
static void test_max_bytes(void **state)
{
	struct http_resp r;
	json_t *rec, *e;
	size_t i;
	int tries = 200, stopped = 0;

	(void)state;
	r = call_on(&small, "GET", small_id, "?wait=ready", small.key, NULL, 200);
	assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ready");
	http_resp_free(&r);
	r = call_on(&small, "POST", small_id, "/recording/start", small.key, NULL, 200);
	http_resp_free(&r);
	/* The first frame (some 10 kB) is over 4096 bytes. */
	for (;;) {
		r = call_on(&small, "GET", small_id, "/recording", small.key, NULL, 200);
		rec = json_incref(r.json);
		http_resp_free(&r);
		if (json_is_false(json_object_get(rec, "recording")) || !--tries)
			break;
		json_decref(rec);
		usleep(50 * 1000);
	}
	assert_true(json_is_false(json_object_get(rec, "recording")));
	assert_int_equal(json_array_size(json_object_get(rec, "frames")), 0);
	/* Within the cap but for the entry saying it stopped. */
	assert_true(json_integer_value(json_object_get(rec, "bytes")) <= 4096 + 512);
	json_array_foreach(json_object_get(rec, "entries"), i, e)
	{
		const char *type = json_string_value(json_object_get(e, "type"));

		stopped += type && !strcmp(type, "recording_stopped") &&
			   !strcmp(json_string_value(json_object_get(e, "reason")), "max_bytes");
	}
	json_decref(rec);
	assert_int_equal(stopped, 1); /* its last entry */
	r = call_on(&small, "GET", small_id, "/events", small.key, NULL, 200);
	stopped = strstr(r.body, "\"max_bytes\"") && strstr(r.body, "recording_stopped");
	http_resp_free(&r);
	assert_true(stopped);
	r = call_on(&small, "GET", small_id, "/recording.webm", small.key, NULL, 409);
	assert_string_equal(http_error_code(&r), "no_frames");
	http_resp_free(&r);
}

static int recording_dirs(void)
{
	char path[160];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(path, sizeof(path), "%s/recordings", gw.state_dir);
	if (!(d = opendir(path)))
		return 0;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, sess.id, strlen(sess.id));
	closedir(d);
	return n;
}

static void test_gone_with_session(void **state)
{
	struct http_resp r;
	char path[160];
	int tries = 100;

	(void)state;
	assert_int_equal(recording_dirs(), 1); /* the earlier one went when it was replaced */
	snprintf(path, sizeof(path), "/v1/sessions/%s", sess.id);
	assert_int_equal(http_request("127.0.0.1", gw.port, "DELETE", path, gw.key, NULL, 0, 30,
				      &r),
			 0);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	while (recording_dirs() && --tries)
		usleep(50 * 1000);
	assert_int_equal(recording_dirs(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_never_recorded),
		cmocka_unit_test(test_timeline_matches_screenshots),
		cmocka_unit_test(test_stop_webm_start),
		cmocka_unit_test(test_start_replaces_stopped),
		cmocka_unit_test(test_max_bytes),
		cmocka_unit_test(test_gone_with_session),
	};

	return cmocka_run_group_tests_name("gateway recordings (tiny guest)", tests, setup,
					   teardown);
}
