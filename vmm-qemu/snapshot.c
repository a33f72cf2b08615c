/* vmm-qemu/snapshot.c: see snapshot.h.
 *
 * The mechanics follow what QEMU 7.2 allows (measured, see DESIGN.md): the
 * state goes through getfd + "fd:" URIs, never "exec:" (which -sandbox
 * spawn=deny kills), and a clone cannot be given -incoming fd:N at exec, as
 * the x-ignore-shared capability must be set before the stream is read: it
 * inherits the fd, starts with -incoming defer, and is told over QMP. */
#include "vmm-qemu/snapshot.h"

#include "common/fsutil.h"
#include "vmm-qemu/qga_client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATE_FDNAME "vitrine-state"
#define MIGRATE_TIMEOUT_MS 120000

const char *vmm_templates_dir(void)
{
	static char dir[PATH_MAX];
	const char *home = getenv("VITRINE_HOME");

	snprintf(dir, sizeof(dir), "%s/templates", home && *home ? home : "/var/lib/vitrine");
	return dir;
}

bool vmm_template_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return false;
	return true;
}

/* dir/file into out; -ENAMETOOLONG with err filled when it does not fit. */
static int join(char *out, size_t outlen, const char *dir, const char *file, char *err,
		size_t errlen)
{
	int n = snprintf(out, outlen, "%s/%s", dir, file);

	if (n < 0 || (size_t)n >= outlen) {
		snprintf(err, errlen, "path too long: %s/%s", dir, file);
		return -ENAMETOOLONG;
	}
	return 0;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int vmm_template_prepare(const char *dir, struct vmm_spec *spec, char *ram_path_buf,
			 size_t buflen, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, rc;

	if (strchr(dir, ',')) {
		snprintf(err, errlen, "template dir must not contain ',': %s", dir);
		return -EINVAL;
	}
	if ((rc = join(path, sizeof(path), dir, "template.json", err, errlen)) < 0 ||
	    (rc = join(ram_path_buf, buflen, dir, "ram", err, errlen)) < 0)
		return rc;
	if (exists(path)) {
		snprintf(err, errlen, "%s already holds a template", dir);
		return -EEXIST;
	}
	rc = fs_mkdir_p(dir, 0755);
	if (rc < 0) {
		snprintf(err, errlen, "create %s: %s", dir, strerror(-rc));
		return rc;
	}
	/* Sized now so that a QEMU running as another user needs no right to
	 * create files here; truncated first to drop a failed attempt's pages. */
	fd = open(ram_path_buf, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)spec->memory_mib << 20) < 0) {
		rc = -errno;
		snprintf(err, errlen, "create %s: %s", ram_path_buf, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	close(fd);
	spec->ram_path = ram_path_buf;
	spec->ram_share = true;
	return 0;
}

/* Polls query-migrate until the migration (outgoing or incoming) ends.
 * Returns 0 once "completed", -EIO when it failed or was cancelled, or
 * -ETIMEDOUT / another -errno, with a reason in err. */
static int wait_migration(struct vmm_vm *vm, int timeout_ms, char *err, size_t errlen)
{
	int64_t deadline = fs_now_ms() + timeout_ms;

	for (;;) {
		json_t *ret = NULL;
		const char *status = NULL, *desc = NULL;
		int rc = vmm_vm_qmp(vm, "query-migrate", NULL, &ret, 10000, err, errlen);

		if (rc < 0)
			return rc;
		json_unpack(ret, "{s?s, s?s}", "status", &status, "error-desc", &desc);
		if (status && !strcmp(status, "completed")) {
			json_decref(ret);
			return 0;
		}
		if (status && (!strcmp(status, "failed") || !strcmp(status, "cancelled"))) {
			snprintf(err, errlen, "migration %s: %s", status, desc ? desc : "no reason given");
			json_decref(ret);
			return -EIO;
		}
		json_decref(ret);
		if (fs_now_ms() > deadline) {
			snprintf(err, errlen, "migration not done within %d ms (status %s)", timeout_ms,
				 status ? status : "none");
			return -ETIMEDOUT;
		}
		rc = vmm_vm_service(vm, 5, err, errlen);
		if (rc < 0)
			return rc;
	}
}

/* x-ignore-shared: RAM mapped from a shared file is not in the stream. */
static int ignore_shared(struct vmm_vm *vm, char *err, size_t errlen)
{
	return vmm_vm_qmp(vm, "migrate-set-capabilities",
			  json_pack("{s:[{s:s, s:b}]}", "capabilities", "capability",
				    "x-ignore-shared", "state", 1),
			  NULL, 10000, err, errlen);
}

/* Moves (or, across file systems, copies) from to to. */
static int move_file(const char *from, const char *to, char *err, size_t errlen)
{
	int in, out, rc = 0;
	struct stat st;

	if (rename(from, to) == 0)
		return 0;
	if (errno != EXDEV) {
		rc = -errno;
		snprintf(err, errlen, "rename %s to %s: %s", from, to, strerror(errno));
		return rc;
	}
	in = open(from, O_RDONLY | O_CLOEXEC);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in < 0 || out < 0 || fstat(in, &st) < 0) {
		rc = -errno;
		goto done;
	}
	for (off_t left = st.st_size; left > 0;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);

		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			goto done;
		}
		left -= n;
	}
	if (fsync(out) < 0)
		rc = -errno;
