/* gateway/action/run.c: see run.h. */
#include "gateway/action/run.h"

#include "common/base64.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "common/work_queue.h"
#include "display/encode_cache.h"
#include "display/encode_pool.h"
#include "display/mirror.h"
#include "display/settle.h"
#include "gateway/action/batch.h"
#include "gateway/action/plan.h"
#include "gateway/action/toolset.h"
#include "gateway/action/toolset_session.h"
#include "gateway/action/trajectory.h"
#include "gateway/action/xsync.h"
#include "gateway/core/metrics.h"
#include "gateway/session/session.h"
#include "vmm-qemu/qga_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_POLL_US (10 * LWS_US_PER_MS)
/* A frame confirmed current this recently counts as fresh (the mirror is
 * kept fresh every KEEP_FRESH_MS, see session/job.c). */
#define FRESH_ENOUGH_MS 80

enum run_phase { RUN_STEPS, RUN_SETTLE };

struct run;

/* Text the keymap cannot type goes through the guest agent (qemu-ga runs
 * `vitrine-type`, i.e. xdotool, in the guest). The agent call blocks, so a
 * worker of the gateway's guest queue makes it: the job is the queue's from
 * its submit until its done, which frees it (and goes on with the run,
 * unless the run went first and let go: run NULL). */
struct type_job {
	struct run *run; /* the loop's; NULL once abandoned */
	struct work_queue *q;
	int status; /* 0: typed; else see err (the worker's, then done's) */
	char err[512];
	char *text; /* owned */
	char qga_path[4200];
};

#define TYPE_TIMEOUT_MS 30000
/* A click action closer than this to the previous one would be counted by
 * X and Chromium as the continuation of its click sequence (a double click
 * followed by a triple click would make a quintuple one): it waits. Above
 * X's default double-click time (400 ms) and Chromium's own (500 ms), with
 * room for a guest that processes input a little late. */
#define NEW_CLICK_SEQUENCE_MS 800
#define AGENT_PING_MS 3000

struct run {
	struct run *next; /* all_runs */
	struct sess *s;
	struct sess_listener listener; /* the session stopping its guest ends the run */
	struct action_batch *batch; /* owned; NULL for a plain screenshot */
	size_t cur; /* the action under way: batch->actions[cur] */
	struct plan *plan; /* owned: the current action's */
	size_t step;
	json_t *done_list; /* owned: what the batch's actions that ran answered */
	bool ran_all; /* every action has run: what fails now is the screenshot */
	enum run_phase phase;
	int64_t t0_ms;
	struct shot_opts shot;
	bool want_shot;
	bool sent_input; /* the screen may still change because of us */
	json_t *result; /* owned: cursor_position's answer */
	uint64_t ticket; /* freshness probe in flight; 0 when none */
	struct type_job *typing; /* on the guest queue while text is typed */
	struct xsync_job *xsync; /* on the guest queue while X is waited for */
	struct shot_job *encoding; /* the screenshot on the encoder pool, or NULL */
	bool settled; /* how the run ended, while its screenshot is encoded */
	int waited_ms;
	uint64_t seen_seq; /* newest frame taken into account */
	struct display_settle settle;
	lws_sorted_usec_list_t sul; /* delays, probe polls */
	run_done_fn done;
	void *ud;
	struct traj_step *traj; /* owned: the action's step in the trajectory, or NULL */
	/* A toolset turn (batch->turn): each call's image is taken as the call
	 * runs (mid_shot), and every call answers with a tool_result. */
	struct toolset_frame frame;
	json_t *tool_results; /* owned: the answers of the calls that ran */
	json_t *shot_block; /* owned: the tool_result of the call under way's image */
	bool mid_shot;
};

static bool is_turn(const struct run *r)
{
	return r->batch && r->batch->turn;
}

void shot_opts_default(struct shot_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->enc.format = DISPLAY_FORMAT_JPEG;
	o->enc.quality = 80;
	o->quiet_ms = 300;
	o->timeout_ms = 5000;
	o->fresh = true;
}

/* Whether the options j give key (an integer: json_unpack checked). */
static bool given(const json_t *j, const char *key)
{
	return json_is_integer(json_object_get(j, key));
}

/* Whether a given key's value v is outside min..max (-1, the value of an
 * absent key, included when given). */
static bool out_of_range(const json_t *j, const char *key, json_int_t v, int min, int max)
{
	return given(j, key) && (v < min || v > max);
}

