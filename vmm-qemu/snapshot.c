/* vmm-qemu/snapshot.c: see snapshot.h.
 *
 * The mechanics follow what QEMU 7.2 allows (measured, see DESIGN.md): the
 * state goes through getfd + "fd:" URIs, never "exec:" (which -sandbox
 * spawn=deny kills), and a clone cannot be given -incoming fd:N at exec, as
 * the x-ignore-shared capability must be set before the stream is read: it
 * inherits the fd, starts with -incoming defer, and is told over QMP. */
#include "vmm-qemu/snapshot.h"

#include "common/fsutil.h"
#include "vmm-qemu/disk_check.h"
#include "vmm-qemu/migrate.h"
#include "vmm-qemu/tpl_ram.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *vmm_templates_dir(void)
{
	/* The loop and the job threads ask at once: each its own buffer. */
	static _Thread_local char dir[PATH_MAX];
	const char *home = getenv("VITRINE_HOME");

	snprintf(dir, sizeof(dir), "%s/templates", home && *home ? home : "/var/lib/vitrine");
	return dir;
}

bool vmm_template_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > VMM_TEMPLATE_NAME_MAX)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '-'))
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

long long vmm_template_bytes(const char *dir)
{
	static const char *const files[] = { "ram",	  "state",	"disk.qcow2",
					     "page.html", "screen.ppm", "template.json" };
	long long sum = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX + 16];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (stat(path, &st) == 0)
			sum += (long long)st.st_blocks * 512;
	}
	return sum;
}

int vmm_template_prepare(const char *dir, struct vmm_spec *spec, char *ram_path_buf, size_t buflen,
			 char *err, size_t errlen)
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

/* fs_move_regular() with a reason in err: from is in the guest's run dir,
 * whose uid may have put a link there in the file's place. */
static int move(const char *from, const char *to, char *err, size_t errlen)
{
	int rc = fs_move_regular(from, to);

	if (rc < 0)
		snprintf(err, errlen, "move %s to %s: %s", from, to,
			 rc == -EINVAL ? "not a regular file" : strerror(-rc));
	return rc;
}

static int write_template_json(const struct vmm_spec *spec, const char *dir, bool has_disk,
			       bool has_page, const struct vmm_template_lineage *lin, char *err,
			       size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *j;
	int rc;

	if ((rc = join(path, sizeof(path), dir, "template.json", err, errlen)) < 0)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	j = json_pack("{s:i, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:s, s:s*, s:b, s:b, s:I}",
		      "machine", VMM_MACHINE_VERSION, "image", spec->image->name, "image_dir",
		      spec->image->dir, "image_recipe", spec->image->recipe, "width", spec->width,
		      "height", spec->height, "vcpus", spec->vcpus, "memory_mib", spec->memory_mib,
		      "tb_size_mib", spec->tb_size_mib, "accel", vmm_accel_name(spec->accel), "url",
		      spec->url, "disk", has_disk, "page", has_page, "created_at",
		      (json_int_t)time(NULL));
	if (j && lin) {
		json_t *more = json_pack("{s:s*, s:s*, s:s*, s:i}", "parent", lin->parent,
					 "backing", lin->backing, "from_session", lin->from_session,
					 "depth", lin->depth);

		if (!more || json_object_update(j, more) < 0) {
			json_decref(j);
			j = NULL;
		}
		json_decref(more);
	}
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
 * their QEMU user) only ever read it. Through a descriptor of the file
 * itself, never a link. Best effort. */
static void freeze(const char *path)
{
	int fd = fs_open_regular(path, O_RDONLY, 0);

	if (fd < 0)
		return;
	if (fchown(fd, getuid(), getgid()) < 0) {
		/* not root: the file is already ours */
	}
	fchmod(fd, 0444);
	close(fd);
}

int vmm_template_save(struct vmm_vm *vm, const char *template_dir, char *err, size_t errlen)
{
	return vmm_template_save_as(vm, template_dir, NULL, err, errlen);
}

