/* vmm-qemu/vm_adopt.c: a vmm_vm for a guest this process did not start:
 * one whose shim outlived its gateway (vmm_vm_adopt), and, inside the
 * shim, its own QEMU (vmm_vm_open_child). What they share: vm.json, QMP,
 * the console from its end, and the guest counted as ready. */
#include "vmm-qemu/vm_int.h"

#include "common/fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* QMP, the console and the "ready" phase for a vm read from vm.json. */
static int take_over(struct vmm_vm *vm, char *err, size_t errlen)
{
	struct vmm_phase *ready = &vm->phases[0];
	int rc;

	vm->spawn_ms = fs_now_ms();
	rc = vm_connect_qmp(vm, err, errlen);
	/* It exited since it was found (a pause's quit the last gateway
	 * asked for): gone meanwhile, as for the attach below. */
	if (rc == -ECHILD)
		rc = -ESRCH;
	if (rc == 0)
		rc = vm_open_console(vm, true, err, errlen);
	if (rc < 0)
		return rc;
	/* Whoever started it saw it ready before handing it on. */
	snprintf(ready->name, sizeof(ready->name), "ready");
	ready->uptime_s = -1;
	ready->wall_ms = 0;
	vm->n_phases = 1;
	return 0;
}

/* The checks of vmm_vm_adopt() up to the shim's hello, in their order. */
static int check_identity(struct vmm_vm *vm, const struct vmm_identity *expect, char *err,
			  size_t errlen)
{
	struct vm_state_ident id;
	unsigned long long now;
	struct stat st;
	pid_t qemu;
	int rc, fd;

	if (stat(expect->run_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "run dir %s: %s", expect->run_dir,
			 errno == ENOENT ? "missing" : strerror(errno));
		return -ENOENT;
	}
	/* Missing, torn, or naming an image that is gone: no usable description. */
	rc = vm_state_read(vm, expect->run_dir, &id, err, errlen);
	if (rc < 0)
		return rc == -ENOMEM ? rc : -EBADMSG;
	rc = vmm_proc_start_time(expect->pid, &now);
	if (rc < 0) {
		snprintf(err, errlen, "the guest's process %d is gone", (int)expect->pid);
		return rc == -ESRCH ? -ESRCH : rc;
	}
	if (now != expect->start_time) {
		snprintf(err, errlen,
			 "pid %d started at tick %llu, not %llu: it is another process now",
			 (int)expect->pid, now, expect->start_time);
		return -ESTALE;
	}
	if (!id.shim_pid) {
		snprintf(err, errlen, "%s/vm.json: the guest has no shim to adopt it from",
			 expect->run_dir);
		return -EINVAL;
	}
	if (id.shim_pid != expect->pid || id.shim_start != expect->start_time) {
		snprintf(err, errlen, "%s/vm.json names shim %d (tick %llu), not %d (tick %llu)",
			 expect->run_dir, (int)id.shim_pid, id.shim_start, (int)expect->pid,
			 expect->start_time);
		return -ESTALE;
	}
	rc = vmm_proc_adopt(expect->pid, expect->start_time, &vm->proc, err, errlen);
	if (rc < 0)
		return rc;
	vm->proc_start = expect->start_time;
	vm->shim_held = true;
	if (vm_shim_log_path(expect->run_dir, vm->shim_log, sizeof(vm->shim_log)) < 0)
		vm->shim_log[0] = '\0';
	fd = vm_shim_attach(expect->run_dir, &vm->proc, 0, &qemu, err, errlen);
	if (fd == -ECHILD)
		fd = -ESRCH; /* gone meanwhile */
	if (fd < 0)
		return fd;
	vm->attach_fd = fd;
	if (qemu != id.qemu_pid) {
		snprintf(err, errlen, "the shim holds QEMU %d, vm.json names %d", (int)qemu,
			 (int)id.qemu_pid);
		return -ESTALE;
	}
	return 0;
}

int vmm_vm_adopt(const struct vmm_identity *expect, const struct vmm_vm_opts *opts,
		 struct vmm_vm **out, char *err, size_t errlen)
{
	struct vmm_vm *vm = vm_alloc();
	int rc;

	*out = NULL;
	if (!vm) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	vm->opts = *opts;
	vm->opts.page_file = NULL;
	vm->opts.keep_fds = NULL;
	vm->opts.n_keep_fds = 0;
	vm->opts.shim = NULL;
	rc = check_identity(vm, expect, err, errlen);
	if (rc == 0)
		rc = take_over(vm, err, errlen);
	if (rc < 0) {
		/* Let go without touching the guest: it is not ours. */
		vmm_proc_forget(&vm->proc);
		vm_free(vm);
		return rc;
	}
	*out = vm;
	return 0;
}

int vmm_vm_open_child(const char *run_dir, struct vmm_proc *qemu, struct vmm_vm **out, char *err,
		      size_t errlen)
{
	struct vmm_vm *vm = vm_alloc();
	struct vm_state_ident id;
	int rc;

	*out = NULL;
	if (!vm) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = vm_state_read(vm, run_dir, &id, err, errlen);
	if (rc == 0 && id.qemu_pid != qemu->pid) {
		snprintf(err, errlen, "%s/vm.json names QEMU %d, not %d", run_dir, (int)id.qemu_pid,
			 (int)qemu->pid);
		rc = -ESTALE;
	}
	if (rc == 0) {
		vm->proc = *qemu; /* borrowed until it all worked */
		vm->proc_start = id.qemu_start;
		rc = take_over(vm, err, errlen);
	}
	if (rc < 0) {
		vm_free(vm); /* *qemu stays the caller's */
		return rc;
	}
	memset(qemu, 0, sizeof(*qemu));
	qemu->pidfd = -1;
	*out = vm;
	return 0;
}

void vmm_vm_close_child(struct vmm_vm *vm, struct vmm_proc *qemu)
{
	*qemu = vm->proc;
	memset(&vm->proc, 0, sizeof(vm->proc));
	vm->proc.pidfd = -1;
	vm_free(vm);
}
