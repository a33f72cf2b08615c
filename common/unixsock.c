/* common/unixsock.c: see unixsock.h. */
#include "common/unixsock.h"

#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int unixsock_connect(const char *path, int timeout_ms, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int64_t deadline = fs_now_ms() + timeout_ms;
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = -errno;
			snprintf(err, errlen, "socket: %s", strerror(errno));
			return e;
		}
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		e = errno;
		close(fd);
		if ((e != ENOENT && e != ECONNREFUSED) || fs_now_ms() >= deadline) {
			snprintf(err, errlen, "connect %s: %s", path, strerror(e));
			return -e;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		e = -errno;
		snprintf(err, errlen, "fcntl: %s", strerror(errno));
		close(fd);
		return e;
	}
	return fd;
}

int unixsock_drain(int fd, unixsock_feed_fn feed, void *ud, const char *peer, char *err,
		   size_t errlen)
{
	char buf[65536];

	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		int rc;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r < 0 && errno != ECONNRESET) {
			rc = -errno;
			snprintf(err, errlen, "read: %s", strerror(errno));
			return rc;
		}
		if (r <= 0) {
			snprintf(err, errlen, "%s closed", peer);
			return -EPIPE;
		}
		rc = feed(ud, buf, (size_t)r, err, errlen);
		if (rc < 0)
			return rc;
	}
}
