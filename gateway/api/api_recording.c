/* gateway/api/api_recording.c: the routes of a session's recording
 * (docs/api.md "Recordings"; the recorder is gateway/stream/recorder.h):
 * start, stop, the timeline, one frame, the WebM video (made by ffmpeg on
 * a thread: the request waits on its session meanwhile). What each
 * answered action or command puts on the timeline is noted where every
 * answer is (api_audit.c). */
#include "gateway/api/api_int.h"

#include "gateway/session/session.h"
#include "gateway/stream/recorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How long a request for the video waits for ffmpeg (which is killed
 * after its own limit, rec_export.c). */
#define WEBM_WAIT_S 600

static void start(struct http_req *r, struct sess *s)
{
	struct api_error e;

	if (rec_start(s, &e) < 0)
		http_reply_api_error(r, &e);
	else
		http_reply_json(r, 200, rec_summary(s));
}

static void stop(struct http_req *r, struct sess *s)
{
	struct api_error e;

	if (rec_stop(s, "api", &e) < 0)
		http_reply_api_error(r, &e);
	else
		http_reply_json(r, 200, rec_summary(s));
}

static void timeline(struct http_req *r, struct sess *s)
{
	json_t *j;

	if (!rec_exists(s)) {
		http_reply_error(r, 404, "no_recording", "the session was never recorded");
		return;
	}
	if (!(j = rec_json(s)))
		http_reply_error(r, 500, "internal", "out of memory");
	else
		http_reply_json(r, 200, j);
}

static void frame(struct http_req *r, struct sess *s)
{
	uint8_t *data = NULL;
	size_t len = 0;
	char *end;
	unsigned long i = strtoul(r->route.sub, &end, 10);
	int rc;

	if (!rec_exists(s)) {
		http_reply_error(r, 404, "no_recording", "the session was never recorded");
		return;
	}
	rc = i > UINT32_MAX ? -ENOENT : rec_frame_read(s, (uint32_t)i, &data, &len);
	if (rc == -ENOENT)
		http_reply_error(r, 404, "not_found", "the recording has no such frame");
	else if (rc < 0)
		http_reply_error(r, 500, "internal", "the frame cannot be read");
	else
		http_reply_bytes(r, 200, "image/jpeg", data, len);
	free(data);
}

/* Answers with the video of generation gen when it is there; true when r
 * was answered. */
static bool webm_answer(struct http_req *r, struct sess *s, int64_t gen)
{
	const uint8_t *data;
	size_t len;
	struct api_error e;
	int rc = rec_webm_get(s, gen, &data, &len, &e);

	if (rc == 0)
		return false;
	if (rc < 0)
		http_reply_api_error(r, &e);
	else
		http_reply_bytes(r, 200, "video/webm", data, len);
	return true;
}

static void webm(struct http_req *r, struct sess *s)
{
	struct api_after_state *st;
	struct api_error e;
	int64_t gen;
	int rc;

	if (!rec_exists(s)) {
		http_reply_error(r, 404, "no_recording", "the session was never recorded");
		return;
	}
	if (!api_can_wait(r, s))
		return;
	if ((rc = rec_webm_begin(s, &gen, &e)) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	if (rc == 1 && webm_answer(r, s, gen))
		return;
	if (!(st = http_route_state(r)))
		return;
	st->after = gen; /* the export this request waits for */
	api_wait(r, s, WEBM_WAIT_S);
}

void api_recording_resume(struct http_req *r, struct sess *s, bool timed_out)
{
	const struct api_after_state *st = r->route_state;

	if (!webm_answer(r, s, st->after) && !timed_out)
		return;
	api_unpark(r, s);
	if (!r->have_response)
		http_reply_error(r, 504, "timeout", "the video was not ready in time");
}

/* The routes: the session (checked against the route's row: its
 * recording's changes need "act", looking at it "view"), then the answer. */
static void on_session(struct http_req *r, void (*answer)(struct http_req *r, struct sess *s))
{
	struct sess *s = api_route_session(r);

	if (s)
		answer(r, s);
}

void api_recording_timeline(struct http_req *r)
{
	on_session(r, timeline);
}

void api_recording_start(struct http_req *r)
{
	on_session(r, start);
}

void api_recording_stop(struct http_req *r)
{
	on_session(r, stop);
}

void api_recording_frame(struct http_req *r)
{
	on_session(r, frame);
}

void api_recording_webm(struct http_req *r)
{
	on_session(r, webm);
}
