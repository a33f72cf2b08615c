/* vmm-qemu/agent_exec.h: running one command in the guest through
 * vitrine-agent (the gateway's POST exec, files, the clipboard, recipe
 * steps, the restore-time page probes). Output is collected up to a limit;
 * a command still running when its time is up has its whole process group
 * killed.
 *
 * Two forms on one implementation: agent_exec_start runs a command on the
 * link's callbacks with no thread of its own and says when it ended (the
 * gateway's loop keeps its clock); agent_exec_run starts one and waits
 * (tools, tests, and work that already runs on a worker). */
#ifndef VITRINE_VMM_AGENT_EXEC_H
#define VITRINE_VMM_AGENT_EXEC_H

#include "vmm-qemu/agent_link.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_exec_spec {
	const char *const *argv; /* argv[0] looked up in env's PATH; NULL-terminated */
	const char *const *env; /* "K=V", NULL-terminated: the whole environment */
	const char *cwd; /* NULL: the agent's (/) */
	int uid, gid; /* -1: stay root */
	/* A pseudo-terminal of this size instead of pipes (0: none; agents of
	 * AGENT_VERSION_PTY and later): its output comes as stdout. */
	unsigned pty_cols, pty_rows;
	const void *in; /* stdin bytes (then EOF), may be NULL */
	size_t in_len;
	int timeout_ms;
	size_t max_output; /* per stream; more is dropped and flagged */
	/* Told of each piece of output as it arrives, besides what is
	 * collected (whatever max_output keeps): stream is AGENT_STREAM_STDOUT
	 * or AGENT_STREAM_STDERR. Runs on the link's thread, so it must not
	 * block. NULL for none. */
	void (*on_output)(void *ud, uint8_t stream, const void *data, size_t len);
	void *on_output_ud;
};

struct agent_exec_result {
	int64_t pid;
	bool timed_out;
	int exit_code; /* -1 when killed by a signal */
	int signal;
	char *out, *err; /* owned, NUL-terminated (may hold NULs: use the lengths) */
	size_t out_len, err_len;
	bool out_truncated, err_truncated;
};

/* The EXEC payload for spec (NUL-separated key=value items) into *out
 * (malloc'd). Pure. 0, -E2BIG when over AGENT_MAX_PAYLOAD, -ENOMEM. */
int agent_exec_payload(const struct agent_exec_spec *spec, char **out, size_t *len);

/* The status an EXIT frame carries ("exit=N", N 0..255; "signal=N", N
 * 1..64), as the agent sends it: nothing before, after or between. Sets
 * *exit_code to N and *signal to 0, or *signal to N and *exit_code to -1.
 * Pure. Returns 0, or -EPROTO for anything else (a short, empty or
 * malformed payload; *exit_code and *signal untouched). */
int agent_exit_parse(const char *status, int *exit_code, int *signal);

/* A command under way: its owner's handle (agent_exec_start). */
struct agent_exec;
/* The command has ended (its channel closed): called once, on the link's
 * thread (or on the thread that destroys the link), under the handle's
 * lock. It must only note the end and wake its owner: no agent_exec_ call
 * on this handle, nothing that blocks. */
typedef void (*agent_exec_done_fn)(void *ud);

/* A SIGKILL (agent_exec_kill) that the agent does not answer in this long
 * is followed by a cut channel (agent_exec_cut): agent_exec_run's grace. */
#define AGENT_EXEC_KILL_GRACE_MS 5000

/* Starts spec on l: opens the AGENT_EXEC channel, sends stdin and its EOF.
 * spec is read now (its on_output, on_output_ud and max_output are kept);
 * done(ud) follows once, when the command has ended, unless the owner
 * closed the handle first. Nothing here keeps time: the owner calls
 * agent_exec_kill when the timeout passes. Any thread. Returns 0 with *out
 * (the owner's: agent_exec_close), or -errno with a reason in err and
 * nothing started (-EINVAL: no command or too long; -ENOMEM; -EPIPE: the
 * link is down). */
int agent_exec_start(struct agent_link *l, const struct agent_exec_spec *spec,
		     agent_exec_done_fn done, void *ud, struct agent_exec **out, char *err,
		     size_t errlen);
/* The time is up: SIGKILL to the command's process group; the result says
 * timed_out. A no-op once it ended. Any thread but done's. */
void agent_exec_kill(struct agent_exec *x);
/* The agent did not answer the kill: the channel is closed (done follows).
 * A no-op once it ended. Any thread but done's. */
void agent_exec_cut(struct agent_exec *x, const char *reason);
/* How an ended command ended (after done): 0 with *r filled (also when it
 * timed out: r->timed_out), or -errno with a reason in err, as
 * agent_exec_run says. Moves the output into r (the caller's: free it with
 * agent_exec_result_free), so it is taken once. */
int agent_exec_outcome(struct agent_exec *x, struct agent_exec_result *r, char *err, size_t errlen);
/* The owner's end: a command still running is cut (the agent kills it) and
 * its done never comes; once this returns no callback of it runs any more.
 * The handle is freed when the link has let go of it too. Accepts NULL.
 * Any thread but done's. */
void agent_exec_close(struct agent_exec *x);

/* Runs spec and waits (agent_exec_start, then kill at spec->timeout_ms and
 * a cut AGENT_EXEC_KILL_GRACE_MS later). Returns 0 with *r filled (also when it timed out:
 * r->timed_out, killed), or -errno with a reason in err (-EPIPE: the link
 * broke; -EREMOTEIO: the agent could not start it; -EPROTO: the agent's
 * EXIT did not say how the command ended). */
int agent_exec_run(struct agent_link *l, const struct agent_exec_spec *spec,
		   struct agent_exec_result *r, char *err, size_t errlen);
/* Frees the buffers and zeroes r. Accepts NULL. */
void agent_exec_result_free(struct agent_exec_result *r);

#endif
