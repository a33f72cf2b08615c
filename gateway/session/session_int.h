/* gateway/session/session_int.h: what session.c and session_ops.c share and no
 * one else calls. Loop thread only. */
#ifndef VITRINE_GATEWAY_SESSION_INT_H
#define VITRINE_GATEWAY_SESSION_INT_H

#include "gateway/session/session.h"

/* Makes requests waiting on s writable (they look at it again). */
void sess_wake(struct sess *s);
/* Changes the state, with a "state" event. */
void sess_set_state(struct sess *s, enum sess_state st);
/* Tells the listeners that actions under way must end (why). */
void sess_guest_stopping(struct sess *s, const char *why);
/* Fails the actions under way, stops the mirror and the guest. */
void sess_stop_guest(struct sess *s, const char *why);
void sess_set_failed(struct sess *s, const char *why);
/* m (a job connected it, owned from now on) becomes s's screen; the one
 * before, if any, is stopped on a job thread. Returns 0, or -ENOMEM (the
 * session cannot take screenshots). */
int sess_adopt_mirror(struct sess *s, struct display_mirror *m);
/* s->vm runs and is ready, m is its screen: goes "ready" (or "failed"). */
void sess_mark_ready(struct sess *s, struct display_mirror *m);
/* Frees a session sess_alloc made that was never linked. Accepts NULL. */
void sess_free_unlinked(struct sess *s);
/* Starts connecting to the guest's vitrine-agent once the guest runs
 * (keeping first, a link already open, when given). */
void sess_start_agent(struct sess *s, struct agent_link *first);
/* A new session for req, not yet linked nor started; NULL with *e filled
 * (429 when the gateway is full). */
struct sess *sess_alloc(struct gw *gw, const struct session_request *req, struct api_error *e);
/* Links s into the registry (it counts against the limits from now on)
 * and starts its heartbeat. */
void sess_link(struct sess *s);
/* vm (may be NULL) becomes s's guest, and its identity the one recorded. */
void sess_set_vm(struct sess *s, struct vmm_vm *vm);
/* A job that started a guest for s ended: s takes its guest (j->vm) and
 * returns true, or fails with the job's error and returns false. */
bool sess_take_started_guest(struct sess *s, struct job *j);
/* Guests j starts are held by a supervisor that patches session id's
 * record when abandoned (nothing without serve's self_bin). */
void sess_supervise(struct gw *gw, struct job *j, const char *id);
/* s's job_kind_adopt (j) has ended: takes its guest, or says what became of it. */
void sess_adopt_finished(struct sess *s, struct job *j);
/* The job j that started s's guest has ended, ok (s is ready) or not: its
 * timeline becomes s's "boot" (session_boot.c), with a "boot" event. */
void sess_boot_end(struct sess *s, struct job *j, bool ok);
/* s->job has ended: takes its results. */
void sess_job_finished(struct sess *s);

#endif
