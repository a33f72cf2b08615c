/* tests/unit/test_nofollow.c: what root does in a directory another uid
 * owns (a guest's run dir), where that uid can plant a link to anything:
 * fs_open_regular and fs_read_file_nofollow refuse a symlink and a FIFO
 * (without blocking on it); fs_write_file and fs_copy_file write through
 * no link at either end; fs_move_regular refuses a link moved into our own
 * directory and leaves nothing there; unixsock_connect refuses a link to
 * a live socket, and (as root) a socket neither ours nor the directory
 * owner's. In each case the link's target is neither written nor read. */
#include "common/fsutil.h"
#include "common/unixsock.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64], secret[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/vitrine-nofollow-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	assert_int_equal(fs_write_file(secret, "secret\n", 7), 0);
	assert_int_equal(chmod(secret, 0600), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(fs_rm_rf(dir), 0);
	return 0;
}

/* The secret as it was: its bytes and its mode. */
static void secret_untouched(void)
{
	char *text = NULL;
	struct stat st;

	assert_int_equal(fs_read_file(secret, 64, &text, NULL), 0);
	assert_string_equal(text, "secret\n");
	free(text);
	assert_int_equal(stat(secret, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

static void path_in(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static void test_links_and_fifos_refused(void **state)
{
	char link[128], fifo[128], plain[128], *text = NULL;
	int fd;

	(void)state;
	path_in(link, sizeof(link), "qemu.exit");
	path_in(fifo, sizeof(fifo), "serial.log");
	path_in(plain, sizeof(plain), "plain");
	assert_int_equal(symlink(secret, link), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(fs_write_file(plain, "ok", 2), 0);

	assert_int_equal(fs_open_regular(link, O_RDONLY, 0), -ELOOP);
	assert_int_equal(fs_read_file_nofollow(link, 64, &text, NULL), -ELOOP);
	assert_null(text);
	/* A FIFO would block a plain open until a writer came. */
	assert_int_equal(fs_open_regular(fifo, O_RDONLY, 0), -EINVAL);
	assert_int_equal(fs_read_file_nofollow(fifo, 64, &text, NULL), -EINVAL);
	assert_int_equal(fs_open_regular("/dev/null", O_RDONLY, 0), -EINVAL);
	fd = fs_open_regular(plain, O_RDONLY, 0);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(fs_read_file_nofollow(plain, 64, &text, NULL), 0);
	assert_string_equal(text, "ok");
	free(text);
	secret_untouched();
}

static void test_writes_follow_no_link(void **state)
{
	char link[128], plain[128], copy[128];
	struct stat st;

	(void)state;
	path_in(link, sizeof(link), "owner.pid");
	path_in(plain, sizeof(plain), "plain");
	path_in(copy, sizeof(copy), "serial.log.1");
	assert_int_equal(symlink(secret, link), 0);
	assert_int_equal(fs_write_file(plain, "ok", 2), 0);

	assert_int_equal(fs_write_file(link, "1234\n", 5), -ELOOP);
	/* Neither a link as the source (a guest's log pointing at a secret)
	 * nor as the destination. */
	assert_int_equal(fs_copy_file(link, copy, 0640), -ELOOP);
	assert_int_not_equal(lstat(copy, &st), 0);
	assert_int_equal(fs_copy_file(plain, link, 0640), -ELOOP);
	assert_int_equal(fs_copy_file(plain, copy, 0640), 0);
	secret_untouched();
}

static void test_move_regular(void **state)
{
	char from[128], to[128], ok_from[128], ok_to[128], *text = NULL;
	struct stat st;

	(void)state;
	path_in(from, sizeof(from), "disk.qcow2");
	path_in(to, sizeof(to), "moved.qcow2");
	path_in(ok_from, sizeof(ok_from), "page.html");
	path_in(ok_to, sizeof(ok_to), "moved.html");
	assert_int_equal(symlink(secret, from), 0);
	assert_int_equal(fs_move_regular(from, to), -EINVAL);
	assert_int_not_equal(lstat(to, &st), 0); /* the link did not stay */
	assert_int_equal(fs_write_file(ok_from, "<p>", 3), 0);
	assert_int_equal(fs_move_regular(ok_from, ok_to), 0);
	assert_int_equal(fs_read_file(ok_to, 64, &text, NULL), 0);
	assert_string_equal(text, "<p>");
	free(text);
	secret_untouched();
}

static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void test_socket_links_refused(void **state)
{
	char real[128], link[128], other[128], err[256];
	int lfd, ofd, fd;

	(void)state;
	path_in(real, sizeof(real), "other-guest.sock");
	path_in(link, sizeof(link), "qmp.sock");
	path_in(other, sizeof(other), "foreign.sock");
	lfd = listen_at(real);
	assert_int_equal(symlink(real, link), 0);
	assert_int_equal(unixsock_connect(link, 100, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symlink"));
	assert_int_equal(unixsock_connect_once(link, 0), -ELOOP);
	assert_int_equal(unixsock_connect_once(secret, 0), -ENOTSOCK);
	/* The socket itself is reached through its descriptor. */
	fd = unixsock_connect(real, 100, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	if (geteuid() == 0) {
		/* Neither ours nor the directory's owner's: someone else's. */
		ofd = listen_at(other);
		assert_int_equal(chown(other, 4242, 4242), 0);
		assert_int_equal(unixsock_connect_once(other, 0), -EPERM);
		close(ofd);
	}
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_links_and_fifos_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writes_follow_no_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_move_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_links_refused, setup, teardown),
	};

	return cmocka_run_group_tests_name("no link followed", tests, NULL, NULL);
}
