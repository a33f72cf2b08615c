/* gateway/action/xsync.h: the waits on the guest that keep input exact:
 * the barrier between the modifiers held around pointer input and the
 * pointer input itself (plan.h PLAN_X_SYNC: the guest's `vitrine-agent
 * xwait MASK MS`; guest-images/agent/agent_xwait.c says why a pause is not
 * enough), and the ping between the pieces of a long `type`
 * (PLAN_GUEST_SYNC), each through the session's vitrine-agent as a job of
 * the gateway's guest queue (common/work_queue.h), since the calls block.
 * The job is the queue's from its start until its done, which tells the
 * run on the loop; a run that goes first abandons it. */
#ifndef VITRINE_GATEWAY_XSYNC_H
#define VITRINE_GATEWAY_XSYNC_H

struct sess;
struct xsync_job;

/* Where the desktop image puts the agent (guest-images/desktop/recipe.sh). */
#define XSYNC_AGENT "/usr/local/sbin/vitrine-agent"

/* Loop thread: the wait is over. status: xwait's exit status (0 X holds
 * the mask, 1 timed out, 3 no X, 127 an agent without xwait...), for a
 * ping 0, or -1 when it could not run (the ping went unanswered, or the
 * gateway stopped first). The job is freed right after. */
typedef void (*xsync_done_fn)(void *ud, int status);

/* Loop: starts waiting (at most ms) until s's guest's X holds mask; with
 * mask 0, until the guest's agent has answered a ping (plan.h
 * PLAN_GUEST_SYNC); done(ud, status) follows on the loop. NULL when there
 * is nothing to wait on (a guest without an agent link, or for a mask
 * without a desktop) or the guest queue is full: the caller carries on at
 * once, and done is never called. */
struct xsync_job *xsync_start(struct sess *s, unsigned mask, int ms, xsync_done_fn done, void *ud);
/* Loop: lets go of j before its done, which will not be called then.
 * Accepts NULL. */
void xsync_abandon(struct xsync_job *j);

#endif
