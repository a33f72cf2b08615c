/* vmm-qemu/agent_exec.h: running one command in the guest through
 * vitrine-agent and waiting for it (the gateway's POST exec, files, the
 * clipboard and the restore-time page probes). Output is collected up to a
 * limit; a command still running when its time is up has its whole
 * process group killed. */
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

/* Runs spec and waits. Returns 0 with *r filled (also when it timed out:
 * r->timed_out, killed), or -errno with a reason in err (-EPIPE: the link
 * broke; -EREMOTEIO: the agent could not start it; -EPROTO: the agent's
 * EXIT did not say how the command ended). */
int agent_exec_run(struct agent_link *l, const struct agent_exec_spec *spec,
		   struct agent_exec_result *r, char *err, size_t errlen);
/* Frees the buffers and zeroes r. Accepts NULL. */
void agent_exec_result_free(struct agent_exec_result *r);

#endif
