/* common/unixsock.c: see unixsock.h. */
#include "common/unixsock.h"

#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int unixsock_open_path(const char *path)
{
	char dir[PATH_MAX];
	struct stat st, dst;
	int fd, e;

	if (fs_parent_dir(path, dir, sizeof(dir)) < 0)
		return -ENAMETOOLONG;
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || stat(dir, &dst) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	e = S_ISLNK(st.st_mode)					? ELOOP
	    : !S_ISSOCK(st.st_mode)				? ENOTSOCK
	    : st.st_uid != geteuid() && st.st_uid != dst.st_uid ? EPERM
								: 0;
	if (e) {
		close(fd);
		return -e;
	}
	return fd;
}

int unixsock_connect_once(const char *path, int sock_flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int pfd = unixsock_open_path(path), fd, e;

	if (pfd < 0)
		return pfd;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | sock_flags, 0);
	e = fd < 0 ? errno : connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
	close(pfd);
	if (e) {
		if (fd >= 0)
			close(fd);
		/* A non-blocking unix connect with a full backlog says EAGAIN. */
		return e == EAGAIN ? -ECONNREFUSED : -e;
	}
	return fd;
}

int unixsock_connect(const char *path, int timeout_ms, char *err, size_t errlen)
{
	int64_t deadline = fs_now_ms() + timeout_ms;
	int fd, e;

	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	for (;;) {
		fd = unixsock_connect_once(path, 0);
		if (fd >= 0)
			break;
		if ((fd != -ENOENT && fd != -ECONNREFUSED) || fs_now_ms() >= deadline) {
			snprintf(err, errlen, "connect %s: %s", path,
				 fd == -ELOOP ? "a symlink, not followed" : strerror(-fd));
			return fd;
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
