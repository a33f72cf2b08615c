/* gateway/action/xsync.h: the waits on the guest that keep input exact:
 * the barrier between the modifiers held around pointer input and the
 * pointer input itself (plan.h PLAN_X_SYNC: the guest's `vitrine-agent
 * xwait MASK MS`; guest-images/agent/agent_xwait.c says why a pause is not
 * enough), and the ping between the pieces of a long `type`
 * (PLAN_GUEST_SYNC), each through the session's vitrine-agent on a thread
 * of its own, since the calls block. The job is shared by that
 * thread and its run, and freed by whichever lets go last. */
#ifndef VITRINE_GATEWAY_XSYNC_H
#define VITRINE_GATEWAY_XSYNC_H

#include <stdbool.h>

struct sess;
struct xsync_job;

/* Where the desktop image puts the agent (guest-images/desktop/recipe.sh). */
#define XSYNC_AGENT "/usr/local/sbin/vitrine-agent"

/* Loop: starts waiting (at most ms) until s's guest's X holds mask; with
 * mask 0, until the guest's agent has answered a ping (plan.h
 * PLAN_GUEST_SYNC). NULL when there is nothing to wait on (a guest without
 * an agent link, or for a mask without a desktop) or no thread could be
 * had: the caller carries on at once. */
struct xsync_job *xsync_start(struct sess *s, unsigned mask, int ms);
/* Any thread: whether the wait is over (the loop is woken then). */
bool xsync_done(struct xsync_job *j);
/* Once done: xwait's exit status (0 X holds the mask, 1 timed out, 3 no
 * X, 127 an agent without xwait...), for a ping 0, or -1 when it could not
 * run (or the ping went unanswered). */
int xsync_status(const struct xsync_job *j);
/* Lets go of j. Accepts NULL. */
void xsync_unref(struct xsync_job *j);
/* Threads still running (they wake the lws context: it must outlive them). */
int xsync_threads_left(void);

#endif
