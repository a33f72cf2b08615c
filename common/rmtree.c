/* common/rmtree.c: removing a tree by descriptor (fs_rm_rf). Root removes
 * run dirs a guest's uid owns, where that uid may swap any directory for a
 * symlink while the walk is under way: a walk by path (nftw, then
 * remove() of the full path) follows the swapped link and removes the
 * link's target, anywhere on the host. Here each directory is opened from
 * its parent's descriptor with O_NOFOLLOW, every entry is removed with
 * unlinkat() in the directory that was opened, and no path below the top
 * is ever spelled out: a link met at any point is removed as a link.
 * Iterative, with a bounded depth (one descriptor a level). */
#include "common/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rm_frame {
	DIR *dir; /* owned: the directory being emptied */
	char name[NAME_MAX + 1]; /* its name in the frame below (or in the top's parent) */
};

static void keep_first(int *rc, int err)
{
	if (*rc == 0 && err != -ENOENT)
		*rc = err;
}

/* Opens name in dfd as a directory, never through a link. Returns the
 * stream or NULL with errno (ELOOP or ENOTDIR: it is no directory now). */
static DIR *open_dir_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return NULL;
	if (!(d = fdopendir(fd))) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return d;
}

/* Removes name in dfd, a link or file as itself, a directory with all it
 * holds. Returns 0 or -errno of the first failure (going on past it). */
static int rm_at(int dfd, const char *top)
{
	struct rm_frame *f = calloc(FS_RM_MAX_DEPTH, sizeof(*f));
	int depth = 0, rc = 0;

	if (!f)
		return -ENOMEM;
	if (unlinkat(dfd, top, 0) == 0 || errno == ENOENT)
		goto out; /* not a directory (a link is one of these) */
	if (errno != EISDIR && errno != EPERM) {
		rc = -errno;
		goto out;
	}
	if (!(f[0].dir = open_dir_at(dfd, top))) {
		/* Swapped for a link or file since: that goes as itself. */
		if ((errno == ELOOP || errno == ENOTDIR) && unlinkat(dfd, top, 0) < 0)
			keep_first(&rc, -errno);
		else if (errno != ELOOP && errno != ENOTDIR)
			keep_first(&rc, -errno);
		goto out;
	}
	snprintf(f[0].name, sizeof(f[0].name), "%s", top);
	depth = 1;
	while (depth > 0) {
		struct rm_frame *cur = &f[depth - 1];
		int fd = dirfd(cur->dir), up;
		struct dirent *de;
		DIR *sub;

		errno = 0;
		if (!(de = readdir(cur->dir))) {
			if (errno)
				keep_first(&rc, -errno);
			closedir(cur->dir);
			cur->dir = NULL;
			depth--;
			up = depth > 0 ? dirfd(f[depth - 1].dir) : dfd;
			if (unlinkat(up, cur->name, AT_REMOVEDIR) < 0) {
				/* A link put in its place after it was opened
				 * goes as a link. */
				if (errno == ENOTDIR)
					keep_first(&rc,
						   unlinkat(up, cur->name, 0) < 0 ? -errno : 0);
				else
					keep_first(&rc, -errno);
			}
			continue;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) {
			if (unlinkat(fd, de->d_name, 0) == 0 || errno == ENOENT)
				continue;
			if (errno != EISDIR && errno != EPERM) {
				keep_first(&rc, -errno);
				continue;
			}
		}
		/* A directory, or unknown, or one swapped in since readdir. */
		if (!(sub = open_dir_at(fd, de->d_name))) {
			if (errno == ELOOP || errno == ENOTDIR)
				keep_first(&rc, unlinkat(fd, de->d_name, 0) < 0 ? -errno : 0);
			else
				keep_first(&rc, -errno);
			continue;
		}
		if (depth == FS_RM_MAX_DEPTH) {
			closedir(sub);
			keep_first(&rc, -ELOOP);
			continue;
		}
		f[depth].dir = sub;
		snprintf(f[depth].name, sizeof(f[depth].name), "%s", de->d_name);
		depth++;
	}
out:
	free(f);
	return rc;
}

int fs_rm_rf(const char *path)
{
	char buf[PATH_MAX], parent[PATH_MAX];
	size_t n = strlen(path);
	const char *name;
	char *slash;
	int dfd, rc;

	if (n == 0)
		return 0;
	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	slash = strrchr(buf, '/');
	name = slash ? slash + 1 : buf;
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL; /* "/", or no name to remove */
	if ((rc = fs_parent_dir(buf, parent, sizeof(parent))) < 0)
		return rc;
	/* The directories above the top are the caller's, followed as usual. */
	dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -errno;
	rc = rm_at(dfd, name);
	close(dfd);
	return rc;
}
