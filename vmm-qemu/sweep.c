/* vmm-qemu/sweep.c: see sweep.h. */
#include "vmm-qemu/sweep.h"

#include "common/fsutil.h"
#include "vmm-qemu/cgroup.h"
#include "vmm-qemu/checkpoint.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/run_owner.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A checkpoint's owner.pid: the folder is root's (checkpoint.h), and so
 * is the file. */
static pid_t read_owner(const char *dir)
{
	char path[PATH_MAX + 16], *text = NULL;
	long pid = 0;

	snprintf(path, sizeof(path), "%s/owner.pid", dir);
	if (fs_read_file_nofollow(path, 64, &text, NULL) == 0) {
		pid = strtol(text, NULL, 10);
		free(text);
	}
	return pid > 0 && pid <= INT32_MAX ? (pid_t)pid : 0;
}

static bool alive(pid_t pid)
{
	unsigned long long start;

	return pid > 0 && vmm_proc_start_time(pid, &start) == 0;
}

/* A run dir's owner, from its record in the run base (run_owner.h), never
 * from the run dir, which its guest's uid writes. One without a record was
 * made by a Vitrine before records (its owner.pid may keep it, never
 * remove it), or is being made right now (its record follows mkdtemp):
 * one changed in the last VMM_SWEEP_YOUNG_S seconds is left alone. */
static void run_dir_owner(const char *path, struct vmm_sweep_entry *e, struct vmm_run_owner *o)
{
	struct stat st;

	if (vmm_run_owner_read(path, o) == 0) {
		e->owner = o->pid;
		e->owner_alive = vmm_run_owner_alive(o);
		e->gateway = o->gateway;
		e->foreign = vmm_run_owner_foreign(o);
		return;
	}
	e->being_made = lstat(path, &st) == 0 && time(NULL) - st.st_ctime < VMM_SWEEP_YOUNG_S;
	e->owner = read_owner(path);
	e->owner_alive = alive(e->owner);
}

/* Fills e for the directory entry name in run_base; false when it is none
 * of ours. */
static bool describe(const char *run_base, const char *name, char *path, size_t len, char *holder,
		     size_t holder_len, struct vmm_run_owner *owner, struct vmm_sweep_entry *e)
{
	size_t n = strlen(name);

	memset(e, 0, sizeof(*e));
	e->path = path;
	snprintf(path, len, "%s/%s", run_base, name);
	if (!strncmp(name, "shim-vm-", 8) && n > 12 && !strcmp(name + n - 4, ".log")) {
		char dir[PATH_MAX];
		struct stat st;

		e->kind = VMM_SWEEP_SHIM_LOG;
		snprintf(dir, sizeof(dir), "%s/%.*s", run_base, (int)(n - 9), name + 5);
		e->stale = stat(dir, &st) < 0 && stat(path, &st) == 0 &&
			   time(NULL) - st.st_mtime > VMM_SHIM_LOG_KEEP_S;
		return true;
	}
	if (!strncmp(name, "owner-vm-", 9)) {
		char dir[PATH_MAX];
		const char *tmp = strstr(name, ".tmp-");
		struct stat st;

		/* A run dir's record (run_owner.h): listed only once its run
		 * dir is gone, which its remover follows with it. A record
		 * being written (fs_write_file_atomic's NAME.tmp-XXXXXX, renamed
		 * into place when whole) is its writer's until it is old: a
		 * sweep beside a start must not take it from under the rename. */
		snprintf(dir, sizeof(dir), "%s/%.*s", run_base,
			 (int)(tmp ? (size_t)(tmp - name) - 6 : n - 6), name + 6);
		if (lstat(dir, &st) == 0 && !tmp)
			return false;
		e->kind = VMM_SWEEP_OWNER_RECORD;
		e->stale = !tmp ||
			   (lstat(path, &st) == 0 && time(NULL) - st.st_mtime > VMM_SWEEP_YOUNG_S);
		return true;
	}
	if (strncmp(name, "vm-", 3))
		return false;
	if (!strncmp(name, "vm-ckpt-", 8)) {
		e->kind = VMM_SWEEP_CHECKPOINT;
		e->owner = read_owner(path);
		e->owner_alive = alive(e->owner);
		if (vmm_checkpoint_held_by(path, holder, holder_len) == 0)
			e->held_by = holder;
		e->stale = !e->owner_alive && !e->held_by;
		return true;
	}
	e->kind = VMM_SWEEP_RUN_DIR;
	run_dir_owner(path, e, owner);
	e->stale = !e->owner_alive && !e->being_made;
	return true;
}

int vmm_sweep_list(const char *run_base, vmm_sweep_fn fn, void *ud)
{
	DIR *d = opendir(run_base);
	struct dirent *de;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char path[PATH_MAX], holder[256];
		struct vmm_run_owner owner;
		struct vmm_sweep_entry e;

		if (!describe(run_base, de->d_name, path, sizeof(path), holder, sizeof(holder),
			      &owner, &e))
			continue;
		fn(ud, &e);
		n++;
	}
	closedir(d);
	return n;
}

static void remove_stale(void *ud, const struct vmm_sweep_entry *e)
{
	int *removed = ud;

	if (!e->stale)
		return;
	if (e->kind == VMM_SWEEP_SHIM_LOG || e->kind == VMM_SWEEP_OWNER_RECORD)
		unlink(e->path);
	else if (e->kind == VMM_SWEEP_RUN_DIR ? vmm_run_dir_remove(e->path) == 0
					      : fs_rm_rf(e->path) == 0)
		(*removed)++;
	/* Its owner died before it removed the guest's cgroup (QEMU died with it). */
	if (e->kind == VMM_SWEEP_RUN_DIR && strrchr(e->path, '/'))
		vmm_cgroup_sweep(strrchr(e->path, '/') + 1);
}

int vmm_sweep_stale(const char *run_base)
{
	int removed = 0;

	vmm_sweep_list(run_base, remove_stale, &removed);
	return removed;
}
