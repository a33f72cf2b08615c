/* gateway/e2b/watcher.c: see watcher.h. As with processes (sandbox.c), a
 * watcher's memory is freed on the loop only: the link's thread marks its
 * channel closed, the loop (e2b_watchers_reap_all) drops the channel's
 * reference. */
#include "gateway/e2b/watcher.h"

#include "gateway/e2b/e2b_msg.h"
#include "gateway/e2b/sandbox.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/sess_agent.h"
#include "vmm-qemu/agent_exec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Both guests' places for vitrine-agent: /bin (tiny), /usr/local/sbin. */
#define WATCH_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static struct e2b_watcher *all; /* loop thread */
static unsigned long next_id = 1; /* loop thread */

static void wake(struct e2b_watcher *w)
{
	lws_cancel_service(w->ctx);
}

/* Marks w ended with code and message unless it was; under w->mu. */
static void end_locked(struct e2b_watcher *w, enum connect_code code, const char *message)
{
	if (w->ended)
		return;
	w->ended = true;
	w->code = code;
	snprintf(w->error, sizeof(w->error), "%s", message ? message : "");
}

/* ---- the channel's side (link thread) ---- */

static void on_opened(void *u, const char *info)
{
	(void)u;
	(void)info;
}

static void on_line(void *u, const char *line, size_t len)
{
	struct e2b_watcher *w = u;
	struct e2b_wev *ev = malloc(sizeof(*ev) + len + 1);
	int type = ev ? e2b_watch_line_parse(line, len, ev->name, len + 1) : -ENOMEM;
	size_t cost;

	if (type <= 0 || w->ended) {
		if (type == 0)
			w->ready = true;
		free(ev);
		return;
	}
	cost = strlen(ev->name) + 1;
	if (w->n_events >= E2B_WATCH_QUEUE || w->n_bytes + cost > E2B_WATCH_QUEUE_BYTES) {
		free(ev);
		end_locked(w, CONNECT_RESOURCE_EXHAUSTED,
			   "more than 10000 events (or 1 MiB of names) waited unread: the watcher "
			   "stopped");
		return;
	}
	ev->next = NULL;
	ev->type = type;
	if (w->tail)
		w->tail->next = ev;
	else
		w->head = ev;
	w->tail = ev;
	w->n_events++;
	w->n_bytes += cost;
}

static void on_data(void *u, uint8_t flags, const void *d, size_t n)
{
	struct e2b_watcher *w = u;

	pthread_mutex_lock(&w->mu);
	if ((flags & AGENT_STREAM_MASK) == AGENT_STREAM_STDERR) {
		size_t room = sizeof(w->stderr_text) - 1 - w->stderr_len;

		memcpy(w->stderr_text + w->stderr_len, d, n < room ? n : room);
		w->stderr_len += n < room ? n : room;
	} else {
		e2b_watch_feed(&w->lines, d, n, on_line, w);
	}
	pthread_mutex_unlock(&w->mu);
	agent_chan_ack(w->link, w->chan, n);
	wake(w);
}

static void on_exit_status(void *u, const char *status)
{
	struct e2b_watcher *w = u;
	int exit_code, sig;
	const char *what;
	enum connect_code c;
	char msg[sizeof(w->error)];

	pthread_mutex_lock(&w->mu);
	if (agent_exit_parse(status, &exit_code, &sig) < 0)
		exit_code = -1;
	c = e2b_watch_exit_code(exit_code, w->ready, &what);
	/* the watcher's own words (first line), else ours */
	w->stderr_text[w->stderr_len] = '\0';
	w->stderr_text[strcspn(w->stderr_text, "\n")] = '\0';
	snprintf(msg, sizeof(msg), "%s", w->stderr_text[0] ? w->stderr_text : what);
	end_locked(w, c, msg);
	pthread_mutex_unlock(&w->mu);
}

static void on_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct e2b_watcher *w = u;

	(void)in;
	(void)out;
	pthread_mutex_lock(&w->mu);
	end_locked(w, CONNECT_UNAVAILABLE, reason[0] ? reason : "the watcher is gone");
	w->closed = true;
	pthread_mutex_unlock(&w->mu);
	wake(w);
}

