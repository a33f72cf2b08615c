/* vmm-qemu/run_dir.c: see run_dir.h. */
#include "vmm-qemu/run_dir.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/un.h>

int vmm_run_dir_qemu(const char *run_dir, char *buf, size_t len)
{
	struct stat st;
	int n = snprintf(buf, len, "%s/" VMM_RUN_DIR_QEMU, run_dir);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (lstat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
		n = snprintf(buf, len, "%s", run_dir); /* a run dir of before */
	return 0;
}

int vmm_run_dir_socket(const char *run_dir, enum vmm_socket which, char *buf, size_t len)
{
	static const char *const names[] = {
		[VMM_SOCKET_QMP] = "qmp.sock", /* QEMU's sockets */
		[VMM_SOCKET_VNC] = "vnc.sock",
		[VMM_SOCKET_QGA] = "qga.sock",
		[VMM_SOCKET_AGENT] = "agent.sock",
		[VMM_SOCKET_SHIM] = "shim.sock", /* the shim's (shim.h) */
	};
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int n;

	if (len > 0)
		buf[0] = '\0';
	if ((unsigned)which >= sizeof(names) / sizeof(names[0]))
		return -EINVAL;
	if (which == VMM_SOCKET_SHIM ? snprintf(dir, sizeof(dir), "%s", run_dir) >= (int)sizeof(dir)
				     : vmm_run_dir_qemu(run_dir, dir, sizeof(dir)) < 0)
		return -ENAMETOOLONG;
	n = snprintf(buf, len, "%s/%s", dir, names[which]);
	if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		if (len > 0)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}
