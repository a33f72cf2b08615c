/* vmm-qemu/tpl_export.c: see tpl_export.h. The archive is a list of
 * members (template.json from memory, the others from descriptors), each
 * a header, its bytes and its padding, then SHA256SUMS and the two zero
 * blocks; tpl_export_read walks it with one cursor. */
#include "vmm-qemu/tpl_export.h"

#include "common/fsutil.h"
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
#include <time.h>
#include <unistd.h>

struct tpl_export {
	int fd[TPL_FILE_COUNT]; /* owned; -1 when absent (and for META, SUMS) */
	uint64_t size[TPL_FILE_COUNT];
	bool present[TPL_FILE_COUNT];
	uint64_t offset[TPL_FILE_COUNT]; /* of each member's header */
	char *meta; /* owned: template.json's text */
	char sums[TPL_ARCHIVE_SUMS_MAX + 1]; /* made when reached */
	uint8_t digest[TPL_FILE_COUNT][SHA256_LEN];
	struct sha256_ctx sha; /* of the member being read */
	int64_t mtime;
	uint64_t total, pos;
};

static uint64_t padded(uint64_t n)
{
	return (n + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

/* The metadata another host gets: the template's own, its disk on the
 * rootfs alone (backing none, depth 1), no session of this host. */
static char *export_meta(const char *dir, bool has_disk, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	json_error_t jerr;
	json_t *j;
	char *text;

	snprintf(path, sizeof(path), "%s/template.json", dir);
	if (!(j = json_load_file(path, 0, &jerr))) {
		snprintf(err, errlen, "%s: %s", path, jerr.text);
		return NULL;
	}
	json_object_del(j, "backing");
	json_object_del(j, "from_session");
	json_object_set_new(j, "depth", json_integer(has_disk ? 1 : 0));
	text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(j);
	if (!text)
		snprintf(err, errlen, "out of memory");
	return text;
}

/* A copy of disk flattened onto rootfs (a temporary directory beside the
 * templates, removed at once: the descriptor is all that stays). */
static int flat_disk(const char *disk, const char *rootfs, char *err, size_t errlen)
{
	char tmp[PATH_MAX], copy[PATH_MAX + 16], log[PATH_MAX + 16];
	char *rebase[] = { "qemu-img", "rebase", "-q",		 "-f", "qcow2", "-F",
			   "raw",      "-b",	 (char *)rootfs, copy, NULL };
	int fd = -1, rc;

	snprintf(tmp, sizeof(tmp), "%s/.export-XXXXXX", vmm_templates_dir());
	if (!mkdtemp(tmp)) {
		snprintf(err, errlen, "mkdtemp %s: %s", tmp, strerror(errno));
		return -errno;
	}
	snprintf(copy, sizeof(copy), "%s/disk.qcow2", tmp);
	snprintf(log, sizeof(log), "%s/rebase.log", tmp);
	rc = fs_copy_file(disk, copy, 0644);
	if (rc < 0)
		snprintf(err, errlen, "copy %s: %s", disk, strerror(-rc));
	if (rc == 0) {
		rc = vmm_proc_run(rebase, log, 600 * 1000, err, errlen);
		if (rc > 0) {
			snprintf(err, errlen, "qemu-img rebase of the export's disk failed (%d)",
				 rc);
			rc = -EIO;
		}
	}
	if (rc == 0 && (fd = open(copy, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "open %s: %s", copy, strerror(errno));
	}
	fs_rm_rf(tmp);
	return rc < 0 ? rc : fd;
}

int tpl_export_open(const char *name, struct tpl_export **out, char *err, size_t errlen)
{
	struct tpl_export *x;
	struct vmm_template t;
	struct vmm_image img;
	uint64_t off = 0;
	int rc;

	*out = NULL;
	rc = vmm_template_load(name, &t, err, errlen);
	if (rc < 0)
		return rc;
	if (!(x = calloc(1, sizeof(*x)))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int f = 0; f < TPL_FILE_COUNT; f++)
		x->fd[f] = -1;
	x->mtime = time(NULL);
	if (!(x->meta = export_meta(t.dir, t.has_disk, err, errlen))) {
		rc = -EINVAL;
		goto fail;
	}
	for (int f = TPL_FILE_RAM; f < TPL_FILE_SUMS; f++) {
		char path[PATH_MAX + 16];
		struct stat st;

		if ((f == TPL_FILE_DISK && !t.has_disk) || (f == TPL_FILE_PAGE && !t.has_page))
			continue;
		snprintf(path, sizeof(path), "%s/%s", t.dir, tpl_file_names[f]);
		/* The disk was a guest's to write once: its chain is checked
		 * before qemu-img reads it, or another host imports it. */
		if (f == TPL_FILE_DISK &&
		    ((rc = vmm_image_load(t.image_dir, &img, err, errlen)) < 0 ||
		     (rc = vmm_disk_check_chain(path, t.backing, &img, err, errlen)) < 0))
			goto fail;
		if (f == TPL_FILE_DISK && t.depth > 1) {
			if ((rc = flat_disk(path, img.rootfs, err, errlen)) < 0)
				goto fail;
			x->fd[f] = rc;
		} else if ((x->fd[f] = fs_open_regular(path, O_RDONLY, 0)) < 0) {
			if (f == TPL_FILE_SCREEN && x->fd[f] == -ENOENT)
				continue; /* a template may lack its picture */
			rc = x->fd[f];
			snprintf(err, errlen, "open %s: %s", path, strerror(-rc));
			goto fail;
		}
		if (fstat(x->fd[f], &st) < 0) {
			rc = -errno;
			snprintf(err, errlen, "stat %s: %s", path, strerror(errno));
			goto fail;
		}
		x->size[f] = (uint64_t)st.st_size;
		x->present[f] = true;
	}
	x->present[TPL_FILE_META] = x->present[TPL_FILE_SUMS] = true;
	x->size[TPL_FILE_META] = strlen(x->meta);
	x->size[TPL_FILE_SUMS] = tpl_archive_sums(x->present, x->digest, x->sums, sizeof(x->sums));
	for (int f = 0; f < TPL_FILE_COUNT; f++) {
		if (!x->present[f])
			continue;
		x->offset[f] = off;
		off += TAR_BLOCK + padded(x->size[f]);
	}
	x->total = off + 2 * TAR_BLOCK;
	*out = x;
	return 0;
fail:
	tpl_export_free(x);
	return rc;
}

uint64_t tpl_export_size(const struct tpl_export *x)
{
	return x->total;
}

/* Up to cap bytes of member f's data from in (inside it), hashed. */
static size_t member_data(struct tpl_export *x, int f, uint64_t in, unsigned char *buf, size_t cap)
{
	size_t k = x->size[f] - in < cap ? (size_t)(x->size[f] - in) : cap;
	ssize_t got;

	if (f == TPL_FILE_META)
		memcpy(buf, x->meta + in, k);
	else if (f == TPL_FILE_SUMS)
		memcpy(buf, x->sums + in, k);
	else if ((got = pread(x->fd[f], buf, k, (off_t)in)) < 0 || (size_t)got != k)
		return 0; /* shrank, or an I/O error: the answer is cut */
	sha256_update(&x->sha, buf, k);
	if (in + k == x->size[f])
		sha256_final(&x->sha, x->digest[f]);
	return k;
}

size_t tpl_export_read(void *ud, uint64_t off, unsigned char *buf, size_t cap)
{
	struct tpl_export *x = ud;
	size_t done = 0;

	if (off != x->pos)
		return 0;
	while (done < cap && x->pos < x->total) {
		uint64_t pos = x->pos;
		size_t k = 0;
		int f = TPL_FILE_COUNT;

		for (int i = TPL_FILE_COUNT - 1; i >= 0; i--)
			if (x->present[i] && x->offset[i] <= pos) {
				f = i;
				break;
			}
		if (f == TPL_FILE_COUNT || pos >= x->offset[f] + TAR_BLOCK + padded(x->size[f])) {
			k = cap - done; /* the zero blocks at the end */
			if (k > x->total - pos)
				k = (size_t)(x->total - pos);
			memset(buf + done, 0, k);
		} else if (pos < x->offset[f] + TAR_BLOCK) {
			struct tar_member m = { .mtime = x->mtime, .size = x->size[f] };
			unsigned char h[TAR_BLOCK];
			uint64_t in = pos - x->offset[f];

			if (f == TPL_FILE_SUMS) /* every digest is known now */
				tpl_archive_sums(x->present, x->digest, x->sums, sizeof(x->sums));
			if (in == 0)
				sha256_init(&x->sha);
			snprintf(m.name, sizeof(m.name), "%s", tpl_file_names[f]);
			tar_header(&m, h);
			k = TAR_BLOCK - (size_t)in < cap - done ? TAR_BLOCK - (size_t)in
								: cap - done;
			memcpy(buf + done, h + in, k);
			if (in + k == TAR_BLOCK && x->size[f] == 0)
				sha256_final(&x->sha, x->digest[f]);
		} else if (pos < x->offset[f] + TAR_BLOCK + x->size[f]) {
			k = member_data(x, f, pos - x->offset[f] - TAR_BLOCK, buf + done,
					cap - done);
			if (k == 0)
				return 0;
		} else { /* padding */
			uint64_t end = x->offset[f] + TAR_BLOCK + padded(x->size[f]);

			k = end - pos < cap - done ? (size_t)(end - pos) : cap - done;
			memset(buf + done, 0, k);
		}
		done += k;
		x->pos += k;
	}
	return done;
}

void tpl_export_free(void *ud)
{
	struct tpl_export *x = ud;

	if (!x)
		return;
	for (int f = 0; f < TPL_FILE_COUNT; f++)
		if (x->fd[f] >= 0)
			close(x->fd[f]);
	free(x->meta);
	free(x);
}
