/* vmm-qemu/tpl_import.c: see tpl_import.h. The archive's reader
 * (tpl_archive.c) hands each member's bytes to one staging file at a
 * time; the checks against this host wait for the end, when the
 * checksums have held. */
#include "vmm-qemu/tpl_import.h"

#include "common/fsutil.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/disk_check.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/tpl_archive.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IMPORT_BUF (64u << 10)

struct tpl_import {
	char name[VMM_TEMPLATE_NAME_MAX + 1];
	char stage[PATH_MAX]; /* owned: removed by tpl_import_free unless installed */
	bool installed;
	struct tpl_unpack unpack;
	int fd; /* owned: the member being written, or -1 */
	uint64_t at; /* its offset of buf[0] */
	unsigned char buf[IMPORT_BUF];
	size_t n_buf;
};

/* buf to the file at its offset; whole zero pages skipped (holes). */
static int flush(struct tpl_import *im, char *err, size_t errlen)
{
	for (size_t i = 0; i < im->n_buf; i += 4096) {
		size_t k = im->n_buf - i < 4096 ? im->n_buf - i : 4096;
		bool zero = true;

		for (size_t j = 0; j < k && zero; j++)
			zero = im->buf[i + j] == 0;
		if (!zero && pwrite(im->fd, im->buf + i, k, (off_t)(im->at + i)) != (ssize_t)k) {
			snprintf(err, errlen, "write %s: %s", im->stage,
				 strerror(errno ? errno : EIO));
			return -1;
		}
	}
	im->at += im->n_buf;
	im->n_buf = 0;
	return 0;
}

static int on_begin(void *ud, enum tpl_file f, uint64_t size, char *err, size_t errlen)
{
	struct tpl_import *im = ud;
	char path[PATH_MAX + 16];

	(void)size;
	if (f == TPL_FILE_SUMS)
		return 0; /* checked by the reader, not kept */
	snprintf(path, sizeof(path), "%s/%s", im->stage, tpl_file_names[f]);
	im->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (im->fd < 0) {
		snprintf(err, errlen, "create %s: %s", path, strerror(errno));
		return -1;
	}
	im->at = 0;
	im->n_buf = 0;
	return 0;
}

