/* gateway/session/session_tick.c: the top of a session: its heartbeat
 * (about once a second, and at its expiry's moments), which meters, writes
 * a new screen size to the record, reads the guest's console
 * (guest_watch.c says why that is often enough), ends the session (or
 * pauses it) at its deadline, and takes a finished job's results should
 * the loop's wake-up not have (sess_reap_jobs). The guest's QMP socket and
 * its exit are the loop's own descriptors (guest_watch.c), not the
 * heartbeat's. Loop thread. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/session/job_kind.h"
#include "gateway/session/session_int.h"
#include "gateway/session/session_usage.h"

#include <string.h>

/* The heartbeat's period; it comes sooner for an expiry warning or deadline. */
#define HEARTBEAT_MS 1000

/* Records a size not yet recorded, unless the last one was recorded less
 * than SESS_SCREEN_SAVE_GAP_MS ago. */
static void save_screen(struct sess *s)
{
	int64_t now = fs_now_ms();

	if (!s->screen_unsaved || now - s->screen_saved_ms < SESS_SCREEN_SAVE_GAP_MS)
		return;
	s->screen_unsaved = false;
	s->screen_saved_ms = now;
	sess_save(s);
}

/* The screen's size as s's mirror shows it now: see sess_follow_screen. */
void sess_follow_screen_now(struct sess *s)
{
	struct display_frame *f = s->mirror ? display_mirror_latest(s->mirror) : NULL;
	struct screen_size cur = { s->width, s->height }, now;
	bool changed;

	if (!f)
		return;
	changed = screen_size_follow(cur, s->screen_said,
				     (struct screen_size){ f->width, f->height }, &now);
	display_frame_unref(f);
	if (now.width == s->screen_said.width && now.height == s->screen_said.height)
		s->screen_said = (struct screen_size){ 0, 0 }; /* it is in effect */
	if (!changed)
		return;
	log_info("session", "%s: the guest's screen is now %dx%d (was %dx%d)", s->id, now.width,
		 now.height, s->width, s->height);
	s->width = now.width;
	s->height = now.height;
	if (s->pointer_x >= s->width)
		s->pointer_x = s->width - 1;
	if (s->pointer_y >= s->height)
		s->pointer_y = s->height - 1;
	/* A restart finds the guest at this size: recorded now, or within
	 * SESS_SCREEN_SAVE_GAP_MS of the last time (sess_tick). */
	s->screen_unsaved = true;
	save_screen(s);
	sess_event(s, "screen_resized",
		   json_pack("{s:i, s:i}", "width", s->width, "height", s->height));
}

void sess_follow_screen(struct sess *s)
{
	if (s->state == SESS_READY && !s->job)
		sess_follow_screen_now(s);
}

void sess_screen_said(struct sess *s, int width, int height)
{
	s->screen_said = (struct screen_size){ width, height };
	sess_follow_screen(s);
}

int64_t sess_deadline(const struct sess *s, const char **which)
{
	int64_t d = s->expires_ms;

	*which = "timeout";
	if (s->req.idle_timeout_s && s->state == SESS_READY) {
		int64_t idle = s->active_ms + (int64_t)s->req.idle_timeout_s * 1000;

		if (!d || idle < d) {
			d = idle;
			*which = "idle_timeout";
		}
	}
	return d;
}

/* How long before deadline d (of which, sess_deadline's) s is warned. */
static int64_t warning_ms(const struct sess *s, const char *which)
{
	int64_t life = !strcmp(which, "timeout") ? (int64_t)s->req.timeout_s * 1000
						 : (int64_t)s->req.idle_timeout_s * 1000;

	return life / 2 < SESS_EXPIRY_WARNING_MS ? life / 2 : SESS_EXPIRY_WARNING_MS;
}

/* Warns before the deadline; at it, kills or pauses. Returns true when s
 * was destroyed. */
