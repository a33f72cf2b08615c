/* tests/lib/gateway_proc.h: a `vitrine serve` child process for tests, on
 * 127.0.0.1 with a port of its own choosing, its own key file and run base. */
#ifndef VITRINE_TESTS_GATEWAY_PROC_H
#define VITRINE_TESTS_GATEWAY_PROC_H

#include <stdint.h>
#include <sys/types.h>

struct gateway_proc {
	pid_t pid;
	int port;
	char key[128]; /* the operator API key */
	char key_file[64];
	char run_base[64]; /* VITRINE_RUN of the server */
	char state_dir[64]; /* its --state-dir: the session records */
};

/* Starts the server with extra arguments (NULL-terminated list, may be
 * NULL; with $VITRINE_TEST_GATEWAY_STDERR set, its stderr is appended to
 * that file) on fresh dirs. Unless extra_args say otherwise it runs with
 * --on-stop kill, --adopt-grace-s 30 and --on-abandon kill. Returns 0, or
 * -1 after printing why. */
int gateway_proc_start(struct gateway_proc *g, const char *const *extra_args);
/* gateway_proc_start with run_base (at most 63 bytes; made by the caller,
 * a mount of its own, say) as the server's VITRINE_RUN. */
int gateway_proc_start_in(struct gateway_proc *g, const char *run_base,
			  const char *const *extra_args);
/* Starts a new server on g's dirs (key, run base, state dir) after the
 * old one (SIGKILLed first if it still runs), with a port of its own.
 * Returns 0, or -1 after printing why. */
int gateway_proc_restart(struct gateway_proc *g, const char *const *extra_args);
/* Sends sig to the server and reaps it, leaving its dirs (and guests) as
 * they are. Returns its wait status, or -1. */
int gateway_proc_kill(struct gateway_proc *g, int sig);
/* How long a stop waits for the server to exit: more than any one of its
 * shutdown's bounded waits (60 s draining jobs), bar the drain of pauses
 * to disk under --on-stop pause, which tests do not wait on. */
#define GATEWAY_PROC_STOP_S 120
/* SIGTERMs and reaps the server; returns its exit status (or -1), and
 * removes its key file, run base and state dir. A server still running
 * GATEWAY_PROC_STOP_S later has its threads' stacks printed (gdb) and is
 * SIGKILLed: -1. */
int gateway_proc_stop(struct gateway_proc *g);
/* The server's resident memory (VmRSS of /proc/PID/status) in KiB, or -1. */
long gateway_proc_rss_kib(const struct gateway_proc *g);
/* Guests of the server still running (its run dirs; checkpoint folders
 * of sessions paused on disk are not guests). */
int gateway_proc_guests(const struct gateway_proc *g);
/* Checkpoint folders (vm-ckpt-*) in the server's run base. */
int gateway_proc_checkpoints(const struct gateway_proc *g);

/* The qga socket of the server's guest (the last run dir found when there
 * are several: for a server with one guest). Returns 0, or -1. */
int gateway_proc_qga_socket(const struct gateway_proc *g, char *out, size_t len);

/* Deletes every session of the server (test teardown: a failed test must
 * not leave guests to the next). Returns 0, or -1 when it cannot ask. */
int gateway_proc_delete_sessions(const struct gateway_proc *g);

/* A session POST /v1/sessions made: its id and tokens. */
struct gateway_session {
	char id[40];
	char control[64];
	char view[64];
};

/* POST /v1/sessions?wait=ready with body (JSON text), waiting up to
 * timeout_s. Returns 0 with *out once the session is ready, or -1 after
 * printing why. */
int gateway_proc_create_session(const struct gateway_proc *g, const char *body, int timeout_s,
				struct gateway_session *out);
/* The same with another API key (a project's). */
int gateway_proc_create_session_as(const struct gateway_proc *g, const char *key, const char *body,
				   int timeout_s, struct gateway_session *out);

/* What another client of a busy gateway does: a screenshot, a click and a
 * command on s with its control token, each of which must answer 200
 * (within 60 s). Returns 0 with the slowest in *slowest_ms, or -1 after
 * printing which failed. */
int gateway_proc_serve_calls(const struct gateway_proc *g, const struct gateway_session *s,
			     int64_t *slowest_ms);

struct ppm;
/* GET /v1/sessions/{id}/screenshot?format=png with token, decoded into
 * *img. Returns 0, or -1 (status or decoding failed). */
int gateway_proc_screenshot(const struct gateway_proc *g, const char *id, const char *token,
			    struct ppm *img);

/* Makes a template through POST /v1/templates with body (JSON text) and
 * waits up to timeout_s until it is ready. Returns 0 with *created_at
 * (Unix s, may be NULL), or -1 after printing why. */
int gateway_proc_make_template(const struct gateway_proc *g, const char *body, int timeout_s,
			       long long *created_at);

#endif
