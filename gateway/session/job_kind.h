/* gateway/session/job_kind.h: what a kind of job is, one row per kind in a
 * file of its own (job_boot.c, job_restore.c, job_memory.c, job_pause_disk.c,
 * job_resume_disk.c, job_fork.c, job_adopt.c, job_save.c, job_claim.c; job_kind_dispose in
 * job.c, which is the free path). job.c runs any kind and
 * session_ops.c ends any kind through its row: a new kind is a new file
 * and a row here, with no `case` anywhere. Session-internal. */
#ifndef VITRINE_GATEWAY_JOB_KIND_H
#define VITRINE_GATEWAY_JOB_KIND_H

#include <stdbool.h>

struct api_error;
struct job;
struct sess;

struct job_kind {
	/* What the session is busy with while it runs ("booting"). */
	const char *busy;
	/* The enum metrics_op its end counts toward (core/metrics.h), or -1. */
	int metrics_op;
	/* It starts a guest: its phases are the session's "boot" (session_boot.c). */
	bool starts_guest;
	/* The work, on a job thread; NULL for none (job_kind_dispose: freeing the
	 * job is the work). */
	void (*run)(struct job *j);
	/* On the loop, once j (s->job until now) has ended: the session takes
	 * its results; j is freed after. NULL: never a session's. */
	void (*finish)(struct sess *s, struct job *j);
};

extern const struct job_kind job_kind_boot, job_kind_restore, job_kind_pause_memory,
	job_kind_resume_memory, job_kind_pause_disk, job_kind_resume_disk, job_kind_fork,
	job_kind_adopt, job_kind_save, job_kind_dispose, job_kind_claim;

/* Whether a fork of s fits in the run base (its RAM and its disk overlay,
 * plus common/space.h's margin), checked on the loop before anything
 * starts: 0, or -EINVAL with a 507 insufficient_storage in e
 * (job_fork.c). */
int job_fork_check_space(const struct sess *s, struct api_error *e);

#endif
