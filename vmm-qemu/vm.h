/* vmm-qemu/vm.h: one guest, from run dir to reaped process.
 *
 * A vmm_vm owns everything a running guest holds on the host: its 0700 run
 * dir (sockets, qcow2 overlay, serial log), the QEMU process (or the shim
 * that holds it: shim.h) and the QMP connection. vmm_vm_destroy() is the one
 * place that releases them; vmm_vm_detach() lets go of a shim-held guest
 * and leaves it running, for another process to vmm_vm_adopt(). The
 * blocking helpers (wait for a phase, QMP call) suit the CLI and tests; an
 * event loop uses the fds and vmm_vm_service() instead. */
#ifndef VITRINE_VMM_VM_H
#define VITRINE_VMM_VM_H

#include "vmm-qemu/console.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/qmp_client.h"
#include "vmm-qemu/run_dir.h"
#include "vmm-qemu/spec.h"
#include "vmm-qemu/sweep.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define VMM_MAX_PHASES 12

struct vmm_phase {
	char name[24];
	double uptime_s; /* guest uptime the guest reported, -1 if none */
	int64_t wall_ms; /* host time since spawn when the host read the line */
};

/* Called for each VITRINE line the guest prints (on the caller's thread). */
typedef void (*vmm_marker_fn)(void *ud, const struct vmm_marker *m);

/* The steps of starting a guest (and of making a template), told as each
 * begins, so that someone waiting can be shown where the time goes. */
enum vmm_step {
	VMM_STEP_RUN_DIR, /* the run dir and the disk overlay (qemu-img create) */
	VMM_STEP_SPAWN, /* the supervisor (when shim-held) and QEMU */
	VMM_STEP_MONITOR, /* QMP's greeting, the console */
	VMM_STEP_LOAD, /* a restore: QEMU reads the saved state */
	VMM_STEP_BOOT, /* template_create.h: until the guest says it is ready */
	VMM_STEP_SETTLE, /* template_create.h: the first paint */
	VMM_STEP_SAVE, /* template_create.h: the template is saved */
};
/* Called on the thread that starts the guest, inside the call; must not
 * block. */
typedef void (*vmm_step_fn)(void *ud, enum vmm_step step);

/* A guest held by a shim (shim.h) instead of being this process's child:
 * it survives this process, waits grace_s for another to attach, then is
 * abandoned. */
struct vmm_shim_opts {
	const char *bin; /* the executable whose `shim` command runs vmm_shim_main:
			  * an absolute path (/proc/self/exe resolved) */
	int grace_s; /* 0..86400 */
	bool abandon_pause; /* abandoned: paused to a held checkpoint (else killed) */
	const char *record; /* the session's record on disk that the shim patches; NULL */
	/* serial.log and qemu.log are rotated past this many bytes (to NAME.1,
	 * replacing it); 0: VMM_SHIM_LOG_CAP_DEFAULT. */
	long long log_cap;
};

struct vmm_vm_opts {
	const char *qemu_bin; /* NULL: qemu-system-x86_64 */
	const char *run_base; /* NULL: $VITRINE_RUN, else $VITRINE_HOME/run */
	const char *page_file; /* host file exposed to the guest as its page */
	vmm_marker_fn on_marker;
	void *ud;
	const int *keep_fds; /* descriptors QEMU inherits (e.g. a migration stream) */
	size_t n_keep_fds;
	/* NULL: QEMU is this process's child and dies with its spawning
	 * thread (PR_SET_PDEATHSIG). Else held by a shim; read at start only. */
	const struct vmm_shim_opts *shim;
	/* Written to RUN_DIR/label before QEMU starts (vm_find.h): who the
	 * guest is for, so that its owner finds it again after a crash. NULL:
	 * none. At most 63 bytes. */
	const char *label;
	/* Told each step of the start (NULL: nobody); only during the call
	 * that starts the guest (vmm_vm_start and the restores built on it). */
	vmm_step_fn on_step;
	void *step_ud;
};

/* Tells o's on_step (if any) that step begins. This function can't fail. */
void vmm_vm_opts_step(const struct vmm_vm_opts *o, enum vmm_step step);

/* Which process a guest is, for another process to find it again: the one
 * to watch (the shim when shim-held, else QEMU) and its start time, which
 * together cannot name another process, and the run dir. */
struct vmm_identity {
	pid_t pid;
	unsigned long long start_time; /* vmm_proc_start_time() */
	char run_dir[PATH_MAX];
};

struct vmm_vm;

/* Directory holding the run dirs of all guests. */
const char *vmm_run_base(const char *override);

/* Creates the run dir, the disk overlay, spawns QEMU (through its shim
 * when opts->shim: attaches to it first) and connects QMP, and writes
 * RUN_DIR/vm.json. spec must have a resolved accelerator
 * (vmm_accel_resolve). Returns 0 with *out owning the guest, or -errno with
 * a sentence in err (nothing is left behind). */
int vmm_vm_start(const struct vmm_spec *spec, const struct vmm_vm_opts *opts, struct vmm_vm **out,
		 char *err, size_t errlen);

