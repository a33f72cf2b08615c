/* vmm-qemu/template_from.c: see template_from.h. */
#include "vmm-qemu/template_from.h"

#include "common/fsutil.h"
#include "vmm-qemu/disk_check.h"
#include "vmm-qemu/migrate.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/spec_json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int vmm_template_chain_depth(int parent_depth, int max_depth, bool *flatten)
{
	int max = max_depth > 0 ? max_depth : VMM_TEMPLATE_CHAIN_MAX;

	*flatten = parent_depth < 0 || parent_depth + 1 > max;
	return *flatten ? 1 : parent_depth + 1;
}

static bool cancelled(const struct vmm_template_from *p, char *err, size_t errlen)
{
	if (!p->cancel || !*p->cancel)
		return false;
	snprintf(err, errlen, "cancelled");
	return true;
}

/* The layers between disk and rootfs go into disk itself: safe mode reads
 * both chains and writes what differs, so the guest's view is unchanged. */
static int flatten(const char *disk, const char *rootfs, char *err, size_t errlen)
{
	char log[PATH_MAX + 8];
	char *argv[] = { "qemu-img", "rebase", "-q",	       "-f",	     "qcow2", "-F",
			 "raw",	     "-b",     (char *)rootfs, (char *)disk, NULL };
	int rc;

	snprintf(log, sizeof(log), "%s.log", disk);
	rc = vmm_proc_run(argv, log, 600 * 1000, err, errlen);
	if (rc > 0)
		snprintf(err, errlen, "qemu-img rebase failed (status %d), see %s", rc, log);
	if (rc == 0)
		unlink(log);
	return rc > 0 ? -EIO : rc;
}

int vmm_template_from_checkpoint(const struct vmm_template_from *p, bool *flattened, char *err,
				 size_t errlen)
{
	char dir[PATH_MAX], ram[PATH_MAX], path[PATH_MAX], state[PATH_MAX], disk[PATH_MAX],
		page[PATH_MAX], why[256];
	struct vmm_template_lineage lin = { .parent = p->parent, .from_session = p->from_session };
	struct vmm_vm_opts opts = { .on_step = p->on_step, .step_ud = p->step_ud };
	struct vmm_template parent;
	struct vmm_vm *vm = NULL;
	struct vmm_image img;
	struct vmm_spec spec;
	const char *image_dir, *on = NULL; /* on: the template the overlay stands on */
	json_error_t jerr;
	bool has_disk = false, flat = false, made = false;
	json_t *j = NULL; /* spec.url points into it */
	int fd = -1, rc;

	if (flattened)
		*flattened = false;
	if (!vmm_template_name_ok(p->name)) {
		snprintf(err, errlen, "bad template name '%s' (1-63 of a-z, 0-9, '_', '-')",
			 p->name);
		return -EINVAL;
	}
	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", vmm_templates_dir(), p->name) >=
		    sizeof(dir) ||
	    (size_t)snprintf(path, sizeof(path), "%s/checkpoint.json", p->ckpt) >= sizeof(path) ||
	    (size_t)snprintf(state, sizeof(state), "%s/state", p->ckpt) >= sizeof(state) ||
	    (size_t)snprintf(disk, sizeof(disk), "%s/disk.qcow2", p->ckpt) >= sizeof(disk) ||
	    (size_t)snprintf(page, sizeof(page), "%s/page.html", p->ckpt) >= sizeof(page)) {
		snprintf(err, errlen, "path too long");
		return -ENAMETOOLONG;
	}
	vmm_vm_opts_step(&opts, VMM_STEP_RUN_DIR);
	j = json_load_file(path, 0, &jerr);
	if (!j) {
		snprintf(err, errlen, "%s: %s", path, jerr.text);
		return -EINVAL;
	}
	rc = vmm_spec_from_json(j, &spec, &image_dir, &has_disk, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		goto out;
	}
	rc = vmm_image_load(image_dir, &img, err, errlen);
	if (rc < 0)
		goto out;
	spec.image = &img;
	/* Where the disk's chain stands: on the parent's disk, or the rootfs. */
	lin.depth = 0;
	if (has_disk) {
		int parent_depth = 0;

		if (p->parent && p->parent[0]) {
			rc = vmm_template_load(p->parent, &parent, err, errlen);
			if (rc < 0)
				goto out;
			parent_depth = parent.has_disk ? parent.depth : 0;
		}
		lin.depth = vmm_template_chain_depth(parent_depth, p->max_depth, &flat);
		flat = flat && parent_depth > 0;
		lin.backing = parent_depth > 0 && !flat ? p->parent : NULL;
		on = parent_depth > 0 ? p->parent : NULL;
	}
	if (cancelled(p, err, errlen)) {
		rc = -EINTR;
		goto out;
	}
	/* The overlay was the guest's uid's to write: its header must name
	 * the backing file the session was given, and the chain below it its
	 * own, before qemu-img (root) opens any of it. */
	if (has_disk && (rc = vmm_disk_check_chain(disk, on, &img, err, errlen)) < 0)
		goto out;
	if (flat && (rc = flatten(disk, img.rootfs, err, errlen)) < 0)
		goto out;
	rc = vmm_template_prepare(dir, &spec, ram, sizeof(ram), err, errlen);
	if (rc < 0)
		goto out;
	made = true;
	spec.incoming = true;
	spec.adopt_disk = has_disk ? disk : NULL;
	opts.page_file = spec.has_page ? page : NULL;
	fd = open(state, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "open %s: %s", state, strerror(errno));
		goto out;
	}
	opts.keep_fds = &fd;
	opts.n_keep_fds = 1;
	rc = vmm_vm_start(&spec, &opts, &vm, err, errlen);
	if (rc < 0)
		goto out;
	vmm_vm_opts_step(&opts, VMM_STEP_LOAD);
	/* The stream carries all the RAM: it lands in the shared file. */
	if ((rc = vmm_migrate_ignore_shared(vm, false, err, errlen)) < 0 ||
	    (rc = vmm_migrate_incoming(vm, fd, err, errlen)) < 0)
		goto out;
	if (cancelled(p, err, errlen)) {
		rc = -EINTR;
		goto out;
	}
	/* Loaded stopped (it was saved stopped): saved as it is, never run. */
	vmm_vm_opts_step(&opts, VMM_STEP_SAVE);
	rc = vmm_template_save_as(vm, dir, &lin, err, errlen);
out:
	vmm_vm_destroy(vm);
	if (fd >= 0)
		close(fd);
	json_decref(j);
	if (rc < 0 && made)
		fs_rm_rf(dir);
	if (rc == 0 && flattened)
		*flattened = flat;
	return rc;
}
