/* vmm-qemu/vm.c: see vm.h. */
#include "vmm-qemu/vm.h"

#include "common/fsutil.h"
#include "common/strv.h"
#include "vmm-qemu/argv.h"
#include "vmm-qemu/priv.h"
#include "vmm-qemu/run_dir.h"
#include "vmm-qemu/run_owner.h"
#include "vmm-qemu/vm_find.h"
#include "vmm-qemu/vm_int.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct vmm_vm *vm_alloc(void)
{
	struct vmm_vm *vm = calloc(1, sizeof(*vm));

	if (!vm)
		return NULL;
	vm->console_fd = -1;
	vm->attach_fd = -1;
	vm->proc.pidfd = -1;
	vm->jail.lease_fd = -1;
	return vm;
}

const char *vmm_run_base(const char *override)
{
	static char buf[PATH_MAX];
	const char *run = getenv("VITRINE_RUN"), *home = getenv("VITRINE_HOME");

	if (override)
		return override;
	if (run && *run)
		return run;
	snprintf(buf, sizeof(buf), "%s/run", home && *home ? home : "/var/lib/vitrine");
	return buf;
}

/* The test hook VITRINE_TEST_SLOW_START_MS=N (docs/vmm.md): sleeps N ms
 * (at most a minute), so that tests and benchmarks can show that nothing
 * waits on a guest's start. Unset or 0: returns at once. */
static void slow_start_hook(void)
{
	const char *v = getenv("VITRINE_TEST_SLOW_START_MS");
	long ms = v ? strtol(v, NULL, 10) : 0;

	if (ms <= 0)
		return;
	if (ms > 60000)
		ms = 60000;
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L }, NULL);
}

static int copy_file(const char *from, const char *to, char *err, size_t errlen)
{
	char *data = NULL;
	size_t len;
	/* from may lie in the guest's run dir (a screendump): never through
	 * a link planted there. */
	int rc = fs_read_file_nofollow(from, 64u << 20, &data, &len);

	if (rc == 0)
		rc = fs_write_file(to, data, len);
	free(data);
	if (rc < 0)
		snprintf(err, errlen, "copy %s to %s: %s", from, to, strerror(-rc));
	return rc;
}

static void on_qmp_event(void *ud, const char *name, const json_t *data)
{
	struct vmm_vm *vm = ud;

	(void)data;
	snprintf(vm->last_event, sizeof(vm->last_event), "%s", name);
}

static void handle_console_line(struct vmm_vm *vm, const char *line, size_t len)
{
	struct vmm_marker m;
	const char *v;

	if (vmm_console_parse_line(line, len, &m) != 1)
		return;
	if ((v = vmm_marker_get(&m, "phase")) && vm->n_phases < VMM_MAX_PHASES) {
		struct vmm_phase *p = &vm->phases[vm->n_phases++];
		const char *up = vmm_marker_get(&m, "uptime");

		snprintf(p->name, sizeof(p->name), "%s", v);
		p->uptime_s = up ? strtod(up, NULL) : -1;
		p->wall_ms = fs_now_ms() - vm->spawn_ms;
	}
	if ((v = vmm_marker_get(&m, "error")) && !vm->guest_error[0])
		snprintf(vm->guest_error, sizeof(vm->guest_error), "%s", v);
	if (vm->opts.on_marker)
		vm->opts.on_marker(vm->opts.ud, &m);
}

static void append_tail(struct vmm_vm *vm, const char *buf, size_t n)
{
	if (n >= CONSOLE_TAIL) {
		memcpy(vm->tail, buf + n - CONSOLE_TAIL, CONSOLE_TAIL);
		vm->tail_len = CONSOLE_TAIL;
	} else {
		size_t keep = vm->tail_len + n > CONSOLE_TAIL ? CONSOLE_TAIL - n : vm->tail_len;

		memmove(vm->tail, vm->tail + vm->tail_len - keep, keep);
		memcpy(vm->tail + keep, buf, n);
		vm->tail_len = keep + n;
	}
	vm->tail[vm->tail_len] = '\0';
}

/* The shim rotated serial.log (truncated it under us): read on from its
 * new start, and drop the partial line. */
