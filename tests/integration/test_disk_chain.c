/* tests/integration/test_disk_chain.c: a disk a guest's uid could write is
 * checked before root runs qemu-img on it (vmm-qemu/disk_check.h; issue
 * 25). Real qcow2 files made with qemu-img in a temporary home, with a fake
 * image (an empty kernel and initrd, a 1 MiB rootfs) and a "secret" file
 * the test made in the place of a host file: an honest chain passes; a
 * checkpoint whose disk names the secret as its backing file is refused
 * when it is saved as a template, flattened or not (and the secret's bytes
 * never reach the checkpoint's disk); an export of a template whose disk,
 * or whose parent's disk, names it is refused (and the secret's bytes
 * never reach the export); a disk with an external data file is refused
 * even where the backing name does not matter (an import). No guest boots. */
#include "common/fsutil.h"
#include "tests/lib/shell.h"
#include "vmm-qemu/disk_check.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/template_from.h"
#include "vmm-qemu/tpl_export.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define MARK "I25-SECRET-MARK-7f3a"

static char root[64]; /* the test's temporary folder: everything is under it */
static char img_dir[128], secret[128];
static struct vmm_image img;

/* root/rel into out (128 bytes) */
static void path_in(char *out, const char *rel)
{
	snprintf(out, 128, "%s/%.40s", root, rel);
}

static void qemu_img(const char *args)
{
	char cmd[5 * PATH_MAX], out[1024];

	snprintf(cmd, sizeof(cmd), "qemu-img create -q -f qcow2 %.16000s 2>&1", args);
	assert_int_equal(shell_run(cmd, out, sizeof(out)), 0);
}

/* A template of the fake image in the home's templates: depth, backing
 * ("" for the rootfs), its disk made by qemu-img with disk_args. */
