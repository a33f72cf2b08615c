/* gateway/action/trajectory.c: see trajectory.h. */
#include "gateway/action/trajectory.h"

#include "common/fsutil.h"
#include "gateway/action/run.h"
#include "gateway/session/session.h"

#include <stdlib.h>
#include <time.h>

struct trajectory {
	struct sess *s;
	struct sess_listener listener; /* sess::listeners: found by on_session */
	struct traj_log log;
};

static void trajectory_destroy(struct trajectory *t)
{
	sess_unlisten(t->s, &t->listener);
	traj_log_clear(&t->log);
	free(t);
}

static void on_session(struct sess_listener *l, struct sess *s, enum sess_signal sig,
		       const void *data)
{
	(void)s;
	(void)data;
	if (sig == SESS_SIGNAL_DESTROY)
		trajectory_destroy(lws_container_of(l, struct trajectory, listener));
}

static struct trajectory *find(const struct sess *s)
{
	struct sess_listener *l = sess_find_listener(s, on_session);

	return l ? lws_container_of(l, struct trajectory, listener) : NULL;
}

/* The session's trajectory, made when it has none; NULL when off or out of
 * memory. */
static struct trajectory *of(struct sess *s)
{
	struct trajectory *t = find(s);

	if (t || !trajectory_enabled(sess_gw(s)))
		return t;
	if (!(t = calloc(1, sizeof(*t))))
		return NULL;
	t->s = s;
	traj_log_init(&t->log, (size_t)sess_gw(s)->trajectory_max_steps,
		      (size_t)sess_gw(s)->trajectory_max_bytes);
	t->listener.notify = on_session;
	sess_listen(s, &t->listener);
	return t;
}

/* Unix ms: the timestamps are for people and pipelines, not intervals. */
bool trajectory_enabled(const struct gw *gw)
{
	return gw->trajectory_max_steps > 0;
}

struct traj_step *trajectory_begin(struct sess *s, const char *text, size_t len,
				   enum traj_channel channel)
{
	struct trajectory *t = of(s);

	return t ? traj_step_begin(&t->log, text, len, channel, fs_unix_ms()) : NULL;
}

/* Adds st to its log; a step whose log has gone (its session is being
 * destroyed) is only freed. */
static void add(struct sess *s, struct traj_step *st, int status, json_t *result,
		struct display_image *image)
{
	struct trajectory *t = s ? find(s) : NULL;

	if (!st) {
		json_decref(result);
		return;
	}
	if (!t) {
		json_decref(result);
		traj_step_free(st);
		return;
	}
	traj_log_add(&t->log, st, status, result, image, fs_unix_ms());
}

void trajectory_refused(struct sess *s, struct traj_step *st, int status, const json_t *error)
{
	add(s, st, status, st && error ? json_deep_copy(error) : NULL, NULL);
}

void trajectory_ended(struct sess *s, struct traj_step *st, const struct run_outcome *out)
{
	if (!st)
		return;
	if (out->failed)
		add(s, st, out->err.status,
		    out->reply ? json_deep_copy(out->reply) /* a batch's, with its index */
			       : api_error_json(out->err.code, out->err.message),
		    NULL);
	else
		add(s, st, 200, traj_reply_without_image(out->reply), out->image);
}

void trajectory_cancelled(struct sess *s, struct traj_step *st)
{
	if (st)
		add(s, st, 499,
		    api_error_json("cancelled", "the client went away before the action ended"),
		    NULL);
}

void trajectory_screenshot(struct sess *s, struct display_image *image)
{
	struct trajectory *t = find(s);

	if (t)
		traj_log_observe(&t->log, image);
}

struct traj_archive *trajectory_archive(struct sess *s)
{
	struct trajectory *t = find(s);
	struct traj_log empty;
	struct traj_archive *a;

	if (t)
		return traj_archive_new(&t->log, sess_id(s), sess_screen(s).width,
					sess_screen(s).height, fs_unix_ms());
	traj_log_init(&empty, (size_t)sess_gw(s)->trajectory_max_steps,
		      (size_t)sess_gw(s)->trajectory_max_bytes);
	a = traj_archive_new(&empty, sess_id(s), sess_screen(s).width, sess_screen(s).height,
			     fs_unix_ms());
	traj_log_clear(&empty);
	return a;
}
