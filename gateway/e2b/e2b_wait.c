/* gateway/e2b/e2b_wait.c: see e2b_wait.h. */
#include "gateway/e2b/e2b_wait.h"

#include "common/fsutil.h"
#include "gateway/session/job.h"

static void on_look(lws_sorted_usec_list_t *sul);
static void on_sess(struct sess_listener *l, struct sess *s, enum sess_signal sig,
		    const void *data);
static void on_ticket(void *ud);

static void look_now(struct e2b_wait *w)
{
	lws_sul_schedule(w->ctx, 0, &w->sul, on_look, 1);
}

static void on_sess(struct sess_listener *l, struct sess *s, enum sess_signal sig, const void *data)
{
	struct e2b_wait *w = lws_container_of(l, struct e2b_wait, listener);

	(void)data;
	if (sig == SESS_SIGNAL_DESTROY) {
		sess_unlisten(s, l);
		w->s = NULL;
	}
	if (sig == SESS_SIGNAL_DESTROY || sig == SESS_SIGNAL_WAKE)
		look_now(w);
}

static void on_ticket(void *ud)
{
	struct e2b_wait *w = ud;

	w->ticket = NULL; /* the watch is over */
	look_now(w);
}

/* Parks w on s and ticket (either may be NULL) until the deadline. */
static void park(struct e2b_wait *w, struct sess *s, struct job_ticket *ticket)
{
	int64_t left = w->until_ms - fs_now_ms();

	if (s) {
		w->s = s;
		w->listener.notify = on_sess;
		sess_listen(s, &w->listener);
	}
	if (job_ticket_watch(ticket, w->ctx, on_ticket, w))
		w->ticket = ticket;
	else if (ticket)
		left = 0; /* done already: look at once */
	lws_sul_schedule(w->ctx, 0, &w->sul, on_look,
			 left > 0 ? (lws_usec_t)left * LWS_US_PER_MS : 1);
}

static void on_look(lws_sorted_usec_list_t *sul)
{
	struct e2b_wait *w = lws_container_of(sul, struct e2b_wait, sul);
	struct sess *s = w->s;
	struct job_ticket *ticket = w->ticket;

	/* Unparked while it looks: an answer may free w with its request. */
	e2b_wait_end(w);
	if (!w->look(w, fs_now_ms() >= w->until_ms))
		park(w, s, ticket);
}

void e2b_wait_start(struct e2b_wait *w, struct lws_context *ctx, struct sess *s,
		    struct job_ticket *ticket, int wait_ms, e2b_look_fn look)
{
	e2b_wait_end(w);
	w->ctx = ctx;
	w->look = look;
	w->until_ms = fs_now_ms() + wait_ms;
	park(w, s, ticket);
	look_now(w);
}

void e2b_wait_end(struct e2b_wait *w)
{
	if (w->ctx)
		lws_sul_cancel(&w->sul);
	if (w->s)
		sess_unlisten(w->s, &w->listener);
	w->s = NULL;
	job_ticket_unwatch(w->ticket);
	w->ticket = NULL;
}
