/* vmm-qemu/run_lock.c: see run_lock.h. */
#include "vmm-qemu/run_lock.h"

#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

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
	fd = fs_lock_file(path, O_NOFOLLOW, err, errlen);
	if (fd == -EBUSY)
		snprintf(err, errlen,
			 "another gateway (or vitrine gc) uses the run base %s: stop it, or "
			 "give this one its own (VITRINE_RUN or VITRINE_HOME)",
			 run_base);
	return fd;
}
