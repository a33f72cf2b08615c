/* vmm-qemu/run_dir.h: the names of the sockets in a guest's run dir
 * (docs/vmm.md), in one place: QEMU's command line (argv.c), the QMP
 * connection (vm.c), the agents (guest_prep.c) and whoever else connects to
 * a guest get them from here rather than spelling them out. Pure. */
#ifndef VITRINE_VMM_RUN_DIR_H
#define VITRINE_VMM_RUN_DIR_H

#include <stddef.h>

enum vmm_socket {
	VMM_SOCKET_QMP, /* qmp.sock: QEMU's monitor */
	VMM_SOCKET_VNC, /* vnc.sock: QEMU's VNC server */
	VMM_SOCKET_QGA, /* qga.sock: qemu-guest-agent (org.qemu.guest_agent.0) */
	VMM_SOCKET_AGENT, /* agent.sock: vitrine-agent (org.vitrine.agent.0, docs/agent.md) */
	VMM_SOCKET_SHIM, /* shim.sock: the guest's shim, for attachments (shim.h) */
};

/* Writes the path of socket which in run_dir into buf (len bytes). Returns
 * 0, or -ENAMETOOLONG when it does not fit buf or a unix socket address
 * (107 bytes and a NUL), or -EINVAL for an unknown which; buf then holds
 * an empty string (when len > 0). */
int vmm_run_dir_socket(const char *run_dir, enum vmm_socket which, char *buf, size_t len);

#endif