int vmm_template_save_as(struct vmm_vm *vm, const char *template_dir,
			 const struct vmm_template_lineage *lin, char *err, size_t errlen)
{
	const struct vmm_spec *spec = vmm_vm_spec(vm);
	char ram[PATH_MAX], state[PATH_MAX], screen[PATH_MAX], from[PATH_MAX], disk[PATH_MAX];
	bool has_disk = spec->image->rootfs[0] != '\0';
	int rc;

	if ((rc = join(ram, sizeof(ram), template_dir, "ram", err, errlen)) < 0 ||
	    (rc = join(state, sizeof(state), template_dir, "state", err, errlen)) < 0 ||
	    (rc = join(screen, sizeof(screen), template_dir, "screen.ppm", err, errlen)) < 0 ||
	    (rc = join(disk, sizeof(disk), template_dir, "disk.qcow2", err, errlen)) < 0)
		return rc;
	if (!spec->ram_path || !spec->ram_share || strcmp(spec->ram_path, ram)) {
		snprintf(err, errlen,
			 "the guest's RAM is not the shared file %s "
			 "(start it from a spec vmm_template_prepare() filled)",
			 ram);
		return -EINVAL;
	}
	rc = vmm_vm_screendump(vm, screen, "ppm", err, errlen);
	if (rc == 0)
		rc = vmm_vm_qmp(vm, "stop", NULL, NULL, 10000, err, errlen);
	if (rc == 0)
		rc = vmm_migrate_ignore_shared(vm, true, err, errlen);
	if (rc == 0)
		rc = vmm_migrate_to_file(vm, state, err, errlen);
	if (rc == 0)
		rc = vmm_vm_quit(vm, err, errlen);
	if (rc < 0)
		return rc;
	if (has_disk) {
		if ((rc = join(from, sizeof(from), vmm_vm_run_dir(vm), "disk.qcow2", err, errlen)) <
			    0 ||
		    (rc = move(from, disk, err, errlen)) < 0)
			return rc;
		/* Its header was the guest's uid's to write: a template's disk
		 * names exactly the backing file it was given (disk_check.h). */
		if ((rc = vmm_disk_check_chain(disk, lin ? lin->backing : NULL, spec->image, err,
					       errlen)) < 0)
			return rc;
		freeze(disk);
	}
	if (spec->has_page) {
		char page[PATH_MAX];

		if ((rc = join(from, sizeof(from), vmm_vm_run_dir(vm), "page.html", err, errlen)) <
			    0 ||
		    (rc = join(page, sizeof(page), template_dir, "page.html", err, errlen)) < 0 ||
		    (rc = move(from, page, err, errlen)) < 0)
			return rc;
		freeze(page);
	}
	freeze(state);
	freeze(screen);
	freeze(ram); /* clones map a sealed copy of it (tpl_ram.h) */
	return write_template_json(spec, template_dir, has_disk, spec->has_page, lin, err, errlen);
}

