/* gateway/e2b/watcher.h: a sandbox's directory watchers (envd's WatchDir
 * and CreateWatcher): each is `vitrine-agent watch` running in the guest
 * on an EXEC channel of the session's agent link (e2b_watch.h reads its
 * lines), its events queued here, bounded, until a stream or
 * GetWatcherEvents takes them. A watcher ends when its stream goes or
 * RemoveWatcher stops it (the channel closes: the agent kills it), when
 * the sandbox goes, pauses or stops, or when the guest's watcher fails.
 * Loop thread, but for the channel's callbacks, which only queue under mu
 * and wake the loop. */
#ifndef VITRINE_GATEWAY_E2B_WATCHER_H
#define VITRINE_GATEWAY_E2B_WATCHER_H

#include "common/bytebuf.h"
#include "gateway/e2b/connect.h"
#include "gateway/e2b/e2b_watch.h"

#include <libwebsockets.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define E2B_WATCH_MAX 32 /* watchers per sandbox, streamed and polled */
/* Events kept unread per watcher, and their names' bytes; past either
 * the watcher stops with resource_exhausted (what it kept can still be
 * read). */
#define E2B_WATCH_QUEUE 10000
#define E2B_WATCH_QUEUE_BYTES (1u << 20)

struct e2b_sandbox;
struct agent_link;

struct e2b_wev {
	struct e2b_wev *next;
	int type; /* enum e2b_event_type */
	char name[]; /* relative to the watched directory */
};

struct e2b_watcher {
	struct e2b_watcher *next; /* e2b_sandbox::watchers */
	struct e2b_watcher *next_all; /* every watcher (watcher.c's list) */
	int refs; /* the sandbox's list, the channel (until the loop sees it closed), its user (loop) */
	struct e2b_sandbox *sb; /* NULL once out of the list */
	char id[E2B_WATCHER_ID_MAX]; /* "w" + a number */
	bool polled; /* made by CreateWatcher: found by its id */
	struct agent_link *link; /* held */
	struct lws_context *ctx;
	uint32_t chan;
	lws_sorted_usec_list_t sul; /* its deadline (a stream's Connect-Timeout-Ms) */
	bool close_sent; /* the loop asked the channel to close */
	bool chan_released; /* the loop dropped the channel's ref */
	/* under mu, written by the link's thread (lines too) */
	pthread_mutex_t mu;
	struct e2b_watch_lines lines;
	struct e2b_wev *head, *tail;
	size_t n_events, n_bytes;
	bool ready; /* the guest said its watches are in place */
	bool ended; /* no more events: the guest's watcher is done or was stopped */
	bool closed; /* the channel closed */
	enum connect_code code; /* how it ended (CONNECT_OK: it was stopped) */
	char error[256];
	char stderr_text[200]; /* the guest watcher's first words on stderr */
	size_t stderr_len;
};

/* Starts watching q's path (a DIR or CREATE request) in sb's guest, as
 * root or as the desktop's user, polled (CreateWatcher: found by id from
 * now on) or for a stream, for timeout_ms (0: no limit; then it ends with
 * deadline_exceeded). The watcher joins sb's list. Returns it with a
 * reference for the caller (e2b_watcher_release it), or NULL with a
 * Connect error in *code and err. */
struct e2b_watcher *e2b_watcher_start(struct e2b_sandbox *sb, const struct e2b_watch_req *q,
				      bool root, bool polled, int64_t timeout_ms, int *code,
				      char *err, size_t errlen);
/* The polled watcher with id in sb, or NULL. */
struct e2b_watcher *e2b_watcher_find(struct e2b_sandbox *sb, const char *id);
void e2b_watcher_hold(struct e2b_watcher *w);
void e2b_watcher_release(struct e2b_watcher *w);
/* Ends w (the guest's watcher is killed) with code and message, unless it
 * ended already, and takes it out of its sandbox's list. Accepts NULL. */
void e2b_watcher_stop(struct e2b_watcher *w, enum connect_code code, const char *message);
/* Whether w is ready (events flow), or ended (then *code and err say
 * how); both false while the guest sets it up. */
void e2b_watcher_state(struct e2b_watcher *w, bool *ready, bool *ended, int *code, char *err,
		       size_t errlen);

/* A stream's reading: appends to out the frames of what w has (the start
 * event first once ready, then each event, taken from the queue) and the
 * end-of-stream frame once it ended (*ended set; with no start before it
 * when it never was ready). Returns 0 or -ENOMEM. */
int e2b_watcher_drain(struct e2b_watcher *w, bool *started, bool *ended, struct bytebuf *out);
/* GetWatcherEvents: the queued events as {events: [...]}, taken; once
 * none is left and w ended, NULL with its error in *code and err (an
 * ended watcher's events are given before its error). */
json_t *e2b_watcher_take(struct e2b_watcher *w, int *code, char *err, size_t errlen);

/* Loop, on each wake-up: channels of ended watchers are closed, closed
 * channels' references dropped. */
void e2b_watchers_reap_all(void);
/* Loop: every watcher of sb ends (the sandbox is gone). */
void e2b_watchers_end(struct e2b_sandbox *sb, const char *why);

#endif
