/* vmm-qemu/run_lock.c: see run_lock.h. */
#include "vmm-qemu/run_lock.h"

#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int vmm_run_base_lock(const char *run_base, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, rc = fs_mkdir_p(run_base, 0755);

	if (rc < 0) {
		snprintf(err, errlen, "create %s: %s", run_base, strerror(-rc));
		return rc;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/.gateway.lock", run_base) >= sizeof(path)) {
		snprintf(err, errlen, "run base %s: path too long", run_base);
		return -ENAMETOOLONG;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return rc;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (rc == -EBUSY)
			snprintf(
				err, errlen,
				"another gateway (or vitrine gc) uses the run base %s: stop it, or "
				"give this one its own (VITRINE_RUN or VITRINE_HOME)",
				run_base);
		else
			snprintf(err, errlen, "lock %s: %s", path, strerror(-rc));
		close(fd);
		return rc;
	}
	return fd;
}
