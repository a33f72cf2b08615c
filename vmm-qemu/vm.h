/* vmm-qemu/vm.h: one guest, from run dir to reaped process.
 *
 * A vmm_vm owns everything a running guest holds on the host: its 0700 run
 * dir (sockets, qcow2 overlay, serial log), the QEMU process and the QMP
 * connection. vmm_vm_destroy() is the one place that releases them. The
 * blocking helpers (wait for a phase, QMP call) suit the CLI and tests; an
 * event loop uses the fds and vmm_vm_service() instead. */
#ifndef VITRINE_VMM_VM_H
#define VITRINE_VMM_VM_H

#include "vmm-qemu/console.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/qmp_client.h"
#include "vmm-qemu/run_dir.h"
#include "vmm-qemu/spec.h"

#include <stdint.h>

#define VMM_MAX_PHASES 12

struct vmm_phase {
	char name[24];
	double uptime_s; /* guest uptime the guest reported, -1 if none */
	int64_t wall_ms; /* host time since spawn when the host read the line */
};

/* Called for each VITRINE line the guest prints (on the caller's thread). */
typedef void (*vmm_marker_fn)(void *ud, const struct vmm_marker *m);

struct vmm_vm_opts {
	const char *qemu_bin; /* NULL: qemu-system-x86_64 */
	const char *run_base; /* NULL: $VITRINE_RUN, else $VITRINE_HOME/run */
	const char *page_file; /* host file exposed to the guest as its page */
	vmm_marker_fn on_marker;
	void *ud;
	const int *keep_fds; /* descriptors QEMU inherits (e.g. a migration stream) */
	size_t n_keep_fds;
};

struct vmm_vm;

/* Directory holding the run dirs of all guests. */
const char *vmm_run_base(const char *override);

/* Removes run dirs whose owning process is gone (after a crash or kill -9 of
 * a gateway; their QEMUs died with it). Returns the number removed. */
int vmm_sweep_stale(const char *run_base);

/* Creates the run dir, the disk overlay, spawns QEMU and connects QMP. spec
 * must have a resolved accelerator (vmm_accel_resolve). Returns 0 with *out
 * owning the guest, or -errno with a sentence in err (nothing is left behind). */
int vmm_vm_start(const struct vmm_spec *spec, const struct vmm_vm_opts *opts, struct vmm_vm **out,
		 char *err, size_t errlen);

/* Services QMP and reads new console lines, waiting up to timeout_ms for
 * something to happen. Returns 0, or -ECHILD once QEMU has exited (err says
 * how, with the guest's last console lines) or another -errno. */
int vmm_vm_service(struct vmm_vm *vm, int timeout_ms, char *err, size_t errlen);

/* Services until the guest reports phase (e.g. "ready") or a VITRINE error
 * line (-EIO), QEMU exits (-ECHILD) or timeout_ms passes (-ETIMEDOUT). */
int vmm_vm_wait_phase(struct vmm_vm *vm, const char *phase, int timeout_ms, char *err,
		      size_t errlen);

/* A QMP command; see qmp_client_call(). */
int vmm_vm_qmp(struct vmm_vm *vm, const char *cmd, json_t *args, json_t **ret, int timeout_ms,
	       char *err, size_t errlen);

/* vmm_vm_qmp() passing fd along (SCM_RIGHTS), as for getfd; fd stays the
 * caller's. */
int vmm_vm_qmp_fd(struct vmm_vm *vm, const char *cmd, json_t *args, int fd, json_t **ret,
		  int timeout_ms, char *err, size_t errlen);

/* Queues a QMP command without waiting for its reply (which is discarded):
 * for input events, which QEMU executes in order as it reads them. args is
 * stolen. Returns 0, or -errno with a reason in err when the monitor is
 * gone. */
int vmm_vm_qmp_send(struct vmm_vm *vm, const char *cmd, json_t *args, char *err, size_t errlen);

/* Injects input: events is a JSON array of QMP input events, or an object
 * {"events": [...]} as vmm-qemu/input.h builds them (stolen either way; NULL
 * is taken for a builder that ran out of memory). Queued as one
 * input-send-event without waiting for the reply, as vmm_vm_qmp_send().
 * Returns 0, -EINVAL for anything else, -ENOMEM, or -errno with a reason in
 * err when the monitor is gone. */
int vmm_vm_input(struct vmm_vm *vm, json_t *events, char *err, size_t errlen);

/* Writes the screen to path ("png" or "ppm") through QMP screendump. The
 * file is created by QEMU, so it first lands in the run dir. */
int vmm_vm_screendump(struct vmm_vm *vm, const char *path, const char *format, char *err,
		      size_t errlen);

/* Quits QEMU (QMP quit, then SIGKILL after a grace period), reaps it and
 * removes the run dir. Accepts NULL. */
void vmm_vm_destroy(struct vmm_vm *vm);

const char *vmm_vm_run_dir(const struct vmm_vm *vm);
/* The path of one of the guest's sockets; see vmm_run_dir_socket(). */
int vmm_vm_socket(const struct vmm_vm *vm, enum vmm_socket which, char *buf, size_t len);
const struct vmm_proc *vmm_vm_proc(const struct vmm_vm *vm);
/* The spec the guest was started with (strings owned by vm). */
const struct vmm_spec *vmm_vm_spec(const struct vmm_vm *vm);
size_t vmm_vm_phases(const struct vmm_vm *vm, const struct vmm_phase **phases);
/* The last console lines (up to 4 KiB), for error reports. */
const char *vmm_vm_console_tail(const struct vmm_vm *vm);

#endif
