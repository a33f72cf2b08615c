/* vmm-qemu/vm_find.c: see vm_find.h. */
#include "vmm-qemu/vm_find.h"

#include "common/fsutil.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/run_owner.h"
#include "vmm-qemu/vm_int.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int vmm_run_dir_set_label(const char *run_dir, const char *label)
{
	char path[PATH_MAX];
	size_t n = strlen(label);

	if (n == 0 || n > 63 || strchr(label, '/') || strchr(label, '\n'))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/label", run_dir) >= sizeof(path))
		return -ENAMETOOLONG;
	return fs_write_file_atomic(path, label, n, 0644);
}

int vmm_run_dir_label(const char *run_dir, char *buf, size_t len)
{
	char path[PATH_MAX], *text = NULL;
	size_t n = 0;
	int rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/label", run_dir) >= sizeof(path))
		return -ENAMETOOLONG;
	rc = fs_read_file_nofollow(path, 64, &text, &n);
	if (rc < 0)
		return rc == -EFBIG ? -EBADMSG : rc;
	if (n == 0 || n >= len) {
		free(text);
		return -EBADMSG;
	}
	memcpy(buf, text, n + 1);
	free(text);
	return 0;
}

int vmm_vm_identity_read(const char *run_dir, struct vmm_identity *out, char *err, size_t errlen)
{
	char path[PATH_MAX];
	json_error_t jerr;
	json_int_t pid = 0, start = 0;
	json_t *j;

	memset(out, 0, sizeof(*out));
	if ((size_t)snprintf(path, sizeof(path), "%s/vm.json", run_dir) >= sizeof(path) ||
	    strlen(run_dir) >= sizeof(out->run_dir)) {
		snprintf(err, errlen, "run dir name too long");
		return -ENAMETOOLONG;
	}
	if (access(path, F_OK) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -ENOENT;
	}
	j = vm_json_load(path, 0, &jerr);
	if (!j ||
	    json_unpack_ex(j, &jerr, 0, "{s:{s:I, s:I}}", "shim", "pid", &pid, "start_time",
			   &start) < 0 ||
	    pid <= 0 || start <= 0) {
		snprintf(err, errlen, "%s: %s", path, j ? jerr.text : "not JSON");
		json_decref(j);
		return -EBADMSG;
	}
	json_decref(j);
	out->pid = (pid_t)pid;
	out->start_time = (unsigned long long)start;
	snprintf(out->run_dir, sizeof(out->run_dir), "%s", run_dir);
	return 0;
}

/* True while pid is the process that started at start. */
static bool still(pid_t pid, unsigned long long start)
{
	unsigned long long now = 0;

	return vmm_proc_start_time(pid, &now) == 0 && now == start;
}

bool vmm_identity_wait_gone(const struct vmm_identity *id, int timeout_ms)
{
	int64_t until = fs_now_ms() + timeout_ms;

	while (still(id->pid, id->start_time) && fs_now_ms() < until)
		nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000L }, NULL);
	return !still(id->pid, id->start_time);
}

/* The shim of run_dir from its record (run_owner.h: root's, beside the
 * run dir), for a guest whose vm.json was not written yet (its owner died
 * right after spawning the shim): only the process the record names, with
 * its start time, whose command line is this run dir's shim (`BIN shim
 * --run-dir RUN_DIR ...`) counts, so a reused pid is never taken for it. */
static int identity_from_owner(const char *run_dir, struct vmm_identity *id, char *err,
			       size_t errlen)
{
	const char *want[] = { "shim", "--run-dir", run_dir };
	struct vmm_run_owner o;
	char path[64], *cmd = NULL;
	size_t len = 0;
	int rc;

	memset(id, 0, sizeof(*id));
	if (vmm_run_owner_read(run_dir, &o) < 0 || !vmm_run_owner_alive(&o)) {
		snprintf(err, errlen, "%s has no vm.json and no live owner", run_dir);
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)o.pid);
	rc = fs_read_file(path, 1 << 16, &cmd, &len);
	/* NUL-separated: skip argv[0], then compare the next three. */
	for (size_t off = rc == 0 ? strnlen(cmd, len) + 1 : len, i = 0; i < 3; i++) {
		if (off >= len || strcmp(cmd + off, want[i])) {
			rc = -ESRCH;
			break;
		}
		off += strlen(cmd + off) + 1;
	}
	free(cmd);
	if (rc < 0 || !vmm_run_owner_alive(&o)) {
		snprintf(err, errlen, "%s: pid %d, its owner, is not its shim", run_dir,
			 (int)o.pid);
		return -ESRCH;
	}
	id->pid = o.pid;
	id->start_time = o.start_time;
	snprintf(id->run_dir, sizeof(id->run_dir), "%s", run_dir);
	return 0;
}

/* SIGTERM to the shim id names, SIGKILL past timeout_ms. */
static int terminate(const struct vmm_identity *idp, int timeout_ms, char *err, size_t errlen)
{
	struct vmm_identity id = *idp;

	if (!still(id.pid, id.start_time)) {
		snprintf(err, errlen, "its shim (pid %d) is gone", (int)id.pid);
		return -ESRCH;
	}
	kill(id.pid, SIGTERM);
	if (!vmm_identity_wait_gone(&id, timeout_ms)) {
		kill(id.pid, SIGKILL); /* QEMU dies with it (PR_SET_PDEATHSIG) */
		snprintf(err, errlen, "its shim (pid %d) did not stop within %d ms: killed",
			 (int)id.pid, timeout_ms);
		return -ETIMEDOUT;
	}
	return 0;
}

int vmm_shim_terminate(const char *run_dir, int timeout_ms, char *err, size_t errlen)
{
	struct vmm_identity id;
	int rc = vmm_vm_identity_read(run_dir, &id, err, errlen);

	if (rc == -ENOENT)
		rc = identity_from_owner(run_dir, &id, err, errlen);
	return rc < 0 ? rc : terminate(&id, timeout_ms, err, errlen);
}

int vmm_shim_terminate_owned(const char *run_dir, int timeout_ms, char *err, size_t errlen)
{
	struct vmm_identity id;
	int rc = identity_from_owner(run_dir, &id, err, errlen);

	return rc < 0 ? rc : terminate(&id, timeout_ms, err, errlen);
}
