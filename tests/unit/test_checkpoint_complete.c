/* tests/unit/test_checkpoint_complete.c: vmm_checkpoint_complete, which
 * adoption asks of a checkpoint an interrupted pause to disk left: whole
 * only with its description, its state and (when it has one) its disk; a
 * disk still in the gone guest's run dir (the pause's writer died after
 * QEMU quit, before the move) is moved in; links are never taken for
 * files, at either end. */
#include "common/fsutil.h"
#include "vmm-qemu/checkpoint.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char top[64], ckpt[128], run[128];

static void put(const char *dir, const char *file, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_int_equal(fs_write_file(path, text, strlen(text)), 0);
}

static bool exists(const char *dir, const char *file)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return lstat(path, &st) == 0;
}

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/vitrine-ckpt-XXXXXX");
	assert_non_null(mkdtemp(top));
	snprintf(ckpt, sizeof(ckpt), "%s/vm-ckpt-a", top);
	snprintf(run, sizeof(run), "%s/vm-run", top);
	assert_int_equal(mkdir(ckpt, 0700), 0);
	assert_int_equal(mkdir(run, 0700), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rm_rf(top);
	return 0;
}

static void test_without_a_disk(void **state)
{
	(void)state;
	assert_false(vmm_checkpoint_complete(ckpt, NULL)); /* nothing yet */
	put(ckpt, "checkpoint.json", "{\"disk\": false}");
	assert_false(vmm_checkpoint_complete(ckpt, NULL)); /* no state */
	put(ckpt, "state", "QEVM");
	assert_true(vmm_checkpoint_complete(ckpt, NULL));
	/* a description that cannot be read is not a checkpoint */
	put(ckpt, "checkpoint.json", "{\"disk\": fal");
	assert_false(vmm_checkpoint_complete(ckpt, NULL));
}

static void test_disk_left_in_the_run_dir(void **state)
{
	(void)state;
	put(ckpt, "checkpoint.json", "{\"disk\": true}");
	put(ckpt, "state", "QEVM");
	/* the disk is neither here nor given */
	assert_false(vmm_checkpoint_complete(ckpt, NULL));
	assert_false(vmm_checkpoint_complete(ckpt, run));
	/* left in the gone guest's run dir: moved in */
	put(run, "disk.qcow2", "QFI\xfb");
	assert_true(vmm_checkpoint_complete(ckpt, run));
	assert_true(exists(ckpt, "disk.qcow2"));
	assert_false(exists(run, "disk.qcow2"));
	/* and whole from then on, without the run dir */
	assert_true(vmm_checkpoint_complete(ckpt, NULL));
}

static void test_links_are_not_files(void **state)
{
	char target[256], link[256];

	(void)state;
	put(ckpt, "checkpoint.json", "{\"disk\": true}");
	put(ckpt, "state", "QEVM");
	/* a guest's uid may plant a link as its disk: it is not taken */
	put(top, "secret", "secret");
	snprintf(target, sizeof(target), "%s/secret", top);
	snprintf(link, sizeof(link), "%s/disk.qcow2", run);
	assert_int_equal(symlink(target, link), 0);
	assert_false(vmm_checkpoint_complete(ckpt, run));
	assert_false(exists(ckpt, "disk.qcow2"));
	assert_true(exists(top, "secret"));
	/* nor is a link as the checkpoint's own state */
	snprintf(link, sizeof(link), "%s/state", ckpt);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink(target, link), 0);
	put(ckpt, "disk.qcow2", "QFI\xfb");
	assert_false(vmm_checkpoint_complete(ckpt, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_without_a_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_left_in_the_run_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links_are_not_files, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
