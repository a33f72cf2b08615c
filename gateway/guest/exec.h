/* gateway/guest/exec.h: commands run in a session's guest for POST
 * /v1/sessions/{id}/exec and the routes built on commands (files,
 * clipboard, apps), through vitrine-agent (vmm-qemu/agent_exec.h) on a
 * thread of their own (the call blocks). A command runs as the desktop's
 * unprivileged user (uid 1000) unless root is asked for, with a clean
 * environment, in a working directory, with stdin, and its process group
 * is killed when its timeout passes. The request owns the job; a request that
 * goes away lets go of it and the thread frees it when done.
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
struct gw;

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

/* Starts j through the session's agent (held until the job ends); the
 * loop of gw is woken when it ends (exec_poke). Returns 0 or -errno (j
 * still the caller's). */
int exec_start(struct exec_job *j, struct gw *gw, struct sess_agent *agent);
/* True once the command has ended (or failed to run). */
bool exec_done(struct exec_job *j);
/* The answer of a done job: {exit_code, signal, timed_out, stdout,
 * stdout_encoding, stderr, stderr_encoding, truncated, elapsed_ms}, or an
 * error with *status set. */
json_t *exec_answer(struct exec_job *j, int *status);
/* The raw outcome of a done job: 0 with *res (owned by j), or -errno with
 * a reason in *err. */
int exec_result(struct exec_job *j, const struct agent_exec_result **res, const char **err);
/* The request lets go: frees j now if done, else its thread will. */
void exec_release(struct exec_job *j);
/* Loop side: true (once) when some job ended since the last call. */
bool exec_poke(void);
/* Frees a job that was never started. */
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
/* Waits up to timeout_ms for running exec threads (shutdown). */
bool exec_wait_threads(int timeout_ms);

#endif
