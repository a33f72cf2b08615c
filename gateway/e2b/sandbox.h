/* gateway/e2b/sandbox.h: what a session is to E2B's SDKs beyond the
 * session itself: its template name, metadata, envVars, when it started,
 * and envd's process table (processes started through Process.Start,
 * which outlive the request that started them; their output is kept,
 * bounded in memory (proc_output.h), for the streams attached to them, a
 * few a process), and its directory watchers
 * (watcher.h). Found on a session as its
 * listener (sess_find_listener); freed when the session is. Loop thread,
 * but for the agent channel callbacks, which only queue under mu and wake
 * the loop. */
#ifndef VITRINE_GATEWAY_E2B_SANDBOX_H
#define VITRINE_GATEWAY_E2B_SANDBOX_H

#include "common/bytebuf.h"
#include "gateway/e2b/e2b_metrics.h"
#include "gateway/e2b/proc_output.h"
#include "gateway/session/session.h"

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define E2B_PROC_MAX 64 /* running processes per sandbox */
/* Output kept per process, in the memory it takes (its chunks' headers
 * and slack counted); older is dropped. */
#define E2B_PROC_OUTPUT (4u << 20)
#define E2B_PROC_STREAMS 8 /* Start's and Connect's streams at once per process */
/* What one stream's drain copies from the output at most: 54 KiB of
 * frames at most (base64 and a frame per piece), one write of the stream
 * (e2b_envd.c writes 64 KiB a callback). */
#define E2B_DRAIN_BYTES (32u * 1024)
#define E2B_DRAIN_PIECES 256

struct e2b_proc {
	struct e2b_proc *next; /* e2b_sandbox::procs */
	struct e2b_proc *next_all; /* every process (sandbox.c's list) */
	int refs; /* the table, the channel (until the loop sees it closed), each stream (loop) */
	int streams; /* loop: the streams attached (e2b_proc_attach) */
	struct e2b_sandbox *sb; /* NULL once the sandbox is gone */
	uint32_t pid; /* 0 until the agent said */
	char tag[64];
	json_t *config; /* owned: {cmd, args, envs, cwd?} for List */
	struct agent_link *link; /* held */
	struct lws_context *ctx;
	uint32_t chan;
	lws_sorted_usec_list_t sul; /* its deadline (Connect-Timeout-Ms) */
	bool chan_released; /* the loop dropped the channel's ref */
	/* Loop: its guest stopped, paused or went under it: the streams
	 * attached before (gen_attached, e2b_envd.c) end as E2B's do when the
	 * connection drops (a memory pause keeps the process: Connect after
	 * the resume), and so does a stream that finds it closed after
	 * (guest_gone, e2b_proc_drain). */
	unsigned guest_gen;
	bool guest_gone;
	/* A process the gateway answers itself (e2b_proc_serve): no link,
	 * no channel; the serving holds the channel's place (and ref) until
	 * its answer, or the kill, closes the process. */
	bool served;
	bool pty; /* on a pseudo-terminal: its output is data {pty} */
	struct desktop_serve *serving; /* the answer not yet in, or NULL */
	/* under mu, written by the link's thread */
	pthread_mutex_t mu;
	struct e2b_out out; /* owned */
	bool opened, exited, closed, killed;
	int exit_code, exit_signal;
	char error[128];
};

struct e2b_sandbox {
	struct sess_listener listener; /* in sess::listeners */
	struct sess *s;
	char template_id[64];
	json_t *metadata; /* owned, object of strings */
	json_t *env_vars; /* owned, object of strings */
	int64_t started_unix_ms;
	bool auto_pause;
	int timeout_s; /* its life from when it runs (E2B's timeout) */
	/* The envd token a connect hands out once this gateway no longer
	 * knows the session's control token (it was adopted after a
	 * restart: only the hash survives): a token minted with the control
	 * token's rights, kept in memory only ("" until a connect needs it);
	 * its grant's id is kept with the sandbox (e2b_sandbox_save). */
	char envd_token[AUTH_TOKEN_LEN + 1];
	char envd_grant_id[AUTH_GRANT_ID_LEN + 1];
	struct e2b_proc *procs; /* running (or not yet reaped) processes */
	int n_procs;
	struct e2b_watcher *watchers; /* directory watchers (watcher.h) */
	struct e2b_metrics
		*metrics; /* owned: its samples (sandbox_metrics.c), NULL until the first */
	lws_sorted_usec_list_t metrics_sul; /* the next sample */
};

/* The sandbox of s, or NULL when it has none: one made through the E2B
 * API before a restart comes back here from what s kept of it
 * (e2b_sandbox_save; its processes and watchers do not). */
struct e2b_sandbox *e2b_sandbox_of(struct sess *s);
/* The sandbox of s, made (empty) when missing. NULL when out of memory. */
struct e2b_sandbox *e2b_sandbox_get(struct sess *s);
/* Keeps sb's template, metadata, envVars, start, autoPause and timeout in
 * its session's record (sess_ext_set), so that they survive a gateway
 * restart. Called whenever one of them changes. 0, or -ENOMEM. */
