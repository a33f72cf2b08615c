/* vmm-qemu/tpl_ram.c: see tpl_ram.h. */
#include "vmm-qemu/tpl_ram.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TEMPLATES 64
#define CHUNK (1 << 20)
#define BLOCK (64 << 10) /* all-zero blocks stay holes in the memfd */

struct entry {
	char path[PATH_MAX];
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd; /* owned: the sealed memfd; -1 for a free slot */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry cache[MAX_TEMPLATES];
static bool ready;

static bool same_file(const struct entry *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Copies src's data (its extents, skipping all-zero blocks) into mfd. */
static int fill(int mfd, int src, off_t size)
{
	static const char zero[BLOCK];
	char *buf = malloc(CHUNK);
	off_t off = 0;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	while (rc == 0 && off < size) {
		off_t data = lseek(src, off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* only a hole is left */
		if (data < 0)
			data = off; /* no SEEK_DATA here: copy everything */
		hole = lseek(src, data, SEEK_HOLE);
		if (hole < 0 || hole > size)
			hole = size;
		for (off_t o = data; rc == 0 && o < hole;) {
			size_t want = hole - o < CHUNK ? (size_t)(hole - o) : CHUNK;
			ssize_t n = pread(src, buf, want, o);

			if (n <= 0) {
				rc = n < 0 ? -errno : -EIO;
				break;
			}
			for (ssize_t i = 0; rc == 0 && i < n; i += BLOCK) {
				size_t len = n - i < BLOCK ? (size_t)(n - i) : BLOCK;

				if (memcmp(buf + i, zero, len) &&
				    pwrite(mfd, buf + i, len, o + i) != (ssize_t)len)
					rc = -errno;
			}
			o += n;
		}
		off = hole;
	}
	free(buf);
	return rc;
}

/* A new sealed memfd with the bytes of src (st its stat), or -errno. */
static int make(int src, const struct stat *st, char *err, size_t errlen)
{
	int mfd = memfd_create("vitrine-template-ram", MFD_CLOEXEC | MFD_ALLOW_SEALING), rc;

	if (mfd < 0) {
		rc = -errno;
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return rc;
	}
	rc = ftruncate(mfd, st->st_size) < 0 ? -errno : fill(mfd, src, st->st_size);
	if (rc == 0 &&
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		rc = -errno;
	if (rc < 0) {
		snprintf(err, errlen, "template RAM into a sealed memfd: %s", strerror(-rc));
		close(mfd);
		return rc;
	}
	return mfd;
}

/* Drops the entries whose file is gone or is another file now. */
static void prune(void)
{
	for (size_t i = 0; i < MAX_TEMPLATES; i++) {
		struct stat st;

		if (cache[i].fd < 0 || (stat(cache[i].path, &st) == 0 && same_file(&cache[i], &st)))
			continue;
		close(cache[i].fd);
		cache[i].fd = -1;
	}
}

int vmm_tpl_ram_fd(const char *ram_path, char *err, size_t errlen)
{
	struct entry *slot = NULL;
	struct stat st;
	int src, fd = -1, rc;

	src = open(ram_path, O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "open %s: %s", ram_path, strerror(errno));
		if (src >= 0)
			close(src);
		return rc;
	}
	pthread_mutex_lock(&lock);
	if (!ready) {
		for (size_t i = 0; i < MAX_TEMPLATES; i++)
			cache[i].fd = -1;
		ready = true;
	}
	prune();
	for (size_t i = 0; i < MAX_TEMPLATES && fd < 0; i++) {
		if (cache[i].fd >= 0 && !strcmp(cache[i].path, ram_path) &&
		    same_file(&cache[i], &st))
			fd = cache[i].fd;
		else if (cache[i].fd < 0 && !slot)
			slot = &cache[i];
	}
	if (fd < 0 && !slot) {
		snprintf(err, errlen, "more than %d templates' RAM in memory", MAX_TEMPLATES);
		rc = -ENOSPC;
		goto out;
	}
	if (fd < 0) {
		/* Under the lock: two first restores of one template make one copy. */
		rc = make(src, &st, err, errlen);
		if (rc < 0)
			goto out;
		snprintf(slot->path, sizeof(slot->path), "%s", ram_path);
		slot->dev = st.st_dev;
		slot->ino = st.st_ino;
		slot->size = st.st_size;
		slot->mtime = st.st_mtim;
		slot->fd = fd = rc;
	}
	rc = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (rc < 0) {
		rc = -errno;
		snprintf(err, errlen, "dup: %s", strerror(errno));
	}
out:
	pthread_mutex_unlock(&lock);
	close(src);
	return rc;
}