static const struct agent_chan_ops watch_ops = {
	.opened = on_opened,
	.data = on_data,
	.exit = on_exit_status,
	.closed = on_closed,
};

/* ---- the loop's side ---- */

static void on_deadline(lws_sorted_usec_list_t *sul)
{
	struct e2b_watcher *w = lws_container_of(sul, struct e2b_watcher, sul);

	e2b_watcher_stop(w, CONNECT_DEADLINE_EXCEEDED, "the watch reached its Connect-Timeout-Ms");
}

struct e2b_watcher *e2b_watcher_start(struct e2b_sandbox *sb, const struct e2b_watch_req *q,
				      bool root, bool polled, int64_t timeout_ms, int *code,
				      char *err, size_t errlen)
{
	static const char *const env[] = { WATCH_PATH, NULL };
	const char *argv[6];
	struct agent_exec_spec spec = { .argv = argv,
					.env = env,
					.cwd = "/",
					.uid = root ? -1 : EXEC_DESKTOP_UID,
					.gid = root ? -1 : EXEC_DESKTOP_UID };
	struct agent_link *link = NULL;
	struct e2b_watcher *w;
	char *payload = NULL;
	size_t plen, n = 0;

	for (w = sb->watchers; w; w = w->next)
		n++;
	if (n >= E2B_WATCH_MAX) {
		*code = CONNECT_RESOURCE_EXHAUSTED;
		snprintf(err, errlen, "too many watchers in this sandbox (%d)", E2B_WATCH_MAX);
		return NULL;
	}
	if (sess_state_of(sb->s) != SESS_READY || !sess_agent_of(sb->s) ||
	    !(link = sess_agent_get(sess_agent_of(sb->s), 0))) {
		*code = CONNECT_UNAVAILABLE;
		snprintf(err, errlen, "the sandbox is not running");
		return NULL;
	}
	e2b_watch_argv(q, argv);
	if (agent_exec_payload(&spec, &payload, &plen) < 0 || !(w = calloc(1, sizeof(*w)))) {
		free(payload);
		agent_link_release(link);
		*code = CONNECT_INTERNAL;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&w->mu, NULL);
	w->refs = 3; /* the list, the channel, the caller */
	w->link = link;
	w->ctx = sess_gw(sb->s)->ctx;
	w->polled = polled;
	snprintf(w->id, sizeof(w->id), "w%lu", next_id++);
	w->chan = agent_chan_open(link, AGENT_EXEC, payload, plen, &watch_ops, w);
	free(payload);
	if (!w->chan) {
		agent_link_release(link);
		pthread_mutex_destroy(&w->mu);
		free(w);
		*code = CONNECT_UNAVAILABLE;
		snprintf(err, errlen, "the guest agent refused the watcher");
		return NULL;
	}
	agent_chan_send(link, w->chan, AGENT_EOF, 0, NULL, 0); /* it reads nothing */
	w->sb = sb;
	w->next = sb->watchers;
	sb->watchers = w;
	w->next_all = all;
	all = w;
	if (timeout_ms > 0)
		lws_sul_schedule(w->ctx, 0, &w->sul, on_deadline,
				 (lws_usec_t)timeout_ms * LWS_US_PER_MS);
	return w;
}

struct e2b_watcher *e2b_watcher_find(struct e2b_sandbox *sb, const char *id)
{
	for (struct e2b_watcher *w = sb->watchers; w; w = w->next)
		if (w->polled && !strcmp(w->id, id))
			return w;
	return NULL;
}

void e2b_watcher_hold(struct e2b_watcher *w)
{
	w->refs++;
}

static void free_events(struct e2b_watcher *w)
{
	while (w->head) {
		struct e2b_wev *ev = w->head;

		w->head = ev->next;
		free(ev);
	}
	w->tail = NULL;
	w->n_events = w->n_bytes = 0;
}