int e2b_sandbox_save(struct e2b_sandbox *sb);
/* The envdAccessToken of sb for create's and connect's answer: the
 * session's control token while this gateway knows it; else (after a
 * restart) a token minted with the same rights, once per gateway process
 * (the one minted by an earlier process is revoked: its grant id is kept).
 * NULL when none can be had (the session's table of minted tokens is
 * full, or no randomness). */
const char *e2b_sandbox_envd_token(struct e2b_sandbox *sb);

/* Starts exec_body (an exec body, gateway/e2b/e2b_req.h) in s's guest
 * with the config List shows, a tag, stdin open or closed at once, on a
 * pseudo-terminal of pty_cols x pty_rows (0: pipes; `unimplemented` from
 * an agent older than AGENT_VERSION_PTY), and a life of timeout_ms (0:
 * none). The process joins the table. Returns it (the table's: hold it
 * to keep it), or NULL with a Connect error in *code and err. */
struct e2b_proc *e2b_proc_start(struct e2b_sandbox *sb, const json_t *exec_body, json_t *config,
				const char *tag, bool keep_stdin, unsigned pty_cols,
				unsigned pty_rows, int64_t timeout_ms, int *code, char *err,
				size_t errlen);
/* Serves op (a recognised @e2b/desktop command, desktop_serve.h) as a
 * process of the table: it gets a pid of the gateway's own (from
 * E2B_SERVED_PID_BASE up, above any guest pid) and its start event at
 * once; its output and end come from the answer, as if it had run. An
 * answer that "lingers" (Xvfb, startxfce4, novnc_proxy) keeps it running,
 * in List, until a signal ends it (then end reports that signal). A signal
 * before the answer abandons the serving. Same returns as e2b_proc_start. */
#define E2B_SERVED_PID_BASE 0x40000000u
struct desktop_op;
struct e2b_proc *e2b_proc_serve(struct e2b_sandbox *sb, const struct desktop_op *op, json_t *config,
				const char *tag, int64_t timeout_ms, int *code, char *err,
				size_t errlen);
/* The running process with pid (or, pid 0, tag), or NULL. */
struct e2b_proc *e2b_proc_find(struct e2b_sandbox *sb, uint32_t pid, const char *tag);
void e2b_proc_hold(struct e2b_proc *p);
void e2b_proc_release(struct e2b_proc *p);
/* Stdin bytes, its end, a signal (9, 15). 0 or -errno (a served process
 * takes no stdin: -EPIPE; closing it is 0). */
int e2b_proc_input(struct e2b_proc *p, const void *data, size_t len);
int e2b_proc_close_stdin(struct e2b_proc *p);
int e2b_proc_signal(struct e2b_proc *p, int sig);
/* A new size of p's terminal (Update): 0, -ENOTTY for a process not on
 * one, or the channel's -errno. */
int e2b_proc_resize(struct e2b_proc *p, unsigned cols, unsigned rows);
/* Output of p (stderr when err, else stdout), kept for its streams: the
 * link's thread (a channel's data), or the loop (a served process's
 * answer). Takes p->mu; out of memory drops it. */
void e2b_proc_output(struct e2b_proc *p, bool err, const void *d, size_t n);

/* A stream joins p (holds it), unless E2B_PROC_STREAMS are attached
 * already: -EBUSY. Detach lets go of it (may free p). Loop. */
int e2b_proc_attach(struct e2b_proc *p);
void e2b_proc_detach(struct e2b_proc *p);
/* The cursor of what p writes from now on (Connect's start). */
uint64_t e2b_proc_output_end(struct e2b_proc *p);
/* A stream's reading, one write's worth: appends to out the Connect
 * frames of at most E2B_DRAIN_BYTES of what p wrote from *cursor (the
 * start event first when *started is false, once the pid is known; data
 * events), advancing *cursor; and, once the process is over and all of
 * it is read, the end event and the end of the stream (*ended set). A
 * stream whose cursor is older than the output kept ends there with
 * resource_exhausted (it fell behind). A process whose guest went under
 * it ends with `unknown` "terminated": what the SDK's transport says when
 * E2B's connection drops, which the SDK then checks with /health (502:
 * the sandbox was killed or paused). The output is copied under p->mu,
 * rendered after. Loop. Returns 0 or -ENOMEM. */
int e2b_proc_drain(struct e2b_proc *p, uint64_t *cursor, bool *started, bool *ended,
		   struct bytebuf *out);

/* sandbox_metrics.c: sb's samples every E2B_METRICS_INTERVAL_MS while its
 * guest runs (start: from sandbox_new; stop: cancels the timer and frees
 * the samples, from the sandbox's end). The metrics call's answer
 * (samples from start_s to end_s, unix seconds, 0: open), with a sample
 * taken first when the newest is older than the interval. Loop. */
void e2b_sandbox_metrics_start(struct e2b_sandbox *sb);
void e2b_sandbox_metrics_stop(struct e2b_sandbox *sb);
json_t *e2b_sandbox_metrics_json(struct e2b_sandbox *sb, int64_t start_s, int64_t end_s);

/* Loop: drops the processes whose channel closed (their streams keep
 * them while they read), and the same for watchers (watcher.h). Called
 * on each wake-up. */
void e2b_sandbox_reap_all(struct gw *gw);
/* The table's processes as ListResponse's {processes: [...]} . */
json_t *e2b_proc_list(struct e2b_sandbox *sb);

#endif
