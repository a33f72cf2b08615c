/* common/unixsock.h: the socket plumbing QEMU's monitors share: QMP and the
 * guest agent are both line protocols on a unix socket that QEMU creates a
 * moment after it starts, read without blocking by an event loop. */
#ifndef VITRINE_COMMON_UNIXSOCK_H
#define VITRINE_COMMON_UNIXSOCK_H

#include <stddef.h>

/* Connects to the unix socket at path, retrying while it does not exist yet
 * or refuses, for up to timeout_ms. Returns a non-blocking, close-on-exec
 * fd, or -errno with a reason in err. */
int unixsock_connect(const char *path, int timeout_ms, char *err, size_t errlen);

/* Consumes bytes: returns 0, or -errno with a reason in err to stop. */
typedef int (*unixsock_feed_fn)(void *ud, const char *bytes, size_t len, char *err, size_t errlen);

/* Reads what is readable on fd (until it would block) and hands it to feed.
 * Returns 0, feed's error, -EPIPE when the peer closed ("<peer> closed" in
 * err), or another -errno. */
int unixsock_drain(int fd, unixsock_feed_fn feed, void *ud, const char *peer, char *err,
		   size_t errlen);

#endif
