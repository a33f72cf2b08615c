/* common/unixsock.h: the socket plumbing QEMU's monitors share: QMP and the
 * guest agent are both line protocols on a unix socket that QEMU creates a
 * moment after it starts, read without blocking by an event loop. */
#ifndef VITRINE_COMMON_UNIXSOCK_H
#define VITRINE_COMMON_UNIXSOCK_H

#include <stddef.h>

/* The socket at path as an O_PATH descriptor, for a socket in a directory
 * another uid owns (a guest's run dir, where that uid could plant a link
 * to any socket root may reach: another guest's QMP, the host's daemons):
 * a symlink at path is never followed (-ELOOP), anything but a socket is
 * refused (-ENOTSOCK), and the socket must belong to this process's
 * effective uid or to the owner of the directory it is in (-EPERM).
 * Connecting to "/proc/self/fd/N" then reaches that very socket.
 * Returns the fd (close-on-exec) or -errno. */
int unixsock_open_path(const char *path);

/* One connect to the socket at path as unixsock_open_path finds it, with
 * sock_flags (SOCK_NONBLOCK, ...) added to SOCK_CLOEXEC. Returns the fd or
 * -errno (-ENOENT while it does not exist, -ECONNREFUSED). */
int unixsock_connect_once(const char *path, int sock_flags);

/* Connects to the unix socket at path (unixsock_connect_once), retrying
 * while it does not exist yet or refuses, for up to timeout_ms. Returns a
 * non-blocking, close-on-exec fd, or -errno with a reason in err. */
int unixsock_connect(const char *path, int timeout_ms, char *err, size_t errlen);

/* Consumes bytes: returns 0, or -errno with a reason in err to stop. */
typedef int (*unixsock_feed_fn)(void *ud, const char *bytes, size_t len, char *err, size_t errlen);

/* Reads what is readable on fd (until it would block) and hands it to feed.
 * Returns 0, feed's error, -EPIPE when the peer closed ("<peer> closed" in
 * err), or another -errno. */
int unixsock_drain(int fd, unixsock_feed_fn feed, void *ud, const char *peer, char *err,
		   size_t errlen);

#endif