static void make_template(const char *name, int depth, const char *backing, const char *disk_args)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], text[2 * PATH_MAX], args[3 * PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/%s", vmm_templates_dir(), name);
	assert_int_equal(fs_mkdir_p(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/template.json", dir);
	snprintf(text, sizeof(text),
		 "{\"machine\": %d, \"image\": \"fake\", \"image_dir\": \"%s\", \"image_recipe\": "
		 "\"\", \"width\": 640, \"height\": 480, \"vcpus\": 1, \"memory_mib\": 64, "
		 "\"tb_size_mib\": 0, \"accel\": \"tcg\", \"disk\": true, \"page\": false, "
		 "\"created_at\": 0, \"depth\": %d, \"backing\": \"%s\"}",
		 VMM_MACHINE_VERSION, img_dir, depth, backing);
	assert_int_equal(fs_write_file(path, text, strlen(text)), 0);
	snprintf(path, sizeof(path), "%s/ram", dir);
	assert_int_equal(fs_write_file(path, "", 0), 0);
	assert_int_equal(truncate(path, 64 << 20), 0);
	snprintf(path, sizeof(path), "%s/state", dir);
	assert_int_equal(fs_write_file(path, "", 0), 0);
	snprintf(args, sizeof(args), "%s %s/disk.qcow2", disk_args, dir);
	qemu_img(args);
}

/* A checkpoint folder of the fake image whose disk qemu-img makes with
 * disk_args. */
static void make_checkpoint(const char *dir, const char *disk_args)
{
	char path[PATH_MAX + 32], text[2 * PATH_MAX], args[4 * PATH_MAX];

	assert_int_equal(fs_mkdir_p(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/checkpoint.json", dir);
	snprintf(text, sizeof(text),
		 "{\"image_dir\": \"%s\", \"width\": 640, \"height\": 480, \"vcpus\": 1, "
		 "\"memory_mib\": 64, \"tb_size_mib\": 0, \"accel\": \"tcg\", \"disk\": true, "
		 "\"page\": false}",
		 img_dir);
	assert_int_equal(fs_write_file(path, text, strlen(text)), 0);
	snprintf(path, sizeof(path), "%s/state", dir);
	assert_int_equal(fs_write_file(path, "", 0), 0);
	snprintf(args, sizeof(args), "%s %s/disk.qcow2", disk_args, dir);
	qemu_img(args);
}

/* Whether the file at path holds the secret's mark. */
static bool holds_mark(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	bool found;

	if (fs_read_file(path, 64 << 20, &text, &len) < 0)
		return false;
	found = memmem(text, len, MARK, strlen(MARK)) != NULL;
	free(text);
	return found;
}

static int setup(void **state)
{
	char path[PATH_MAX], home[128], err[512];
	const char *json = "{\"name\": \"fake\", \"kernel\": \"vmlinux\", \"initrd\": "
			   "\"initrd.img\", \"rootfs\": \"rootfs.img\", \"append\": \"\"}";
	char block[4096];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/vitrine-diskchain-XXXXXX");
	assert_non_null(mkdtemp(root));
	path_in(home, "home");
	path_in(img_dir, "img");
	path_in(secret, "secret");
	setenv("VITRINE_HOME", home, 1);
	assert_int_equal(fs_mkdir_p(vmm_templates_dir(), 0755), 0);
	assert_int_equal(fs_mkdir_p(img_dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/image.json", img_dir);
	assert_int_equal(fs_write_file(path, json, strlen(json)), 0);
	snprintf(path, sizeof(path), "%s/vmlinux", img_dir);
	assert_int_equal(fs_write_file(path, "", 0), 0);
	snprintf(path, sizeof(path), "%s/initrd.img", img_dir);
	assert_int_equal(fs_write_file(path, "", 0), 0);
	snprintf(path, sizeof(path), "%s/rootfs.img", img_dir);
	assert_int_equal(fs_write_file(path, "", 0), 0);
	assert_int_equal(truncate(path, 1 << 20), 0);
	/* The "host file": the mark in every 4 KiB of its first 64 KiB. */
	memset(block, 'x', sizeof(block));
	memcpy(block, MARK, strlen(MARK));
	for (int i = 0; i < 16; i++) {
		FILE *f = fopen(secret, i ? "a" : "w");

		assert_non_null(f);
		assert_int_equal(fwrite(block, 1, sizeof(block), f), sizeof(block));
		fclose(f);
	}
	assert_int_equal(truncate(secret, 1 << 20), 0);
	assert_int_equal(chmod(secret, 0600), 0);
	assert_int_equal(vmm_image_load(img_dir, &img, err, sizeof(err)), 0);
	assert_string_not_equal(img.rootfs, "");
	/* base: an honest template on the rootfs. */
	snprintf(path, sizeof(path), "-F raw -b %.4000s", img.rootfs);
	make_template("base", 1, "", path);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (root[0] && !strncmp(root, "/tmp/vitrine-diskchain-", 23))
		fs_rm_rf(root);
	return 0;
}

static void test_honest_chain(void **state)
{
	char disk[128], args[3 * PATH_MAX], err[1024];

	(void)state;
	path_in(disk, "honest.qcow2");
	snprintf(args, sizeof(args), "-F qcow2 -b %s/base/disk.qcow2 %s", vmm_templates_dir(),
		 disk);
	qemu_img(args);
	assert_int_equal(vmm_disk_check_chain(disk, "base", &img, err, sizeof(err)), 0);
	/* The same disk is not one on the rootfs. */
	assert_int_equal(vmm_disk_check_chain(disk, NULL, &img, err, sizeof(err)), -EPERM);
}

static void test_forged_checkpoint_refused(void **state)
{
	char ckpt[128], disk[PATH_MAX + 16], args[2 * PATH_MAX], err[1024], dir[PATH_MAX];
	struct vmm_template_from p = { .name = "forged" };
	bool flat = true;
	struct stat st;

	(void)state;
	path_in(ckpt, "ckpt-forged");
	snprintf(args, sizeof(args), "-F raw -b %s", secret);
	make_checkpoint(ckpt, args);
	snprintf(disk, sizeof(disk), "%s/disk.qcow2", ckpt);
	snprintf(dir, sizeof(dir), "%s/forged", vmm_templates_dir());
	p.ckpt = ckpt;
	/* Saved as it is (no parent: a layer on the rootfs). */
	assert_int_equal(vmm_template_from_checkpoint(&p, &flat, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, secret));
	assert_false(flat);
	assert_int_equal(stat(dir, &st), -1);
	/* On a parent with a chain too deep: flattened (qemu-img rebase,
	 * which would read the secret) unless refused first. */
	p.parent = "base";
	p.max_depth = 1;
	assert_int_equal(vmm_template_from_checkpoint(&p, &flat, err, sizeof(err)), -EPERM);
	assert_false(holds_mark(disk));
	assert_int_equal(stat(dir, &st), -1);
}

/* Reads the whole export of name; true when it holds the mark. */
static bool export_holds_mark(struct tpl_export *x)
{
	uint64_t size = tpl_export_size(x), off = 0;
	unsigned char *buf = malloc(size);
	bool found;

	assert_non_null(buf);
	while (off < size) {
		size_t k = tpl_export_read(x, off, buf + off, size - off);

		assert_true(k > 0);
		off += k;
	}
	found = memmem(buf, size, MARK, strlen(MARK)) != NULL;
	free(buf);
	return found;
}

static void test_forged_export_refused(void **state)
{
	char args[2 * PATH_MAX], err[1024];
	struct tpl_export *x = NULL;
	int rc;

	(void)state;
	/* A template two layers deep whose disk names the secret. */
	snprintf(args, sizeof(args), "-F raw -b %s", secret);
	make_template("deep", 2, "base", args);
	rc = tpl_export_open("deep", &x, err, sizeof(err));
	if (rc == 0) {
		bool leaked = export_holds_mark(x);

		tpl_export_free(x);
		fail_msg("the export was made (%s the secret's bytes)",
			 leaked ? "with" : "without");
	}
	assert_int_equal(rc, -EPERM);
	assert_non_null(strstr(err, secret));
	/* An honest layer on a parent whose own disk names it. */
	make_template("bad-base", 1, "", args);
	snprintf(args, sizeof(args), "-F qcow2 -b %s/bad-base/disk.qcow2", vmm_templates_dir());
	make_template("on-bad", 2, "bad-base", args);
	assert_int_equal(tpl_export_open("on-bad", &x, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "bad-base/disk.qcow2"));
}

static void test_data_file_refused(void **state)
{
	char disk[128], data[128], args[3 * PATH_MAX], err[1024];

	(void)state;
	path_in(disk, "datafile.qcow2");
	path_in(data, "datafile.raw");
	snprintf(args, sizeof(args), "-o data_file=%s %s 1M", data, disk);
	qemu_img(args);
	assert_int_equal(vmm_disk_check(disk, NULL, NULL, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "external data file"));
	/* Not a qcow2 at all. */
	assert_int_equal(vmm_disk_check(secret, NULL, NULL, err, sizeof(err)), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest_chain),
		cmocka_unit_test(test_forged_checkpoint_refused),
		cmocka_unit_test(test_forged_export_refused),
		cmocka_unit_test(test_data_file_refused),
	};

	return cmocka_run_group_tests_name("disk chains checked", tests, setup, teardown);
}
