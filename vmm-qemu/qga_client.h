/* vmm-qemu/qga_client.h: qemu-guest-agent over the guest's qga.sock (a
 * virtio-serial port exposed by QEMU as a unix socket). The glue between
 * the pure protocol machine in qga.h and a non-blocking socket: an event
 * loop polls qga_client_fd() for qga_client_poll_events() and calls
 * qga_client_service(), with commands queued on qga_client_qga();
 * qga_client_call() and qga_client_exec() are blocking conveniences for
 * command-line tools and tests that run that loop themselves.
 *
 * The agent may not be up yet (or be restarting) when we connect: QEMU
 * holds our bytes until the guest opens the port, so the first command just
 * takes longer. */
#ifndef VITRINE_VMM_QGA_CLIENT_H
#define VITRINE_VMM_QGA_CLIENT_H

#include "vmm-qemu/qga.h"

struct qga_client;

/* Connects to the agent's socket at path, retrying while it does not exist
 * yet or refuses, for up to timeout_ms, and starts a session (the sync is
 * queued, not awaited). On success *out owns the socket. Returns 0 or
 * -errno with a reason in err. */
int qga_client_connect(const char *path, int timeout_ms, struct qga_client **out, char *err,
		       size_t errlen);
/* Closes the socket; commands still pending fail with "Disconnected".
 * Accepts NULL. */
void qga_client_destroy(struct qga_client *c);

int qga_client_fd(const struct qga_client *c);
struct qga *qga_client_qga(struct qga_client *c);
/* POLLIN, plus POLLOUT while output is waiting. */
short qga_client_poll_events(struct qga_client *c);
/* Reads what is readable and writes what is writable, dispatching reply
 * callbacks. Returns 0, -EPIPE when the socket was closed (QEMU went away),
 * or another -errno (-EPROTO for a broken stream) with a reason in err. */
int qga_client_service(struct qga_client *c, short revents, char *err, size_t errlen);
/* Starts a new sync with a fresh random id (see qga_resync()): for an event
 * loop whose own timer gave up on a reply. This function can't fail. */
void qga_client_resync(struct qga_client *c);

/* Sends cmd (args stolen, may be NULL) and waits up to timeout_ms for its
 * reply, synchronising first if needed. On success returns 0 and, if ret is
 * not NULL, a new reference to the "return" value. An error reply returns
 * -EREMOTEIO with class and description in err; no reply in time returns
 * -ETIMEDOUT and resynchronises the session (the command may still run in
 * the guest); a closed socket returns -EPIPE; a broken stream -EPROTO. */
int qga_client_call(struct qga_client *c, const char *cmd, json_t *args, json_t **ret,
		    int timeout_ms, char *err, size_t errlen);

/* Runs argv in the guest (see qga_exec_args() for argv, env and stdin) with
 * its output captured, and waits up to timeout_ms for it to exit, polling
 * guest-exec-status every 20 ms at first, backing off to 100 ms. On success
 * returns 0 with *res filled (exit status, stdout, stderr; at most
 * QGA_EXEC_MAX_OUTPUT bytes of each, truncation flagged); free it with
 * qga_exec_result_free(). A program that does not exit in time is left
 * running: -ETIMEDOUT, with res->pid set and no output. A program the agent
 * cannot start returns -EREMOTEIO; other failures as in qga_client_call().
 * res holds no buffers after a failure. */
int qga_client_exec(struct qga_client *c, const char *const *argv, const char *const *env,
		    const void *stdin_data, size_t stdin_len, int timeout_ms,
		    struct qga_exec_result *res, char *err, size_t errlen);

#endif