static bool check_expiry(struct sess *s)
{
	const char *which;
	int64_t d = sess_deadline(s, &which), now = fs_now_ms(), warn;
	struct api_error e;

	/* A boot may be cut short (the job frees its guest); other jobs end first. */
	if (!d || (s->job && s->job->kind != &job_kind_boot) || s->state == SESS_FAILED)
		return false;
	warn = warning_ms(s, which);
	if (now < d - warn) {
		s->warned = false; /* activity moved the idle deadline away */
		return false;
	}
	if (!s->warned) {
		s->warned = true;
		sess_event(s, "expiring",
			   json_pack("{s:s, s:I, s:s}", "reason", which, "in_ms",
				     (json_int_t)(d - now), "action",
				     s->req.expire_pause ? "pause" : "kill"));
	}
	if (now < d)
		return false;
	if (s->req.expire_pause && s->state != SESS_PAUSED) {
		log_info("session", "%s reached its %s: pausing to disk", s->id, which);
		s->expires_ms = 0; /* spent: a resumed session lives on */
		sess_event(s, "expired",
			   json_pack("{s:s, s:s}", "reason", which, "action", "pause"));
		if (s->state == SESS_READY) {
			s->expiry_pausing = which; /* a static string of sess_deadline's */
			if (sess_pause(s, SESS_PAUSE_DISK, &e) < 0) {
				log_warn("session", "%s: expiry pause failed: %s", s->id,
					 e.message);
				sess_expiry_pause_failed(s);
			}
		}
		return false;
	}
	if (s->req.expire_pause) {
		s->expires_ms = 0; /* already paused */
		return false;
	}
	log_info("session", "%s reached its %s: destroying", s->id, which);
	sess_destroy(s, NULL);
	return true;
}

void sess_expiry_pause_failed(struct sess *s)
{
	const char *which = s->expiry_pausing;
	int64_t now = fs_now_ms();

	s->expiry_pausing = NULL;
	if (!which)
		return;
	if (!strcmp(which, "timeout")) {
		s->expires_ms = now + SESS_EXPIRY_RETRY_MS;
		sess_save(s); /* a restart keeps the deadline */
	} else
		s->active_ms = now;
	s->warned = false;
	log_info("session", "%s: runs on; its %s pauses it again from %s", s->id, which,
		 !strcmp(which, "timeout") ? "a minute from now" : "its idle time from now");
	sess_tick_start(s);
}

/* What s's job has to say: a booting guest runs (its agent is up long
 * before its desktop: s links to it meanwhile, to be linked when it is
 * ready), or the job is done (its results are s's now). */
static void look_at_job(struct sess *s)
{
	if (!s->job)
		return;
	if (s->job->kind == &job_kind_boot && !s->agent && job_started(s->job))
		sess_start_agent_at(s, s->job->agent_path, NULL);
	if (job_done(s->job))
		sess_job_finished(s);
}

/* In how many microseconds s's next heartbeat comes: HEARTBEAT_MS, or
 * sooner when its expiry warning or deadline comes first. */
static lws_usec_t next_beat(const struct sess *s)
{
	const char *which;
	int64_t d = sess_deadline(s, &which), now = fs_now_ms(), in = HEARTBEAT_MS;

	if (d) {
		int64_t warn_at = d - warning_ms(s, which);

		if (warn_at > now && warn_at - now < in)
			in = warn_at - now;
		else if (d > now && d - now < in)
			in = d - now;
	}
	return (lws_usec_t)in * LWS_US_PER_MS;
}

/* The heartbeat: a job's end should the wake-up not have taken it, expiry,
 * usage, the screen's size, the guest's console. */
static void sess_tick(lws_sorted_usec_list_t *sul)
{
	struct sess *s = lws_container_of(sul, struct sess, sul);

	look_at_job(s); /* sess_reap_jobs took it, else now */
	if (check_expiry(s))
		return;
	sess_usage_tick(s);
	save_screen(s);
	sess_guest_service(s);
	sess_follow_screen(s);
	sess_tick_start(s);
}

void sess_set_timeout(struct sess *s, int timeout_s)
{
	s->expires_ms = fs_now_ms() + (int64_t)timeout_s * 1000;
	s->warned = false;
	sess_save(s);
	if (!lws_dll2_is_detached(&s->sul.list)) /* linked: its beat comes in time */
		sess_tick_start(s);
}

void sess_tick_start(struct sess *s)
{
	lws_sul_schedule(s->gw->ctx, 0, &s->sul, sess_tick, next_beat(s));
}

void sess_reap_jobs(struct gw *gw)
{
	/* Ending a job never frees a session (its own or another's). */
	for (struct sess *s = gw->sessions; s; s = s->next)
		look_at_job(s);
}