int shot_opts_parse(const json_t *j, struct shot_opts *o, struct api_error *e)
{
	const char *format = NULL;
	/* Read whole (json_int_t): as an int, 2^32 + 50 would pass as 50. */
	json_int_t quality = -1, width = -1, height = -1, quiet = -1, timeout = -1;
	json_error_t jerr;

	if (json_is_true(j))
		return 0;
	if (!json_is_object(j) ||
	    json_unpack_ex((json_t *)j, &jerr, JSON_STRICT, "{s?s, s?I, s?I, s?I, s?I, s?I}",
			   "format", &format, "quality", &quality, "width", &width, "height",
			   &height, "quiet_ms", &quiet, "timeout_ms", &timeout) < 0) {
		char msg[256];

		snprintf(msg, sizeof(msg),
			 "screenshot must be true or {format, quality, width, height, "
			 "quiet_ms, timeout_ms}: %s",
			 json_is_object(j) ? jerr.text : "not an object");
		api_error_set(e, 400, "invalid_argument", msg);
		return -EINVAL;
	}
	if (format && !strcmp(format, "png"))
		o->enc.format = DISPLAY_FORMAT_PNG;
	else if (format && strcmp(format, "jpeg") && strcmp(format, "jpg")) {
		api_error_set(e, 400, "invalid_argument", "screenshot format must be jpeg or png");
		return -EINVAL;
	}
	if (out_of_range(j, "quality", quality, 1, 100) ||
	    out_of_range(j, "width", width, 1, 16384) ||
	    out_of_range(j, "height", height, 1, 16384) ||
	    out_of_range(j, "quiet_ms", quiet, 0, 10000) ||
	    out_of_range(j, "timeout_ms", timeout, 0, 60000)) {
		api_error_set(
			e, 400, "out_of_range",
			"screenshot: quality 1..100, width/height 1..16384, quiet_ms 0..10000, "
			"timeout_ms 0..60000");
		return -EINVAL;
	}
	if (given(j, "quality"))
		o->enc.quality = (int)quality;
	if (given(j, "width"))
		o->enc.max_width = (int)width;
	if (given(j, "height"))
		o->enc.max_height = (int)height;
	if (given(j, "quiet_ms"))
		o->quiet_ms = (int)quiet;
	if (given(j, "timeout_ms"))
		o->timeout_ms = (int)timeout;
	return 0;
}

/* Every run under way, of every session (loop thread only). */
static struct run *all_runs;