void e2b_watcher_release(struct e2b_watcher *w)
{
	if (!w || --w->refs > 0)
		return;
	for (struct e2b_watcher **pp = &all; *pp; pp = &(*pp)->next_all)
		if (*pp == w) {
			*pp = w->next_all;
			break;
		}
	lws_sul_cancel(&w->sul);
	free_events(w);
	agent_link_release(w->link);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

/* Takes w out of its sandbox's list (dropping the list's reference). */
static void unlist(struct e2b_watcher *w)
{
	if (!w->sb)
		return;
	for (struct e2b_watcher **pp = &w->sb->watchers; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	w->sb = NULL;
	w->next = NULL;
	e2b_watcher_release(w);
}

/* Asks the channel to close (the agent kills the guest's watcher), once. */
static void close_chan(struct e2b_watcher *w, const char *why)
{
	bool closed;

	pthread_mutex_lock(&w->mu);
	closed = w->closed;
	pthread_mutex_unlock(&w->mu);
	if (!closed && !w->close_sent)
		agent_chan_close(w->link, w->chan, why);
	w->close_sent = true;
}

void e2b_watcher_stop(struct e2b_watcher *w, enum connect_code code, const char *message)
{
	if (!w)
		return;
	lws_sul_cancel(&w->sul);
	pthread_mutex_lock(&w->mu);
	end_locked(w, code, message);
	pthread_mutex_unlock(&w->mu);
	close_chan(w, message);
	e2b_watcher_hold(w); /* unlist may drop the last but this */
	unlist(w);
	wake(w);
	e2b_watcher_release(w);
}

void e2b_watcher_state(struct e2b_watcher *w, bool *ready, bool *ended, int *code, char *err,
		       size_t errlen)
{
	pthread_mutex_lock(&w->mu);
	*ready = w->ready && !w->ended;
	*ended = w->ended;
	*code = (int)w->code;
	snprintf(err, errlen, "%s", w->error);
	pthread_mutex_unlock(&w->mu);
}

int e2b_watcher_drain(struct e2b_watcher *w, bool *started, bool *ended, struct bytebuf *out)
{
	int rc = 0;

	pthread_mutex_lock(&w->mu);
	if (!*started && w->ready) {
		rc = e2b_msg_frame(out, 0, e2b_watch_msg_start());
		*started = true;
	}
	while (*started && w->head && !rc) {
		struct e2b_wev *ev = w->head;

		rc = e2b_msg_frame(out, 0,
				   e2b_watch_msg_event(e2b_watch_event(ev->type, ev->name)));
		if (!(w->head = ev->next))
			w->tail = NULL;
		w->n_events--;
		w->n_bytes -= strlen(ev->name) + 1;
		free(ev);
	}
	if (!rc && w->ended && !w->head) {
		*ended = true;
		rc = e2b_msg_end_stream(out, w->code, w->error);
	}
	pthread_mutex_unlock(&w->mu);
	return rc;
}

json_t *e2b_watcher_take(struct e2b_watcher *w, int *code, char *err, size_t errlen)
{
	json_t *arr = json_array();

	pthread_mutex_lock(&w->mu);
	if (!w->head && w->ended) {
		*code = (int)w->code;
		snprintf(err, errlen, "%s", w->error);
		pthread_mutex_unlock(&w->mu);
		json_decref(arr);
		return NULL;
	}
	for (struct e2b_wev *ev = w->head; arr && ev; ev = ev->next)
		json_array_append_new(arr, e2b_watch_event(ev->type, ev->name));
	free_events(w);
	pthread_mutex_unlock(&w->mu);
	if (!arr) {
		*code = CONNECT_INTERNAL;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return json_pack("{s:o}", "events", arr);
}

void e2b_watchers_reap_all(void)
{
	struct e2b_watcher *w = all, *next;

	/* Hold the next one: releasing w may free w, never another. */
	for (; w; w = next) {
		bool ended, closed;

		next = w->next_all;
		pthread_mutex_lock(&w->mu);
		ended = w->ended;
		closed = w->closed;
		pthread_mutex_unlock(&w->mu);
		if (ended && !closed)
			close_chan(w, "the watch ended");
		if (!closed || w->chan_released)
			continue;
		w->chan_released = true;
		lws_sul_cancel(&w->sul);
		e2b_watcher_release(w); /* the channel's */
	}
}

void e2b_watchers_end(struct e2b_sandbox *sb, const char *why)
{
	while (sb->watchers)
		e2b_watcher_stop(sb->watchers, CONNECT_UNAVAILABLE, why);
}
