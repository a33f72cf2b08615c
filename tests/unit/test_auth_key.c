/* tests/unit/test_auth_key.c: the operator key file (gateway/core/auth.c,
 * auth_load_or_create_key): made 0600 when missing, read when private, and
 * refused, with the file and the fix named, when group or others may read
 * or write it, when it is a symlink (also to a private file) or anything
 * but a regular file. */
#include "gateway/core/auth.h"

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

#define KEY "0123456789abcdef0123456789abcdef"

struct dir {
	char path[64], file[96];
};

static int setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	snprintf(d->path, sizeof(d->path), "/tmp/vitrine-auth-key-XXXXXX");
	assert_non_null(mkdtemp(d->path));
	snprintf(d->file, sizeof(d->file), "%s/api-key", d->path);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dir *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->path);
	assert_int_equal(system(cmd), 0);
	free(d);
	return 0;
}

static void write_key(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, KEY "\n", strlen(KEY) + 1), (ssize_t)strlen(KEY) + 1);
	close(fd);
	assert_int_equal(chmod(path, mode), 0); /* past the umask */
}

/* auth_load_or_create_key on path must fail with rc and a reason that
 * names path and holds needle. */
static void expect_refused(const char *path, int rc, const char *needle)
{
	char key[128] = "", err[512] = "";

	assert_int_equal(auth_load_or_create_key(path, key, sizeof(key), err, sizeof(err)), rc);
	if (!strstr(err, path) || !strstr(err, needle))
		fail_msg("%s: reason '%s' lacks the path or '%s'", path, err, needle);
	assert_string_equal(key, "");
}

static void test_created_private(void **state)
{
	struct dir *d = *state;
	char key[128], again[128], err[256];
	struct stat st;

	assert_int_equal(auth_load_or_create_key(d->file, key, sizeof(key), err, sizeof(err)), 0);
	assert_int_equal(strlen(key), AUTH_TOKEN_LEN);
	assert_int_equal(lstat(d->file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(auth_load_or_create_key(d->file, again, sizeof(again), err, sizeof(err)),
			 0);
	assert_string_equal(key, again);
}

static void test_private_modes_read(void **state)
{
	static const mode_t ok[] = { 0600, 0400, 0700, 0500 };
	struct dir *d = *state;
	char key[128], err[256];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		unlink(d->file);
		write_key(d->file, ok[i]);
		if (auth_load_or_create_key(d->file, key, sizeof(key), err, sizeof(err)) != 0)
			fail_msg("mode %03o: %s", (unsigned)ok[i], err);
		assert_string_equal(key, KEY);
	}
}

static void test_open_modes_refused(void **state)
{
	static const mode_t bad[] = { 0640, 0620, 0610, 0604, 0602, 0601, 0644, 0666, 0660, 0606 };
	struct dir *d = *state;
	char want[32];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unlink(d->file);
		write_key(d->file, bad[i]);
		expect_refused(d->file, -EPERM, "chmod 600");
		snprintf(want, sizeof(want), "mode %03o", (unsigned)bad[i]);
		expect_refused(d->file, -EPERM, want);
	}
}

/* A client's read (the CLI): the same checks, and nothing is created. */
static void test_client_read(void **state)
{
	struct dir *d = *state;
	char key[128] = "", err[512] = "";
	struct stat st;

	assert_int_equal(auth_read_key(d->file, key, sizeof(key), err, sizeof(err)), -ENOENT);
	assert_int_equal(stat(d->file, &st), -1);
	write_key(d->file, 0644);
	assert_int_equal(auth_read_key(d->file, key, sizeof(key), err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "chmod 600"));
	assert_string_equal(key, "");
	assert_int_equal(chmod(d->file, 0600), 0);
	assert_int_equal(auth_read_key(d->file, key, sizeof(key), err, sizeof(err)), 0);
	assert_string_equal(key, KEY);
}

static void test_symlink_refused(void **state)
{
	struct dir *d = *state;
	char target[128], link2[128];
	struct stat st;

	snprintf(target, sizeof(target), "%s/real-key", d->path);
	write_key(target, 0600);
	assert_int_equal(symlink(target, d->file), 0);
	expect_refused(d->file, -ELOOP, "symbolic link");
	expect_refused(d->file, -ELOOP, "chmod 600");
	/* a dangling link is not followed to create a key at its target */
	snprintf(link2, sizeof(link2), "%s/dangling", d->path);
	snprintf(target, sizeof(target), "%s/not-there", d->path);
	assert_int_equal(symlink(target, link2), 0);
	expect_refused(link2, -ELOOP, "symbolic link");
	assert_int_equal(stat(target, &st), -1);
}

static void test_not_regular_refused(void **state)
{
	struct dir *d = *state;

	assert_int_equal(mkdir(d->file, 0700), 0);
	expect_refused(d->file, -EINVAL, "not a regular file");
	assert_int_equal(rmdir(d->file), 0);
	assert_int_equal(mkfifo(d->file, 0600), 0);
	expect_refused(d->file, -EINVAL, "not a regular file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_created_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_private_modes_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_modes_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_regular_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