done:
	if (rc < 0)
		snprintf(err, errlen, "copy %s to %s: %s", from, to, strerror(-rc));
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* Quits QEMU and waits for it to exit, so its disk writes are all out. */
static int quit_and_wait(struct vmm_vm *vm, char *err, size_t errlen)
{
	int64_t deadline = fs_now_ms() + 10000;
	int rc = vmm_vm_qmp(vm, "quit", NULL, NULL, 5000, err, errlen);

	/* The reply may race with the monitor closing. */
	if (rc < 0 && rc != -EPIPE && rc != -ECHILD)
		return rc;
	while (fs_now_ms() < deadline) {
		rc = vmm_vm_service(vm, 50, err, errlen);
		if (rc == -ECHILD || vmm_vm_proc(vm)->exited)
			return 0;
		if (rc < 0 && rc != -EPIPE)
			return rc;
	}
	snprintf(err, errlen, "QEMU did not exit within 10 s of quit");
	return -ETIMEDOUT;
}

static int write_template_json(const struct vmm_spec *spec, const char *dir, bool has_disk,
			       bool has_page, char *err, size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *j;
	int rc;

	if ((rc = join(path, sizeof(path), dir, "template.json", err, errlen)) < 0)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	j = json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:s, s:s*, s:b, s:b, s:I}", "image",
		      spec->image->name, "image_dir", spec->image->dir, "width", spec->width, "height",
		      spec->height, "vcpus", spec->vcpus, "memory_mib", spec->memory_mib,
		      "tb_size_mib", spec->tb_size_mib, "accel", vmm_accel_name(spec->accel), "url",
		      spec->url, "disk", has_disk, "page", has_page, "created_at",
		      (json_int_t)time(NULL));
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = json_dump_file(j, tmp, JSON_INDENT(2));
	json_decref(j);
	if (rc < 0 || rename(tmp, path) < 0) {
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "write %s: %s", path, strerror(-rc));
		unlink(tmp);
		return rc;
	}
	return 0;
}

/* Makes a template file the template's own and read-only: clones (and
 * their QEMU user) only ever read it. Best effort. */
static void freeze(const char *path)
{
	if (chown(path, getuid(), getgid()) < 0) {
		/* not root: the file is already ours */
	}
	chmod(path, 0444);
}

