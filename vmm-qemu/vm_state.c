/* vmm-qemu/vm_state.c: RUN_DIR/vm.json, the guest described for a process
 * that did not start it (vm_int.h): the spec as checkpoint.json has it
 * (spec_json.h) and the identity of its processes. */
#include "vmm-qemu/vm_int.h"

#include "common/fsutil.h"
#include "vmm-qemu/spec_json.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VM_STATE_VERSION 1

static json_t *ident_json(pid_t pid, unsigned long long start)
{
	return json_pack("{s:i, s:I}", "pid", (int)pid, "start_time", (json_int_t)start);
}

int vm_state_write(const struct vmm_vm *vm, char *err, size_t errlen)
{
	char path[PATH_MAX + 16], *text = NULL;
	json_t *j;
	int rc;

	j = json_pack("{s:i, s:o, s:o}", "version", VM_STATE_VERSION, "spec",
		      vmm_spec_json(&vm->spec), "qemu", ident_json(vm->qemu_pid, vm->qemu_start));
	if (j && vm->shim_held &&
	    json_object_set_new(j, "shim", ident_json(vm->proc.pid, vm->proc_start)) < 0) {
		json_decref(j);
		j = NULL;
	}
	if (j)
		text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "%s/vm.json", vm->run_dir);
	rc = fs_write_file_atomic(path, text, strlen(text), 0600);
	free(text);
	if (rc < 0)
		snprintf(err, errlen, "write %s: %s", path, strerror(-rc));
	return rc;
}

static int read_ident(json_t *j, pid_t *pid, unsigned long long *start)
{
	json_int_t p, s;

	if (json_unpack(j, "{s:I, s:I}", "pid", &p, "start_time", &s) < 0 || p <= 0 ||
	    p > INT32_MAX || s < 0)
		return -EBADMSG;
	*pid = (pid_t)p;
	*start = (unsigned long long)s;
	return 0;
}

json_t *vm_json_load(const char *path, size_t flags, json_error_t *jerr)
{
	char *text = NULL;
	size_t len = 0;
	json_t *j;
	int rc = fs_read_file_nofollow(path, 1 << 20, &text, &len);

	if (rc < 0) {
		memset(jerr, 0, sizeof(*jerr));
		snprintf(jerr->text, sizeof(jerr->text), "%s",
			 rc == -ENOENT	? "missing"
			 : rc == -ELOOP ? "a symlink"
					: strerror(-rc));
		return NULL;
	}
	j = json_loadb(text, len, flags, jerr);
	free(text);
	return j;
}

int vm_state_read(struct vmm_vm *vm, const char *run_dir, struct vm_state_ident *id, char *err,
		  size_t errlen)
{
	char path[PATH_MAX + 16], why[256];
	const char *image_dir;
	json_t *j, *spec, *qemu, *shim = NULL;
	json_error_t jerr;
	bool has_disk;
	int version, rc;

	memset(id, 0, sizeof(*id));
	if (snprintf(vm->run_dir, sizeof(vm->run_dir), "%s", run_dir) >= (int)sizeof(vm->run_dir)) {
		snprintf(err, errlen, "run dir path too long: %s", run_dir);
		return -ENAMETOOLONG;
	}
	snprintf(path, sizeof(path), "%s/vm.json", run_dir);
	j = vm_json_load(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!j) {
		rc = access(path, F_OK) < 0 && errno == ENOENT ? -ENOENT : -EBADMSG;
		snprintf(err, errlen, "%s: %s", path, rc == -ENOENT ? "missing" : jerr.text);
		return rc;
	}
	rc = -EBADMSG;
	if (json_unpack_ex(j, &jerr, 0, "{s:i, s:o, s:o, s?o}", "version", &version, "spec", &spec,
			   "qemu", &qemu, "shim", &shim) < 0) {
		snprintf(err, errlen, "%s: %s", path, jerr.text);
		goto done;
	}
	if (version != VM_STATE_VERSION) {
		snprintf(err, errlen, "%s: version %d, not %d", path, version, VM_STATE_VERSION);
		goto done;
	}
	if (read_ident(qemu, &id->qemu_pid, &id->qemu_start) < 0 ||
	    (shim && read_ident(shim, &id->shim_pid, &id->shim_start) < 0)) {
		snprintf(err, errlen, "%s: a bad process identity", path);
		goto done;
	}
	if (vmm_spec_from_json(spec, &vm->spec, &image_dir, &has_disk, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		goto done;
	}
	vm->url = vm->spec.url ? strdup(vm->spec.url) : NULL;
	if (vm->spec.url && !vm->url) {
		vm->spec.url = NULL;
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto done;
	}
	vm->spec.url = vm->url;
	rc = vmm_image_load(image_dir, &vm->image, err, errlen);
	if (rc == 0 && has_disk != (vm->image.rootfs[0] != '\0')) {
		snprintf(err, errlen, "%s: image %s %s a disk now", path, image_dir,
			 has_disk ? "lacks" : "has");
		rc = -EBADMSG;
	}
	vm->spec.image = &vm->image;
	vm->qemu_pid = id->qemu_pid;
	vm->qemu_start = id->qemu_start;
done:
	json_decref(j);
	return rc;
}
