/* vmm-qemu/mount_ns.c: see mount_ns.h. */
#include "vmm-qemu/mount_ns.h"

#include <sched.h>
#include <stddef.h>
#include <sys/mount.h>

/* path bound onto itself, then remounted with flags (MS_RDONLY or not). */
static int rebind(const char *path, unsigned long flags)
{
	if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -1;
	return mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | flags, NULL);
}

int vmm_mntns_enter(const char *const ro[], size_t n_ro, const char *const rw[], size_t n_rw)
{
	if (unshare(CLONE_NEWNS) < 0)
		return -1;
	/* Not MS_PRIVATE: a slave still sees the host unmount a disk, so a
	 * guest's namespace never keeps one busy. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -1;
	for (size_t i = 0; i < n_ro; i++)
		if (rebind(ro[i], MS_RDONLY) < 0)
			return -1;
	for (size_t i = 0; i < n_rw; i++)
		if (rebind(rw[i], 0) < 0)
			return -1;
	return 0;
}
