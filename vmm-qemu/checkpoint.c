/* vmm-qemu/checkpoint.c: see checkpoint.h. */
#include "vmm-qemu/checkpoint.h"

#include "common/fsutil.h"
#include "vmm-qemu/migrate.h"
#include "vmm-qemu/spec_json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* dir/file into out (PATH_MAX); -ENAMETOOLONG with err filled (when not
 * NULL). */
static int join(char *out, const char *dir, const char *file, char *err, size_t errlen)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, file);

	if (n < 0 || n >= PATH_MAX) {
		if (err)
			snprintf(err, errlen, "path too long: %s/%s", dir, file);
		return -ENAMETOOLONG;
	}
	return 0;
}

int vmm_checkpoint_dir_new(const char *run_base, char *dir, char *err, size_t errlen)
{
	const char *base = vmm_run_base(run_base);
	char pid[32], path[PATH_MAX];
	int rc = fs_mkdir_p(base, 0755);

	if (rc < 0) {
		snprintf(err, errlen, "create %s: %s", base, strerror(-rc));
		return rc;
	}
	if (snprintf(dir, PATH_MAX, "%s/vm-ckpt-XXXXXX", base) >= PATH_MAX - 32) {
		snprintf(err, errlen, "run dir base too long: %s", base);
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(dir)) {
		rc = -errno;
		snprintf(err, errlen, "mkdtemp %s: %s", dir, strerror(errno));
		return rc;
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if ((rc = join(path, dir, "owner.pid", err, errlen)) < 0 ||
	    (rc = fs_write_file(path, pid, strlen(pid))) < 0) {
		if (rc != -ENAMETOOLONG)
			snprintf(err, errlen, "write %s: %s", path, strerror(-rc));
		fs_rm_rf(dir);
	}
	return rc;
}

static int write_json(const struct vmm_spec *spec, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	json_t *j;
	int rc;

	if ((rc = join(path, dir, "checkpoint.json", err, errlen)) < 0)
		return rc;
	j = vmm_spec_json(spec);
	if (!j || json_dump_file(j, path, JSON_COMPACT) < 0) {
		json_decref(j);
		snprintf(err, errlen, "write %s", path);
		return -EIO;
	}
	json_decref(j);
	return 0;
}

int vmm_checkpoint_hold(const char *dir, const char *holder)
{
	char held[PATH_MAX], owner[PATH_MAX];
	int rc;

	if (join(held, dir, "held_by", NULL, 0) < 0 || join(owner, dir, "owner.pid", NULL, 0) < 0)
		return -ENAMETOOLONG;
	/* held_by first: the folder is never without a keeper. */
	rc = fs_write_file_atomic(held, holder, strlen(holder), 0600);
	if (rc == 0 && unlink(owner) < 0 && errno != ENOENT)
		rc = -errno;
	return rc;
}

int vmm_checkpoint_unhold(const char *dir)
{
	char held[PATH_MAX], owner[PATH_MAX], pid[32];
	int rc;

	if (join(held, dir, "held_by", NULL, 0) < 0 || join(owner, dir, "owner.pid", NULL, 0) < 0)
		return -ENAMETOOLONG;
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	rc = fs_write_file_atomic(owner, pid, strlen(pid), 0644);
	if (rc == 0 && unlink(held) < 0 && errno != ENOENT)
		rc = -errno;
	return rc;
}

int vmm_checkpoint_held_by(const char *dir, char *holder, size_t len)
{
	char path[PATH_MAX], *text = NULL;
	int rc;

	if (join(path, dir, "held_by", NULL, 0) < 0)
		return -ENAMETOOLONG;
	rc = fs_read_file(path, 4096, &text, NULL);
	if (rc < 0)
		return rc;
	if (holder && len)
		snprintf(holder, len, "%s", text);
	free(text);
	return 0;
}

/* Copies (or moves) file from the guest's run dir into the checkpoint. */
static int take(struct vmm_vm *vm, const char *dir, const char *file, bool move, char *err,
		size_t errlen)
{
	char from[PATH_MAX], to[PATH_MAX];
	int rc;

	if ((rc = join(from, vmm_vm_run_dir(vm), file, err, errlen)) < 0 ||
	    (rc = join(to, dir, file, err, errlen)) < 0)
		return rc;
	/* From the guest's run dir: never a link its uid put there. */
	rc = move ? fs_move_regular(from, to) : fs_copy_file(from, to, 0600);
	if (rc < 0)
		snprintf(err, errlen, "%s %s to %s: %s", move ? "move" : "copy", from, to,
			 rc == -EINVAL ? "not a regular file" : strerror(-rc));
	return rc;
}

/* Ends a migration a failed save left under way (a timeout), so that the
 * guest may run again: best effort, the caller's error says what failed. */
static void undo_migration(struct vmm_vm *vm)
{
	char e[256];

	if (vmm_vm_qmp(vm, "migrate_cancel", NULL, NULL, 10000, e, sizeof(e)) == 0)
		vmm_migrate_settle(vm, 10000, e, sizeof(e));
}

int vmm_checkpoint_save(struct vmm_vm *vm, const char *dir, enum vmm_checkpoint_mode mode,
			int64_t *bytes, char *err, size_t errlen)
{
	const struct vmm_spec *spec = vmm_vm_spec(vm);
	bool has_disk = spec->image->rootfs[0] != '\0', quit = mode == VMM_CKPT_QUIT;
	char state[PATH_MAX], e2[256];
	struct stat st;
	int rc;

	json_t *status = NULL;
	int was_running = 0;

	if ((rc = join(state, dir, "state", err, errlen)) < 0)
		return rc;
	/* A guest that was paused stays paused. */
	rc = vmm_vm_qmp(vm, "query-status", NULL, &status, 10000, err, errlen);
	if (rc < 0)
		return rc;
	json_unpack(status, "{s:b}", "running", &was_running);
	json_decref(status);
	rc = vmm_vm_qmp(vm, "stop", NULL, NULL, 10000, err, errlen);
	if (rc < 0)
		return rc;
	/* Every RAM block goes into the stream, a template clone's too. */
	rc = vmm_migrate_ignore_shared(vm, false, err, errlen);
	if (rc == 0)
		rc = vmm_migrate_to_file(vm, state, err, errlen);
	/* The migration flushed the disk and let go of it: copy it now. */
	if (rc == 0 && has_disk && !quit)
		rc = take(vm, dir, "disk.qcow2", false, err, errlen);
	if (rc == 0 && spec->has_page)
		rc = take(vm, dir, "page.html", false, err, errlen);
	if (rc == 0)
		rc = write_json(spec, dir, err, errlen);
	if (rc < 0) /* a migration cut short by a timeout is still under way */
		undo_migration(vm);
	if (quit && rc == 0) {
		rc = vmm_vm_quit(vm, err, errlen);
		if (rc == 0 && has_disk)
			rc = take(vm, dir, "disk.qcow2", true, err, errlen);
	} else if (was_running && vmm_vm_qmp(vm, "cont", NULL, NULL, 10000, e2, sizeof(e2)) < 0 &&
		   rc == 0) {
		snprintf(err, errlen, "the guest did not continue: %s", e2);
		rc = -EIO;
	}
	if (rc == 0 && bytes)
		*bytes = stat(state, &st) == 0 ? (int64_t)st.st_size : 0;
	return rc;
}

/* Whether dir/file is a regular file (a link is not). */
static bool regular(const char *dir, const char *file)
{
	char path[PATH_MAX];
	struct stat st;

	return join(path, dir, file, NULL, 0) == 0 && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool vmm_checkpoint_complete(const char *dir, const char *gone_run_dir)
{
	char path[PATH_MAX], from[PATH_MAX];
	json_t *j = NULL;
	int disk = 0;
	bool ok;

	ok = regular(dir, "checkpoint.json") && regular(dir, "state") &&
	     join(path, dir, "checkpoint.json", NULL, 0) == 0 &&
	     (j = json_load_file(path, 0, NULL)) && json_unpack(j, "{s:b}", "disk", &disk) == 0;
	json_decref(j);
	if (!ok || !disk || regular(dir, "disk.qcow2"))
		return ok;
	if (!gone_run_dir || !gone_run_dir[0] ||
	    join(from, gone_run_dir, "disk.qcow2", NULL, 0) < 0 ||
	    join(path, dir, "disk.qcow2", NULL, 0) < 0)
		return false;
	return fs_move_regular(from, path) == 0;
}

int vmm_checkpoint_restore(const char *dir, const struct vmm_vm_opts *opts, struct vmm_vm **out,
			   char *err, size_t errlen)
{
	const char *image_dir;
	char path[PATH_MAX], state[PATH_MAX], disk[PATH_MAX], page[PATH_MAX], why[256];
	char *url = NULL; /* owned: spec.url points here */
	struct vmm_vm_opts o = *opts;
	struct vmm_vm *vm = NULL;
	struct vmm_image img;
	struct vmm_spec spec;
	json_error_t jerr;
	bool has_disk = false, has_page;
	int fd, rc;
	json_t *j;

	*out = NULL;
	if ((rc = join(path, dir, "checkpoint.json", err, errlen)) < 0 ||
	    (rc = join(state, dir, "state", err, errlen)) < 0 ||
	    (rc = join(disk, dir, "disk.qcow2", err, errlen)) < 0 ||
	    (rc = join(page, dir, "page.html", err, errlen)) < 0)
		return rc;
	j = json_load_file(path, 0, &jerr);
	if (!j) {
		snprintf(err, errlen, "%s: %s", path, jerr.text);
		return -EINVAL;
	}
	if (vmm_spec_from_json(j, &spec, &image_dir, &has_disk, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		json_decref(j);
		return -EINVAL;
	}
	has_page = spec.has_page;
	rc = vmm_image_load(image_dir, &img, err, errlen);
	if (rc == 0 && spec.url && !(url = strdup(spec.url))) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
	}
	spec.url = url;
	json_decref(j);
	if (rc < 0)
		return rc;
	spec.image = &img;
	spec.incoming = true;
	spec.adopt_disk = has_disk ? disk : NULL;
	o.page_file = has_page ? page : NULL;
	fd = open(state, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "open %s: %s", state, strerror(errno));
		free(url);
		return rc;
	}
	o.keep_fds = &fd;
	o.n_keep_fds = 1;
	rc = vmm_vm_start(&spec, &o, &vm, err, errlen);
	close(fd); /* QEMU has its own copy, at the same number */
	free(url);
	if (rc < 0)
		return rc;
	vmm_vm_opts_step(opts, VMM_STEP_LOAD);
	if ((rc = vmm_migrate_incoming(vm, fd, err, errlen)) < 0 ||
	    (rc = vmm_vm_qmp(vm, "cont", NULL, NULL, 10000, err, errlen)) < 0) {
		vmm_vm_destroy(vm);
		return rc;
	}
	*out = vm;
	return 0;
}
