/* vmm-qemu/qga.h: the qemu-guest-agent protocol, as a pure state machine.
 *
 * qemu-ga speaks QMP-shaped JSON over a virtio-serial port, but has no
 * greeting and no command ids, and the port keeps whatever a previous client
 * left unread. So a session starts (and restarts after a client-side
 * timeout) with guest-sync-delimited: a 0xFF byte to flush the agent's
 * parser, then the command with a random id; the agent answers with 0xFF
 * before the reply, and everything before the reply that echoes our id is
 * stale and dropped. After that, commands go one at a time and each reply
 * belongs to the command in flight.
 *
 * No I/O happens here: bytes read go in through qga_feed(), bytes to write
 * come out through qga_next_output(); qga_client.c is the socket glue. The
 * guest-exec helpers at the end build arguments and decode results for
 * callers that poll guest-exec-status on their own timers. */
#ifndef VITRINE_VMM_QGA_H
#define VITRINE_VMM_QGA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest single reply accepted, and so what one guest can make the gateway
 * buffer per qemu-ga connection. qemu-ga serves only small things here
 * (typing, page probes, the clock: commands go through vitrine-agent), so
 * a reply with a command's output of up to QGA_EXEC_MAX_OUTPUT per stream,
 * base64-encoded, fits; a longer line (qemu-ga itself captures up to 16 MiB)
 * breaks the stream instead of growing a buffer. */
#define QGA_MAX_LINE (4u << 20)

struct qga_error {
	char cls[64]; /* e.g. "GenericError"; "Disconnected" when the session ended */
	char desc[512];
};

/* Reply to a command: ret is the "return" value and err NULL on success,
 * ret NULL and err set on failure. Both are only valid during the call. */
typedef void (*qga_reply_fn)(void *ud, const json_t *ret, const struct qga_error *err);

struct qga;

/* Creates a session and queues guest-sync-delimited with sync_id (a random
 * positive number, so a stale reply of an earlier client cannot match).
 * Returns NULL when out of memory. */
struct qga *qga_create(int64_t sync_id);
/* Fails the command in flight and every queued one with class
 * "Disconnected" (callbacks must not queue new commands), then frees.
 * Accepts NULL. */
void qga_destroy(struct qga *g);

/* Queues cmd with args (a JSON object or NULL; the reference is stolen
 * either way). It is sent once the session is in sync and every command
 * before it has been answered. Commands that never answer on success
 * (guest-shutdown, guest-suspend-*) must not be sent this way. fn may be
 * NULL. Returns a handle (> 0) for qga_forget(), or -ENOMEM. */
int64_t qga_command(struct qga *g, const char *cmd, json_t *args, qga_reply_fn fn, void *ud);

/* Drops the callback of command handle: its reply, if it comes, is
 * discarded. This function can't fail; an unknown handle is ignored. */
void qga_forget(struct qga *g, int64_t handle);

/* Starts over after a client-side timeout: the command in flight is
 * abandoned (its callback, unless forgotten, gets class "Abandoned"; its
 * reply, if it comes, is stale and dropped), and guest-sync-delimited with
 * sync_id goes out before the queued commands, whose order is kept.
 * This function can't fail. */
void qga_resync(struct qga *g, int64_t sync_id);

/* Feeds bytes read from the agent and dispatches complete replies to their
 * callbacks (which may queue further commands). Returns 0, or -EPROTO when
 * the stream is broken (reason in err); the session must then be torn down
 * (a reconnect and a new session resynchronise). A broken stream stays
 * broken. */
int qga_feed(struct qga *g, const char *bytes, size_t len, char *err, size_t errlen);

/* The next chunk to write (*data, *len). Returns false when nothing is
 * waiting. */
bool qga_next_output(struct qga *g, const char **data, size_t *len);
/* Marks n bytes of the chunk from qga_next_output() as written. */
void qga_output_done(struct qga *g, size_t n);

/* True once the agent answered our current guest-sync-delimited. */
bool qga_synced(const struct qga *g);
/* Commands queued or in flight, not counting the sync. */
size_t qga_pending(const struct qga *g);
/* Why the stream broke, or NULL while it is usable. */
const char *qga_broken(const struct qga *g);

/* ---- guest-exec ---- */

/* Largest stdout or stderr that qga_exec_parse_status() keeps by default. */
#define QGA_EXEC_MAX_OUTPUT (1u << 20)

struct qga_exec_result {
	int64_t pid; /* the guest pid, also set when polling timed out */
	bool exited;
	int exit_code; /* when exited normally; -1 when killed by a signal */
	int signal; /* the signal that killed it, else 0 */
	char *out, *err; /* owned, NUL-terminated (may hold NULs: use the lengths) */
	size_t out_len, err_len;
	bool out_truncated, err_truncated; /* cut by qemu-ga (16 MiB) or by max_output */
};

/* Frees the buffers and zeroes r. Accepts NULL. */
void qga_exec_result_free(struct qga_exec_result *r);

/* The arguments of guest-exec for argv (argv[0] is the program, looked up
 * in the agent's PATH; NULL-terminated), env (NULL-terminated "K=V" list
 * replacing the agent's environment, or NULL to inherit it) and stdin
 * (stdin_len bytes, NULL for none), with capture-output on. Returns a new
 * object, or NULL when out of memory or argv is empty (reason in err). */
json_t *qga_exec_args(const char *const *argv, const char *const *env, const void *stdin_data,
		      size_t stdin_len, char *err, size_t errlen);

/* Reads the pid from a guest-exec return value. Returns 0, or -EPROTO when
 * it has none (reason in err). */
int qga_exec_parse_pid(const json_t *ret, int64_t *pid, char *err, size_t errlen);

/* Decodes a guest-exec-status return value into r (whose pid is kept),
 * keeping at most max_output bytes of each stream. Returns 0 (r->exited says
 * whether the process is done; output comes only then), -EPROTO for a
 * malformed value or bad base64, or -ENOMEM (reason in err; r then holds no
 * buffers). */
int qga_exec_parse_status(const json_t *ret, size_t max_output, struct qga_exec_result *r,
			  char *err, size_t errlen);

#endif