/* Takes over a shim-held guest that another process (a dead gateway, or
 * this one before vmm_vm_detach) started, by its identity. Checks, in this
 * order: the run dir exists (-ENOENT); its vm.json is there, parses and
 * names an image that loads (-EBADMSG); the process exists (-ESRCH; a zombie
 * counts as gone); the pid and its start time are expect's and vm.json's
 * (-ESTALE: the pid names another process, which is never signalled;
 * -EINVAL: vm.json names no shim); the shim answers on shim.sock with a
 * hello naming that pid (-EAGAIN: the shim lives but takes no attachment,
 * it is pausing or stopping the guest: wait for the pid to exit and look
 * again). Then QMP is connected and serial.log read from its end on. The
 * guest counts as ready (phase "ready" is recorded: vmm_vm_wait_phase
 * returns at once); it may be paused if its old owner died in the middle
 * of something: vmm_vm_status() says. opts as for vmm_vm_start (on_marker,
 * ud, qemu_bin; shim, page_file and keep_fds are ignored). Returns 0 with
 * *out owning the guest, or -errno with a sentence in err (nothing about
 * the guest was changed): -ESRCH when the guest is gone, also when it
 * exits while being adopted. */
int vmm_vm_adopt(const struct vmm_identity *expect, const struct vmm_vm_opts *opts,
		 struct vmm_vm **out, char *err, size_t errlen);

/* For the shim (shim.c) only: a vmm_vm for the QEMU it spawned, from its
 * run dir's vm.json; *qemu moves into the vm (zeroed here). Connects QMP
 * (nobody else may hold it). Returns 0 or -errno with err; *qemu is the
 * vm's even on failure (released with it). */
int vmm_vm_open_child(const char *run_dir, struct vmm_proc *qemu, struct vmm_vm **out, char *err,
		      size_t errlen);
/* For the shim only, the reverse: QEMU runs on, its process moves back
 * into *qemu, and vm (its QMP connection closed) is freed. */
void vmm_vm_close_child(struct vmm_vm *vm, struct vmm_proc *qemu);

/* The guest's identity, for vmm_vm_adopt() by another process. This
 * function can't fail. */
void vmm_vm_identity(const struct vmm_vm *vm, struct vmm_identity *out);

/* QMP query-status: QEMU's run state ("running", "paused", "postmigrate",
 * ...) into status. Returns 0 or -errno with a reason in err. */
int vmm_vm_status(struct vmm_vm *vm, char *status, size_t len, char *err, size_t errlen);

/* Services QMP and reads new console lines, waiting up to timeout_ms for
 * something to happen. Returns 0, or -ECHILD once QEMU has exited (err says
 * how, with the guest's last console lines) or another -errno. */
int vmm_vm_service(struct vmm_vm *vm, int timeout_ms, char *err, size_t errlen);

/* For an event loop that watches the guest itself (instead of calling
 * vmm_vm_service with a timeout): the QMP socket and what to poll it for
 * (POLLIN, plus POLLOUT while commands wait to be written). The guest's
 * process's pidfd is vmm_vm_proc(vm)->pidfd, readable once it exits. When
 * either is ready, vmm_vm_service(vm, 0, ...). The fds stay vm's: a loop
 * that needs one of its own dups it. These functions can't fail. */
int vmm_vm_monitor_fd(const struct vmm_vm *vm);
short vmm_vm_monitor_events(struct vmm_vm *vm);

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
 * removes the run dir (and a shim's log). A shim-held guest: QMP quit (the
 * shim exits with QEMU), else SIGTERM to the shim, SIGKILL of the shim
 * after 3 s (QEMU dies with it). Accepts NULL. */
void vmm_vm_destroy(struct vmm_vm *vm);

/* Lets go of a shim-held guest: closes QMP, the attachment, the console
 * and the pidfd and frees vm; the guest and its run dir stay, and the
 * shim's grace period starts when it has no other attachment. A shim
 * this process spawned stays its child: should it exit while this process
 * lives and does not adopt it again, it remains a zombie until this
 * process exits. A guest without a shim cannot outlive this process: it is
 * destroyed (vmm_vm_destroy). Accepts NULL. */
void vmm_vm_detach(struct vmm_vm *vm);

const char *vmm_vm_run_dir(const struct vmm_vm *vm);
/* The path of one of the guest's sockets; see vmm_run_dir_socket(). */
int vmm_vm_socket(const struct vmm_vm *vm, enum vmm_socket which, char *buf, size_t len);
/* The process this guest is watched by: QEMU, or its shim. */
const struct vmm_proc *vmm_vm_proc(const struct vmm_vm *vm);
/* QEMU's pid (the shim's child when shim-held). */
pid_t vmm_vm_qemu_pid(const struct vmm_vm *vm);
bool vmm_vm_shim_held(const struct vmm_vm *vm);
/* The spec the guest was started with (strings owned by vm). */
const struct vmm_spec *vmm_vm_spec(const struct vmm_vm *vm);
size_t vmm_vm_phases(const struct vmm_vm *vm, const struct vmm_phase **phases);
/* The last console lines (up to 4 KiB), for error reports. */
const char *vmm_vm_console_tail(const struct vmm_vm *vm);

#endif
