/* gateway/session/job.h: a session's slow guest operation on a worker thread, so
 * the lws loop never blocks: booting an image (qemu-img, QEMU, the QMP
 * greeting, the boot itself, the screen's VNC handshake), restoring a
 * template (and making the clone ready: clock, page, warm-up), pausing and
 * resuming (in memory: QMP stop/cont; on disk), forking, saving a session's
 * state for a template (template_build.h makes it one), and disposing of
 * what a session let go (quitting QEMU, reaping it, stopping a mirror,
 * removing a checkpoint).
 *
 * Ownership: the loop fills a job (handing it the session's vm: while a
 * job runs, nothing on the loop touches that vm) and starts it. When the
 * thread is done it wakes the loop, which sees job_done() and takes the
 * results (and the job) back. A session deleted meanwhile orphans its job:
 * the thread then frees everything itself (guests, checkpoint folder). */
#ifndef VITRINE_GATEWAY_JOB_H
#define VITRINE_GATEWAY_JOB_H

#include "display/mirror.h"
#include "gateway/core/gw.h"
#include "gateway/session/progress.h"
#include "vmm-qemu/agent_link.h"
#include "vmm-qemu/image.h"
#include "vmm-qemu/keymap.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/vm.h"

#include <libwebsockets.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

/* What a job does: one of job_kind.h's kinds (session-internal), each in
 * a file of its own; the fields below say which kinds read them. */
struct job_kind;

struct job {
	const struct job_kind *kind;
	/* in and out, owned by the job while it runs */
	struct vmm_vm *vm;
	struct vmm_vm *child; /* job_kind_fork: the copy */
	struct display_mirror *mirror; /* the screen of the guest a job makes ready (of child
					* for job_kind_fork); job_kind_pause_disk, job_kind_dispose: to stop */
	struct vmm_spec spec; /* job_boot (spec.image points at image, spec.url at url) */
	struct vmm_image image; /* job_kind_boot */
	char page_path[512]; /* job_kind_boot: the staged page, removed once QEMU has it; "" none */
	char agent_path[PATH_MAX]; /* job_kind_boot: the guest's agent socket, set when started */
	char ckpt[PATH_MAX]; /* checkpoint folder, "" for none */
	struct vmm_template tpl; /* job_kind_restore */
	char url[VMM_MAX_URL + 1]; /* job_kind_restore: navigate here once restored, "" stays */
	bool has_agent; /* the guest runs qemu-ga (its clock can be set, its page driven) */
	/* job_kind_boot, job_kind_restore: the session's keyboard layout, compiled
	 * (vmm_keymap_get) for its actions; set in the guest when set_layout */
	char keyboard_layout[VMM_KEYMAP_MAX_NAME];
	bool set_layout;
	char child_id[SESS_ID_MAX]; /* job_kind_fork: the session that gets child */
	char tpl_name[VMM_TEMPLATE_NAME_MAX + 1]; /* job_kind_save: the template being made */
	/* job_kind_save: who is told at its end (a sess_saved_fn, session.h) */
	int (*saved)(struct gw *gw, const char *tpl_name, const char *ckpt, const char *err);
	struct agent_link
		*agent; /* job_kind_restore, job_kind_resume_disk: the link to vitrine-agent the
				   * guest was prepared through, for the session */
	/* Guests this job starts are held by a supervisor (docs/durability.md)
	 * when shim.bin is set; shim.record points at shim_record. */
	struct vmm_shim_opts shim;
	char shim_record[PATH_MAX];
	struct vmm_identity adopt; /* job_kind_adopt */
	bool adopt_paused; /* job_kind_adopt: the guest was paused in memory */
	bool kept; /* job_kind_pause_disk: the save failed, the guest runs on (its mirror in mirror) */
	bool detach; /* job_kind_dispose: leave the guest running (the next gateway adopts it) */
	char label[SESS_ID_MAX]; /* the session a guest this job starts is for, in its run dir */
	char terminate[PATH_MAX]; /* job_kind_dispose: the run dir of an orphan guest to stop */
	/* results */
	int rc;
	char err[1024];
	int64_t ms; /* how long the work took */
	int64_t bytes; /* checkpoint stream size */
	/* handshake, under mu */
	pthread_mutex_t mu;
	bool started; /* job_kind_boot: QEMU runs (agent_path is set); the guest still boots */
	/* job_kind_boot, job_kind_restore, job_kind_resume_disk, job_fork (the copy's): the
	 * phase the guest's start is in, once job_progress_begin was called */
	struct progress progress;
	bool done, orphaned;
	struct lws_context *ctx;
	struct job *next; /* the queue of jobs waiting for a worker thread */
	struct job_ticket *ticket; /* held: told when this job has ended, or NULL */
};