int vmm_template_save(struct vmm_vm *vm, const char *template_dir, char *err, size_t errlen)
{
	const struct vmm_spec *spec = vmm_vm_spec(vm);
	char ram[PATH_MAX], state[PATH_MAX], screen[PATH_MAX], from[PATH_MAX], disk[PATH_MAX];
	bool has_disk = spec->image->rootfs[0] != '\0';
	int fd, rc;

	if ((rc = join(ram, sizeof(ram), template_dir, "ram", err, errlen)) < 0 ||
	    (rc = join(state, sizeof(state), template_dir, "state", err, errlen)) < 0 ||
	    (rc = join(screen, sizeof(screen), template_dir, "screen.ppm", err, errlen)) < 0 ||
	    (rc = join(disk, sizeof(disk), template_dir, "disk.qcow2", err, errlen)) < 0)
		return rc;
	if (!spec->ram_path || !spec->ram_share || strcmp(spec->ram_path, ram)) {
		snprintf(err, errlen, "the guest's RAM is not the shared file %s "
				      "(start it from a spec vmm_template_prepare() filled)", ram);
		return -EINVAL;
	}
	rc = vmm_vm_screendump(vm, screen, "ppm", err, errlen);
	if (rc < 0)
		return rc;
	if ((rc = vmm_vm_qmp(vm, "stop", NULL, NULL, 10000, err, errlen)) < 0 ||
	    (rc = ignore_shared(vm, err, errlen)) < 0 ||
	    /* The default limit (32 MiB/s) would throttle even a small state. */
	    (rc = vmm_vm_qmp(vm, "migrate-set-parameters",
			     json_pack("{s:I}", "max-bandwidth", (json_int_t)1 << 40), NULL, 10000,
			     err, errlen)) < 0)
		return rc;
	fd = open(state, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "create %s: %s", state, strerror(errno));
		return rc;
	}
	rc = vmm_vm_qmp_fd(vm, "getfd", json_pack("{s:s}", "fdname", STATE_FDNAME), fd, NULL, 10000,
			   err, errlen);
	close(fd); /* QEMU holds its own copy now */
	if (rc == 0)
		rc = vmm_vm_qmp(vm, "migrate", json_pack("{s:s}", "uri", "fd:" STATE_FDNAME), NULL,
				10000, err, errlen);
	if (rc == 0)
		rc = wait_migration(vm, MIGRATE_TIMEOUT_MS, err, errlen);
	if (rc == 0)
		rc = quit_and_wait(vm, err, errlen);
	if (rc < 0)
		return rc;
	if (has_disk) {
		if ((rc = join(from, sizeof(from), vmm_vm_run_dir(vm), "disk.qcow2", err, errlen)) < 0 ||
		    (rc = move_file(from, disk, err, errlen)) < 0)
			return rc;
		freeze(disk);
	}
	if (spec->has_page) {
		char page[PATH_MAX];

		if ((rc = join(from, sizeof(from), vmm_vm_run_dir(vm), "page.html", err, errlen)) < 0 ||
		    (rc = join(page, sizeof(page), template_dir, "page.html", err, errlen)) < 0 ||
		    (rc = move_file(from, page, err, errlen)) < 0)
			return rc;
		freeze(page);
	}
	freeze(state);
	freeze(screen);
	return write_template_json(spec, template_dir, has_disk, spec->has_page, err, errlen);
}

int vmm_template_load(const char *name, struct vmm_template *t, char *err, size_t errlen)
{
	const char *image, *image_dir, *accel, *url = NULL;
	char path[PATH_MAX];
	json_error_t jerr;
	json_t *j;
	json_int_t created = 0;
	int has_disk = 0, has_page = 0, rc;

	memset(t, 0, sizeof(*t));
	if (!strchr(name, '/') && !vmm_template_name_ok(name)) {
		snprintf(err, errlen, "bad template name '%s' (letters, digits, '_', '-')", name);
		return -EINVAL;
	}
	rc = strchr(name, '/') ? snprintf(t->dir, sizeof(t->dir), "%s", name)
			       : snprintf(t->dir, sizeof(t->dir), "%s/%s", vmm_templates_dir(), name);
	if (rc < 0 || (size_t)rc >= sizeof(t->dir)) {
		snprintf(err, errlen, "template path too long");
		return -ENAMETOOLONG;
	}
	if ((rc = join(path, sizeof(path), t->dir, "template.json", err, errlen)) < 0)
		return rc;
	if (!exists(path)) {
		snprintf(err, errlen, "no template %s (no %s)", name, path);
		return -ENOENT;
	}
	j = json_load_file(path, 0, &jerr);
	if (!j) {
		snprintf(err, errlen, "%s: %s", path, jerr.text);
		return -EINVAL;
	}
	if (json_unpack_ex(j, &jerr, 0, "{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:s, s?s, s:b, s:b, s:I}",
			   "image", &image, "image_dir", &image_dir, "width", &t->width, "height",
			   &t->height, "vcpus", &t->vcpus, "memory_mib", &t->memory_mib,
			   "tb_size_mib", &t->tb_size_mib, "accel", &accel, "url", &url, "disk",
			   &has_disk, "page", &has_page, "created_at", &created) < 0 ||
	    vmm_accel_parse(accel, &t->accel) < 0 || t->accel == VMM_ACCEL_AUTO) {
		snprintf(err, errlen, "%s: %s", path, jerr.text[0] ? jerr.text : "bad accel");
		json_decref(j);
		return -EINVAL;
	}
	snprintf(t->image, sizeof(t->image), "%s", image);
	snprintf(t->image_dir, sizeof(t->image_dir), "%s", image_dir);
	snprintf(t->url, sizeof(t->url), "%s", url ? url : "");
	t->has_disk = has_disk;
	t->has_page = has_page;
	t->created_at = created;
	json_decref(j);
	return 0;
}