int vmm_template_load(const char *name, struct vmm_template *t, char *err, size_t errlen)
{
	const char *image, *image_dir, *accel, *url = NULL, *recipe = "";
	const char *parent = NULL, *backing = NULL, *from_session = NULL;
	struct vmm_image img;
	char path[PATH_MAX];
	json_error_t jerr;
	json_t *j;
	json_int_t created = 0;
	int has_disk = 0, has_page = 0, machine = 0, depth = -1, rc;

	memset(t, 0, sizeof(*t));
	if (!strchr(name, '/') && !vmm_template_name_ok(name)) {
		snprintf(err, errlen, "bad template name '%s' (1-63 of a-z, 0-9, '_', '-')", name);
		return -EINVAL;
	}
	rc = strchr(name, '/')
		     ? snprintf(t->dir, sizeof(t->dir), "%s", name)
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
	if (json_unpack_ex(j, &jerr, 0,
			   "{s?i, s:s, s:s, s?s, s:i, s:i, s:i, s:i, s:i, s:s, s?s, s:b, s:b, s:I, "
			   "s?s, s?s, s?s, s?i}",
			   "machine", &machine, "image", &image, "image_dir", &image_dir,
			   "image_recipe", &recipe, "width", &t->width, "height", &t->height,
			   "vcpus", &t->vcpus, "memory_mib", &t->memory_mib, "tb_size_mib",
			   &t->tb_size_mib, "accel", &accel, "url", &url, "disk", &has_disk, "page",
			   &has_page, "created_at", &created, "parent", &parent, "backing",
			   &backing, "from_session", &from_session, "depth", &depth) < 0 ||
	    vmm_accel_parse(accel, &t->accel) < 0 || t->accel == VMM_ACCEL_AUTO) {
		snprintf(err, errlen, "%s: %s", path, jerr.text[0] ? jerr.text : "bad accel");
		json_decref(j);
		return -EINVAL;
	}
	snprintf(t->image, sizeof(t->image), "%s", image);
	snprintf(t->image_dir, sizeof(t->image_dir), "%s", image_dir);
	snprintf(t->url, sizeof(t->url), "%s", url ? url : "");
	snprintf(t->image_recipe, sizeof(t->image_recipe), "%s", recipe);
	t->has_disk = has_disk;
	t->has_page = has_page;
	t->created_at = created;
	snprintf(t->parent, sizeof(t->parent), "%s", parent ? parent : "");
	snprintf(t->backing, sizeof(t->backing), "%s", backing ? backing : "");
	snprintf(t->from_session, sizeof(t->from_session), "%s", from_session ? from_session : "");
	t->depth = depth >= 0 ? depth : has_disk ? 1 : 0; /* built ones say nothing */
	{
		const char *kl = json_string_value(json_object_get(j, "keyboard_layout"));

		snprintf(t->keyboard_layout, sizeof(t->keyboard_layout), "%s", kl ? kl : "us");
	}
	json_decref(j);
	/* A template's disk and RAM only fit the build of the image it was
	 * made from: a rebuilt image makes it stale. */
	if (machine != VMM_MACHINE_VERSION) {
		snprintf(err, errlen,
			 "template %s was made for another set of devices (machine %d, now "
			 "%d): make it again",
			 name, machine, VMM_MACHINE_VERSION);
		return -ESTALE;
	}
	if (vmm_image_load(t->image_dir, &img, err, errlen) < 0)
		return -ESTALE;
	if (strcmp(img.recipe, t->image_recipe)) {
		snprintf(
			err, errlen,
			"template %s was made from another build of image %s (%s, now %s): make it "
			"again",
			name, t->image, t->image_recipe[0] ? t->image_recipe : "unknown",
			img.recipe[0] ? img.recipe : "unknown");
		return -ESTALE;
	}
	return 0;
}

int vmm_template_restore(const struct vmm_template *t, const struct vmm_vm_opts *opts,
			 struct vmm_vm **out, struct vmm_restore_times *times, char *err,
			 size_t errlen)
{
	char ram[PATH_MAX], state[PATH_MAX], disk[PATH_MAX], page[PATH_MAX];
	struct vmm_restore_times tm = { 0 };
	struct vmm_vm_opts o = *opts;
	struct vmm_vm *vm = NULL;
	struct vmm_image img;
	struct vmm_spec spec;
	int64_t t0 = fs_now_ms();
	char ram_proc[32];
	int fd, ram_fd, keep[2], rc;

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
	/* The RAM as a sealed memfd (tpl_ram.h): the clone maps it private
	 * and cannot write the template. */
	ram_fd = vmm_tpl_ram_fd(ram, err, errlen);
	if (ram_fd < 0)
		return ram_fd;
	snprintf(ram_proc, sizeof(ram_proc), "/proc/self/fd/%d", ram_fd);
	spec.ram_path = ram_proc;
	fd = open(state, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "open %s: %s", state, strerror(errno));
		close(ram_fd);
		return rc;
	}
	keep[0] = fd;
	keep[1] = ram_fd;
	o.keep_fds = keep;
	o.n_keep_fds = 2;
	rc = vmm_vm_start(&spec, &o, &vm, err, errlen);
	close(fd); /* QEMU has its own copies, at the same numbers */
	close(ram_fd);
	if (rc < 0)
		return rc;
	tm.started_ms = fs_now_ms() - t0;
	vmm_vm_opts_step(opts, VMM_STEP_LOAD);
	if ((rc = vmm_migrate_ignore_shared(vm, true, err, errlen)) < 0 ||
	    (rc = vmm_migrate_incoming(vm, fd, err, errlen)) < 0)
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

int vmm_template_remove(const char *name, char *err, size_t errlen)
{
	struct vmm_template t;
	int rc;

	if (!vmm_template_name_ok(name)) {
		snprintf(err, errlen, "bad template name '%s'", name);
		return -EINVAL;
	}
	rc = vmm_template_load(name, &t, err, errlen);
	if (rc < 0 && rc != -ESTALE) /* a stale one is removed all the same */
		return rc;
	rc = fs_rm_rf(t.dir);
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", t.dir, strerror(-rc));
	return rc;
}
