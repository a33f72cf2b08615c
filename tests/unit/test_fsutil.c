/* tests/unit/test_fsutil.c: fs_write_file_private (common/fsutil.c), the
 * staging of a session's page: a new 0600 file in a 0700 directory made
 * when missing; a file or symlink already at the path refused and left as
 * it was (a link's target neither written nor created); a directory that
 * is a symlink, not a directory, or writable by others refused. And the
 * free-space decision (common/space.h): what fits with the margin to spare,
 * what does not and the sentence it gets, sizes that would wrap, the look
 * at a real filesystem, the test hook that lowers an estimate. */
#include "common/fsutil.h"
#include "common/space.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

#define MIB (1024ull * 1024ull)

static void test_space_decide(void **state)
{
	char err[256] = "";

	(void)state;
	/* 256 MiB of RAM needs 256 + 64 free. */
	assert_int_equal(space_decide(256 * MIB, 320 * MIB, "x", "/d", err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(space_decide(256 * MIB, 320 * MIB - 1, "pausing to disk", "/run", err,
				      sizeof(err)),
			 -ENOSPC);
	assert_string_equal(err, "not enough free space: pausing to disk needs about 256 MiB in "
				 "/run (with 64 MiB to spare), which has 319 MiB free");
	/* Nothing to write still wants the margin. */
	assert_int_equal(space_decide(0, 64 * MIB, "x", "/d", err, sizeof(err)), 0);
	assert_int_equal(space_decide(0, 63 * MIB, "x", "/d", err, sizeof(err)), -ENOSPC);
	/* A need that would wrap past 2^64 with the margin never fits. */
	assert_int_equal(space_decide(UINT64_MAX - MIB, UINT64_MAX, "x", "/d", err, sizeof(err)),
			 -ENOSPC);
	/* Rounded up: one byte over a MiB says 2. */
	assert_int_equal(space_decide(MIB + 1, 0, "saving", "/t", err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "about 2 MiB in /t"));
}

static void test_space_check(void **state)
{
	char err[256] = "";
	uint64_t avail = 0;

	(void)state;
	assert_int_equal(space_free("/", &avail), 0);
	assert_true(avail > 0);
	assert_int_equal(space_free("/no/such/dir", &avail), -ENOENT);
	/* A filesystem that cannot be asked: no refusal, the write says. */
	assert_int_equal(space_check("/no/such/dir", UINT64_MAX / 2, "x", err, sizeof(err)), 0);
	/* Past any disk's size. */
	assert_int_equal(space_check("/", UINT64_MAX / 2, "x", err, sizeof(err)), -ENOSPC);
	/* The hook lowers an estimate, never raises one. */
	setenv("VITRINE_TEST_SPACE_NEED_MIB", "1", 1);
	assert_int_equal(space_check("/", avail - 128 * MIB, "x", err, sizeof(err)), 0);
	setenv("VITRINE_TEST_SPACE_NEED_MIB", "999999999999", 1);
	assert_int_equal(space_check("/", 0, "x", err, sizeof(err)),
			 avail >= 64 * MIB ? 0 : -ENOSPC);
	unsetenv("VITRINE_TEST_SPACE_NEED_MIB");
}

/* One holder at a time: a second open of the lock is refused with -EBUSY
 * until the first descriptor goes; a path that cannot be opened says so. */
static void test_lock_file(void **state)
{
	char dir[] = "/tmp/vitrine-lock-XXXXXX", path[64], err[256] = "";
	int a, b;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/.lock", dir);
	assert_true((a = fs_lock_file(path, 0, err, sizeof(err))) >= 0);
	assert_int_equal(fs_lock_file(path, O_NOFOLLOW, err, sizeof(err)), -EBUSY);
	close(a);
	assert_true((b = fs_lock_file(path, 0, err, sizeof(err))) >= 0);
	close(b);
	snprintf(path, sizeof(path), "%s/none/.lock", dir);
	assert_int_equal(fs_lock_file(path, 0, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "open "));
	assert_int_equal(fs_rm_rf(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_private_created, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_refused, setup, teardown),
		cmocka_unit_test(test_parent_dir),
		cmocka_unit_test(test_lock_file),
		cmocka_unit_test(test_space_decide),
		cmocka_unit_test(test_space_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
