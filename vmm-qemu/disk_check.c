/* vmm-qemu/disk_check.c: see disk_check.h. */
#include "vmm-qemu/disk_check.h"

#include "common/fsutil.h"
#include "vmm-qemu/qcow2_hdr.h"
#include "vmm-qemu/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEADER_READ (64u << 10)

int vmm_disk_check(const char *path, const char *backing, const char *backing_fmt, char *err,
		   size_t errlen)
{
	unsigned char *buf = malloc(HEADER_READ);
	struct qcow2_hdr h;
	char why[512];
	ssize_t n = 0;
	int fd, rc;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fd = fs_open_regular(path, O_RDONLY, 0);
	if (fd < 0) {
		rc = fd;
		snprintf(err, errlen, "open %s: %s", path,
			 rc == -EINVAL ? "not a regular file" : strerror(-rc));
		goto out;
	}
	while ((size_t)n < HEADER_READ) {
		ssize_t k = pread(fd, buf + n, HEADER_READ - (size_t)n, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -errno;
			snprintf(err, errlen, "read %s: %s", path, strerror(errno));
			goto out;
		}
		if (k == 0)
			break;
		n += k;
	}
	rc = qcow2_hdr_parse(buf, (size_t)n, &h, why, sizeof(why));
	if (rc == -ENODATA)
		rc = -EPROTO; /* the file ends there, or its header is odd */
	if (rc == 0)
		rc = qcow2_hdr_check(&h, backing, backing_fmt, why, sizeof(why));
	if (rc < 0)
		snprintf(err, errlen, "%s: %s: refused", path, why);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

int vmm_disk_check_chain(const char *disk, const char *on, const struct vmm_image *img, char *err,
			 size_t errlen)
{
	char path[PATH_MAX + 16], next[PATH_MAX + 16], name[VMM_TEMPLATE_NAME_MAX + 1];
	struct vmm_template t;
	int rc;

	snprintf(path, sizeof(path), "%s", disk);
	for (int i = 0; i < VMM_DISK_CHAIN_WALK_MAX; i++) {
		if (!on || !on[0])
			return vmm_disk_check(path, img->rootfs, "raw", err, errlen);
		rc = vmm_template_load(on, &t, err, errlen);
		if (rc < 0 && rc != -ESTALE)
			return rc;
		if (!t.has_disk) {
			snprintf(err, errlen, "%s: its backing template %s has no disk", path, on);
			return -EPERM;
		}
		snprintf(next, sizeof(next), "%s/disk.qcow2", t.dir);
		if ((rc = vmm_disk_check(path, next, "qcow2", err, errlen)) < 0)
			return rc;
		snprintf(path, sizeof(path), "%s", next);
		/* t's own lineage: "" once it stands on the rootfs */
		snprintf(name, sizeof(name), "%s", t.backing);
		on = name;
	}
	snprintf(err, errlen, "%s: a chain of more than %d layers: refused", disk,
		 VMM_DISK_CHAIN_WALK_MAX);
	return -EPERM;
}
