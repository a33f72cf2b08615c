/* vmm-qemu/shim.c: see shim.h. One struct shim, one poll loop; every way
 * out (QEMU's exit, SIGTERM, abandonment) ends the process from here. */
#include "vmm-qemu/shim.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "common/space.h"
#include "vmm-qemu/cgroup.h"
#include "vmm-qemu/checkpoint.h"
#include "vmm-qemu/qmp_client.h"
#include "vmm-qemu/run_dir.h"
#include "vmm-qemu/run_owner.h"
#include "vmm-qemu/shim_proto.h"
#include "vmm-qemu/shim_record.h"
#include "vmm-qemu/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_ATTACHED 16
#define STOP_KILL_MS 3000
#define LOG_CHECK_MS 1000 /* how often the logs' sizes are looked at */

struct shim {
	struct vmm_shim_args args;
	char run_base[PATH_MAX];
	char sock_path[108]; /* a unix socket address's room */
	struct vmm_proc qemu; /* owned; moves into a vmm_vm to be checkpointed */
	int sig_fd; /* owned: signalfd for SIGTERM */
	int listen_fd; /* owned: shim.sock; -1 once closed */
	int attached[MAX_ATTACHED]; /* owned: the attachments, only held */
	size_t n_attached;
	int64_t deadline_ms; /* end of the grace period (fs_now_ms); -1 while attached */
	int64_t log_check_ms; /* next look at the logs' sizes (fs_now_ms) */
};

static int64_t unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Closes what the shim holds and exits with status: an exit code, or
 * 128 + N for "killed by signal N", which is raised on the shim itself
 * with its default action so that a waiting parent sees the same. */