static int on_data(void *ud, enum tpl_file f, const void *p, size_t n, char *err, size_t errlen)
{
	struct tpl_import *im = ud;
	const unsigned char *b = p;

	if (f == TPL_FILE_SUMS)
		return 0;
	while (n) {
		size_t k = IMPORT_BUF - im->n_buf < n ? IMPORT_BUF - im->n_buf : n;

		memcpy(im->buf + im->n_buf, b, k);
		im->n_buf += k;
		b += k;
		n -= k;
		if (im->n_buf == IMPORT_BUF && flush(im, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int on_end(void *ud, enum tpl_file f, char *err, size_t errlen)
{
	struct tpl_import *im = ud;
	int rc = 0;

	if (f == TPL_FILE_SUMS)
		return 0;
	if (flush(im, err, errlen) < 0)
		rc = -1;
	else if (ftruncate(im->fd, (off_t)im->at) < 0 || fchmod(im->fd, 0444) < 0) {
		snprintf(err, errlen, "%s: %s", tpl_file_names[f], strerror(errno));
		rc = -1;
	}
	close(im->fd);
	im->fd = -1;
	return rc;
}

static const struct tpl_unpack_ops import_ops = { on_begin, on_data, on_end };

int tpl_import_begin(const char *name, struct tpl_import **out, char *err, size_t errlen)
{
	char path[PATH_MAX + 80];
	struct tpl_import *im;
	struct stat st;
	int rc;

	*out = NULL;
	if (!vmm_template_name_ok(name)) {
		snprintf(err, errlen, "bad template name '%s' (1-63 of a-z, 0-9, '_', '-')", name);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/%s", vmm_templates_dir(), name);
	if (lstat(path, &st) == 0) {
		snprintf(err, errlen, "a template called %s exists", name);
		return -EEXIST;
	}
	if ((rc = fs_mkdir_p(vmm_templates_dir(), 0755)) < 0) {
		snprintf(err, errlen, "create %s: %s", vmm_templates_dir(), strerror(-rc));
		return rc;
	}
	if (!(im = calloc(1, sizeof(*im)))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	im->fd = -1;
	snprintf(im->name, sizeof(im->name), "%s", name);
	snprintf(im->stage, sizeof(im->stage), "%s/.import-XXXXXX", vmm_templates_dir());
	if (!mkdtemp(im->stage) || chmod(im->stage, 0755) < 0) {
		rc = -errno;
		snprintf(err, errlen, "mkdtemp %s: %s", im->stage, strerror(errno));
		im->stage[0] = '\0';
		tpl_import_free(im);
		return rc;
	}
	tpl_unpack_init(&im->unpack, &import_ops, im);
	*out = im;
	return 0;
}

int tpl_import_write(struct tpl_import *im, const void *p, size_t n)
{
	return tpl_unpack_feed(&im->unpack, p, n);
}

const char *tpl_import_error(const struct tpl_import *im)
{
	return im->unpack.state == TPL_UNPACK_BROKEN ? im->unpack.err : "";
}

const char *tpl_import_name(const struct tpl_import *im)
{
	return im->name;
}

/* Reads the staged template.json, checks it against this host and writes
 * it back with this host's image dir. */
static int check_meta(struct tpl_import *im, char *err, size_t errlen)
{
	char path[PATH_MAX + 32], ram[PATH_MAX + 16];
	const char *image = NULL, *recipe = "", *accel = NULL;
	int machine = 0, memory_mib = 0, has_disk = 0, has_page = 0, rc = -ESTALE;
	enum vmm_accel acc, got;
	struct vmm_image img;
	json_error_t jerr;
	struct stat st;
	char why[256];
	json_t *j;

	snprintf(path, sizeof(path), "%s/template.json", im->stage);
	snprintf(ram, sizeof(ram), "%s/ram", im->stage);
	if (!(j = json_load_file(path, 0, &jerr)) ||
	    json_unpack_ex(j, &jerr, 0, "{s:i, s:s, s?s, s:i, s:s, s:b, s:b}", "machine", &machine,
			   "image", &image, "image_recipe", &recipe, "memory_mib", &memory_mib,
			   "accel", &accel, "disk", &has_disk, "page", &has_page) < 0) {
		snprintf(err, errlen, "template.json: %s", jerr.text);
		json_decref(j);
		return -EPROTO;
	}
	if (machine != VMM_MACHINE_VERSION) {
		snprintf(err, errlen,
			 "made for another set of devices (machine %d, this host's is %d)", machine,
			 VMM_MACHINE_VERSION);
	} else if (!vmm_template_name_ok(image) ||
		   vmm_image_load(image, &img, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "made from image '%.64s', which this host has not built",
			 image);
	} else if (strcmp(img.recipe, recipe)) {
		snprintf(err, errlen,
			 "made from another build of image %s (%.64s, this host's is %s)", image,
			 recipe[0] ? recipe : "unknown", img.recipe[0] ? img.recipe : "unknown");
	} else if (vmm_accel_parse(accel, &acc) < 0 || acc == VMM_ACCEL_AUTO) {
		snprintf(err, errlen, "template.json: bad accel '%.32s'", accel);
		rc = -EPROTO;
	} else if (acc == VMM_ACCEL_KVM &&
		   vmm_accel_resolve(VMM_ACCEL_KVM, &img, "qemu-system-x86_64", &got, why,
				     sizeof(why)) < 0) {
		snprintf(err, errlen, "saved under KVM, which this host lacks: %s", why);
	} else if (stat(ram, &st) < 0 || memory_mib <= 0 ||
		   (uint64_t)st.st_size != (uint64_t)memory_mib << 20) {
		snprintf(err, errlen, "ram is not the %d MiB its template.json says", memory_mib);
		rc = -EPROTO;
	} else if ((bool)has_disk != im->unpack.seen[TPL_FILE_DISK] ||
		   (bool)has_disk != (img.rootfs[0] != '\0') ||
		   (bool)has_page != im->unpack.seen[TPL_FILE_PAGE]) {
		snprintf(err, errlen, "its files do not match its template.json (disk, page)");
		rc = -EPROTO;
	} else {
		rc = 0;
	}
	if (rc == 0) {
		json_object_set_new(j, "image_dir", json_string(img.dir));
		json_object_del(j, "backing");
		json_object_set_new(j, "depth", json_integer(has_disk ? 1 : 0));
		if (unlink(path) < 0 || json_dump_file(j, path, JSON_INDENT(2)) < 0 ||
		    chmod(path, 0644) < 0) {
			snprintf(err, errlen, "write %s: %s", path, strerror(errno ? errno : EIO));
			rc = -EIO;
		}
	}
	if (rc == 0 && has_disk) {
		char disk[PATH_MAX + 16], log[PATH_MAX + 16];
		char *argv[] = { "qemu-img", "rebase", "-q", "-u",	 "-f", "qcow2",
				 "-F",	     "raw",    "-b", img.rootfs, disk, NULL };

		snprintf(disk, sizeof(disk), "%s/disk.qcow2", im->stage);
		snprintf(log, sizeof(log), "%s/rebase.log", im->stage);
		/* rebase -u never opens the backing file the header names,
		 * but qemu-img would open an external data file. */
		if ((rc = vmm_disk_check(disk, NULL, NULL, err, errlen)) < 0)
			rc = -EPROTO;
		else if ((chmod(disk, 0644) < 0 ||
			  (rc = vmm_proc_run(argv, log, 60000, err, errlen)) != 0 ||
			  chmod(disk, 0444) < 0)) {
			if (rc > 0)
				snprintf(err, errlen, "qemu-img rebase of disk.qcow2 failed (%d)",
					 rc);
			rc = -EPROTO;
		}
		unlink(log);
	}
	json_decref(j);
	return rc;
}

int tpl_import_finish(struct tpl_import *im, char *err, size_t errlen)
{
	char to[PATH_MAX + 80];
	struct vmm_template t;
	int rc;

	if (tpl_unpack_finish(&im->unpack) < 0) {
		snprintf(err, errlen, "%s", im->unpack.err);
		return -EPROTO;
	}
	if ((rc = check_meta(im, err, errlen)) < 0)
		return rc;
	snprintf(to, sizeof(to), "%s/%s", vmm_templates_dir(), im->name);
	/* renameat2's RENAME_NOREPLACE would do for files; a directory
	 * rename over an empty one succeeds, so look first and let a
	 * non-empty one fail it. */
	if (access(to, F_OK) == 0 || rename(im->stage, to) < 0) {
		rc = errno == ENOTEMPTY || errno == EEXIST || access(to, F_OK) == 0 ? -EEXIST
										    : -errno;
		snprintf(err, errlen,
			 rc == -EEXIST ? "a template called %s exists" : "install %s: %s", im->name,
			 strerror(-rc));
		return rc;
	}
	im->installed = true;
	if ((rc = vmm_template_load(im->name, &t, err, errlen)) < 0) {
		fs_rm_rf(to); /* checked above: never here but for a bug */
		return rc == -ESTALE ? rc : -EPROTO;
	}
	return 0;
}

void tpl_import_free(struct tpl_import *im)
{
	if (!im)
		return;
	if (im->fd >= 0)
		close(im->fd);
	if (im->stage[0] && !im->installed)
		fs_rm_rf(im->stage);
	free(im);
}
