/* tests/unit/test_fsutil.c: fs_write_file_private (common/fsutil.c), the
 * staging of a session's page: a new 0600 file in a 0700 directory made
 * when missing; a file or symlink already at the path refused and left as
 * it was (a link's target neither written nor created); a directory that
 * is a symlink, not a directory, or writable by others refused. */
#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static int setup(void **state)
{
	char *dir = malloc(64);

	snprintf(dir, 64, "/tmp/vitrine-fsutil-XXXXXX");
	assert_non_null(mkdtemp(dir));
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	char *dir = *state;

	assert_int_equal(fs_rm_rf(dir), 0);
	free(dir);
	return 0;
}

static void expect_content(const char *path, const char *want)
{
	char *text = NULL;

	assert_int_equal(fs_read_file(path, 4096, &text, NULL), 0);
	assert_string_equal(text, want);
	free(text);
}

static void test_private_created(void **state)
{
	const char *base = *state;
	char dir[128], path[160];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/run/pages", base);
	snprintf(path, sizeof(path), "%s/page-a.html", dir);
	assert_int_equal(fs_write_file_private(path, "<p>hi</p>", 9), 0);
	expect_content(path, "<p>hi</p>");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(lstat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	/* a second file in the same directory; an empty one */
	snprintf(path, sizeof(path), "%s/page-b.html", dir);
	assert_int_equal(fs_write_file_private(path, "", 0), 0);
	expect_content(path, "");
}

static void test_existing_refused(void **state)
{
	const char *base = *state;
	char dir[128], path[160], target[160], dangling[160];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/pages", base);
	snprintf(path, sizeof(path), "%s/page-a.html", dir);
	assert_int_equal(fs_write_file_private(path, "first", 5), 0);
	/* a file already there: not truncated, not rewritten */
	assert_int_equal(fs_write_file_private(path, "second", 6), -EEXIST);
	expect_content(path, "first");
	/* a symlink already there, to a file elsewhere: not followed */
	snprintf(target, sizeof(target), "%s/victim", base);
	assert_int_equal(fs_write_file(target, "victim", 6), 0);
	snprintf(path, sizeof(path), "%s/page-b.html", dir);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(fs_write_file_private(path, "evil", 4), -EEXIST);
	expect_content(target, "victim");
	/* a dangling symlink: its target is not created */
	snprintf(dangling, sizeof(dangling), "%s/not-there", base);
	snprintf(path, sizeof(path), "%s/page-c.html", dir);
	assert_int_equal(symlink(dangling, path), 0);
	assert_int_equal(fs_write_file_private(path, "evil", 4), -EEXIST);
	assert_int_equal(lstat(dangling, &st), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_directory_refused(void **state)
{
	const char *base = *state;
	char dir[128], path[160], elsewhere[128];

	/* the directory is a symlink to another one */
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", base);
	assert_int_equal(mkdir(elsewhere, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/linked", base);
	assert_int_equal(symlink(elsewhere, dir), 0);
	snprintf(path, sizeof(path), "%s/page.html", dir);
	assert_int_equal(fs_write_file_private(path, "x", 1), -ENOTDIR);
	snprintf(path, sizeof(path), "%s/page.html", elsewhere);
	assert_int_equal(access(path, F_OK), -1);
	/* a file where the directory should be */
	snprintf(dir, sizeof(dir), "%s/file", base);
	assert_int_equal(fs_write_file(dir, "x", 1), 0);
	snprintf(path, sizeof(path), "%s/page.html", dir);
	assert_true(fs_write_file_private(path, "x", 1) < 0);
	/* a directory others may write to */
	snprintf(dir, sizeof(dir), "%s/open", base);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 01777), 0);
	snprintf(path, sizeof(path), "%s/page.html", dir);
	assert_int_equal(fs_write_file_private(path, "x", 1), -EPERM);
	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(fs_write_file_private(path, "x", 1), -EPERM);
	assert_int_equal(access(path, F_OK), -1);
	/* no directory part */
	assert_int_equal(fs_write_file_private("page.html", "x", 1), -EINVAL);
}

static void test_parent_dir(void **state)
{
	char out[24];

	(void)state;
	assert_int_equal(fs_parent_dir("/run/x/agent.sock", out, sizeof(out)), 0);
	assert_string_equal(out, "/run/x");
	assert_int_equal(fs_parent_dir("/agent.sock", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(fs_parent_dir("agent.sock", out, sizeof(out)), 0);
	assert_string_equal(out, ".");
	assert_int_equal(fs_parent_dir("/a/path/longer/than/the/buffer", out, sizeof(out)),
			 -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_private_created, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_refused, setup, teardown),
		cmocka_unit_test(test_parent_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
