/* common/fsutil.c: see fsutil.h. */
#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int fs_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int fs_open_regular(const char *path, int flags, mode_t mode)
{
	struct stat st;
	int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Reads fd to its end (at most max bytes) and closes it. */
static int read_fd(int fd, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, used = 0;
	char *buf;
	int err = 0;

	buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (used == cap) {
			char *nb;

			if (cap >= max) {
				err = -EFBIG;
				break;
			}
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		r = read(fd, buf + used, cap - used);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		used += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[used] = '\0';
	*out = buf;
	if (len)
		*len = used;
	return 0;
}

int fs_read_file(const char *path, size_t max, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : read_fd(fd, max, out, len);
}

int fs_read_file_nofollow(const char *path, size_t max, char **out, size_t *len)
{
	int fd = fs_open_regular(path, O_RDONLY, 0);

	return fd < 0 ? fd : read_fd(fd, max, out, len);
}

int fs_write_file(const char *path, const void *data, size_t len)
{
	const char *p = data;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		p += w;
		len -= (size_t)w;
	}
	return close(fd) < 0 ? -errno : 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fs_write_file_private(const char *path, const void *data, size_t len)
{
	char dir[PATH_MAX], *slash;
	const char *p = data;
	struct stat st;
	int fd, rc = 0;

	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, strlen(path) + 1);
	if (!(slash = strrchr(dir, '/')) || slash == dir)
		return -EINVAL;
	*slash = '\0';
	if (mkdir(dir, 0700) < 0 && errno == ENOENT) {
		char up[PATH_MAX];

		memcpy(up, dir, strlen(dir) + 1);
		if ((slash = strrchr(up, '/')) && slash != up) {
			*slash = '\0';
			if ((rc = fs_mkdir_p(up, 0755)) < 0)
				return rc;
		}
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return -errno;
	}
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc)
		unlink(path);
	return rc;
}

int fs_parent_dir(const char *path, char *out, size_t len)
{
	char *slash;

	if (snprintf(out, len, "%s", path) >= (int)len)
		return -ENAMETOOLONG;
	slash = strrchr(out, '/');
	if (!slash)
		snprintf(out, len, ".");
	else if (slash == out)
		out[1] = '\0';
	else
		*slash = '\0';
	return 0;
}

int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	int fd, dfd, rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fs_parent_dir(path, dir, sizeof(dir)); /* shorter than tmp: fits */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, data, len);
	if (rc == 0 && fchmod(fd, mode) < 0)
		rc = -errno;
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	rc = fsync(dfd) < 0 ? -errno : 0;
	close(dfd);
	return rc;
}

int fs_copy_fd(int in, int out)
{
	struct stat st;

	if (fstat(in, &st) < 0)
		return -errno;
	for (off_t at = 0, left = st.st_size; left > 0;) {
		ssize_t n = copy_file_range(in, &at, out, NULL, (size_t)left, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0; /* it shrank under us: what there was is copied */
		left -= n;
	}
	return fsync(out) < 0 ? -errno : 0;
}

int fs_copy_file(const char *from, const char *to, mode_t mode)
{
	int in = fs_open_regular(from, O_RDONLY, 0), out = -1, rc = 0;

	if (in < 0)
		return in;
	out = fs_open_regular(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	rc = out < 0 ? out : fs_copy_fd(in, out);
	if (out >= 0 && close(out) < 0 && rc == 0)
		rc = -errno;
	close(in);
	if (rc < 0 && out >= 0)
		unlink(to);
	return rc;
}

int fs_move_file(const char *from, const char *to)
{
	struct stat st;
	int rc;

	if (rename(from, to) == 0)
		return 0;
	if (errno != EXDEV)
		return -errno;
	if (stat(from, &st) < 0)
		return -errno;
	rc = fs_copy_file(from, to, st.st_mode & 07777);
	if (rc == 0 && unlink(from) < 0)
		rc = -errno;
	return rc;
}

int fs_move_regular(const char *from, const char *to)
{
	struct stat st;
	int rc = fs_move_file(from, to);

	if (rc < 0)
		return rc;
	/* Checked where it landed, in a directory the mover owns: nothing can
	 * be swapped in between the check and the use. */
	if (lstat(to, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		unlink(to);
		return -EINVAL;
	}
	return 0;
}

int64_t fs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fs_utc_time(int64_t unix_ms, char *out, size_t outlen)
{
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(unix_ms % 1000));
}

int64_t fs_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int fs_lock_file(const char *path, int extra_flags, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | extra_flags, 0600), rc;

	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "open %s: %s", path, strerror(-rc));
		return rc;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (rc != -EBUSY)
			snprintf(err, errlen, "lock %s: %s", path, strerror(-rc));
		close(fd);
		return rc;
	}
	return fd;
}
