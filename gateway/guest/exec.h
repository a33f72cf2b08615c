/* gateway/guest/exec.h: commands run in a session's guest for POST
 * /v1/sessions/{id}/exec and the routes built on commands (files,
 * clipboard, apps, E2B's desktop, recipe steps), through vitrine-agent
 * (vmm-qemu/agent_exec.h) with no thread of their own: a command is an
 * agent channel whose end the link's thread hands to the loop, and the
 * loop keeps its clock (a timer a job: the wait for a link still on its
 * way, the timeout, the kill's grace). A command runs as the desktop's
 * unprivileged user (uid 1000) unless root is asked for, with a clean
 * environment, in a working directory, with stdin, and its process group
 * is killed when its timeout passes.
 *
 * Threads and ownership. Everything here but exec_output runs on the loop.
 * The starter owns the job and hears of its end through its completion
 * (on the loop, once, in exec_reap); a starter that goes away first lets
 * go of it (exec_release): the command runs on and the job is freed when
 * it ends. The gateway's jobs (struct exec_runs, gw.execs) are reaped in
 * the loop's wake-up and drained once at shutdown (exec_runs_destroy).
 *
 * A watched job (exec_watch) keeps the last bytes of each stream as they
 * come, readable while the command runs (exec_output): the agent link's
 * thread writes them under the job's lock, so whoever reads them (the loop)
 * copies a few KiB and never waits for the command. */
#ifndef VITRINE_GATEWAY_EXEC_H
#define VITRINE_GATEWAY_EXEC_H

#include "gateway/core/api_error.h"
#include "gateway/guest/sess_agent.h"
#include "vmm-qemu/agent_exec.h"

#include <jansson.h>
#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXEC_MAX_TIMEOUT_S 600
#define EXEC_DEFAULT_TIMEOUT_S 60

struct exec_job;
struct exec_runs;
struct gw;

/* A job's end, on the loop (exec_reap): j is done (exec_done, exec_result,
 * exec_answer), still the starter's. The completion may release or free j,
 * and start other jobs. */
typedef void (*exec_done_fn)(struct exec_job *j, void *ud);

/* The gateway's commands under way, woken through ctx (lws_cancel_service).
 * NULL when out of memory. Loop. */
struct exec_runs *exec_runs_create(struct lws_context *ctx);
/* Shutdown, on the loop before ctx goes: every command still running is
 * cut (its channel closed) and fails ("the gateway is stopping"), each
 * completion still due is called, the jobs let go of are freed, then runs.
 * Waits for nothing. Accepts NULL. */
void exec_runs_destroy(struct exec_runs *runs);
/* The loop's wake-up: the completion of every job that ended since. */
void exec_reap(struct exec_runs *runs);
/* Jobs started and not reaped yet (tests, figures). */
int exec_runs_count(const struct exec_runs *runs);

/* Parses the body {cmd, args?, env?, cwd?, timeout?, stdin? | stdin_b64?,
 * user?: "root"|"vitrine"} into the command the job will run. Pure.
 * Returns a job not yet started, or NULL with *e filled (400). */
struct exec_job *exec_parse(const char *body, size_t len, struct api_error *e);

/* A job that runs argv (NULL-terminated, copied) as the desktop's user
 * with stdin (copied, may be NULL) and a timeout: for the files routes.
 * NULL when out of memory. */
struct exec_job *exec_new(const char *const *argv, const void *in, size_t in_len, int timeout_s);

/* Before exec_start: j keeps the last keep bytes (1..1 MiB) of its stdout
 * and of its stderr as they come, readable while it runs (exec_output);
 * exec_result's output is then those bytes (truncated flagged when more
 * came). 0, -EINVAL (keep out of range, or already watched) or -ENOMEM. */
int exec_watch(struct exec_job *j, size_t keep);
/* What a watched job's stream (1 stdout, 2 stderr) has sent so far: its
 * last bytes, at most len (no NUL added), into buf, and the bytes it sent
 * in all into *total. Returns how many were copied (0 for a job not
 * watched). Any thread, while the job runs and after; takes the job's lock
 * for a copy of at most the kept bytes. */
size_t exec_output(struct exec_job *j, int stream, char *buf, size_t len, uint64_t *total);

/* Starts j through the session's agent (held until the job ends) among
 * gw's runs: at once when its link is up, else once it is, for up to
 * SESS_AGENT_WAIT_MS (then it fails: "the guest agent is not connected").
 * done(j, ud) follows on the loop, never from inside this call (done may
 * be NULL for a job released at once). Returns 0, or -EINVAL (no runs)
 * with j still the caller's. Loop. */
int exec_start(struct exec_job *j, struct gw *gw, struct sess_agent *agent, exec_done_fn done,
	       void *ud);
/* True once the job's end was reaped (its completion due or called). */
bool exec_done(struct exec_job *j);
/* The answer of a done job: {exit_code, signal, timed_out, stdout,
 * stdout_encoding, stderr, stderr_encoding, truncated, elapsed_ms}, or an
 * error with *status set. */
json_t *exec_answer(struct exec_job *j, int *status);
/* The raw outcome of a done job: 0 with *res (owned by j), or -errno with
 * a reason in *err. */
int exec_result(struct exec_job *j, const struct agent_exec_result **res, const char **err);
/* The starter lets go: frees j now if done (or never started), else its
 * command runs on without a completion and j is freed when it ends.
 * Accepts NULL. */
void exec_release(struct exec_job *j);
/* Frees a job that was never started, or is done. */
void exec_free(struct exec_job *j);
/* What j runs (for tests): argv and environment (NULL-terminated), the
 * working directory, and whether as root. */
const char *const *exec_argv(const struct exec_job *j);
const char *const *exec_env(const struct exec_job *j);
const char *exec_cwd(const struct exec_job *j);
bool exec_as_root(const struct exec_job *j);
/* Its stdin (len in *len; NULL when none) and timeout. */
const void *exec_stdin(const struct exec_job *j, size_t *len);
int exec_timeout_ms(const struct exec_job *j);

#define EXEC_DESKTOP_UID 1000 /* the desktop's user, vitrine */

#endif
