/* vmm-qemu/run_dir.c: see run_dir.h. */
#include "vmm-qemu/run_dir.h"

#include <errno.h>
#include <stdio.h>
#include <sys/un.h>

int vmm_run_dir_socket(const char *run_dir, enum vmm_socket which, char *buf, size_t len)
{
	static const char *const names[] = {
		[VMM_SOCKET_QMP] = "qmp.sock", /* QEMU's sockets */
		[VMM_SOCKET_VNC] = "vnc.sock",
		[VMM_SOCKET_QGA] = "qga.sock",
		[VMM_SOCKET_AGENT] = "agent.sock",
		[VMM_SOCKET_SHIM] = "shim.sock", /* the shim's (shim.h) */
	};
	int n;

	if (len > 0)
		buf[0] = '\0';
	if ((unsigned)which >= sizeof(names) / sizeof(names[0]))
		return -EINVAL;
	n = snprintf(buf, len, "%s/%s", run_dir, names[which]);
	if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		if (len > 0)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}