int vmm_template_restore(const struct vmm_template *t, const struct vmm_vm_opts *opts,
			 struct vmm_vm **out, struct vmm_restore_times *times, char *err,
			 size_t errlen)
{
	char ram[PATH_MAX], state[PATH_MAX], disk[PATH_MAX], page[PATH_MAX], uri[32];
	struct vmm_restore_times tm = { 0 };
	struct vmm_vm_opts o = *opts;
	struct vmm_vm *vm = NULL;
	struct vmm_image img;
	struct vmm_spec spec;
	int64_t t0 = fs_now_ms();
	int fd, rc;

	*out = NULL;
	if ((rc = join(ram, sizeof(ram), t->dir, "ram", err, errlen)) < 0 ||
	    (rc = join(state, sizeof(state), t->dir, "state", err, errlen)) < 0 ||
	    (rc = join(disk, sizeof(disk), t->dir, "disk.qcow2", err, errlen)) < 0 ||
	    (rc = join(page, sizeof(page), t->dir, "page.html", err, errlen)) < 0)
		return rc;
	rc = vmm_image_load(t->image_dir, &img, err, errlen);
	if (rc < 0)
		return rc;
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.accel = t->accel;
	spec.vcpus = t->vcpus;
	spec.memory_mib = t->memory_mib;
	spec.width = t->width;
	spec.height = t->height;
	spec.tb_size_mib = t->tb_size_mib;
	spec.url = t->url[0] ? t->url : NULL;
	spec.ram_path = ram;
	spec.ram_share = false; /* private: the template's pages are never written */
	spec.incoming = true;
	spec.backing_disk = t->has_disk ? disk : NULL;
	o.page_file = t->has_page ? page : NULL;
	fd = open(state, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "open %s: %s", state, strerror(errno));
		return rc;
	}
	o.keep_fds = &fd;
	o.n_keep_fds = 1;
	rc = vmm_vm_start(&spec, &o, &vm, err, errlen);
	close(fd); /* QEMU has its own copy, at the same number */
	if (rc < 0)
		return rc;
	tm.started_ms = fs_now_ms() - t0;
	snprintf(uri, sizeof(uri), "fd:%d", fd);
	if ((rc = ignore_shared(vm, err, errlen)) < 0 ||
	    (rc = vmm_vm_qmp(vm, "migrate-incoming", json_pack("{s:s}", "uri", uri), NULL, 10000,
			     err, errlen)) < 0 ||
	    (rc = wait_migration(vm, MIGRATE_TIMEOUT_MS, err, errlen)) < 0)
		goto fail;
	tm.loaded_ms = fs_now_ms() - t0;
	/* The template was stopped when saved, so the clone stays paused. */
	rc = vmm_vm_qmp(vm, "cont", NULL, NULL, 10000, err, errlen);
	if (rc < 0)
		goto fail;
	tm.running_ms = fs_now_ms() - t0;
	if (times)
		*times = tm;
	*out = vm;
	return 0;
fail:
	vmm_vm_destroy(vm);
	return rc;
}

int vmm_template_set_clock(struct vmm_vm *vm, int timeout_ms, char *err, size_t errlen)
{
	struct qga_client *c = NULL;
	char path[PATH_MAX];
	struct timespec now;
	int rc;

	if ((rc = join(path, sizeof(path), vmm_vm_run_dir(vm), "qga.sock", err, errlen)) < 0)
		return rc;
	rc = qga_client_connect(path, timeout_ms, &c, err, errlen);
	if (rc < 0)
		return rc;
	clock_gettime(CLOCK_REALTIME, &now);
	rc = qga_client_call(c, "guest-set-time",
			     json_pack("{s:I}", "time",
				       (json_int_t)now.tv_sec * 1000000000 + now.tv_nsec),
			     NULL, timeout_ms, err, errlen);
	qga_client_destroy(c);
	return rc;
}

int vmm_template_remove(const char *name, char *err, size_t errlen)
{
	struct vmm_template t;
	int rc;

	if (!vmm_template_name_ok(name)) {
		snprintf(err, errlen, "bad template name '%s'", name);
		return -EINVAL;
	}
	rc = vmm_template_load(name, &t, err, errlen);
	if (rc < 0)
		return rc;
	rc = fs_rm_rf(t.dir);
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", t.dir, strerror(-rc));
	return rc;
}
