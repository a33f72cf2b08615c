/* display/settle.c: see settle.h. */
#include "display/settle.h"

void display_settle_init(struct display_settle *s, int64_t now_ms, int64_t last_change_ms,
			 int quiet_ms, int timeout_ms)
{
	s->start_ms = now_ms;
	s->last_change_ms = last_change_ms;
	s->quiet_ms = quiet_ms > 0 ? quiet_ms : 0;
	s->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
	s->done = false;
	s->result.settled = false;
	s->result.waited_ms = 0;
	s->result.quiet_ms = 0;
}

void display_settle_change(struct display_settle *s, int64_t change_ms)
{
	if (!s->done && change_ms > s->last_change_ms)
		s->last_change_ms = change_ms;
}

static int clamp_ms(int64_t v)
{
	return v < 0 ? 0 : v > 0x7fffffff ? 0x7fffffff : (int)v;
}

int display_settle_poll(struct display_settle *s, int64_t now_ms)
{
	int64_t quiet_until, deadline = s->start_ms + s->timeout_ms;
	int64_t quiet;

	if (s->done)
		return 0;
	/* A change "in the future" (clock skew between threads) counts as now. */
	quiet = s->last_change_ms == INT64_MIN ? INT64_MAX : now_ms - s->last_change_ms;
	if (quiet < 0)
		quiet = 0;
	if (quiet >= s->quiet_ms || now_ms >= deadline) {
		s->done = true;
		s->result.settled = quiet >= s->quiet_ms;
		s->result.waited_ms = clamp_ms(now_ms - s->start_ms);
		s->result.quiet_ms = clamp_ms(quiet);
		return 0;
	}
	quiet_until = now_ms + (s->quiet_ms - quiet);
	return clamp_ms((quiet_until < deadline ? quiet_until : deadline) - now_ms);
}
