/* vmm-qemu/qmp_client.h: QMP over a unix socket. The glue between the pure
 * protocol machine in qmp.h and a non-blocking socket: an event loop polls
 * qmp_client_fd() for qmp_client_poll_events() and calls
 * qmp_client_service(); qmp_client_call() is a blocking convenience for
 * command-line tools and tests that runs that loop itself. */
#ifndef VITRINE_VMM_QMP_CLIENT_H
#define VITRINE_VMM_QMP_CLIENT_H

#include "vmm-qemu/qmp.h"

struct qmp_client;

/* Connects to the monitor at path, retrying while the socket does not exist
 * yet or refuses, for up to timeout_ms. On success *out owns the socket.
 * Returns 0 or -errno with a reason in err. */
int qmp_client_connect(const char *path, int timeout_ms, qmp_event_fn on_event, void *ud,
		       struct qmp_client **out, char *err, size_t errlen);
/* Closes the socket; pending commands fail with "Disconnected". Accepts NULL. */
void qmp_client_destroy(struct qmp_client *c);

int qmp_client_fd(const struct qmp_client *c);
struct qmp *qmp_client_qmp(struct qmp_client *c);
/* POLLIN, plus POLLOUT while output is waiting. */
short qmp_client_poll_events(struct qmp_client *c);
/* Reads what is readable and writes what is writable, dispatching callbacks.
 * Returns 0, -EPIPE when QEMU closed the monitor, or another -errno
 * (-EPROTO for a broken stream) with a reason in err. */
int qmp_client_service(struct qmp_client *c, short revents, char *err, size_t errlen);

/* Sends cmd and waits up to timeout_ms for its reply, servicing the socket
 * (events are dispatched meanwhile). args is stolen; fd as in qmp_command().
 * On success returns 0 and, if ret is not NULL, a new reference to the
 * "return" value. A QMP error reply returns -EREMOTEIO with class and
 * description in err; -ETIMEDOUT, -EPIPE and others as their names say. */
int qmp_client_call(struct qmp_client *c, const char *cmd, json_t *args, int fd, json_t **ret,
		    int timeout_ms, char *err, size_t errlen);

#endif