/* Says when a set of jobs has ended (e.g. every guest of a deleted
 * session is gone): a DELETE watches its ticket and answers once it is
 * done. Refcounted; new, done and release on any thread, the watch on the
 * loop. */
struct job_ticket;
/* A new ticket; NULL when out of memory (then nothing waits). */
struct job_ticket *job_ticket_new(void);
/* True once every job given the ticket has ended (at once for none). */
bool job_ticket_done(struct job_ticket *t);
void job_ticket_release(struct job_ticket *t);
/* Calls done(ud) on the loop of ctx once t is done: the thread of the job
 * that ends it wakes the loop, whose job_ticket_reap calls it. Returns
 * false, with nothing watched, when t is done already (or NULL): the
 * caller goes on at once. One watch per ticket; it holds t until done is
 * called or job_ticket_unwatch. Loop thread. */
bool job_ticket_watch(struct job_ticket *t, struct lws_context *ctx, void (*done)(void *ud),
		      void *ud);
/* Ends t's watch, if any, without calling its done. Accepts NULL. Loop
 * thread. */
void job_ticket_unwatch(struct job_ticket *t);
/* On the loop's wake-up: calls the done of each watched ticket that is
 * done (a done may watch or unwatch others). Loop thread. */
void job_ticket_reap(void);

/* A new job of kind for the loop of ctx, or NULL (out of memory). */
struct job *job_new(const struct job_kind *kind, struct lws_context *ctx);
/* Queues j for one of the job threads (which live as long as the process:
 * guests they start die with the thread that spawned them). Returns 0, or
 * -errno (j is still the caller's). */
int job_start(struct job *j);
/* True once the thread has finished: j is the loop's again (free it with
 * job_free after taking its results). */
bool job_done(struct job *j);
/* Before job_start: j's progress (progress.h) begins at t0 (ms), queued;
 * the thread then tells each phase of the guest's start. */
void job_progress_begin(struct job *j, int64_t t0);
/* A copy of j's progress, taken under its lock (any thread, while the loop
 * owns j or the thread runs it). */
void job_progress(struct job *j, struct progress *out);
/* job_kind_boot: true once QEMU runs (j->agent_path can be read). */
bool job_started(struct job *j);
/* The session is gone: a running job frees itself when it ends, a finished
 * one is freed now (with whatever guests it holds). ticket (may be NULL)
 * is done once it has. */
void job_orphan(struct job *j, struct job_ticket *ticket);
/* Frees j; whatever it still holds (guests, a mirror, a checkpoint
 * folder) is handed to a job_kind_dispose job, so the loop never waits for a
 * QEMU to quit. Accepts NULL. */
void job_free(struct job *j);
/* Frees vm, mirror and the checkpoint folder ckpt (each may be NULL or
 * "") on a job thread; ticket (may be NULL) is done once they are gone. */
void job_dispose(struct vmm_vm *vm, struct display_mirror *mirror, const char *ckpt,
		 struct job_ticket *ticket);
/* Stops the orphan guest in run_dir (one no session record names) through
 * its supervisor, on a job thread. */
void job_terminate(const char *run_dir);
/* Lets go of vm (its guest runs on under its supervisor) and stops
 * mirror, on a job thread. Each may be NULL. */
void job_detach(struct vmm_vm *vm, struct display_mirror *mirror);
/* Sets the clock of vm's guest through its agent, on a worker of q (the
 * gateway's guest_work) that touches nothing but the agent's socket (a
 * guest gone meanwhile just fails the connect). For a guest resumed from
 * memory: it lags by the time it was stopped. Best effort: a full queue
 * skips it. Loop thread. */
void job_set_clock_async(struct work_queue *q, const struct vmm_vm *vm);
/* Connects a mirror to vm's screen (the VNC handshake: up to seconds),
 * kept fresh; frames wake ctx's loop. Any thread. Returns 0 with *out, or
 * -errno with err. */
int job_start_mirror(struct vmm_vm *vm, struct lws_context *ctx, struct display_mirror **out,
		     char *err, size_t errlen);
/* Waits up to timeout_ms for every job thread to end. True when none runs. */
bool job_wait_all(int timeout_ms);
/* What a session is busy with while a job of kind runs ("booting"). */
const char *job_kind_name(const struct job_kind *kind);

#endif
