/* gateway/session/session_boot.c: a session's "boot" (docs/api.md): the
 * phases of its guest's last start (a cold boot, a template restore, a
 * fork's copy, a resume from disk), live from the job that does it, then
 * kept once it is over so that the time it took stays visible (and told
 * as a "boot" event). Loop
 * thread; the job's timeline is read under its lock (job_progress). */
#include "common/fsutil.h"
#include "gateway/session/job_kind.h"
#include "gateway/session/session_int.h"

#include <string.h>

/* The job starting s's guest, if one runs: its own, or for a fork's copy
 * the original's. */
static struct job *starting_job(const struct sess *s)
{
	struct sess *parent;

	if (s->job)
		return s->job->kind->starts_guest ? s->job : NULL;
	if (s->state != SESS_STARTING || !s->parent_id[0])
		return NULL;
	parent = sess_find_any(s->gw, s->parent_id);
	if (parent && parent->job && parent->job->kind == &job_kind_fork &&
	    !strcmp(parent->job->child_id, s->id))
		return parent->job;
	return NULL;
}

/* j (a timeline, may be NULL) with what the warm pool did for s's create
 * (pool.h): "pool": "hit" or "miss", and a miss's "pool_miss". */
static json_t *with_pool(const struct sess *s, json_t *j)
{
	bool hit = !strcmp(s->pool_note, "hit");

	if (j && s->pool_note[0]) {
		json_object_set_new(j, "pool", json_string(hit ? "hit" : "miss"));
		if (!hit)
			json_object_set_new(j, "pool_miss", json_string(s->pool_note));
	}
	return j;
}

json_t *sess_boot_json(const struct sess *s)
{
	struct job *j = starting_job(s);
	struct progress p;

	if (j) {
		job_progress(j, &p);
		if (progress_begun(&p))
			return with_pool(s, progress_json(&p, fs_now_ms()));
	}
	return with_pool(s, progress_json(&s->boot, fs_now_ms()));
}

void sess_boot_end(struct sess *s, struct job *j, bool ok)
{
	struct progress p;

	job_progress(j, &p); /* the thread is done with it */
	if (!progress_begun(&p))
		return;
	progress_end(&p, ok, fs_now_ms());
	s->boot = p;
	/* Where the time went, for those who follow the events. */
	sess_event(s, "boot", progress_json(&p, fs_now_ms()));
}
