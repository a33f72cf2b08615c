/* gateway/core/logfile.c: see logfile.h. */
#include "gateway/core/logfile.h"

#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void logfile_init(struct logfile *lf, const char *path, int64_t max_bytes, int keep)
{
	memset(lf, 0, sizeof(*lf));
	snprintf(lf->path, sizeof(lf->path), "%s", path ? path : "");
	lf->max_bytes = max_bytes > 0 ? max_bytes : LOGFILE_DEFAULT_MAX_BYTES;
	lf->keep = keep < 1 ? 1 : keep > LOGFILE_MAX_KEEP ? LOGFILE_MAX_KEEP : keep;
	lf->fd = -1;
}

bool logfile_must_rotate(int64_t size, size_t add, int64_t max_bytes)
{
	return size > 0 && size + (int64_t)add > max_bytes;
}

int logfile_rotated_name(const char *path, int gen, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s.%d", path, gen);

	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

static void warn_once(struct logfile *lf, const char *what, int err)
{
	if (lf->warned)
		return;
	lf->warned = true;
	log_warn("logfile", "%s %s: %s (lines are dropped until it works again)", what, lf->path,
		 strerror(err));
}

static int reopen(struct logfile *lf)
{
	struct stat st;

	if (lf->fd >= 0)
		return 0;
	lf->fd = open(lf->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lf->fd < 0) {
		warn_once(lf, "cannot open", errno);
		return -1;
	}
	lf->size = fstat(lf->fd, &st) == 0 ? (int64_t)st.st_size : 0;
	return 0;
}

/* FILE.N-1 .. FILE.1 move one up (FILE.keep is replaced), then FILE
 * becomes FILE.1: keep renames, no copy. A generation missing (a first
 * rotation, or one moved away) is skipped. */
static void rotate(struct logfile *lf)
{
	char from[sizeof(lf->path) + 8], to[sizeof(lf->path) + 8];

	logfile_close(lf);
	for (int gen = lf->keep; gen > 1; gen--) {
		if (logfile_rotated_name(lf->path, gen - 1, from, sizeof(from)) < 0 ||
		    logfile_rotated_name(lf->path, gen, to, sizeof(to)) < 0) {
			warn_once(lf, "cannot rotate", ENAMETOOLONG);
			return;
		}
		if (rename(from, to) < 0 && errno != ENOENT) {
			warn_once(lf, "cannot rotate", errno);
			return;
		}
	}
	if (logfile_rotated_name(lf->path, 1, to, sizeof(to)) < 0 || rename(lf->path, to) < 0)
		warn_once(lf, "cannot rotate", errno ? errno : ENAMETOOLONG);
}

void logfile_append(struct logfile *lf, const char *line, size_t len)
{
	char *buf;
	ssize_t n;

	if (!lf->path[0] || reopen(lf) < 0)
		return;
	if (logfile_must_rotate(lf->size, len + 1, lf->max_bytes)) {
		rotate(lf);
		if (reopen(lf) < 0)
			return;
	}
	if (!(buf = malloc(len + 1)))
		return;
	memcpy(buf, line, len);
	buf[len] = '\n';
	n = write(lf->fd, buf, len + 1);
	free(buf);
	if (n != (ssize_t)(len + 1)) {
		warn_once(lf, "cannot append to", n < 0 ? errno : EIO);
		logfile_close(lf);
		return;
	}
	lf->size += n;
	lf->warned = false;
}

void logfile_close(struct logfile *lf)
{
	if (lf->fd >= 0)
		close(lf->fd);
	lf->fd = -1;
}
