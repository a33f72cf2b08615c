/* vmm-qemu/run_owner.c: see run_owner.h. */
#include "vmm-qemu/run_owner.h"

#include "common/fsutil.h"
#include "vmm-qemu/proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char gateway_id[PATH_MAX]; /* set at start, read after */

int vmm_run_owner_format(const struct vmm_run_owner *o, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%d %llu %s\n", (int)o->pid, o->start_time, o->gateway);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

int vmm_run_owner_parse(const char *text, size_t n, struct vmm_run_owner *o)
{
	char line[PATH_MAX + 64], *end;
	const char *gw;
	long long pid;
	size_t k;

	memset(o, 0, sizeof(*o));
	if (n == 0 || n >= sizeof(line) || text[n - 1] != '\n')
		return -EPROTO;
	memcpy(line, text, n - 1);
	line[n - 1] = '\0';
	for (size_t i = 0; i + 1 < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			return -EPROTO; /* a NUL, a second line, a control character */
	if (line[0] < '1' || line[0] > '9')
		return -EPROTO;
	errno = 0;
	pid = strtoll(line, &end, 10);
	if (errno || pid <= 0 || pid > INT32_MAX || *end != ' ' || end[1] < '0' || end[1] > '9')
		return -EPROTO;
	o->start_time = strtoull(end + 1, &end, 10);
	if (errno || *end != ' ')
		return -EPROTO;
	gw = end + 1;
	k = strlen(gw);
	if (k >= sizeof(o->gateway))
		return -EPROTO;
	o->pid = (pid_t)pid;
	memcpy(o->gateway, gw, k + 1);
	return 0;
}

void vmm_run_owner_set_gateway(const char *id)
{
	snprintf(gateway_id, sizeof(gateway_id), "%s", id ? id : "");
}

const char *vmm_run_owner_gateway(void)
{
	return gateway_id;
}

/* RUN_BASE/owner-NAME for RUN_BASE/NAME into out (PATH_MAX). */
static int record_path(const char *run_dir, char *out)
{
	size_t n = strlen(run_dir);
	const char *slash;

	while (n > 1 && run_dir[n - 1] == '/')
		n--;
	for (slash = run_dir + n - 1; slash > run_dir && *slash != '/'; slash--)
		;
	if (*slash != '/' || slash == run_dir + n - 1)
		return -EINVAL;
	if (snprintf(out, PATH_MAX, "%.*s/owner-%.*s", (int)(slash - run_dir), run_dir,
		     (int)(run_dir + n - slash - 1), slash + 1) >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int vmm_run_owner_read(const char *run_dir, struct vmm_run_owner *o)
{
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	int rc;

	memset(o, 0, sizeof(*o));
	if ((rc = record_path(run_dir, path)) < 0 ||
	    (rc = fs_read_file_nofollow(path, PATH_MAX + 64, &text, &len)) < 0)
		return rc;
	rc = vmm_run_owner_parse(text, len, o);
	free(text);
	return rc;
}

int vmm_run_owner_write(const char *run_dir, pid_t pid, const char *gateway)
{
	struct vmm_run_owner o = { .pid = pid }, old;
	char path[PATH_MAX], line[PATH_MAX + 64];
	int rc, n;

	if ((rc = record_path(run_dir, path)) < 0)
		return rc;
	if ((rc = vmm_proc_start_time(pid, &o.start_time)) < 0)
		return rc;
	if (!gateway)
		gateway = vmm_run_owner_read(run_dir, &old) == 0 ? old.gateway : gateway_id;
	snprintf(o.gateway, sizeof(o.gateway), "%s", gateway);
	if ((n = vmm_run_owner_format(&o, line, sizeof(line))) < 0)
		return n;
	return fs_write_file_atomic(path, line, (size_t)n, 0644);
}

bool vmm_run_owner_alive(const struct vmm_run_owner *o)
{
	unsigned long long start;

	return o->pid > 0 && vmm_proc_start_time(o->pid, &start) == 0 && start == o->start_time;
}

bool vmm_run_owner_foreign(const struct vmm_run_owner *o)
{
	return o->gateway[0] && gateway_id[0] && strcmp(o->gateway, gateway_id);
}

int vmm_run_dir_remove(const char *run_dir)
{
	char path[PATH_MAX];
	int rc = fs_rm_rf(run_dir);

	if ((rc == 0 || rc == -ENOENT) && record_path(run_dir, path) == 0)
		unlink(path);
	return rc;
}