static void unlink_run(struct run *r)
{
	sess_unlisten(r->s, &r->listener);
	for (struct run **pp = &all_runs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
}

static void type_job_free(struct type_job *j)
{
	free(j->text);
	free(j);
}

/* The guest queue's work (a worker's). */
static void type_work(void *ud, void *ctx)
{
	struct type_job *j = ud;
	const char *argv[] = { "/usr/local/bin/vitrine-type", j->text, NULL };
	struct qga_exec_result res;
	struct qga_client *c = NULL;

	(void)ctx;
	/* A guest without an agent fails the ping fast, not the exec slowly. */
	if (qga_client_connect(j->qga_path, 5000, &c, j->err, sizeof(j->err)) == 0 &&
	    qga_client_call(c, "guest-ping", NULL, NULL, AGENT_PING_MS, j->err, sizeof(j->err)) ==
		    0 &&
	    qga_client_exec(c, argv, NULL, NULL, 0, TYPE_TIMEOUT_MS, &res, j->err,
			    sizeof(j->err)) == 0) {
		if (res.exited && res.exit_code == 0)
			j->status = 0;
		else
			snprintf(j->err, sizeof(j->err), "vitrine-type exited %d: %.400s",
				 res.exit_code, res.err ? res.err : "");
		qga_exec_result_free(&res);
	}
	qga_client_destroy(c);
}

static void steps(struct run *r);
static void fail(struct run *r, int status, const char *code, const char *msg);

/* The job's done (the loop's): the run goes on, unless it went. */
static void type_done(void *ud, int status)
{
	struct type_job *j = ud;
	struct run *r = j->run;

	if (!r) {
		type_job_free(j);
		return;
	}
	r->typing = NULL;
	if (status < 0 || j->status) {
		fail(r, status < 0 ? 503 : 502, "type_failed",
		     status < 0 ? "the gateway is stopping" : j->err);
		type_job_free(j);
		return;
	}
	type_job_free(j);
	r->sent_input = true;
	steps(r);
}

/* Text typed through qemu-ga goes one run at a time per session (the agent
 * serves one command at a time anyway): another run waits its turn. */
static bool typing_busy(const struct run *r)
{
	for (const struct run *o = all_runs; o; o = o->next)
		if (o != r && o->s == r->s && o->typing)
			return true;
	return false;
}

/* Starts typing text through the guest agent: type_done goes on. Returns
 * 0, -EBUSY (the guest queue is full: try again later) or -ENOMEM. */
static int start_typing(struct run *r, const char *text)
{
	struct type_job *j = calloc(1, sizeof(*j));
	int rc;

	if (!j || !(j->text = strdup(text))) {
		free(j);
		return -ENOMEM;
	}
	j->run = r;
	j->q = sess_gw(r->s)->guest_work;
	j->status = -1;
	/* no guest free any more: the connect fails, and says so */
	sess_guest_socket(r->s, VMM_SOCKET_QGA, j->qga_path, sizeof(j->qga_path));
	rc = work_queue_submit(j->q, r->s, type_work, type_done, j);
	if (rc < 0) {
		type_job_free(j);
		return rc == -EBUSY ? rc : -ENOMEM;
	}
	r->typing = j;
	return 0;
}

/* Lets go of the text being typed: its done frees the job (now, when it is
 * still queued). */
static void abandon_typing(struct run *r)
{
	struct type_job *j = r->typing;

	if (!j)
		return;
	r->typing = NULL;
	j->run = NULL;
	work_queue_cancel(j->q, j);
}

/* xsync_done_fn: the wait on the guest is over; the run goes on. */
static void xsync_ended(void *ud, int status)
{
	struct run *r = ud;

	r->xsync = NULL;
	/* The waits are best effort: a guest whose X did not take the
	 * modifiers, or that did not answer, gets the input anyway. */
	if (status != 0)
		log_debug("run", "%s: a wait on the guest ended with %d", sess_id(r->s), status);
	steps(r);
}

static void abandon_encoding(struct run *r);

/* A run cut short (cancelled, or failed between steps) lets go of any key
 * or button its sent steps left down, while its guest still runs. */
static void release_held(struct run *r)
{
	json_t *up;
	char err[256];

	if (!r->plan || r->step >= r->plan->len || !sess_guest_free(r->s) ||
	    !(up = plan_release_held(r->plan, r->step)))
		return;
	if (sess_input(r->s, up, err, sizeof(err)) < 0)
		log_warn("run", "%s: cannot let go of held input: %s", sess_id(r->s), err);
}

static void free_run(struct run *r)
{
	trajectory_cancelled(r->s, r->traj);
	r->traj = NULL;
	release_held(r);
	abandon_encoding(r);
	lws_sul_cancel(&r->sul);
	abandon_typing(r);
	xsync_abandon(r->xsync);
	r->xsync = NULL;
	unlink_run(r);
	batch_destroy(r->batch);
	plan_destroy(r->plan);
	json_decref(r->result);
	json_decref(r->done_list);
	json_decref(r->tool_results);
	json_decref(r->shot_block);
	free(r);
}

void run_record(struct run *r, struct traj_step *st)
{
	r->traj = st;
}

void run_cancel(struct run *r)
{
	if (r)
		free_run(r);
}

/* The run's kind for the metrics. */
static enum metrics_act act_kind(const struct run *r)
{
	if (!r->batch)
		return METRICS_ACT_SCREENSHOT;
	if (!r->batch->n)
		return METRICS_ACT_ANTHROPIC; /* a toolset turn refused at its first call */
	switch (r->batch->actions[0]->dialect) {
	case ACTIONS_DIALECT_ANTHROPIC:
		return METRICS_ACT_ANTHROPIC;
	case ACTIONS_DIALECT_OPENAI:
		return METRICS_ACT_OPENAI;
	case ACTIONS_DIALECT_VITRINE:
		break;
	}
	return METRICS_ACT_VITRINE;
}

static void finish(struct run *r, struct run_outcome *out)
{
	run_done_fn done = r->done;
	void *ud = r->ud;

	if (!r->shot.preview)
		metrics_act(act_kind(r), !out->failed, (fs_now_ms() - r->t0_ms) * 1000);
	if (!out->failed && r->s && !r->shot.preview) {
		if (r->batch)
			sess_count_use(r->s, (int)r->batch->n, 0, 0);
		else
			sess_count_use(r->s, 0, 1, 0);
	}
	trajectory_ended(r->s, r->traj, out);
	r->traj = NULL;
	free_run(r);
	done(ud, out);
}

/* A batch that stops at action index (BATCH_NO_INDEX: after its last one,
 * taking the screenshot): its error, and what ran before. */
#define BATCH_NO_INDEX ((size_t)-1)
static json_t *batch_error(struct run *r, size_t index, const char *code, const char *msg,
			   const char *field, const json_t *id)
{
	json_t *ran = r->done_list ? json_incref(r->done_list) : json_array();
	json_t *j = json_pack("{s:b, s:{s:s, s:s}, s:I, s:o}", "ok", 0, "error", "code", code,
			      "message", msg, "ran", (json_int_t)json_array_size(ran), "results",
			      ran);

	if (j && index != BATCH_NO_INDEX)
		json_object_set_new(json_object_get(j, "error"), "index",
				    json_integer((json_int_t)index));
	if (j && field && field[0])
		json_object_set_new(json_object_get(j, "error"), "field", json_string(field));
	if (j && id)
		json_object_set(json_object_get(j, "error"), "id", (json_t *)id);
	if (j && r->batch->id)
		json_object_set(j, "id", r->batch->id);
	return j;
}

/* A toolset turn stopped at call index with msg: the answers of the calls
 * before it, its error, and the fixed words for every later call. */
static void add_failed_results(struct run *r, json_t *reply, size_t index, const char *msg)
{
	json_t *all = toolset_results_stopped(r->batch->turn, r->tool_results, index, msg);

	if (reply && all)
		json_object_set(reply, "tool_results", all);
	json_decref(all);
}

static void fail(struct run *r, int status, const char *code, const char *msg)
{
	struct run_outcome out = { .failed = true };

	api_error_set(&out.err, status, code, msg);
	if (r->batch && r->batch->is_batch)
		out.reply = batch_error(r, r->ran_all ? BATCH_NO_INDEX : r->cur, code, msg, NULL,
					r->ran_all || r->cur >= r->batch->n
						? NULL
						: r->batch->actions[r->cur]->id);
	if (is_turn(r))
		add_failed_results(r, out.reply, r->ran_all ? r->batch->turn->n : r->cur, msg);
	finish(r, &out);
}

/* The session stops its guest or goes away: the run ends, 410 gone. */
static void on_session(struct sess_listener *l, struct sess *s, enum sess_signal sig,
		       const void *data)
{
	struct run *r = lws_container_of(l, struct run, listener);

	(void)s;
	if (sig == SESS_SIGNAL_GUEST_STOPPING)
		fail(r, 410, "gone", data);
	else if (sig == SESS_SIGNAL_DESTROY)
		fail(r, 410, "gone", "the session was deleted");
}

/* Base64 of an image, as a JSON string; NULL when out of memory. */
static json_t *b64_of(const struct display_image *img)
{
	size_t n;
	char *buf = base64_encode(img->data, img->len, &n);
	json_t *j = buf ? json_stringn_nocheck(buf, n) : NULL;

	free(buf);
	return j;
}

/* A toolset call's image (a reference it takes) of frame f (the same) is
 * made: it is kept for the call's answer, and the turn goes on. */
static void shot_taken(struct run *r, struct display_frame *f, struct display_image *img)
{
	const char *media = img->format == DISPLAY_FORMAT_PNG ? "image/png" : "image/jpeg";

	json_decref(r->shot_block);
	r->shot_block = toolset_result_image(&r->batch->turn->calls[r->cur], b64_of(img), media);
	display_image_unref(img);
	display_frame_unref(f);
	r->mid_shot = false;
	r->want_shot = false;
	r->sent_input = false;
	memset(&r->shot.enc.region, 0, sizeof(r->shot.enc.region));
	r->phase = RUN_STEPS;
	if (!r->shot_block) {
		fail(r, 500, "internal", "out of memory for the screenshot");
		return;
	}
	steps(r);
}

/* OpenAI's computer_call_output item for the call answered with img. */
static json_t *call_output(const struct run *r, const struct display_image *img)
{
	bool png = img->format == DISPLAY_FORMAT_PNG;
	const char *pre = png ? "data:image/png;base64," : "data:image/jpeg;base64,";
	size_t n, plen = strlen(pre);
	char *b64 = base64_encode(img->data, img->len, &n), *url;
	json_t *j = NULL;

	if (b64 && (url = malloc(plen + n + 1))) {
		memcpy(url, pre, plen);
		memcpy(url + plen, b64, n + 1);
		j = json_pack("{s:s, s:O, s:{s:s, s:o}}", "type", "computer_call_output", "call_id",
			      r->batch->call_id, "output", "type", "computer_screenshot",
			      "image_url", json_stringn_nocheck(url, plen + n));
		free(url);
	}
	free(b64);
	return j;
}

/* The reply with image (a reference it takes; NULL: none) of frame f (a
 * reference it takes; NULL when no screenshot was wanted); ends the run. */
static void reply(struct run *r, struct display_frame *f, struct display_image *image)
{
	struct run_outcome out = { .settled = r->settled,
				   .waited_ms = r->waited_ms,
				   .image = image };

	if (r->mid_shot) {
		shot_taken(r, f, image);
		return;
	}
	if (r->batch) {
		json_t *body = json_pack("{s:b, s:s, s:I}", "ok", 1, "action",
					 r->batch->is_batch ? "batch" : r->batch->actions[0]->name,
					 "elapsed_ms", (json_int_t)(fs_now_ms() - r->t0_ms));

		if (r->batch->id)
			json_object_set(body, "id", r->batch->id);
		if (r->batch->is_batch) {
			json_object_set_new(body, "ran", json_integer((json_int_t)r->batch->n));
			json_object_set_new(body, "results",
					    r->done_list ? json_incref(r->done_list)
							 : json_array());
		} else if (r->result) {
			json_object_set(body, "result", r->result);
		}
		if (is_turn(r))
			json_object_set_new(body, "tool_results",
					    r->tool_results ? json_incref(r->tool_results)
							    : json_array());
		if (out.image && r->batch->call_id)
			json_object_set_new(body, "computer_call_output",
					    call_output(r, out.image));
		if (out.image &&
		    json_object_set_new(
			    body, "screenshot",
			    json_pack("{s:s, s:i, s:i, s:f, s:b, s:i, s:i, s:i, s:I, s:o}",
				      "format",
				      out.image->format == DISPLAY_FORMAT_PNG ? "png" : "jpeg",
				      "width", out.image->width, "height", out.image->height,
				      "scale", out.image->scale, "settled", r->settled, "waited_ms",
				      r->waited_ms, "screen_width", f->width, "screen_height",
				      f->height, "frame_seq", (json_int_t)f->seq, "data",
				      b64_of(out.image))) < 0) {
			json_decref(body);
			display_image_unref(out.image);
			display_frame_unref(f);
			fail(r, 500, "internal", "out of memory for the screenshot");
			return;
		}
		out.reply = body;
	}
	display_frame_unref(f);
	finish(r, &out);
}

/* A screenshot being encoded on the encoder pool (display/encode_pool.h).
 * The run that asked may end meanwhile: it then lets go (run = NULL) and
 * the job's done frees it. */
struct shot_job {
	struct run *run; /* NULL once abandoned */
	struct display_frame *frame; /* owned reference */
	struct display_encode_opts opts;
	struct display_image *image; /* owned: the result */
	int rc;
	char err[256];
};

static void shot_job_free(struct shot_job *j)
{
	display_frame_unref(j->frame);
	display_image_unref(j->image);
	free(j);
}

/* On a pool worker: the long part. */
static void shot_work(void *ud, void *enc) /* the worker's struct display_stream_encoder */
{
	struct shot_job *j = ud;

	(void)enc;
	j->rc = display_encode(j->frame, &j->opts, &j->image, j->err, sizeof(j->err));
}

/* Back on the loop. */
static void shot_done(void *ud, int status)
{
	struct shot_job *j = ud;
	struct run *r = j->run;
	struct display_frame *f;
	struct display_image *img;

	if (!r) {
		shot_job_free(j);
		return;
	}
	r->encoding = NULL;
	if (status < 0 || j->rc < 0) {
		int code = status < 0 ? 503 : r->shot.enc.region.w ? 400 : 500;

		fail(r, code, "encode_failed", status < 0 ? "the encoder was stopped" : j->err);
		shot_job_free(j);
		return;
	}
	/* Readers of the same frame and options share it from now on. */
	img = sess_shots(r->s)
		      ? display_encode_cache_put(sess_shots(r->s), j->frame, &j->opts, j->image)
		      : display_image_ref(j->image);
	f = display_frame_ref(j->frame);
	shot_job_free(j);
	reply(r, f, img);
}

static void abandon_encoding(struct run *r)
{
	struct shot_job *j = r->encoding;

	if (!j)
		return;
	r->encoding = NULL;
	j->run = NULL;
	/* Still queued: done comes now, and frees it; else when it has run. */
	encode_pool_cancel(sess_gw(r->s)->encoders, j);
}

/* The screenshot (when wanted) and the reply; ends the run, now when the
 * encoding is cached, else once the encoder pool has made it. */
static void complete(struct run *r, bool settled, int waited_ms)
{
	struct display_image *img = NULL;
	struct display_frame *f;
	struct shot_job *j;

	r->settled = settled;
	r->waited_ms = waited_ms;
	if (!r->want_shot) {
		reply(r, NULL, NULL);
		return;
	}
	f = display_mirror_latest(sess_mirror(r->s));
	if (!f) {
		fail(r, 503, "no_screen", "the guest's screen has not arrived yet");
		return;
	}
	if (display_encode_cache_find(sess_shots(r->s), f, &r->shot.enc, &img) == 0) {
		reply(r, f, img);
		return;
	}
	if (!(j = calloc(1, sizeof(*j)))) {
		display_frame_unref(f);
		fail(r, 500, "internal", "out of memory");
		return;
	}
	j->run = r;
	j->frame = f;
	j->opts = r->shot.enc;
	if (encode_pool_submit_for(sess_gw(r->s)->encoders, r->s, shot_work, shot_done, j) < 0) {
		shot_job_free(j);
		fail(r, 503, "encoder_busy", "too many screenshots are being encoded: try again");
		return;
	}
	r->encoding = j;
	lws_sul_cancel(&r->sul); /* nothing more happens to the run until shot_done */
}

static void on_sul(lws_sorted_usec_list_t *sul);

static void schedule(struct run *r, lws_usec_t us)
{
	lws_sul_schedule(sess_gw(r->s)->ctx, 0, &r->sul, on_sul, us);
}

static void start_settle(struct run *r)
{
	struct display_frame *f = display_mirror_latest(sess_mirror(r->s));
	int64_t now = fs_now_ms();

	r->phase = RUN_SETTLE;
	r->seen_seq = f ? f->seq : 0;
	/* After input, quiet counts from now: the guest may not have drawn yet,
	 * and a screen idle since long before the action proves nothing. */
	display_settle_init(&r->settle, now,
			    r->sent_input ? now
			    : f		  ? f->changed_ms
					  : INT64_MIN,
			    r->shot.quiet_ms, r->shot.timeout_ms);
	display_frame_unref(f);
	/* A plain screenshot from a mirror kept current is served at once. */
	if (!r->shot.fresh ||
	    (!r->sent_input && r->shot.quiet_ms == 0 &&
	     now - display_mirror_current_as_of(sess_mirror(r->s)) <= FRESH_ENOUGH_MS)) {
		complete(r, true, 0);
		return;
	}
	r->ticket = display_mirror_fresh_begin(sess_mirror(r->s));
	schedule(r, PROBE_POLL_US);
}

/* One settle step: called on probe answers (woken by the mirror) and polls. */
static void settle_step(struct run *r)
{
	struct display_frame *f;
	int rc = display_mirror_fresh_poll(sess_mirror(r->s), r->ticket);
	int64_t now = fs_now_ms();

	if (rc < 0) {
		fail(r, 502, "display_lost", display_mirror_error(sess_mirror(r->s)));
		return;
	}
	if (rc == 0) {
		/* A probe QEMU never answers must not hang the request. */
		if (now - r->settle.start_ms > r->shot.timeout_ms + 2000)
			complete(r, false, (int)(now - r->settle.start_ms));
		else
			schedule(r, PROBE_POLL_US);
		return;
	}
	f = display_mirror_latest(sess_mirror(r->s));
	if (f && f->seq != r->seen_seq) {
		r->seen_seq = f->seq;
		display_settle_change(&r->settle, f->changed_ms);
	}
	display_frame_unref(f);
	if (display_settle_poll(&r->settle, now) == 0) {
		complete(r, r->settle.result.settled, r->settle.result.waited_ms);
		return;
	}
	r->ticket = display_mirror_fresh_begin(sess_mirror(r->s));
	schedule(r, PROBE_POLL_US);
}

/* How long a click action must wait for the previous click's sequence to
 * be over (NEW_CLICK_SEQUENCE_MS); 0 for any other action. */
static lws_usec_t click_wait_us(const struct sess *s, const struct action *a)
{
	int64_t wait = a->kind == ACTION_CLICK
			       ? sess_last_click_ms(s) + NEW_CLICK_SEQUENCE_MS - fs_now_ms()
			       : 0;

	return wait > 0 ? (lws_usec_t)wait * LWS_US_PER_MS : 0;
}

/* The tool_result of the toolset call under way, which a has carried out,
 * added to the turn's answers. Returns 0 or -1 when out of memory. */
static int toolset_answer(struct run *r, const struct action *a)
{
	const struct toolset_call *c = &r->batch->turn->calls[r->cur];
	json_t *res;

	if (a->kind == ACTION_SCREENSHOT || a->kind == ACTION_ZOOM) {
		res = r->shot_block;
		r->shot_block = NULL;
	} else if (a->kind == ACTION_CURSOR_POSITION) {
		res = toolset_result_point(c,
					   (int)json_integer_value(json_object_get(r->result, "x")),
					   (int)json_integer_value(
						   json_object_get(r->result, "y")));
	} else {
		res = toolset_result_ack(c);
	}
	if (!r->tool_results)
		r->tool_results = json_array();
	return res && r->tool_results && json_array_append_new(r->tool_results, res) == 0 ? 0 : -1;
}

/* The current action has been carried out: the session's pointer and click
 * time follow it, and a batch notes its answer. Returns 0 or -1 (out of
 * memory, the run failed). */
static int action_done(struct run *r)
{
	const struct action *a = r->batch->actions[r->cur];

	if (a->kind == ACTION_CLICK)
		sess_note_click(r->s);
	if (a->has_point)
		sess_set_pointer(r->s, a->point.x, a->point.y);
	if (a->path_len)
		sess_set_pointer(r->s, a->path[a->path_len - 1].x, a->path[a->path_len - 1].y);
	if (is_turn(r) && toolset_answer(r, a) < 0) {
		fail(r, 500, "internal", "out of memory");
		return -1;
	}
	if (r->batch->is_batch) {
		json_t *e = json_pack("{s:I, s:s}", "index", (json_int_t)r->cur, "action", a->name);

		if (e && a->id)
			json_object_set(e, "id", a->id);
		if (e && r->result)
			json_object_set_new(e, "result", r->result);
		r->result = NULL;
		if (!r->done_list)
			r->done_list = json_array();
		if (!e || json_array_append_new(r->done_list, e) < 0) {
			fail(r, 500, "internal", "out of memory");
			return -1;
		}
	}
	return 0;
}

/* On to the batch's next action, if any. Returns 1 when there is one (its
 * plan ready, *wait_us before it starts), 0 at the end, -1 when the run
 * failed. */
static int next_action(struct run *r, lws_usec_t *wait_us)
{
	if (action_done(r) < 0)
		return -1;
	if (r->cur + 1 >= r->batch->n)
		return 0;
	r->cur++;
	plan_destroy(r->plan);
	r->step = 0;
	if (!(r->plan = plan_build(r->batch->actions[r->cur], sess_screen(r->s).width,
				   sess_screen(r->s).height))) {
		fail(r, 500, "internal", "out of memory");
		return -1;
	}
	*wait_us = click_wait_us(r->s, r->batch->actions[r->cur]);
	return 1;
}

/* Carries out plan steps until one needs to wait. */
static void steps(struct run *r)
{
	lws_usec_t wait_us = 0;
	int more;

	char err[512];
	int rc;

again:
	while (r->plan && r->step < r->plan->len) {
		const struct plan_step *st = &r->plan->steps[r->step++];

		switch (st->kind) {
		case PLAN_INPUT:
			if (sess_input(r->s, json_deep_copy(st->event), err, sizeof(err)) < 0) {
				fail(r, 502, "guest_gone", err);
				return;
			}
			r->sent_input = true;
			break;
		case PLAN_DELAY:
		case PLAN_WAIT:
			/* A wait ends with a screenshot, but a toolset call's: its
			 * answer is words. */
			if (st->kind == PLAN_WAIT && !is_turn(r))
				r->want_shot = true;
			schedule(r, (lws_usec_t)st->ms * LWS_US_PER_MS);
			return;
		case PLAN_TYPE_TEXT:
			if (typing_busy(r) || (rc = start_typing(r, st->text)) == -EBUSY) {
				/* its turn comes: the step again, later */
				r->step--;
				schedule(r, PROBE_POLL_US);
				return;
			}
			if (rc < 0) {
				fail(r, 500, "internal", "out of memory");
				return;
			}
			return; /* type_done goes on */
		case PLAN_SCREENSHOT:
			r->want_shot = true;
			if (is_turn(r)) /* the session's fixed screenshot size */
				toolset_frame_encode_size(&r->frame, &r->shot.enc.max_width,
							  &r->shot.enc.max_height);
			break;
		case PLAN_ZOOM:
			r->want_shot = true;
			r->shot.enc.region = (struct display_rect){ st->region.x, st->region.y,
								    st->region.w, st->region.h };
			if (is_turn(r)) { /* at display resolution, within the limits */
				int w, h;

				toolset_fit(st->region.w, st->region.h, &r->frame.limits, &w, &h,
					    &r->shot.enc.max_width, &r->shot.enc.max_height);
			}
			break;
		case PLAN_X_SYNC:
		case PLAN_GUEST_SYNC:
			if (!(r->xsync = xsync_start(r->s, st->kind == PLAN_X_SYNC ? st->x_mask : 0,
						     st->ms, xsync_ended, r)))
				break; /* nothing to wait on: the pause after it */
			return; /* xsync_ended goes on */
		case PLAN_CURSOR_POSITION:
			json_decref(r->result);
			{
				int px, py;

				sess_pointer(r->s, &px, &py);
				if (is_turn(r)) /* in the screenshot's pixels */
					toolset_to_shot(&r->frame, sess_screen(r->s).width,
							sess_screen(r->s).height, px, py, &px, &py);
				r->result = json_pack("{s:i, s:i}", "x", px, "y", py);
			}
			break;
		}
	}
	/* A toolset call's image is taken as the call ends, before the next. */
	if (is_turn(r) && r->want_shot && r->batch->n) {
		r->mid_shot = true;
		start_settle(r);
		return;
	}
	if (r->batch && r->batch->n && (more = next_action(r, &wait_us)) != 0) {
		if (more < 0)
			return;
		if (!wait_us)
			goto again;
		schedule(r, wait_us);
		return;
	}
	if (r->batch && r->batch->refused) {
		const struct actions_error *e = &r->batch->refusal;
		struct run_outcome out = { .failed = true };

		api_error_set(&out.err, e->code == ACTIONS_E_NO_MEMORY ? 500 : 400,
			      actions_errc_name(e->code), e->message);
		out.reply = batch_error(r, r->batch->n, actions_errc_name(e->code), e->message,
					e->field, r->batch->refused_id);
		if (is_turn(r))
			add_failed_results(r, out.reply, r->batch->n, e->message);
		finish(r, &out);
		return;
	}
	r->ran_all = true;
	if (r->want_shot)
		start_settle(r);
	else
		complete(r, false, 0);
}

static void on_sul(lws_sorted_usec_list_t *sul)
{
	struct run *r = lws_container_of(sul, struct run, sul);

	if (r->phase == RUN_STEPS)
		steps(r);
	else
		settle_step(r);
}

void run_poke_all(void)
{
	/* settle_step may finish (and free) the run: walk with care. */
	for (struct run *r = all_runs, *next; r; r = next) {
		next = r->next;
		if (r->encoding)
			continue; /* done: its screenshot is being encoded */
		if (r->phase == RUN_SETTLE && r->ticket &&
		    display_mirror_fresh_poll(sess_mirror(r->s), r->ticket) != 0)
			settle_step(r);
	}
}

/* A toolset turn's frame from its session, and its calls parsed in it.
 * Returns 0 or -1 with *e. */
static int toolset_start(struct sess *s, struct action_batch *b, struct toolset_frame *f,
			 struct api_error *e)
{
	struct actions_ctx ctx = { .screen_width = sess_screen(s).width,
				   .screen_height = sess_screen(s).height,
				   .keymap = sess_keymap(s) };
	uint32_t disabled;

	if (toolset_session_frame(s, b->turn, f, &disabled, e) < 0)
		return -1;
	ctx.default_space = (struct actions_space){ ACTIONS_SPACE_SCREENSHOT, f->shot_w,
						    f->shot_h };
	if (batch_resolve_toolset(b, &ctx, disabled) < 0)
		return api_error_set(e, 500, "internal", "out of memory");
	return 0;
}

struct run *run_start(struct sess *s, struct action_batch *batch, const struct shot_opts *shot,
		      run_done_fn done, void *ud, struct api_error *e)
{
	struct run *r;

	if (sess_check_actable(s, !batch, e) < 0) {
		batch_destroy(batch);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r && batch && batch->turn && toolset_start(s, batch, &r->frame, e) < 0) {
		free(r);
		batch_destroy(batch);
		return NULL;
	}
	if (!shot->preview)
		sess_touch(s);
	if (!r || (batch && batch->n &&
		   !(r->plan = plan_build(batch->actions[0], sess_screen(s).width,
					  sess_screen(s).height)))) {
		free(r);
		batch_destroy(batch);
		api_error_set(e, 500, "internal", "out of memory");
		return NULL;
	}
	r->s = s;
	r->batch = batch;
	r->shot = *shot;
	r->want_shot = !batch || batch->want_screenshot;
	r->t0_ms = fs_now_ms();
	r->done = done;
	r->ud = ud;
	r->listener.notify = on_session;
	sess_listen(s, &r->listener);
	r->next = all_runs;
	all_runs = r;
	/* Start from the loop, never inside the caller: done must come later. */
	{
		lws_usec_t wait = batch && batch->n ? click_wait_us(s, batch->actions[0]) : 0;

		schedule(r, wait > 0 ? wait : 1);
	}
	return r;
}