static void console_rotated(struct vmm_vm *vm)
{
	off_t at = lseek(vm->console_fd, 0, SEEK_CUR);
	struct stat st;

	if (at > 0 && fstat(vm->console_fd, &st) == 0 && st.st_size < at) {
		lseek(vm->console_fd, 0, SEEK_SET);
		vm->line_len = 0;
	}
}

static void read_console(struct vmm_vm *vm)
{
	char buf[8192];
	ssize_t r;

	if (vm->console_fd < 0)
		return;
	console_rotated(vm);
	while ((r = read(vm->console_fd, buf, sizeof(buf))) > 0) {
		append_tail(vm, buf, (size_t)r);
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] == '\n') {
				handle_console_line(vm, vm->line, vm->line_len);
				vm->line_len = 0;
			} else if (vm->line_len < sizeof(vm->line)) {
				vm->line[vm->line_len++] = buf[i];
			}
		}
	}
}

/* How QEMU ended: from the shim's qemu.exit when it has one (an adopted
 * shim's own status is its parent's to know), else from its status. */
static void describe_proc(struct vmm_vm *vm, char *how, size_t len)
{
	char path[PATH_MAX + 16], *text = NULL;

	snprintf(path, sizeof(path), "%s/qemu.exit", vm->run_dir);
	if (vm->shim_held && fs_read_file_nofollow(path, 256, &text, NULL) == 0 && *text) {
		text[strcspn(text, "\n")] = '\0';
		snprintf(how, len, "%s", text);
	} else {
		vmm_proc_describe(&vm->proc, how, len);
	}
	free(text);
}

static int describe_exit(struct vmm_vm *vm, char *err, size_t errlen)
{
	char how[128];

	read_console(vm);
	describe_proc(vm, how, sizeof(how));
	snprintf(err, errlen, "QEMU %s%s%s%s; last console lines:\n%s", how,
		 vm->last_event[0] ? " after event " : "", vm->last_event,
		 vm->guest_error[0] ? " (guest error: see below)" : "",
		 vm->tail_len > 600 ? vm->tail + vm->tail_len - 600 : vm->tail);
	return -ECHILD;
}

/* Reports why QEMU exited before it was up, from its own log (and the
 * shim's, which says why when QEMU never ran). */
static int startup_failure(struct vmm_vm *vm, char *err, size_t errlen)
{
	char log[PATH_MAX + 16], how[128], *text = NULL, *shim = NULL;

	snprintf(log, sizeof(log), "%s/qemu.log", vm->run_dir);
	fs_read_file_nofollow(log, 2048, &text, NULL); /* QEMU's own: no link followed */
	if (vm->shim_log[0])
		fs_read_file(vm->shim_log, 2048, &shim, NULL);
	describe_proc(vm, how, sizeof(how));
	snprintf(err, errlen, "QEMU %s at start-up: %s%s%s", how,
		 text && *text ? text : "(no output)", shim && *shim ? "; the shim's log: " : "",
		 shim ? shim : "");
	free(text);
	free(shim);
	return -ECHILD;
}

int vm_connect_qmp(struct vmm_vm *vm, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int64_t deadline = fs_now_ms() + 20000;
	int rc;

	rc = vmm_vm_socket(vm, VMM_SOCKET_QMP, path, sizeof(path));
	if (rc < 0) {
		snprintf(err, errlen, "run dir %s too long for unix sockets", vm->run_dir);
		return rc;
	}
	for (;;) {
		rc = qmp_client_connect(path, 200, on_qmp_event, vm, &vm->qmp, err, errlen);
		if (rc == 0)
			rc = qmp_client_call(vm->qmp, "query-status", NULL, -1, NULL, 10000, err,
					     errlen);
		if (rc == 0)
			return 0;
		if (vmm_proc_wait(&vm->proc, rc == -EPIPE ? 2000 : 0))
			return startup_failure(vm, err, errlen);
		if (vm->qmp || fs_now_ms() > deadline)
			return rc;
	}
}

/* The group that may write a template's RAM file while the template's
 * guest runs: vitrine-qemu's, when it exists; -1 otherwise (the file is
 * then given to the guest's uid). */