static _Noreturn void shim_exit(struct shim *s, int status)
{
	for (size_t i = 0; i < s->n_attached; i++)
		close(s->attached[i]);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	close(s->sig_fd);
	vmm_proc_release(&s->qemu);
	/* QEMU is reaped: its cgroup is empty, and its uid free once we go. */
	vmm_cgroup_remove(s->args.cgroups, s->args.n_cgroups);
	if (status > 128 && status < 128 + 65) {
		int sig = status - 128;
		sigset_t set;

		signal(sig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
	}
	exit(status & 0xff);
}

static int shim_listen(struct shim *s, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->sock_path);
	unlink(s->sock_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		int e = errno;

		snprintf(err, errlen, "listen on %s: %s", s->sock_path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	s->listen_fd = fd;
	return 0;
}

/* No attachment from now on: a gateway that comes now finds no socket. */
static void stop_listening(struct shim *s)
{
	if (s->listen_fd < 0)
		return;
	unlink(s->sock_path);
	close(s->listen_fd);
	s->listen_fd = -1;
}

static void accept_all(struct shim *s)
{
	char hello[VMM_SHIM_HELLO_MAX];
	size_t n = vmm_shim_hello_format(hello, sizeof(hello), getpid(), s->qemu.pid);
	int fd;

	while ((fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (s->n_attached == MAX_ATTACHED) {
			log_warn("shim", "%s: %d attachments already, one more refused",
				 s->args.run_dir, MAX_ATTACHED);
			close(fd);
			continue;
		}
		/* A fresh socket's buffer takes a line: this write does not block. */
		if (write(fd, hello, n) != (ssize_t)n) {
			close(fd);
			continue;
		}
		s->attached[s->n_attached++] = fd;
		if (s->deadline_ms >= 0)
			log_info("shim", "%s: attached, grace period cancelled", s->args.run_dir);
		s->deadline_ms = -1;
	}
}

/* Reads (and drops) what attachment i sent; closes it at its end. */
static void service_attachment(struct shim *s, size_t i)
{
	char buf[256];
	ssize_t r;

	while ((r = read(s->attached[i], buf, sizeof(buf))) > 0)
		;
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	close(s->attached[i]);
	s->attached[i] = s->attached[--s->n_attached];
	if (s->n_attached == 0) {
		s->deadline_ms = fs_now_ms() + (int64_t)s->args.grace_s * 1000;
		log_info("shim",
			 "%s: the last attachment closed: abandoned in %d s unless one comes",
			 s->args.run_dir, s->args.grace_s);
	}
}

/* QMP quit, else SIGTERM to QEMU (the monitor takes one client: a gateway
 * may still hold it), SIGKILL once STOP_KILL_MS have passed; reaps. */
static void quit_qemu(struct shim *s)
{
	int64_t deadline = fs_now_ms() + STOP_KILL_MS;
	struct qmp_client *qmp = NULL;
	char path[PATH_MAX], err[256];
	int rc = -ENOTCONN;

	if (vmm_proc_wait(&s->qemu, 0))
		return;
	if (vmm_run_dir_socket(s->args.run_dir, VMM_SOCKET_QMP, path, sizeof(path)) == 0 &&
	    qmp_client_connect(path, 500, NULL, NULL, &qmp, err, sizeof(err)) == 0)
		rc = qmp_client_call(qmp, "quit", NULL, -1, NULL, 1000, err, sizeof(err));
	qmp_client_destroy(qmp);
	if (rc < 0 && !vmm_proc_wait(&s->qemu, 0)) {
		log_info("shim", "%s: QMP quit: %s; SIGTERM to QEMU", s->args.run_dir, err);
		vmm_proc_signal(&s->qemu, SIGTERM);
	}
	if (!vmm_proc_wait(&s->qemu, (int)(deadline > fs_now_ms() ? deadline - fs_now_ms() : 0))) {
		log_warn("shim", "%s: QEMU still runs %d ms after quit: SIGKILL", s->args.run_dir,
			 STOP_KILL_MS);
		vmm_proc_signal(&s->qemu, SIGKILL);
	}
	vmm_proc_release(&s->qemu);
}

static _Noreturn void on_qemu_exit(struct shim *s)
{
	char how[128], path[PATH_MAX + 16];
	int status;

	vmm_proc_wait(&s->qemu, -1);
	status = s->qemu.status;
	vmm_proc_describe(&s->qemu, how, sizeof(how));
	log_info("shim", "%s: QEMU %d %s", s->args.run_dir, (int)s->qemu.pid, how);
	stop_listening(s);
	snprintf(path, sizeof(path), "%s/qemu.exit", s->args.run_dir);
	strcat(how, "\n");
	if (fs_write_file_atomic(path, how, strlen(how), 0644) < 0)
		log_warn("shim", "%s: cannot write qemu.exit", s->args.run_dir);
	shim_exit(s, status);
}

static _Noreturn void on_sigterm(struct shim *s)
{
	log_info("shim", "%s: SIGTERM: stopping the guest", s->args.run_dir);
	stop_listening(s);
	quit_qemu(s);
	vmm_run_dir_remove(s->args.run_dir);
	shim_exit(s, 0);
}

/* Checkpoints the guest into a new folder (ckpt) and hands it to holder,
 * when its filesystem has room for the guest's RAM (common/space.h).
 * Returns 0 with *vm (QEMU has quit, the run dir is still there), or
 * -errno with err; then *kept says whether the guest runs on as before
 * (refused, or the save failed before QEMU's quit: QEMU is s->qemu again,
 * the partial checkpoint removed), else QEMU is gone too, and so is its run
 * dir when the guest had been taken into a vm. */
static int pause_guest(struct shim *s, const char *holder, char *ckpt, struct vmm_vm **vm,
		       bool *kept, char *err, size_t errlen)
{
	int rc = vmm_vm_open_child(s->args.run_dir, &s->qemu, vm, err, errlen);
	char why[256];

	ckpt[0] = '\0';
	*kept = false;
	if (rc < 0)
		return rc; /* QEMU is still s->qemu: the kill path quits it */
	rc = space_check(vmm_run_base(s->run_base), (uint64_t)vmm_vm_spec(*vm)->memory_mib << 20,
			 "pausing to disk", err, errlen);
	if (rc == 0)
		rc = vmm_checkpoint_dir_new(s->run_base, ckpt, err, errlen);
	if (rc < 0) {
		ckpt[0] = '\0';
	} else {
		rc = vmm_checkpoint_save(*vm, ckpt, VMM_CKPT_QUIT, NULL, err, errlen);
		if (rc == 0 && (rc = vmm_checkpoint_hold(ckpt, holder)) < 0)
			snprintf(err, errlen, "hold %s: %s", ckpt, strerror(-rc));
	}
	if (rc < 0) {
		if (ckpt[0])
			fs_rm_rf(ckpt);
		ckpt[0] = '\0';
		/* The save continued the guest unless QEMU quit: cont to know. */
		*kept = !vmm_vm_proc(*vm)->exited &&
			vmm_vm_qmp(*vm, "cont", NULL, NULL, 10000, why, sizeof(why)) == 0;
		if (*kept)
			vmm_vm_close_child(*vm, &s->qemu);
		else
			vmm_vm_destroy(*vm);
		*vm = NULL;
	}
	return rc;
}

/* Patches the record when it names this run dir, logging the outcome. */
static int patch_record(struct shim *s, const struct vmm_shim_abandon *a)
{
	char err[512];
	int rc;

	if (!s->args.record)
		return 0;
	rc = vmm_shim_record_patch(s->args.record, s->args.run_dir, a, err, sizeof(err));
	if (rc < 0)
		log_error("shim", "%s: record %s not patched: %s", s->args.run_dir, s->args.record,
			  err);
	else
		log_info("shim", "%s: record %s %s", s->args.run_dir, s->args.record,
			 rc ? "patched" : "names another guest: left alone");
	return rc;
}

/* The grace period ran out: pauses the guest to disk (or kills it, as
 * --on-abandon says) and exits; but a pause that could not be made (no
 * room, a failed save) leaves the guest running, held for another grace
 * period, and returns: nothing is lost, and the pause is tried again then. */
static void on_abandoned(struct shim *s)
{
	struct vmm_shim_abandon a = { .at_unix_ms = unix_ms(), .grace_s = s->args.grace_s };
	char holder[PATH_MAX], ckpt[PATH_MAX], err[1024], sentence[1536];
	const char *id;
	json_t *rec = NULL;

	stop_listening(s);
	log_info("shim", "%s: no attachment for %d s: abandoned (%s)", s->args.run_dir,
		 s->args.grace_s, s->args.abandon_pause ? "pause" : "kill");
	if (s->args.abandon_pause && s->args.record &&
	    vmm_shim_record_load(s->args.record, s->args.run_dir, &rec, err, sizeof(err)) == 1) {
		struct vmm_vm *vm = NULL;
		bool kept;

		id = json_string_value(json_object_get(rec, "id"));
		snprintf(holder, sizeof(holder), "%s", id ? id : s->args.record);
		json_decref(rec);
		if (pause_guest(s, holder, ckpt, &vm, &kept, err, sizeof(err)) == 0) {
			a.paused = true;
			a.checkpoint = ckpt;
			log_info("shim", "%s: paused to %s, held by %s", s->args.run_dir, ckpt,
				 holder);
			patch_record(s, &a);
			vmm_vm_destroy(vm); /* QEMU has quit: removes the run dir */
			shim_exit(s, 0);
		}
		log_error("shim", "%s: pausing failed: %s", s->args.run_dir, err);
		if (kept && shim_listen(s, sentence, sizeof(sentence)) == 0) {
			s->deadline_ms = fs_now_ms() + (int64_t)s->args.grace_s * 1000;
			log_info("shim",
				 "%s: the guest runs on: abandoned again in %d s unless a "
				 "gateway attaches",
				 s->args.run_dir, s->args.grace_s);
			return;
		}
		snprintf(sentence, sizeof(sentence),
			 "abandoned: no gateway attached within %d s; pausing failed (%s); guest "
			 "killed",
			 s->args.grace_s, err);
	} else {
		if (s->args.abandon_pause)
			log_info("shim", "%s: no record names this guest: killing it instead",
				 s->args.run_dir);
		snprintf(sentence, sizeof(sentence),
			 "abandoned: no gateway attached within %d s; guest killed",
			 s->args.grace_s);
	}
	quit_qemu(s);
	vmm_run_dir_remove(s->args.run_dir);
	a.error = sentence;
	patch_record(s, &a);
	shim_exit(s, 0);
}

/* A log of QEMU's (serial.log, qemu.log) past the cap: its bytes go to
 * NAME.1 (replacing the last one) and it is truncated. QEMU writes both
 * with O_APPEND, so it goes on at the new end; a reader at an offset past
 * it starts again at 0 (vm.c). What QEMU writes between the copy and the
 * truncation is lost: a guest that fills its console loses lines anyway.
 * The run dir is the guest's uid's: the log is opened once without
 * following a link (and truncated through that descriptor), and NAME.1
 * is made anew, exclusively, so nothing the uid plants there is written. */
static void rotate_log(struct shim *s, const char *name)
{
	long long cap = s->args.log_cap > 0 ? s->args.log_cap : VMM_SHIM_LOG_CAP_DEFAULT;
	char path[PATH_MAX + 16], old[PATH_MAX + 32];
	struct stat st;
	int fd, out = -1, rc;

	snprintf(path, sizeof(path), "%s/%s", s->args.run_dir, name);
	fd = fs_open_regular(path, O_RDWR, 0);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || st.st_size <= cap) {
		close(fd);
		return;
	}
	snprintf(old, sizeof(old), "%s.1", path);
	unlink(old);
	out = open(old, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	rc = out < 0 ? -errno : fs_copy_fd(fd, out);
	if (rc == 0 && ftruncate(fd, 0) < 0)
		rc = -errno;
	if (out >= 0)
		close(out);
	close(fd);
	if (rc < 0)
		log_warn("shim", "%s: cannot rotate %s: %s", s->args.run_dir, name, strerror(-rc));
	else
		log_info("shim", "%s: %s past %lld bytes: rotated", s->args.run_dir, name, cap);
}

static _Noreturn void run(struct shim *s)
{
	for (;;) {
		struct pollfd p[3 + MAX_ATTACHED] = {
			{ .fd = s->sig_fd, .events = POLLIN },
			{ .fd = s->qemu.pidfd, .events = POLLIN },
			{ .fd = s->listen_fd, .events = POLLIN },
		};
		int64_t now = fs_now_ms();
		int timeout = -1;
		size_t n = s->n_attached;

		if (s->deadline_ms >= 0 && now >= s->deadline_ms)
			on_abandoned(s);
		if (now >= s->log_check_ms) {
			rotate_log(s, "serial.log");
			rotate_log(s, "qemu.log");
			s->log_check_ms = now + LOG_CHECK_MS;
		}
		timeout = (int)(s->log_check_ms - now);
		if (s->deadline_ms >= 0 && s->deadline_ms - now < timeout)
			timeout = (int)(s->deadline_ms - now);
		for (size_t i = 0; i < n; i++)
			p[3 + i] = (struct pollfd){ .fd = s->attached[i], .events = POLLIN };
		if (poll(p, 3 + n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			log_error("shim", "%s: poll: %s", s->args.run_dir, strerror(errno));
			on_sigterm(s);
		}
		if (p[0].revents) {
			struct signalfd_siginfo si;

			if (read(s->sig_fd, &si, sizeof(si)) == sizeof(si) &&
			    si.ssi_signo == SIGTERM)
				on_sigterm(s);
		}
		if (p[1].revents)
			on_qemu_exit(s);
		if (p[2].revents)
			accept_all(s);
		/* From the last: closing one moves the last into its place. */
		for (size_t i = n; i-- > 0;)
			if (p[3 + i].revents)
				service_attachment(s, i);
	}
}

/* Detaches from the gateway's session and terminal, and readies the
 * signals: SIGTERM through a signalfd, the terminal's ignored, no core
 * dump when QEMU's own signal is raised again at the end. */
static int detach_signals(struct shim *s, char *err, size_t errlen)
{
	struct rlimit no_core = { 0, 0 };
	sigset_t term;

	if (getsid(0) != getpid() && setsid() < 0)
		log_warn("shim", "setsid: %s", strerror(errno));
	prctl(PR_SET_PDEATHSIG, 0);
	setrlimit(RLIMIT_CORE, &no_core);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	s->sig_fd = signalfd(-1, &term, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sig_fd < 0) {
		snprintf(err, errlen, "signalfd: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* The owner record, QEMU, shim.sock, in that order: a gateway that sees the
 * socket may rely on the rest. */
static int start(struct shim *s, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	const char *slash = strrchr(s->args.run_dir, '/');
	struct vmm_jail jail = { 0 };
	int rc;

	if (!slash || slash == s->args.run_dir ||
	    snprintf(s->run_base, sizeof(s->run_base), "%.*s", (int)(slash - s->args.run_dir),
		     s->args.run_dir) >= (int)sizeof(s->run_base) ||
	    vmm_run_dir_socket(s->args.run_dir, VMM_SOCKET_SHIM, s->sock_path,
			       sizeof(s->sock_path)) < 0) {
		snprintf(err, errlen, "run dir %s: not an absolute path fit for unix sockets",
			 s->args.run_dir);
		return -EINVAL;
	}
	/* The run dir's record names us now, for the gateway it named. */
	rc = vmm_run_owner_write(s->args.run_dir, getpid(), NULL);
	if (rc < 0) {
		snprintf(err, errlen, "write the owner of %s: %s", s->args.run_dir, strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/qemu.log", s->args.run_dir);
	jail.cred = s->args.drop_privileges ? &s->args.cred : NULL;
	jail.netns = s->args.netns;
	jail.mntns = s->args.mntns;
	for (size_t i = 0; i < s->args.n_ro; i++)
		jail.ro_paths[i] = s->args.ro[i];
	jail.n_ro = s->args.n_ro;
	for (size_t i = 0; i < s->args.n_rw; i++)
		jail.rw_paths[i] = s->args.rw[i];
	jail.n_rw = s->args.n_rw;
	for (size_t i = 0; i < s->args.n_keep; i++)
		jail.keep_paths[i] = s->args.keep[i];
	jail.n_keep = s->args.n_keep;
	jail.fsize = s->args.fsize;
	jail.nofile = s->args.nofile;
	jail.nproc = s->args.nproc;
	for (size_t i = 0; i < s->args.n_cgroups; i++)
		jail.cgroups[i] = s->args.cgroups[i];
	jail.n_cgroups = s->args.n_cgroups;
	/* The uid's lease (an flock) stays with us, never with QEMU: spawn
	 * closes it in the child. */
	if (s->args.lease_fd > 2)
		fcntl(s->args.lease_fd, F_SETFD, FD_CLOEXEC);
	rc = vmm_proc_spawn(s->args.qemu_argv, path, s->args.keep_fds, s->args.n_keep_fds, &jail,
			    &s->qemu, err, errlen);
	if (rc < 0)
		return rc;
	/* QEMU has its copies, at the same numbers. */
	for (size_t i = 0; i < s->args.n_keep_fds; i++)
		close(s->args.keep_fds[i]);
	rc = shim_listen(s, err, errlen);
	if (rc < 0)
		return rc;
	s->deadline_ms = fs_now_ms() + (int64_t)s->args.grace_s * 1000;
	return 0;
}

int vmm_shim_main(int argc, char **argv)
{
	struct shim s = { .sig_fd = -1, .listen_fd = -1, .deadline_ms = -1 };
	char err[2 * PATH_MAX];

	s.qemu.pidfd = -1;
	if (vmm_shim_args_parse(argc, argv, &s.args, err, sizeof(err)) < 0) {
		fprintf(stderr, "vitrine %s\n", err);
		return 2;
	}
	if (detach_signals(&s, err, sizeof(err)) < 0 || start(&s, err, sizeof(err)) < 0) {
		log_error("shim", "%s: %s", s.args.run_dir, err);
		vmm_proc_release(&s.qemu);
		vmm_cgroup_remove(s.args.cgroups, s.args.n_cgroups);
		if (s.listen_fd >= 0)
			close(s.listen_fd);
		if (s.sig_fd >= 0)
			close(s.sig_fd);
		return 1;
	}
	log_info("shim", "%s: pid %d holds QEMU %d (grace %d s, on abandon %s%s%s)", s.args.run_dir,
		 (int)getpid(), (int)s.qemu.pid, s.args.grace_s,
		 s.args.abandon_pause ? "pause" : "kill", s.args.record ? ", record " : "",
		 s.args.record ? s.args.record : "");
	run(&s);
}
