/* tests/unit/test_rmtree.c: fs_rm_rf (common/rmtree.c) in a tree another
 * uid owns, as root's sweep meets a guest's run dir: a directory swapped
 * for a symlink to a directory outside while the removal is under way
 * must not take the link's target with it. Deterministically (a hook
 * linked in with --wrap, Makefile, swaps the directory at the first
 * removal inside it: the moment a walk by path then removes through the
 * link), as a racing guest would (a thread swapping it back and forth for
 * many rounds), and with links there from the start (at the top, below
 * it, dangling). Also: a plain tree with files, a FIFO and nested
 * directories goes whole; a missing path is success; a tree deeper than
 * FS_RM_MAX_DEPTH is refused with -ELOOP and no crash. Outside, every
 * file is still there after each case. */
#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define N_FILES 64
#ifndef ROUNDS
#define ROUNDS 40
#endif

static char base[64], top[128], outside[128], moved[128];

/* The hook: when armed, the first removal of an entry named "f0" first
 * swaps top/a for a link to outside (the real one moved aside). Both ways
 * a removal can be asked for are wrapped: by name in a directory
 * (unlinkat) and by full path (remove). */
static bool swap_armed;
int __real_unlinkat(int dfd, const char *name, int flags);
int __wrap_unlinkat(int dfd, const char *name, int flags);
int __real_remove(const char *path);
int __wrap_remove(const char *path);

static void swap_now(const char *name)
{
	const char *slash = strrchr(name, '/');
	char a[160];

	if (!swap_armed || strcmp(slash ? slash + 1 : name, "f0"))
		return;
	swap_armed = false;
	snprintf(a, sizeof(a), "%s/a", top);
	assert_int_equal(rename(a, moved), 0);
	assert_int_equal(symlink(outside, a), 0);
}

int __wrap_unlinkat(int dfd, const char *name, int flags)
{
	swap_now(name);
	return __real_unlinkat(dfd, name, flags);
}

int __wrap_remove(const char *path)
{
	swap_now(path);
	return __real_remove(path);
}

static void make_files(const char *dir)
{
	char path[200];

	assert_int_equal(fs_mkdir_p(dir, 0755), 0);
	for (int i = 0; i < N_FILES; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		assert_int_equal(fs_write_file(path, "x", 1), 0);
	}
}

static void outside_whole(void)
{
	char path[200];
	struct stat st;

	assert_int_equal(lstat(outside, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	for (int i = 0; i < N_FILES; i++) {
		snprintf(path, sizeof(path), "%s/f%d", outside, i);
		if (lstat(path, &st) < 0)
			fail_msg("%s was removed through a link", path);
	}
}

static void gone(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
}

static int setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/vitrine-rmtree-XXXXXX");
	assert_non_null(mkdtemp(base));
	snprintf(top, sizeof(top), "%s/vm-run", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	snprintf(moved, sizeof(moved), "%s/moved", base);
	make_files(outside);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	swap_armed = false;
	assert_int_equal(fs_rm_rf(base), 0);
	gone(base);
	return 0;
}

/* top/a/f0..: the directory a guest swaps. */
static void make_tree(void)
{
	char a[160];

	snprintf(a, sizeof(a), "%s/a", top);
	make_files(a);
}

static void test_swapped_mid_walk(void **state)
{
	(void)state;
	make_tree();
	swap_armed = true;
	assert_int_equal(fs_rm_rf(top), 0);
	assert_false(swap_armed); /* the hook ran */
	outside_whole();
	gone(top);
}

/* The guest's side of the race: top/a a directory, then a link to
 * outside, then a directory again, until told to stop. */
struct swapper {
	pthread_t thread;
	volatile bool stop;
};

static void *swap_loop(void *ud)
{
	struct swapper *s = ud;
	char a[160];

	snprintf(a, sizeof(a), "%s/a", top);
	while (!s->stop) {
		if (rename(a, moved) == 0 && symlink(outside, a) == 0) {
			for (volatile int i = 0; i < 200; i++)
				;
			unlink(a);
		}
		rename(moved, a);
	}
	return NULL;
}

static void test_swapped_racing(void **state)
{
	(void)state;
	for (int round = 0; round < ROUNDS; round++) {
		struct swapper s = { .stop = false };

		make_tree();
		assert_int_equal(pthread_create(&s.thread, NULL, swap_loop, &s), 0);
		fs_rm_rf(top); /* may fail (the tree changed under it): never outside */
		s.stop = true;
		pthread_join(s.thread, NULL);
		outside_whole();
		assert_int_equal(fs_rm_rf(top), 0);
		assert_int_equal(fs_rm_rf(moved), 0);
		gone(top);
	}
}

static void test_links_from_the_start(void **state)
{
	char path[200], dangling[200];

	(void)state;
	make_tree();
	snprintf(path, sizeof(path), "%s/a/deeper", top);
	assert_int_equal(symlink(outside, path), 0);
	snprintf(path, sizeof(path), "%s/b", top);
	assert_int_equal(symlink(outside, path), 0);
	snprintf(dangling, sizeof(dangling), "%s/nowhere", top);
	assert_int_equal(symlink("/nonexistent/vitrine", dangling), 0);
	assert_int_equal(fs_rm_rf(top), 0);
	outside_whole();
	gone(top);
	/* The top itself a link: the link goes, not what it points at. */
	assert_int_equal(symlink(outside, top), 0);
	assert_int_equal(fs_rm_rf(top), 0);
	gone(top);
	outside_whole();
	/* A trailing slash on a link does not make it a directory to empty. */
	assert_int_equal(symlink(outside, top), 0);
	snprintf(path, sizeof(path), "%s/", top);
	assert_int_equal(fs_rm_rf(path), 0);
	gone(top);
	outside_whole();
}

static void test_plain_tree(void **state)
{
	char path[200];

	(void)state;
	make_tree();
	snprintf(path, sizeof(path), "%s/c/d/e", top);
	make_files(path);
	snprintf(path, sizeof(path), "%s/c/fifo", top);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/empty", top);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(fs_rm_rf(top), 0);
	gone(top);
	assert_int_equal(fs_rm_rf(top), 0); /* missing: success */
	snprintf(path, sizeof(path), "%s/file", base);
	assert_int_equal(fs_write_file(path, "y", 1), 0);
	assert_int_equal(fs_rm_rf(path), 0); /* a file at the top */
	gone(path);
	outside_whole();
}

static void test_too_deep(void **state)
{
	char *path = malloc(PATH_MAX);
	size_t n;

	(void)state;
	n = (size_t)snprintf(path, PATH_MAX, "%s", top);
	assert_int_equal(mkdir(path, 0700), 0);
	for (int i = 0; i < FS_RM_MAX_DEPTH + 4; i++) {
		n += (size_t)snprintf(path + n, PATH_MAX - n, "/d");
		assert_int_equal(mkdir(path, 0700), 0);
	}
	assert_int_equal(fs_rm_rf(top), -ELOOP);
	/* Once shallower (the deep part moved up), it goes. */
	snprintf(path, PATH_MAX, "%s/d/d/d/d/d/d/d/d", top);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(fs_rm_rf(top), 0);
	assert_int_equal(fs_rm_rf(moved), 0);
	gone(top);
	free(path);
	outside_whole();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_swapped_mid_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swapped_racing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links_from_the_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_deep, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
