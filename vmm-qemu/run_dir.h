/* vmm-qemu/run_dir.h: the names of the sockets in a guest's run dir
 * (docs/vmm.md), in one place: QEMU's command line (argv.c), the QMP
 * connection (vm.c), the agents (guest_prep.c) and whoever else connects to
 * a guest get them from here rather than spelling them out.
 *
 * A run dir is root's (0711 where QEMU runs as a uid of its own: the uid
 * may pass through it, not list or change it), so that what root keeps
 * there (vm.json, label, qemu.exit, shim.sock, page.html) is out of an
 * escaped QEMU's reach; QEMU's sockets and the screendumps it writes go
 * into RUN_DIR/q, the guest's uid's (0700), and its two logs are files
 * the uid owns in a folder it cannot change. A run dir made by a Vitrine
 * before q existed (a guest adopted across an upgrade) was its guest's
 * uid's and holds the sockets itself: a run dir without a folder q (a
 * link by that name is not one) is read that way. */
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

/* QEMU's folder in a run dir (docs/vmm.md). */
#define VMM_RUN_DIR_QEMU "q"

/* Where QEMU makes its sockets and screendumps in run_dir into buf (len
 * bytes): RUN_DIR/q when that is a folder (lstat), else run_dir itself (a
 * run dir of before). Returns 0 or -ENAMETOOLONG. */
int vmm_run_dir_qemu(const char *run_dir, char *buf, size_t len);

/* Writes the path of socket which in run_dir into buf (len bytes): the
 * shim's in run_dir, QEMU's in vmm_run_dir_qemu's folder. Returns
 * 0, or -ENAMETOOLONG when it does not fit buf or a unix socket address
 * (107 bytes and a NUL), or -EINVAL for an unknown which; buf then holds
 * an empty string (when len > 0). */
int vmm_run_dir_socket(const char *run_dir, enum vmm_socket which, char *buf, size_t len);

#endif
