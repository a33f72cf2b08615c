/* vmm-qemu/line_client.h: the socket side of the line protocols QEMU
 * speaks on unix sockets (QMP, qemu-ga). It owns a non-blocking fd and moves
 * bytes between it and a pure protocol machine (qmp.h, qga.h) through three
 * operations; qmp_client.c and qga_client.c embed one each. Bytes read go to
 * the machine in reads of at most 64 KiB (common/unixsock.c); the machine
 * bounds its lines (line_reader.h). Runs on the caller's thread. */
#ifndef VITRINE_VMM_LINE_CLIENT_H
#define VITRINE_VMM_LINE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct line_client_ops {
	/* Bytes read from the socket: 0, or -errno (reason in err) to stop. */
	int (*feed)(void *machine, const char *bytes, size_t len, char *err, size_t errlen);
	/* The next chunk to write and an fd (-1 for none) to send as SCM_RIGHTS
	 * with its first byte; false when nothing is waiting. */
	bool (*next_output)(void *machine, const char **data, size_t *len, int *fd);
	/* n bytes of that chunk were written. */
	void (*output_done)(void *machine, size_t n);
};

struct line_client {
	int fd; /* owned; -1 when closed */
	const struct line_client_ops *ops;
	void *machine; /* not owned: the embedding client owns it */
	const char *peer; /* names the peer in errors, e.g. "QEMU's monitor" */
};

/* Connects to the socket at path, retrying while it does not exist yet or
 * refuses, for up to timeout_ms, and ties it to machine. Returns 0, or
 * -errno with a reason in err (lc->fd is then -1). */
int line_client_connect(struct line_client *lc, const char *path, int timeout_ms,
			const struct line_client_ops *ops, void *machine, const char *peer,
			char *err, size_t errlen);
/* Closes the socket. Accepts a closed client. */
void line_client_close(struct line_client *lc);

/* POLLIN, plus POLLOUT while the machine has output waiting. */
short line_client_poll_events(const struct line_client *lc);
/* Reads what is readable (when revents says so) into the machine, then
 * writes what it can, even without POLLOUT: a reply may have let queued
 * output go. Returns 0, -EPIPE when the peer closed ("<peer> closed" in
 * err), the machine's error, or another -errno. */
int line_client_service(struct line_client *lc, short revents, char *err, size_t errlen);
/* Writes what the machine has waiting until the socket would block.
 * Returns 0, -EPIPE when the peer is gone, or another -errno. */
int line_client_flush(struct line_client *lc, char *err, size_t errlen);
/* Services the socket until *done is set (by a callback of the machine) or
 * the monotonic time until_ms (common/fsutil.h: fs_now_ms) has come. Returns
 * 0 (the caller checks *done), or -errno from servicing or poll. */
int line_client_run_until(struct line_client *lc, const bool *done, int64_t until_ms, char *err,
			  size_t errlen);

#endif
