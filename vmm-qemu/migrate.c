/* vmm-qemu/migrate.c: see migrate.h. QEMU 7.2 allows the stream through
 * getfd + "fd:" URIs only: "exec:" spawns a shell, which -sandbox
 * spawn=deny kills. */
#include "vmm-qemu/migrate.h"

#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define STATE_FDNAME "vitrine-state"

int vmm_migrate_wait(struct vmm_vm *vm, int timeout_ms, char *err, size_t errlen)
{
	int64_t deadline = fs_now_ms() + timeout_ms;

	for (;;) {
		json_t *ret = NULL;
		const char *status = NULL, *desc = NULL;
		int rc = vmm_vm_qmp(vm, "query-migrate", NULL, &ret, 10000, err, errlen);

		if (rc < 0)
			return rc;
		json_unpack(ret, "{s?s, s?s}", "status", &status, "error-desc", &desc);
		if (status && !strcmp(status, "completed")) {
			json_decref(ret);
			return 0;
		}
		if (status && (!strcmp(status, "failed") || !strcmp(status, "cancelled"))) {
			snprintf(err, errlen, "migration %s: %s", status,
				 desc ? desc : "no reason given");
			json_decref(ret);
			return -EIO;
		}
		json_decref(ret);
		if (fs_now_ms() > deadline) {
			snprintf(err, errlen, "migration not done within %d ms (status %s)",
				 timeout_ms, status ? status : "none");
			return -ETIMEDOUT;
		}
		rc = vmm_vm_service(vm, 5, err, errlen);
		if (rc < 0)
			return rc;
	}
}

int vmm_migrate_settle(struct vmm_vm *vm, int timeout_ms, char *err, size_t errlen)
{
	int64_t deadline = fs_now_ms() + timeout_ms;

	for (;;) {
		json_t *ret = NULL;
		const char *status = NULL;
		bool over;
		int rc = vmm_vm_qmp(vm, "query-migrate", NULL, &ret, 10000, err, errlen);

		if (rc < 0)
			return rc;
		json_unpack(ret, "{s?s}", "status", &status);
		over = !status || !strcmp(status, "completed") || !strcmp(status, "failed") ||
		       !strcmp(status, "cancelled") || !strcmp(status, "none");
		if (!over && fs_now_ms() > deadline) {
			snprintf(err, errlen, "a migration still under way after %d ms (status %s)",
				 timeout_ms, status);
			json_decref(ret);
			return -ETIMEDOUT;
		}
		json_decref(ret);
		if (over)
			return 0;
		rc = vmm_vm_service(vm, 20, err, errlen);
		if (rc < 0)
			return rc;
	}
}

int vmm_migrate_ignore_shared(struct vmm_vm *vm, bool on, char *err, size_t errlen)
{
	return vmm_vm_qmp(vm, "migrate-set-capabilities",
			  json_pack("{s:[{s:s, s:b}]}", "capabilities", "capability",
				    "x-ignore-shared", "state", on),
			  NULL, 10000, err, errlen);
}

int vmm_migrate_to_file(struct vmm_vm *vm, const char *path, char *err, size_t errlen)
{
	int fd, rc;

	/* The default limit (32 MiB/s) would throttle even a small state. */
	rc = vmm_vm_qmp(vm, "migrate-set-parameters",
			json_pack("{s:I}", "max-bandwidth", (json_int_t)1 << 40), NULL, 10000, err,
			errlen);
	if (rc < 0)
		return rc;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "create %s: %s", path, strerror(errno));
		return rc;
	}
	rc = vmm_vm_qmp_fd(vm, "getfd", json_pack("{s:s}", "fdname", STATE_FDNAME), fd, NULL, 10000,
			   err, errlen);
	close(fd); /* QEMU holds its own copy now */
	if (rc == 0)
		rc = vmm_vm_qmp(vm, "migrate", json_pack("{s:s}", "uri", "fd:" STATE_FDNAME), NULL,
				10000, err, errlen);
	if (rc == 0)
		rc = vmm_migrate_wait(vm, VMM_MIGRATE_TIMEOUT_MS, err, errlen);
	return rc;
}

int vmm_migrate_incoming(struct vmm_vm *vm, int fd, char *err, size_t errlen)
{
	char uri[32];
	int rc;

	snprintf(uri, sizeof(uri), "fd:%d", fd);
	rc = vmm_vm_qmp(vm, "migrate-incoming", json_pack("{s:s}", "uri", uri), NULL, 10000, err,
			errlen);
	if (rc == 0)
		rc = vmm_migrate_wait(vm, VMM_MIGRATE_TIMEOUT_MS, err, errlen);
	return rc;
}

int vmm_vm_quit(struct vmm_vm *vm, char *err, size_t errlen)
{
	int64_t deadline = fs_now_ms() + 10000;
	int rc = vmm_vm_qmp(vm, "quit", NULL, NULL, 5000, err, errlen);

	/* The reply may race with the monitor closing. */
	if (rc < 0 && rc != -EPIPE && rc != -ECHILD)
		return rc;
	while (fs_now_ms() < deadline) {
		rc = vmm_vm_service(vm, 50, err, errlen);
		if (rc == -ECHILD || vmm_vm_proc(vm)->exited)
			return 0;
		if (rc < 0 && rc != -EPIPE)
			return rc;
	}
	snprintf(err, errlen, "QEMU did not exit within 10 s of quit");
	return -ETIMEDOUT;
}
