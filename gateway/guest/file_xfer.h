/* gateway/guest/file_xfer.h: a file moved to or from a session's guest as
 * it comes, for the files routes (native and E2B's): one command in the
 * guest (a shell script of the caller's) on an agent channel of its own,
 * its stdin fed from a request's body and its stdout handed to the answer,
 * so that neither side's whole file is ever in the gateway's memory.
 *
 * Backpressure both ways, with the agent link's own windows. Towards the
 * guest: a write the channel's queue cannot take now is held (at most what
 * lws delivered in one read) and file_xfer_blocked says so: the owner stops
 * reading its client (lws_rx_flow_control) until the transfer wakes it and
 * file_xfer_service sends what was held. Towards the client: the guest's
 * bytes are returned to its window only once the owner took them
 * (file_xfer_read), so a slow client stalls the guest's sender and the
 * transfer holds at most the window (AGENT_WINDOW).
 *
 * Threads. Everything here runs on the loop but the channel's callbacks
 * (the link's thread), which only note what happened under the
 * transfer's lock and wake the loop; the loop's wake-up
 * (file_xfer_poke_all) calls the owner's woken, which calls
 * file_xfer_service and reads the state. (Not the connection's writable:
 * lws delivers none while a request's body is still coming, and an upload
 * stopped for the guest must be started again.) The owner holds
 * the transfer until file_xfer_release; the channel holds it too until its
 * end. */
#ifndef VITRINE_GATEWAY_FILE_XFER_H
#define VITRINE_GATEWAY_FILE_XFER_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct file_xfer;
struct sess_agent;

/* The largest request body of the files routes unless `vitrine serve
 * --files-max-bytes` says otherwise. */
#define FILE_XFER_DEFAULT_MAX_BYTES (2LL << 30)
/* A transfer with no progress for this long loses its connection. */
#define FILE_XFER_IDLE_S 120

/* The files routes' commands (/bin/sh scripts, busybox's applets only, so
 * the tiny guest runs them too), as argv for file_xfer_start (argv[7],
 * pointing at path, valid while path is).
 *
 * Put: stdin into path (gunzipped first when gz): into a temporary file
 * beside it that replaces path only once the whole body came (with path's
 * mode, else 0644), its parent directories made; a SIGTERM (the owner let
 * go early) removes the temporary file.
 *
 * Get: a first line, then the rest of stdout: "F<size>\n" and the file's
 * size bytes; "Z\n" and the file gzipped (gz); for a directory "D\n" and
 * one line per entry ("TYPE\tSIZE\tMTIME\tNAME", GNU find's
 * -printf) when list, else it fails with FILE_XFER_EXIT_IS_DIR. */
void file_xfer_put_argv(const char *argv[7], const char *path, bool gz);
void file_xfer_get_argv(const char *argv[7], const char *path, bool list, bool gz);
/* What those scripts exit with: no such path; not readable; a directory. */
#define FILE_XFER_EXIT_MISSING 2
#define FILE_XFER_EXIT_DENIED 13
#define FILE_XFER_EXIT_IS_DIR 21

/* Starts argv (NULL-terminated; run as the desktop's user, or root) in the
 * guest of agent (a session's link, held while the transfer lives) on a channel of its own; woken(ud) is called on the loop (from
 * file_xfer_poke_all, never from a file_xfer_ call) whenever something
 * happened, until the transfer is released.
 * When the session's agent link is not up yet, the transfer waits for it
 * up to SESS_AGENT_WAIT_MS (a write meanwhile is held). Returns the
 * transfer (the caller's), or NULL when out of memory or the command line
 * is too long. Loop. */
struct file_xfer *file_xfer_start(struct lws_context *ctx, struct sess_agent *agent,
				  const char *const *argv, bool as_root, void (*woken)(void *ud),
				  void *ud);

/* Upload: n bytes of the body for the command's stdin. Taken always (held
 * while the channel's queue is full or the link not up yet). Returns 0, or
 * -EPIPE once the transfer has ended (nothing taken). Loop. */
int file_xfer_write(struct file_xfer *x, const void *p, size_t n);
/* Upload: the body is whole: stdin's EOF follows what was written. */
void file_xfer_finish(struct file_xfer *x);
/* Whether the owner should stop reading its client: bytes are held for a
 * full queue (or a link on its way). */
bool file_xfer_blocked(const struct file_xfer *x);
/* On the owner's writable: the link came up, the queue has room again:
 * what was held goes on (then EOF when finished). Loop. */
void file_xfer_service(struct file_xfer *x);

/* Download: up to cap bytes of the command's stdout (returned to the
 * guest's window), 0 when none are there now (the transfer wakes the
 * owner when more come). */
size_t file_xfer_read(struct file_xfer *x, void *buf, size_t cap);
/* Download: the first line of stdout (without its '\n', NUL-terminated in
 * line[cap]), taken: 1; 0 while it has not come whole; -1 when it is longer
 * than cap - 1 or the command ended without one. */
int file_xfer_line(struct file_xfer *x, char *line, size_t cap);
/* Bytes of stdout there now. */
size_t file_xfer_available(struct file_xfer *x);

/* How a transfer ended. */
struct file_xfer_end {
	bool exited; /* the command's status came (else: reason says why not) */
	int exit_code; /* -1 when killed by a signal */
	int signal;
	char reason[128]; /* "" after a normal end: why the channel ended else */
	char err[512]; /* the first bytes of its stderr, NUL-terminated */
};
/* True once the command's channel has ended, with *e filled (may be NULL). */
bool file_xfer_ended(struct file_xfer *x, struct file_xfer_end *e);
/* Bytes written to the command's stdin so far (sent or held). */
uint64_t file_xfer_written(const struct file_xfer *x);

/* The owner lets go (its request went, or it has its answer): a command
 * still running is sent SIGTERM (an upload's script then removes what it
 * wrote: nothing half-written stays) and left to end; the owner's
 * connection is never woken again. Accepts NULL. Loop. */
void file_xfer_release(struct file_xfer *x);

/* The loop's wake-up: the owners of transfers with news are woken. */
void file_xfer_poke_all(void);

#endif