static gid_t template_group(void)
{
	struct group *g = getgrnam("vitrine-qemu");

	return g ? g->gr_gid : (gid_t)-1;
}

/* A file of run_dir made for uid (empty, 0640), which QEMU opens to
 * write as that uid in a folder it cannot change (run_dir.h). */
static int own_file(const char *run_dir, const char *name, uid_t uid, gid_t gid)
{
	char path[PATH_MAX + 16];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", run_dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0 || fchown(fd, uid, gid) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The guest's jail (jail.h), and its QEMU folder (run_dir.h), logs, disk
 * and template RAM made its uid's: QEMU creates its sockets and
 * screendumps in RUN_DIR/q, which no other guest's uid may enter (0700),
 * in a run dir that stays root's (0711). */
static int jail_run_dir(struct vmm_vm *vm, char *err, size_t errlen)
{
	/* Only a template's own guest opens its RAM file (read-write: it is
	 * the guest's RAM); clones map a sealed memfd of it (tpl_ram.h). */
	bool ram_file = vm->spec.ram_path && vm->spec.ram_share;
	gid_t tpl = ram_file ? template_group() : (gid_t)-1;
	char path[PATH_MAX + 16];
	uid_t uid;
	gid_t gid;
	int rc;

	rc = vmm_guest_jail_make(&vm->spec, vm->run_dir, tpl, &vm->jail, err, errlen);
	if (rc < 0 || !vm->jail.drop)
		return rc;
	uid = vm->jail.cred.uid;
	gid = vm->jail.cred.gid;
	snprintf(path, sizeof(path), "%s/" VMM_RUN_DIR_QEMU, vm->run_dir);
	if (chown(path, uid, gid) < 0 || chmod(path, 0700) < 0 || chmod(vm->run_dir, 0711) < 0) {
		rc = -errno;
		snprintf(err, errlen, "chown %s: %s", path, strerror(errno));
		return rc;
	}
	if ((rc = own_file(vm->run_dir, "serial.log", uid, gid)) < 0 ||
	    (rc = own_file(vm->run_dir, "qemu.log", uid, gid)) < 0) {
		snprintf(err, errlen, "make the logs of %s: %s", vm->run_dir, strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/disk.qcow2", vm->run_dir);
	if (vm->image.rootfs[0] && lchown(path, uid, gid) < 0) {
		rc = -errno;
		snprintf(err, errlen, "chown %s: %s", path, strerror(errno));
		return rc;
	}
	if (!ram_file)
		return 0;
	/* Writable by the template group, or by this guest alone, until the
	 * template is saved (snapshot.c makes it root's, read-only). */
	if (tpl != (gid_t)-1
		    ? chown(vm->spec.ram_path, 0, tpl) < 0 || chmod(vm->spec.ram_path, 0660) < 0
		    : chown(vm->spec.ram_path, uid, gid) < 0) {
		rc = -errno;
		snprintf(err, errlen, "chown %s: %s", vm->spec.ram_path, strerror(errno));
		return rc;
	}
	return 0;
}

static int prepare_run_dir(struct vmm_vm *vm, char *err, size_t errlen)
{
	const char *base = vmm_run_base(vm->opts.run_base);
	char path[PATH_MAX + 32];
	int rc;

	rc = fs_mkdir_p(base, 0755);
	if (rc < 0) {
		snprintf(err, errlen, "create %s: %s", base, strerror(-rc));
		return rc;
	}
	vmm_priv_sweep(base);
	if ((size_t)snprintf(vm->run_dir, sizeof(vm->run_dir), "%s/vm-XXXXXX", base) >= 80) {
		/* sockaddr_un holds 108 bytes: leave room for "/qmp.sock". */
		snprintf(err, errlen, "run dir base %s is too long for unix sockets", base);
		vm->run_dir[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(vm->run_dir)) {
		rc = -errno;
		snprintf(err, errlen, "mkdtemp %s: %s", vm->run_dir, strerror(errno));
		vm->run_dir[0] = '\0';
		return rc;
	}
	snprintf(path, sizeof(path), "%s/" VMM_RUN_DIR_QEMU, vm->run_dir);
	if (mkdir(path, 0700) < 0) {
		rc = -errno;
		snprintf(err, errlen, "mkdir %s: %s", path, strerror(errno));
		return rc;
	}
	/* Its owner, beside it where its guest's uid cannot write (run_owner.h). */
	if ((rc = vmm_run_owner_write(vm->run_dir, getpid(), vmm_run_owner_gateway())) < 0) {
		snprintf(err, errlen, "write the owner of %s: %s", vm->run_dir, strerror(-rc));
		return rc;
	}
	if (vm->opts.label && (rc = vmm_run_dir_set_label(vm->run_dir, vm->opts.label)) < 0) {
		snprintf(err, errlen, "write the label in %s: %s", vm->run_dir, strerror(-rc));
		return rc;
	}
	if (vm->opts.page_file) {
		snprintf(path, sizeof(path), "%s/page.html", vm->run_dir);
		rc = copy_file(vm->opts.page_file, path, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (vm->image.rootfs[0] && vm->spec.adopt_disk) {
		snprintf(path, sizeof(path), "%s/disk.qcow2", vm->run_dir);
		/* A second name for the same file (a copy across file systems):
		 * the checkpoint keeps its disk until its owner removes it. */
		rc = link(vm->spec.adopt_disk, path) == 0 ? 0 : -errno;
		if (rc == -EXDEV)
			rc = fs_copy_file(vm->spec.adopt_disk, path, 0600);
		if (rc < 0) {
			snprintf(err, errlen, "link %s into %s: %s", vm->spec.adopt_disk,
				 vm->run_dir, strerror(-rc));
			return rc;
		}
	} else if (vm->image.rootfs[0]) {
		char disk[PATH_MAX + 16], log[PATH_MAX + 16];
		const char *backing = vm->spec.backing_disk;
		char *argv[] = { "qemu-img",
				 "create",
				 "-q",
				 "-f",
				 "qcow2",
				 "-F",
				 backing ? "qcow2" : "raw",
				 "-b",
				 backing ? (char *)backing : vm->image.rootfs,
				 disk,
				 NULL };

		snprintf(disk, sizeof(disk), "%s/disk.qcow2", vm->run_dir);
		snprintf(log, sizeof(log), "%s/qemu-img.log", vm->run_dir);
		slow_start_hook();
		rc = vmm_proc_run(argv, log, 30000, err, errlen);
		if (rc != 0) {
			if (rc > 0)
				snprintf(err, errlen, "qemu-img create failed (status %d), see %s",
					 rc, log);
			return rc > 0 ? -EIO : rc;
		}
	}
	return jail_run_dir(vm, err, errlen);
}

void vmm_vm_opts_step(const struct vmm_vm_opts *o, enum vmm_step step)
{
	if (o && o->on_step)
		o->on_step(o->step_ud, step);
}

int vmm_vm_start(const struct vmm_spec *spec, const struct vmm_vm_opts *opts, struct vmm_vm **out,
		 char *err, size_t errlen)
{
	struct strv argv = { 0 };
	struct vmm_vm *vm;
	char path[PATH_MAX + 16];
	int rc;

	rc = vmm_spec_check(spec, err, errlen);
	if (rc < 0)
		return rc;
	vm = vm_alloc();
	if (!vm) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	vm->opts = *opts;
	vm->opts.shim = NULL; /* the caller's: not kept */
	vm->opts.on_step = NULL; /* told during this call only */
	vm->opts.step_ud = NULL;
	vmm_vm_opts_step(opts, VMM_STEP_RUN_DIR);
	vm->image = *spec->image;
	vm->spec = *spec;
	vm->spec.image = &vm->image;
	vm->spec.has_page = opts->page_file != NULL;
	if (spec->url && !(vm->url = strdup(spec->url))) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	vm->spec.url = vm->url;
	if ((spec->ram_path && !(vm->ram_path = strdup(spec->ram_path))) ||
	    (spec->backing_disk && !(vm->backing_disk = strdup(spec->backing_disk)))) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	vm->spec.ram_path = vm->ram_path;
	vm->spec.backing_disk = vm->backing_disk;
	rc = prepare_run_dir(vm, err, errlen);
	vm->spec.adopt_disk = NULL; /* moved: it names nothing any more */
	if (rc < 0)
		goto fail;
	rc = vmm_argv_build(&vm->spec, opts->qemu_bin ? opts->qemu_bin : "qemu-system-x86_64",
			    vm->run_dir, &argv, err, errlen);
	if (rc < 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/qemu.log", vm->run_dir);
	vmm_vm_opts_step(opts, VMM_STEP_SPAWN);
	vm->spawn_ms = fs_now_ms();
	if (opts->shim) {
		rc = vm_shim_spawn(vm, opts->shim, argv.v, err, errlen);
		if (rc == -ECHILD)
			rc = startup_failure(vm, err, errlen);
	} else {
		struct vmm_jail jail;

		vmm_guest_jail_view(&vm->jail, &jail);
		rc = vmm_proc_spawn(argv.v, path, opts->keep_fds, opts->n_keep_fds, &jail,
				    &vm->proc, err, errlen);
	}
	strv_free(&argv);
	if (rc < 0)
		goto fail;
	if (!vm->shim_held)
		vm->qemu_pid = vm->proc.pid;
	/* Both are alive: the shim waited for QEMU's start before its hello. */
	if (vmm_proc_start_time(vm->proc.pid, &vm->proc_start) < 0 ||
	    vmm_proc_start_time(vm->qemu_pid, &vm->qemu_start) < 0) {
		rc = vmm_proc_wait(&vm->proc, 2000) ? startup_failure(vm, err, errlen) : -ESRCH;
		if (rc == -ESRCH)
			snprintf(err, errlen, "QEMU (pid %d) vanished at start-up",
				 (int)vm->qemu_pid);
		goto fail;
	}
	rc = vm_state_write(vm, err, errlen);
	if (rc < 0)
		goto fail;
	vmm_vm_opts_step(opts, VMM_STEP_MONITOR);
	slow_start_hook();
	rc = vm_connect_qmp(vm, err, errlen);
	if (rc == 0)
		rc = vm_open_console(vm, false, err, errlen);
	if (rc < 0)
		goto fail;
	*out = vm;
	return 0;
fail:
	vmm_vm_destroy(vm);
	return rc;
}

int vm_open_console(struct vmm_vm *vm, bool at_end, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	int rc;

	snprintf(path, sizeof(path), "%s/serial.log", vm->run_dir);
	/* Not through a link, nor blocked on a FIFO, the guest's uid put there. */
	vm->console_fd = fs_open_regular(path, O_RDONLY, 0);
	if (vm->console_fd < 0) {
		rc = vm->console_fd;
		vm->console_fd = -1;
		snprintf(err, errlen, "open %s: %s", path, strerror(-rc));
		return rc;
	}
	if (at_end && lseek(vm->console_fd, 0, SEEK_END) < 0) {
		rc = -errno;
		snprintf(err, errlen, "seek %s: %s", path, strerror(errno));
		return rc;
	}
	return 0;
}

int vmm_vm_service(struct vmm_vm *vm, int timeout_ms, char *err, size_t errlen)
{
	struct pollfd p[2] = {
		{ .fd = qmp_client_fd(vm->qmp), .events = qmp_client_poll_events(vm->qmp) },
		{ .fd = vm->proc.pidfd, .events = POLLIN },
	};
	int n, rc;

	read_console(vm);
	if (vmm_proc_wait(&vm->proc, 0))
		return describe_exit(vm, err, errlen);
	/* The console is a growing file, which poll cannot watch: look often. */
	n = poll(p, 2, timeout_ms > 50 ? 50 : timeout_ms);
	if (n < 0 && errno != EINTR) {
		rc = -errno;
		snprintf(err, errlen, "poll: %s", strerror(errno));
		return rc;
	}
	if (n > 0 && p[0].revents) {
		rc = qmp_client_service(vm->qmp, p[0].revents, err, errlen);
		if (rc == -EPIPE && vmm_proc_wait(&vm->proc, 2000))
			return describe_exit(vm, err, errlen);
		if (rc < 0)
			return rc;
	}
	read_console(vm);
	if (vmm_proc_wait(&vm->proc, 0))
		return describe_exit(vm, err, errlen);
	return 0;
}

int vmm_vm_monitor_fd(const struct vmm_vm *vm)
{
	return qmp_client_fd(vm->qmp);
}

short vmm_vm_monitor_events(struct vmm_vm *vm)
{
	return qmp_client_poll_events(vm->qmp);
}

static bool has_phase(const struct vmm_vm *vm, const char *phase)
{
	for (size_t i = 0; i < vm->n_phases; i++)
		if (!strcmp(vm->phases[i].name, phase))
			return true;
	return false;
}

int vmm_vm_wait_phase(struct vmm_vm *vm, const char *phase, int timeout_ms, char *err,
		      size_t errlen)
{
	int64_t deadline = fs_now_ms() + timeout_ms;

	for (;;) {
		int64_t left = deadline - fs_now_ms();
		int rc;

		if (has_phase(vm, phase))
			return 0;
		if (vm->guest_error[0]) {
			snprintf(err, errlen, "guest reported error=%s; last console lines:\n%s",
				 vm->guest_error,
				 vm->tail_len > 600 ? vm->tail + vm->tail_len - 600 : vm->tail);
			return -EIO;
		}
		if (left <= 0) {
			snprintf(
				err, errlen,
				"guest did not reach phase %s within %d ms; last console lines:\n%s",
				phase, timeout_ms,
				vm->tail_len > 600 ? vm->tail + vm->tail_len - 600 : vm->tail);
			return -ETIMEDOUT;
		}
		rc = vmm_vm_service(vm, (int)left, err, errlen);
		if (rc < 0)
			return rc;
	}
}

int vmm_vm_qmp(struct vmm_vm *vm, const char *cmd, json_t *args, json_t **ret, int timeout_ms,
	       char *err, size_t errlen)
{
	return vmm_vm_qmp_fd(vm, cmd, args, -1, ret, timeout_ms, err, errlen);
}

int vmm_vm_qmp_fd(struct vmm_vm *vm, const char *cmd, json_t *args, int fd, json_t **ret,
		  int timeout_ms, char *err, size_t errlen)
{
	int rc = qmp_client_call(vm->qmp, cmd, args, fd, ret, timeout_ms, err, errlen);

	if (rc == -EPIPE && vmm_proc_wait(&vm->proc, 2000))
		return describe_exit(vm, err, errlen);
	return rc;
}

int vmm_vm_qmp_send(struct vmm_vm *vm, const char *cmd, json_t *args, char *err, size_t errlen)
{
	if (qmp_command(qmp_client_qmp(vm->qmp), cmd, args, -1, NULL, NULL) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* Writes what it can now; the rest goes with the next service. */
	return qmp_client_service(vm->qmp, 0, err, errlen);
}

int vmm_vm_input(struct vmm_vm *vm, json_t *events, char *err, size_t errlen)
{
	json_t *args;

	if (!events) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (json_is_object(events)) {
		/* input.h's {"events": [...]}: the arguments as they stand. */
		if (!json_is_array(json_object_get(events, "events")) ||
		    json_object_size(events) != 1) {
			json_decref(events);
			snprintf(err, errlen,
				 "input events: an object must be {\"events\": [...]}");
			return -EINVAL;
		}
		args = events;
	} else if (json_is_array(events)) {
		args = json_pack("{s:o}", "events", events); /* steals events, also on failure */
		if (!args) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	} else {
		json_decref(events);
		snprintf(err, errlen, "input events must be a JSON array");
		return -EINVAL;
	}
	return vmm_vm_qmp_send(vm, "input-send-event", args, err, errlen);
}

int vmm_vm_screendump(struct vmm_vm *vm, const char *path, const char *format, char *err,
		      size_t errlen)
{
	char tmp[PATH_MAX + 32], dir[PATH_MAX];
	int rc;

	if (strcmp(format, "png") && strcmp(format, "ppm")) {
		snprintf(err, errlen, "screendump format must be png or ppm, not %s", format);
		return -EINVAL;
	}
	if (vmm_run_dir_qemu(vm->run_dir, dir, sizeof(dir)) < 0) {
		snprintf(err, errlen, "run dir %s too long", vm->run_dir);
		return -ENAMETOOLONG;
	}
	snprintf(tmp, sizeof(tmp), "%s/screendump-%d.%s", dir, vm->screendumps++, format);
	rc = vmm_vm_qmp(vm, "screendump",
			json_pack("{s:s, s:s}", "filename", tmp, "format", format), NULL, 10000,
			err, errlen);
	if (rc == 0)
		rc = copy_file(tmp, path, err, errlen);
	unlink(tmp);
	return rc;
}

void vm_free(struct vmm_vm *vm)
{
	qmp_client_destroy(vm->qmp);
	if (vm->attach_fd >= 0)
		close(vm->attach_fd);
	if (vm->console_fd >= 0)
		close(vm->console_fd);
	if (vm->jail.lease_fd >= 0)
		close(vm->jail.lease_fd);
	free(vm->url);
	free(vm->ram_path);
	free(vm->backing_disk);
	free(vm);
}

void vmm_vm_destroy(struct vmm_vm *vm)
{
	if (!vm)
		return;
	if (vm->proc.pid > 0 && !vmm_proc_wait(&vm->proc, 0)) {
		char err[256];
		int rc = -ENOTCONN;

		/* A polite quit lets QEMU flush and remove its sockets; a shim
		 * exits with its QEMU. */
		if (vm->qmp)
			rc = qmp_client_call(vm->qmp, "quit", NULL, -1, NULL, 1000, err,
					     sizeof(err));
		if (rc < 0 && vm->shim_held)
			vmm_proc_signal(&vm->proc, SIGTERM); /* the shim quits QEMU */
		if (!vmm_proc_wait(&vm->proc, 3000))
			vmm_proc_signal(&vm->proc, SIGKILL);
	}
	vmm_proc_release(&vm->proc);
	vmm_guest_jail_release(&vm->jail); /* QEMU is gone: its cgroup and uid */
	/* An adopted guest's cgroup is its shim's to remove; a shim that had
	 * to be killed left it, empty: it goes with the run dir, its record
	 * and the shim's log (privd.h). */
	if (vm->run_dir[0])
		vmm_priv_run_dir_remove(vm->run_dir);
	vm_free(vm);
}

void vmm_vm_detach(struct vmm_vm *vm)
{
	if (!vm)
		return;
	if (!vm->shim_held) {
		vmm_vm_destroy(vm);
		return;
	}
	vmm_proc_forget(&vm->proc);
	vm_free(vm);
}

const char *vmm_vm_run_dir(const struct vmm_vm *vm)
{
	return vm->run_dir;
}

int vmm_vm_socket(const struct vmm_vm *vm, enum vmm_socket which, char *buf, size_t len)
{
	return vmm_run_dir_socket(vm->run_dir, which, buf, len);
}

const struct vmm_proc *vmm_vm_proc(const struct vmm_vm *vm)
{
	return &vm->proc;
}

pid_t vmm_vm_qemu_pid(const struct vmm_vm *vm)
{
	return vm->qemu_pid;
}

bool vmm_vm_shim_held(const struct vmm_vm *vm)
{
	return vm->shim_held;
}

void vmm_vm_identity(const struct vmm_vm *vm, struct vmm_identity *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = vm->proc.pid;
	out->start_time = vm->proc_start;
	snprintf(out->run_dir, sizeof(out->run_dir), "%s", vm->run_dir);
}

int vmm_vm_status(struct vmm_vm *vm, char *status, size_t len, char *err, size_t errlen)
{
	const char *st = NULL;
	json_t *ret = NULL;
	int rc = vmm_vm_qmp(vm, "query-status", NULL, &ret, 10000, err, errlen);

	if (rc < 0)
		return rc;
	if (json_unpack(ret, "{s:s}", "status", &st) < 0) {
		snprintf(err, errlen, "query-status: no status in the reply");
		rc = -EPROTO;
	} else {
		snprintf(status, len, "%s", st);
	}
	json_decref(ret);
	return rc;
}

const struct vmm_spec *vmm_vm_spec(const struct vmm_vm *vm)
{
	return &vm->spec;
}

size_t vmm_vm_phases(const struct vmm_vm *vm, const struct vmm_phase **phases)
{
	*phases = vm->phases;
	return vm->n_phases;
}

const char *vmm_vm_console_tail(const struct vmm_vm *vm)
{
	return vm->tail;
}
