/* tests/integration/test_shim.c: guests held by a shim (vmm-qemu/shim.h)
 * with real QEMU and the tiny guest: a guest outlives the process that
 * started it and is adopted by identity; detach and adopt again; the grace
 * period running out pauses the guest to a held checkpoint (which restores)
 * or kills it, patching the session's record only when it names the guest;
 * adoption refuses a missing run dir, a corrupt vm.json, a gone pid, a pid
 * that is another process (never signalled) and a shim that takes no
 * attachment; SIGTERM to the shim and QEMU's own exit; the sweep keeps
 * what lives or is held. The shim is $VITRINE_BIN (default build/vitrine). */
#include "common/fsutil.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/checkpoint.h"
#include "vmm-qemu/run_owner.h"
#include "vmm-qemu/sweep.h"
#include "vmm-qemu/vm.h"
#include "vmm-qemu/vm_find.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static char run_base[64];
static char shim_bin[PATH_MAX];

/* Entries under the run base whose names start with prefix. */
static int count(const char *prefix)
{
	DIR *d = opendir(run_base);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static bool alive(pid_t pid)
{
	unsigned long long start;

	return pid > 0 && vmm_proc_start_time(pid, &start) == 0;
}

/* Waits up to ms for pid to be gone (or a zombie). */
static bool gone_within(pid_t pid, int ms)
{
	for (int i = 0; i < ms / 50 && alive(pid); i++)
		usleep(50 * 1000);
	return !alive(pid);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void shim_log_of(const char *run_dir, char *out, size_t len)
{
	const char *slash = strrchr(run_dir, '/');

	snprintf(out, len, "%.*s/shim-%s.log", (int)(slash - run_dir), run_dir, slash + 1);
}

/* A run dir's record beside it (run_owner.h). */
static void record_of(const char *run_dir, char *out, size_t len)
{
	const char *slash = strrchr(run_dir, '/');

	snprintf(out, len, "%.*s/owner-%s", (int)(slash - run_dir), run_dir, slash + 1);
}

/* Boots the tiny guest held by a shim and waits for ready. */
static void start_guest(const struct vmm_shim_opts *so, struct vmm_vm **vm)
{
	struct vmm_vm_opts opts = { .shim = so };
	struct vmm_image img;
	struct vmm_spec spec;
	char err[4096], why[256];
	int rc;

	assert_int_equal(vmm_image_load("tiny", &img, err, sizeof(err)), 0);
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.width = 800;
	spec.height = 600;
	spec.memory_mib = 256;
	vmm_accel_resolve(VMM_ACCEL_AUTO, &img, "qemu-system-x86_64", &spec.accel, why,
			  sizeof(why));
	rc = vmm_vm_start(&spec, &opts, vm, err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_wait_phase(*vm, "ready", 60000, err, sizeof(err));
	if (rc < 0)
		fail_msg("shim-held guest did not start: %s", err);
	assert_true(vmm_vm_shim_held(*vm));
}

/* A guest adopted by identity that answers QMP and shows its screen. */
static struct vmm_vm *adopt_ok(const struct vmm_identity *id)
{
	struct vmm_vm_opts opts = { 0 };
	struct vmm_vm *vm = NULL;
	char err[4096], status[32], shot[64];
	struct stat st;

	if (vmm_vm_adopt(id, &opts, &vm, err, sizeof(err)) < 0)
		fail_msg("adopt: %s", err);
	assert_int_equal(vmm_vm_wait_phase(vm, "ready", 0, err, sizeof(err)), 0);
	assert_int_equal(vmm_vm_status(vm, status, sizeof(status), err, sizeof(err)), 0);
	assert_string_equal(status, "running");
	snprintf(shot, sizeof(shot), "/tmp/vt-shim-shot-%d.ppm", (int)getpid());
	assert_int_equal(vmm_vm_screendump(vm, shot, "ppm", err, sizeof(err)), 0);
	assert_int_equal(stat(shot, &st), 0);
	assert_true(st.st_size > 800 * 600 * 3);
	unlink(shot);
	return vm;
}

/* Destroys vm and checks that nothing of it is left. */
static void destroy_leaves_nothing(struct vmm_vm *vm)
{
	char dir[PATH_MAX], log[PATH_MAX];
	pid_t shim = vmm_vm_proc(vm)->pid, qemu = vmm_vm_qemu_pid(vm);

	snprintf(dir, sizeof(dir), "%s", vmm_vm_run_dir(vm));
	shim_log_of(dir, log, sizeof(log));
	vmm_vm_destroy(vm);
	assert_true(gone_within(shim, 5000));
	assert_true(gone_within(qemu, 5000));
	assert_false(exists(dir));
	assert_false(exists(log));
	record_of(dir, log, sizeof(log));
	assert_false(exists(log));
}

static int setup(void **state)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";

	(void)state;
	if (!realpath(bin, shim_bin)) {
		fprintf(stderr, "no vitrine binary at %s (VITRINE_BIN)\n", bin);
		return -1;
	}
	snprintf(run_base, sizeof(run_base), "/tmp/vt-shim-%d", (int)getpid());
	setenv("VITRINE_RUN", run_base, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rm_rf(run_base);
	return 0;
}

/* The owner (a child that starts the guest) is SIGKILLed; the guest runs
 * on, and this process adopts it. */
static void test_guest_outlives_its_owner(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	struct vmm_identity id;
	struct vmm_vm *vm;
	pid_t owner, qemu;
	int fds[2], st;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	owner = fork();
	assert_true(owner >= 0);
	if (owner == 0) {
		close(fds[0]);
		start_guest(&so, &vm);
		vmm_vm_identity(vm, &id);
		if (write(fds[1], &id, sizeof(id)) != sizeof(id))
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &id, sizeof(id)), sizeof(id));
	close(fds[0]);
	kill(owner, SIGKILL);
	waitpid(owner, &st, 0);
	usleep(500 * 1000);
	assert_true(alive(id.pid));
	vm = adopt_ok(&id);
	qemu = vmm_vm_qemu_pid(vm);
	assert_true(alive(qemu));
	assert_int_equal(vmm_vm_proc(vm)->pid, id.pid);
	destroy_leaves_nothing(vm);
	assert_int_equal(count("vm-"), 0);
}

static void test_detach_then_adopt_again(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	struct vmm_identity id, again;
	struct vmm_vm *vm;

	(void)state;
	start_guest(&so, &vm);
	vmm_vm_identity(vm, &id);
	assert_int_equal(id.pid, vmm_vm_proc(vm)->pid);
	vmm_vm_detach(vm);
	assert_true(alive(id.pid));
	vm = adopt_ok(&id);
	vmm_vm_identity(vm, &again);
	assert_int_equal(again.pid, id.pid);
	assert_true(again.start_time == id.start_time);
	assert_string_equal(again.run_dir, id.run_dir);
	vmm_vm_detach(vm);
	vm = adopt_ok(&id);
	destroy_leaves_nothing(vm);
}

static void write_record(const char *path, const char *run_dir)
{
	json_t *j = json_pack("{s:s, s:s, s:{s:s, s:i}, s:s}", "id", "sess1", "state", "running",
			      "guest", "run_dir", run_dir, "pid", 1, "keep", "me");

	assert_non_null(j);
	assert_int_equal(json_dump_file(j, path, JSON_COMPACT), 0);
	json_decref(j);
}

/* Detaches a shim-held guest and waits for its shim to end the grace
 * period and exit; returns its QEMU's pid. */
static pid_t abandon(struct vmm_vm *vm, int wait_ms)
{
	pid_t shim = vmm_vm_proc(vm)->pid, qemu = vmm_vm_qemu_pid(vm);

	vmm_vm_detach(vm);
	assert_true(alive(shim));
	if (!gone_within(shim, wait_ms))
		fail_msg("shim %d still runs %d ms after it was abandoned", (int)shim, wait_ms);
	/* Our child: reap it (a gateway that detaches lets it be a zombie). */
	waitpid(shim, NULL, 0);
	assert_true(gone_within(qemu, 3000));
	return qemu;
}

static void test_abandoned_guest_is_paused(void **state)
{
	char rec_path[128], dir[PATH_MAX], holder[64], err[4096], status[32];
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 2, .abandon_pause = true };
	struct vmm_vm_opts opts = { 0 };
	const char *ckpt, *st, *action;
	json_int_t at, grace;
	json_t *rec;
	struct vmm_vm *vm;
	int64_t t0;

	(void)state;
	snprintf(rec_path, sizeof(rec_path), "%s/sess1.json", run_base);
	so.record = rec_path;
	start_guest(&so, &vm);
	snprintf(dir, sizeof(dir), "%s", vmm_vm_run_dir(vm));
	write_record(rec_path, dir);
	t0 = fs_now_ms();
	abandon(vm, 30000);
	printf("abandoned guest paused within %lld ms of the detach\n",
	       (long long)(fs_now_ms() - t0));
	assert_false(exists(dir));
	rec = json_load_file(rec_path, 0, NULL);
	assert_non_null(rec);
	assert_int_equal(json_unpack(rec, "{s:s, s:s, s:{s:I, s:s, s:I}}", "state", &st,
				     "checkpoint", &ckpt, "abandoned", "at_unix_ms", &at, "action",
				     &action, "grace_s", &grace),
			 0);
	assert_string_equal(st, "paused_disk");
	assert_string_equal(action, "pause");
	assert_int_equal(grace, 2);
	assert_true(at > (json_int_t)time(NULL) * 1000 - 120000);
	assert_null(json_object_get(rec, "guest"));
	assert_string_equal(json_string_value(json_object_get(rec, "keep")), "me");
	assert_int_equal(vmm_checkpoint_held_by(ckpt, holder, sizeof(holder)), 0);
	assert_string_equal(holder, "sess1");
	assert_int_equal(count("vm-ckpt-"), 1);
	/* Held: the sweep leaves it, though the shim that made it is gone. */
	vmm_sweep_stale(run_base);
	assert_int_equal(count("vm-ckpt-"), 1);
	/* And it restores, through a shim too: the migration stream's fd
	 * reaches QEMU at the number its command line names. */
	so.grace_s = 30;
	so.record = NULL;
	opts.shim = &so;
	if (vmm_checkpoint_restore(ckpt, &opts, &vm, err, sizeof(err)) < 0)
		fail_msg("restore: %s", err);
	assert_true(vmm_vm_shim_held(vm));
	assert_int_equal(vmm_vm_status(vm, status, sizeof(status), err, sizeof(err)), 0);
	assert_string_equal(status, "running");
	destroy_leaves_nothing(vm);
	assert_int_equal(fs_rm_rf(ckpt), 0);
	json_decref(rec);
	unlink(rec_path);
	assert_int_equal(count("vm-"), 0);
}

static void test_abandoned_guest_is_killed(void **state)
{
	char rec_path[128], dir[PATH_MAX];
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 1 };
	const char *st, *error, *action;
	json_t *rec;
	struct vmm_vm *vm;

	(void)state;
	snprintf(rec_path, sizeof(rec_path), "%s/sess1.json", run_base);
	so.record = rec_path;
	start_guest(&so, &vm);
	snprintf(dir, sizeof(dir), "%s", vmm_vm_run_dir(vm));
	write_record(rec_path, dir);
	abandon(vm, 20000);
	assert_false(exists(dir));
	rec = json_load_file(rec_path, 0, NULL);
	assert_non_null(rec);
	assert_int_equal(json_unpack(rec, "{s:s, s:s, s:{s:s}}", "state", &st, "error", &error,
				     "abandoned", "action", &action),
			 0);
	assert_string_equal(st, "failed");
	assert_string_equal(error, "abandoned: no gateway attached within 1 s; guest killed");
	assert_string_equal(action, "kill");
	assert_null(json_object_get(rec, "guest"));
	assert_null(json_object_get(rec, "checkpoint"));
	json_decref(rec);
	unlink(rec_path);
	assert_int_equal(count("vm-"), 0);
}

