/* gateway/e2b/e2b_watch.h: envd's filesystem watching (WatchDir, and its
 * polled form CreateWatcher, GetWatcherEvents, RemoveWatcher) as Vitrine
 * does it: the requests, the guest's command (`vitrine-agent watch`,
 * guest-images/agent/agent_watch.c), its output split into lines and read
 * into events, how it ended as a Connect error, and the proto3-JSON of
 * WatchDirResponse and FilesystemEvent. Pure; unit-tested
 * (tests/unit/test_e2b.c) and fuzzed (tests/fuzz/fuzz_e2b.c). */
#ifndef VITRINE_GATEWAY_E2B_WATCH_H
#define VITRINE_GATEWAY_E2B_WATCH_H

#include "gateway/e2b/connect.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum e2b_watch_call { E2B_WATCH_DIR, E2B_WATCH_CREATE, E2B_WATCH_GET, E2B_WATCH_REMOVE };

/* envd's EventType, with its numbers. */
enum e2b_event_type {
	E2B_EVENT_CREATE = 1,
	E2B_EVENT_WRITE = 2,
	E2B_EVENT_REMOVE = 3,
	E2B_EVENT_RENAME = 4,
	E2B_EVENT_CHMOD = 5,
};

#define E2B_WATCHER_ID_MAX 32

struct e2b_watch_req {
	enum e2b_watch_call call;
	char path[1024]; /* DIR, CREATE: absolute (relative ones start in home) */
	bool recursive;
	char id[E2B_WATCHER_ID_MAX]; /* GET, REMOVE: the watcherId */
};

/* The call named "filesystem.Filesystem/Method", or -ENOENT. */
int e2b_watch_call_of(const char *rpc, enum e2b_watch_call *call);
/* Parses call's message: {path, recursive?} (includeEntry and
 * allowNetworkMounts are taken and ignored), {watcherId}; proto3 JSON's
 * original field names are taken too. Returns 0, or -EINVAL with err. */
int e2b_watch_req_parse(enum e2b_watch_call call, const char *msg, size_t len, const char *home,
			struct e2b_watch_req *out, char *err, size_t errlen);
/* The guest command of a DIR or CREATE request, into argv (NULL-ended,
 * pointing into q): vitrine-agent watch [--recursive] -- PATH. */
void e2b_watch_argv(const struct e2b_watch_req *q, const char *argv[6]);

/* The watcher's exit statuses (agent_watch.c's WATCH_EXIT_*). */
#define E2B_WATCH_EXIT_FAILED 1
#define E2B_WATCH_EXIT_USAGE 2 /* also an agent from before `watch` */
#define E2B_WATCH_EXIT_MISSING 3
#define E2B_WATCH_EXIT_NOT_DIR 4
#define E2B_WATCH_EXIT_OVERFLOW 5

/* The Connect error of a watcher that exited with exit_code (-1: killed
 * by a signal), before it was ready or after; *what is the sentence to
 * say when the watcher's own stderr says nothing. */
enum connect_code e2b_watch_exit_code(int exit_code, bool ready, const char **what);

/* The watcher's output, split into lines: at most E2B_WATCH_LINE_MAX
 * bytes each (a name of PATH_MAX, every byte escaped); a longer one is
 * dropped whole. Zero it to start. */
#define E2B_WATCH_LINE_MAX 8448
struct e2b_watch_lines {
	char buf[E2B_WATCH_LINE_MAX];
	size_t len;
	bool overlong; /* the line under way is being dropped */
};
/* Feeds n bytes of output: fn(ud, line, len) for each whole line (its
 * '\n' left out). Returns how many lines were dropped as overlong. */
size_t e2b_watch_feed(struct e2b_watch_lines *l, const void *p, size_t n,
		      void (*fn)(void *ud, const char *line, size_t len), void *ud);

/* One line: "ready" (returns 0), an event "T NAME" (returns its type, the
 * name unescaped into name, NUL-ended, with bytes that are not UTF-8 made
 * '?', at most cap - 1 bytes: cap >= len suffices), or -EINVAL (a NUL, an
 * unknown type or escape, an empty name, too long for cap). */
int e2b_watch_line_parse(const char *line, size_t len, char *name, size_t cap);

/* "EVENT_TYPE_CREATE", ...; NULL outside the enum. */
const char *e2b_event_type_name(int type);
/* A FilesystemEvent {name, type}; NULL when out of memory. */
json_t *e2b_watch_event(int type, const char *name);
/* WatchDirResponse's three: {start: {}}, {filesystem: event} (stolen),
 * {keepalive: {}}. NULL when out of memory. */
json_t *e2b_watch_msg_start(void);
json_t *e2b_watch_msg_event(json_t *event);
json_t *e2b_watch_msg_keepalive(void);

#endif
