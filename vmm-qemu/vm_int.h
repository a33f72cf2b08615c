/* vmm-qemu/vm_int.h: struct vmm_vm and the steps its files share: vm.c
 * (start, service, destroy), vm_state.c (vm.json), vm_shim.c (starting and
 * attaching to a shim) and vm_adopt.c (adopt, detach); vm_find.c reads
 * vm.json through vm_json_load. Private to those. */
#ifndef VITRINE_VMM_VM_INT_H
#define VITRINE_VMM_VM_INT_H

#include "vmm-qemu/jail.h"
#include "vmm-qemu/vm.h"

#include <limits.h>

#define CONSOLE_TAIL 4096

struct vmm_vm {
	char run_dir[PATH_MAX];
	struct vmm_image image; /* spec.image points here */
	struct vmm_spec spec;
	char *url; /* owned copy; spec.url points here */
	char *ram_path; /* owned copy; spec.ram_path points here */
	char *backing_disk; /* owned copy; spec.backing_disk points here */
	struct vmm_vm_opts opts; /* opts.shim is not kept: NULL */
	struct vmm_proc proc; /* owned: QEMU, or its shim when shim_held */
	unsigned long long proc_start; /* proc's start time (vmm_proc_start_time) */
	bool shim_held;
	int attach_fd; /* owned: our attachment on shim.sock; -1 without one */
	pid_t qemu_pid; /* proc.pid without a shim */
	unsigned long long qemu_start;
	char shim_log[PATH_MAX]; /* <run base>/shim-vm-XXXXXX.log; "" without a shim */
	struct qmp_client *qmp; /* owned */
	int console_fd; /* owned: serial.log, read as it grows */
	char line[1024]; /* console line being assembled */
	size_t line_len;
	char tail[CONSOLE_TAIL + 1]; /* last console bytes, NUL-terminated */
	size_t tail_len;
	int64_t spawn_ms;
	struct vmm_phase phases[VMM_MAX_PHASES];
	size_t n_phases;
	char guest_error[256]; /* first VITRINE error= line */
	char last_event[64]; /* last QMP event, for exit reports */
	int screendumps;
	/* owned: QEMU's uid (leased: the shim holds the lease of a shim-held
	 * guest once it runs), rlimits, network namespace, cgroup */
	struct vmm_guest_jail jail;
};

/* A zeroed vm with its fds closed, or NULL when out of memory. */
struct vmm_vm *vm_alloc(void);

/* Closes what vm holds of the guest but its process (QMP, attachment,
 * console) and frees vm; vm->proc is left alone (not released). */
void vm_free(struct vmm_vm *vm);

/* Connects QMP, giving up early when vm->proc dies before the socket
 * appears (QEMU's log is the report). Returns 0 or -errno with err. */
int vm_connect_qmp(struct vmm_vm *vm, char *err, size_t errlen);

/* Opens serial.log for reading, at its end when at_end (an adopted guest:
 * what it printed before is history). Returns 0 or -errno with err. */
int vm_open_console(struct vmm_vm *vm, bool at_end, char *err, size_t errlen);

/* A JSON file in a run dir (vm.json), read without following a link the
 * guest's uid may have planted there (fs_read_file_nofollow): NULL with
 * jerr filled when it is missing (jerr->text "missing"), not a regular
 * file, too big or does not parse. */
json_t *vm_json_load(const char *path, size_t flags, json_error_t *jerr);

/* vm_state.c: RUN_DIR/vm.json, what a process that did not start the
 * guest needs to take it over: {"version": 1, "spec": spec_json.h's
 * object, "qemu": {"pid", "start_time"}, "shim": the same or absent}.
 * Written atomically. Returns 0 or -errno with err. */
int vm_state_write(const struct vmm_vm *vm, char *err, size_t errlen);

struct vm_state_ident {
	pid_t shim_pid; /* 0 without a shim */
	unsigned long long shim_start;
	pid_t qemu_pid;
	unsigned long long qemu_start;
};

/* Reads run_dir's vm.json into vm (run_dir, spec with its image loaded,
 * owned strings) and the identities it records into id. Returns 0, -ENOENT
 * when there is none, -EBADMSG when it does not parse, or the error of
 * loading its image; err says which. */
int vm_state_read(struct vmm_vm *vm, const char *run_dir, struct vm_state_ident *id, char *err,
		  size_t errlen);

/* vm_shim.c: spawns `shim->bin shim ... -- qemu_argv` for vm (run dir
 * made, credentials and inherited fds in vm), attaches to it and fills
 * vm->proc (the shim), attach_fd, qemu_pid, shim_log, shim_held. Returns 0
 * or -errno with err (-ECHILD when the shim exited: QEMU's and the shim's
 * logs are the report). */
int vm_shim_spawn(struct vmm_vm *vm, const struct vmm_shim_opts *shim, char *const qemu_argv[],
		  char *err, size_t errlen);

/* <run base>/shim-vm-XXXXXX.log for run_dir <run base>/vm-XXXXXX into
 * out. Returns 0, -EINVAL (no '/') or -ENAMETOOLONG. */
int vm_shim_log_path(const char *run_dir, char *out, size_t len);

/* Connects to run_dir's shim.sock and reads the hello of the shim that
 * shim watches, for up to timeout_ms. Returns the attachment's fd (with
 * *qemu set), -EAGAIN when the shim lives but does not take attachments
 * (its socket is gone or refuses: it is stopping or pausing the guest),
 * -ECHILD when the shim exited, -EPROTO for a hello that names another
 * process, or another -errno; err says which. */
int vm_shim_attach(const char *run_dir, struct vmm_proc *shim, int timeout_ms, pid_t *qemu,
		   char *err, size_t errlen);

#endif