/* Pause needs a record that names the guest: without one the guest is
 * killed, and a record about another guest is left as it was. */
static void test_pause_without_a_record_kills(void **state)
{
	char rec_path[128], other[128], *before = NULL, *after = NULL;
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 1, .abandon_pause = true };
	struct vmm_vm *vm;

	(void)state;
	snprintf(rec_path, sizeof(rec_path), "%s/none.json", run_base);
	so.record = rec_path;
	start_guest(&so, &vm);
	abandon(vm, 20000);
	assert_false(exists(rec_path));
	assert_int_equal(count("vm-"), 0);

	snprintf(other, sizeof(other), "%s/other.json", run_base);
	write_record(other, "/tmp/vt-shim-elsewhere/vm-other");
	assert_int_equal(fs_read_file(other, 4096, &before, NULL), 0);
	so.record = other;
	start_guest(&so, &vm);
	abandon(vm, 20000);
	assert_int_equal(fs_read_file(other, 4096, &after, NULL), 0);
	assert_string_equal(before, after);
	free(before);
	free(after);
	unlink(other);
	assert_int_equal(count("vm-"), 0);
}

static pid_t sleeping_child(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* vmm_shim_terminate stops an orphan by vm.json's identity and, when its
 * owner died before vm.json was written, by the shim in owner.pid; a
 * stranger in owner.pid is never signalled. */
static void test_terminate_orphans(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	char dir[PATH_MAX], path[PATH_MAX + 16], pid_text[32], err[512];
	struct vmm_identity id;
	struct vmm_vm *vm;
	pid_t stranger;
	int st;

	(void)state;
	/* With vm.json. */
	start_guest(&so, &vm);
	vmm_vm_identity(vm, &id);
	snprintf(dir, sizeof(dir), "%s", vmm_vm_run_dir(vm));
	vmm_vm_detach(vm);
	if (vmm_shim_terminate(dir, 10000, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_true(gone_within(id.pid, 5000));
	assert_false(exists(dir));
	waitpid(id.pid, &st, WNOHANG); /* our child: the detach left it to us */

	/* Without vm.json: found by its record (run_owner.h) and its command line. */
	start_guest(&so, &vm);
	vmm_vm_identity(vm, &id);
	snprintf(dir, sizeof(dir), "%s", vmm_vm_run_dir(vm));
	vmm_vm_detach(vm);
	snprintf(path, sizeof(path), "%s/vm.json", dir);
	assert_int_equal(unlink(path), 0);
	/* A stranger's pid in the run dir's owner.pid (its guest's to
	 * write) means nothing: a stranger's in its record is refused, and
	 * it lives on. */
	snprintf(path, sizeof(path), "%s/owner.pid", dir);
	stranger = sleeping_child();
	snprintf(pid_text, sizeof(pid_text), "%d\n", (int)stranger);
	assert_int_equal(fs_write_file(path, pid_text, strlen(pid_text)), 0);
	assert_int_equal(vmm_run_owner_write(dir, stranger, NULL), 0);
	assert_int_equal(vmm_shim_terminate(dir, 2000, err, sizeof(err)), -ESRCH);
	assert_true(alive(stranger));
	kill(stranger, SIGKILL);
	waitpid(stranger, &st, 0);
	/* Then the shim's own. */
	assert_int_equal(vmm_run_owner_write(dir, id.pid, NULL), 0);
	if (vmm_shim_terminate(dir, 10000, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_true(gone_within(id.pid, 5000));
	assert_false(exists(dir));
	waitpid(id.pid, &st, WNOHANG);
}

static void test_adopt_refusals(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	struct vmm_vm_opts opts = { 0 };
	char err[4096], path[PATH_MAX + 16], moved[PATH_MAX + 16], *saved = NULL;
	struct vmm_identity id, bad;
	struct vmm_vm *vm, *other = NULL;
	size_t saved_len;
	pid_t dead, sleeper;
	int st;

	(void)state;
	start_guest(&so, &vm);
	vmm_vm_identity(vm, &id);

	bad = id;
	snprintf(bad.run_dir, sizeof(bad.run_dir), "%s/vm-nothere", run_base);
	assert_int_equal(vmm_vm_adopt(&bad, &opts, &other, err, sizeof(err)), -ENOENT);
	assert_null(other);

	snprintf(path, sizeof(path), "%s/vm.json", id.run_dir);
	assert_int_equal(fs_read_file(path, 1 << 20, &saved, &saved_len), 0);
	assert_int_equal(fs_write_file(path, "{\"version\":1,\"spec\":", 20), 0);
	assert_int_equal(vmm_vm_adopt(&id, &opts, &other, err, sizeof(err)), -EBADMSG);
	assert_int_equal(fs_write_file(path, saved, saved_len), 0);
	free(saved);

	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	waitpid(dead, &st, 0);
	bad = id;
	bad.pid = dead;
	assert_int_equal(vmm_vm_adopt(&bad, &opts, &other, err, sizeof(err)), -ESRCH);

	/* A live process that is not the shim: refused, never signalled. */
	sleeper = sleeping_child();
	bad = id;
	bad.pid = sleeper;
	assert_int_equal(vmm_proc_start_time(sleeper, &bad.start_time), 0);
	assert_int_equal(vmm_vm_adopt(&bad, &opts, &other, err, sizeof(err)), -ESTALE);
	bad.start_time++;
	assert_int_equal(vmm_vm_adopt(&bad, &opts, &other, err, sizeof(err)), -ESTALE);
	bad = id;
	bad.start_time++;
	assert_int_equal(vmm_vm_adopt(&bad, &opts, &other, err, sizeof(err)), -ESTALE);
	assert_int_equal(waitpid(sleeper, &st, WNOHANG), 0);
	kill(sleeper, SIGKILL);
	waitpid(sleeper, &st, 0);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	/* A shim that takes no attachment (as while it pauses its guest). */
	snprintf(path, sizeof(path), "%s/shim.sock", id.run_dir);
	snprintf(moved, sizeof(moved), "%s/shim.sock.away", id.run_dir);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(vmm_vm_adopt(&id, &opts, &other, err, sizeof(err)), -EAGAIN);
	assert_non_null(strstr(err, "takes no attachment"));
	assert_int_equal(rename(moved, path), 0);
	assert_null(other);

	/* Nothing was harmed: the guest still answers its owner. */
	assert_int_equal(vmm_vm_qmp(vm, "query-status", NULL, NULL, 5000, err, sizeof(err)), 0);
	destroy_leaves_nothing(vm);
}

static void test_sigterm_to_the_shim(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	char err[4096], dir[PATH_MAX];
	struct vmm_vm *vm;
	pid_t qemu;
	int rc = 0;

	(void)state;
	start_guest(&so, &vm);
	snprintf(dir, sizeof(dir), "%s", vmm_vm_run_dir(vm));
	qemu = vmm_vm_qemu_pid(vm);
	kill(vmm_vm_proc(vm)->pid, SIGTERM);
	for (int i = 0; i < 200 && rc == 0; i++)
		rc = vmm_vm_service(vm, 50, err, sizeof(err));
	assert_int_equal(rc, -ECHILD);
	assert_int_equal(vmm_vm_proc(vm)->status, 0);
	assert_true(gone_within(qemu, 3000));
	assert_false(exists(dir));
	destroy_leaves_nothing(vm);
}

static void test_qemu_exit_is_reported(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	char err[4096], path[PATH_MAX + 16], *text = NULL;
	struct vmm_vm *vm;
	int rc = 0;

	(void)state;
	/* With -no-reboot a reset ends QEMU, with status 0. */
	start_guest(&so, &vm);
	assert_int_equal(vmm_vm_qmp(vm, "system_reset", NULL, NULL, 5000, err, sizeof(err)), 0);
	for (int i = 0; i < 200 && rc == 0; i++)
		rc = vmm_vm_service(vm, 50, err, sizeof(err));
	assert_int_equal(rc, -ECHILD);
	if (!strstr(err, "QEMU exited with status 0"))
		fail_msg("unexpected report: %s", err);
	snprintf(path, sizeof(path), "%s/qemu.exit", vmm_vm_run_dir(vm));
	assert_int_equal(fs_read_file(path, 256, &text, NULL), 0);
	assert_string_equal(text, "exited with status 0\n");
	free(text);
	destroy_leaves_nothing(vm);

	/* Killed: the shim dies of the same signal. */
	start_guest(&so, &vm);
	kill(vmm_vm_qemu_pid(vm), SIGKILL);
	rc = 0;
	for (int i = 0; i < 200 && rc == 0; i++)
		rc = vmm_vm_service(vm, 50, err, sizeof(err));
	assert_int_equal(rc, -ECHILD);
	assert_int_equal(vmm_vm_proc(vm)->status, 128 + SIGKILL);
	if (!strstr(err, "killed by signal 9"))
		fail_msg("unexpected report: %s", err);
	destroy_leaves_nothing(vm);
}

struct tally {
	int run_dirs, live_run_dirs, checkpoints, held, logs, records, stale;
};

static void tally(void *ud, const struct vmm_sweep_entry *e)
{
	struct tally *t = ud;

	t->stale += e->stale;
	switch (e->kind) {
	case VMM_SWEEP_RUN_DIR:
		t->run_dirs++;
		t->live_run_dirs += e->owner_alive;
		break;
	case VMM_SWEEP_CHECKPOINT:
		t->checkpoints++;
		if (e->held_by) {
			assert_string_equal(e->held_by, "sess9");
			t->held++;
		}
		break;
	case VMM_SWEEP_SHIM_LOG:
		t->logs++;
		break;
	case VMM_SWEEP_OWNER_RECORD:
		t->records++;
		break;
	}
}

/* A run dir with its record naming pid (a live one: a record keeps the
 * start time) or a dead one, or a checkpoint with its owner.pid. */
static void make_dir_owned_by(const char *name, pid_t pid)
{
	char path[PATH_MAX], file[PATH_MAX + 16], text[32];

	snprintf(path, sizeof(path), "%s/%s", run_base, name);
	assert_int_equal(fs_mkdir_p(path, 0700), 0);
	if (strncmp(name, "vm-ckpt-", 8)) {
		record_of(path, file, sizeof(file));
		snprintf(text, sizeof(text), "%d 1 \n", (int)pid);
		if (alive(pid))
			assert_int_equal(vmm_run_owner_write(path, pid, ""), 0);
		else
			assert_int_equal(fs_write_file(file, text, strlen(text)), 0);
		return;
	}
	snprintf(file, sizeof(file), "%s/owner.pid", path);
	snprintf(text, sizeof(text), "%d\n", (int)pid);
	assert_int_equal(fs_write_file(file, text, strlen(text)), 0);
}

/* The run dir is its guest's uid's: its owner.pid, deleted or forged, or
 * any other file planted there, never decides whether it lives. A guest
 * whose run dir lost its owner.pid and got one naming a dead pid keeps
 * its run dir (and its shim, QEMU) through a sweep. */
static void test_sweep_ignores_run_dir_contents(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	char path[PATH_MAX + 16], text[32], err[512];
	const char *dir;
	struct vmm_vm *vm;
	pid_t dead;
	int st;

	(void)state;
	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	waitpid(dead, &st, 0);
	start_guest(&so, &vm);
	dir = vmm_vm_run_dir(vm);
	/* Deleted (and whatever the guest's uid left of it). */
	snprintf(path, sizeof(path), "%s/owner.pid", dir);
	unlink(path);
	assert_int_equal(vmm_sweep_stale(run_base), 0);
	assert_true(exists(dir));
	/* Forged: a dead pid. */
	snprintf(text, sizeof(text), "%d\n", (int)dead);
	assert_int_equal(fs_write_file(path, text, strlen(text)), 0);
	assert_int_equal(vmm_sweep_stale(run_base), 0);
	assert_true(exists(dir));
	assert_true(alive(vmm_vm_proc(vm)->pid));
	assert_int_equal(vmm_vm_status(vm, text, sizeof(text), err, sizeof(err)), 0);
	assert_string_equal(text, "running");
	destroy_leaves_nothing(vm);
}

struct foreign_tally {
	int ours, foreign;
	char gateway[PATH_MAX];
};

static void tally_foreign(void *ud, const struct vmm_sweep_entry *e)
{
	struct foreign_tally *t = ud;

	if (e->kind != VMM_SWEEP_RUN_DIR || !e->owner_alive)
		return;
	if (e->foreign) {
		t->foreign++;
		snprintf(t->gateway, sizeof(t->gateway), "%s", e->gateway);
	} else {
		t->ours++;
	}
}

/* A run dir carries its gateway's id in its record: this process as a
 * gateway of one state dir knows another's run dir for what it is. */
static void test_run_dir_of_another_gateway(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	struct foreign_tally t = { 0 };
	struct vmm_run_owner o;
	char other[PATH_MAX], path[PATH_MAX];
	struct vmm_vm *vm;
	pid_t sleeper;
	int st;

	(void)state;
	vmm_run_owner_set_gateway("/var/lib/vitrine-test/this-state");
	start_guest(&so, &vm);
	/* The shim rewrote the record with its own pid, the gateway kept. */
	assert_int_equal(vmm_run_owner_read(vmm_vm_run_dir(vm), &o), 0);
	assert_int_equal(o.pid, vmm_vm_proc(vm)->pid);
	assert_string_equal(o.gateway, "/var/lib/vitrine-test/this-state");
	/* Another gateway's, alive. */
	sleeper = sleeping_child();
	snprintf(other, sizeof(other), "%s/vm-othergw", run_base);
	assert_int_equal(fs_mkdir_p(other, 0700), 0);
	assert_int_equal(vmm_run_owner_write(other, sleeper, "/srv/other-state"), 0);
	vmm_sweep_list(run_base, tally_foreign, &t);
	assert_int_equal(t.ours, 1);
	assert_int_equal(t.foreign, 1);
	assert_string_equal(t.gateway, "/srv/other-state");
	/* Neither is swept while its owner lives. */
	assert_int_equal(vmm_sweep_stale(run_base), 0);
	assert_true(exists(other));
	kill(sleeper, SIGKILL);
	waitpid(sleeper, &st, 0);
	/* Its owner gone, it goes with its record. */
	assert_int_equal(vmm_sweep_stale(run_base), 1);
	assert_false(exists(other));
	record_of(other, path, sizeof(path));
	assert_false(exists(path));
	vmm_run_owner_set_gateway(NULL);
	destroy_leaves_nothing(vm);
}

static void test_sweep_keeps_what_lives(void **state)
{
	struct vmm_shim_opts so = { .bin = shim_bin, .grace_s = 30 };
	struct timespec old[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
	char path[PATH_MAX], log[PATH_MAX];
	struct tally t = { 0 }, before = { 0 };
	struct vmm_vm *vm;
	pid_t dead;
	int st, n0;

	(void)state;
	/* The logs of the shims abandoned above stay (sweep.h): count on top. */
	n0 = vmm_sweep_list(run_base, tally, &before);
	assert_int_equal(n0, before.logs);
	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	waitpid(dead, &st, 0);
	start_guest(&so, &vm);
	make_dir_owned_by("vm-deadrun", dead);
	make_dir_owned_by("vm-ckpt-dead", dead);
	make_dir_owned_by("vm-ckpt-held", dead);
	snprintf(path, sizeof(path), "%s/vm-ckpt-held", run_base);
	assert_int_equal(vmm_checkpoint_hold(path, "sess9"), 0);
	snprintf(path, sizeof(path), "%s/vm-ckpt-held/owner.pid", run_base);
	assert_false(exists(path));
	/* An old log whose run dir is gone, and a fresh one. */
	snprintf(path, sizeof(path), "%s/shim-vm-gone.log", run_base);
	assert_int_equal(fs_write_file(path, "x\n", 2), 0);
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	snprintf(path, sizeof(path), "%s/shim-vm-gone2.log", run_base);
	assert_int_equal(fs_write_file(path, "x\n", 2), 0);

	/* A record whose run dir is gone. */
	snprintf(path, sizeof(path), "%s/owner-vm-gonedir", run_base);
	assert_int_equal(fs_write_file(path, "1 1 \n", 5), 0);

	assert_int_equal(vmm_sweep_list(run_base, tally, &t), n0 + 8);
	assert_int_equal(t.records, 1);
	assert_int_equal(t.run_dirs, 2);
	assert_int_equal(t.live_run_dirs, 1);
	assert_int_equal(t.checkpoints, 2);
	assert_int_equal(t.held, 1);
	assert_int_equal(t.logs, n0 + 3);
	assert_int_equal(t.stale, 4);

	assert_int_equal(vmm_sweep_stale(run_base), 2);
	assert_true(exists(vmm_vm_run_dir(vm)));
	shim_log_of(vmm_vm_run_dir(vm), log, sizeof(log));
	assert_true(exists(log));
	snprintf(path, sizeof(path), "%s/vm-ckpt-held", run_base);
	assert_true(exists(path));
	snprintf(path, sizeof(path), "%s/shim-vm-gone.log", run_base);
	assert_false(exists(path));
	snprintf(path, sizeof(path), "%s/shim-vm-gone2.log", run_base);
	assert_true(exists(path));
	unlink(path);
	snprintf(path, sizeof(path), "%s/vm-ckpt-dead", run_base);
	assert_false(exists(path));
	snprintf(path, sizeof(path), "%s/vm-deadrun", run_base);
	assert_false(exists(path));
	snprintf(path, sizeof(path), "%s/owner-vm-deadrun", run_base);
	assert_false(exists(path));
	snprintf(path, sizeof(path), "%s/owner-vm-gonedir", run_base);
	assert_false(exists(path));

	/* Unheld, it is its owner's again: this process. */
	snprintf(path, sizeof(path), "%s/vm-ckpt-held", run_base);
	assert_int_equal(vmm_checkpoint_unhold(path), 0);
	assert_int_equal(vmm_checkpoint_held_by(path, NULL, 0), -ENOENT);
	assert_int_equal(vmm_sweep_stale(run_base), 0);
	assert_int_equal(fs_rm_rf(path), 0);
	destroy_leaves_nothing(vm);
	assert_int_equal(count("vm-"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guest_outlives_its_owner),
		cmocka_unit_test(test_detach_then_adopt_again),
		cmocka_unit_test(test_abandoned_guest_is_paused),
		cmocka_unit_test(test_abandoned_guest_is_killed),
		cmocka_unit_test(test_pause_without_a_record_kills),
		cmocka_unit_test(test_adopt_refusals),
		cmocka_unit_test(test_terminate_orphans),
		cmocka_unit_test(test_sigterm_to_the_shim),
		cmocka_unit_test(test_qemu_exit_is_reported),
		cmocka_unit_test(test_sweep_keeps_what_lives),
		cmocka_unit_test(test_sweep_ignores_run_dir_contents),
		cmocka_unit_test(test_run_dir_of_another_gateway),
	};

	return cmocka_run_group_tests_name("shim-held guests", tests, setup, teardown);
}
