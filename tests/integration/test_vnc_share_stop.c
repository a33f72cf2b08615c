/* tests/integration/test_vnc_share_stop.c: stopping a VNC share
 * (display/vnc_share.c) while clients come and go. libvncserver's own
 * shutdown in its threaded mode walks its client list while client threads
 * end and free themselves; a gateway crashed there once (SEGV in
 * rfbShutdownServer as it stopped, with a client that had just given a
 * wrong password and one that had just left). Each round starts a share,
 * has clients at every stage (connected and silent, half-way through the
 * handshake, waiting out a wrong password's delay, authenticated and
 * watching, gone at once) and stops the share under them; under ASan any
 * use of a freed client fails the test. No guest. */
#include "display/vnc_share.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define ROUNDS 12
#define CLIENTS 6

enum stage { SILENT, VERSION_ONLY, WRONG_PASSWORD, WATCHING, GONE_AT_ONCE };

struct client {
	pthread_t thread;
	int port;
	enum stage stage;
};

static void wake(void *ud)
{
	(void)ud;
}

/* Reads n bytes within 3 s; false when the server closed or was silent. */
static bool read_n(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t k;

		if (poll(&p, 1, 3000) <= 0)
			return false;
		k = read(fd, (char *)buf + got, n - got);
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

/* One client going as far as its stage says, then holding its socket until
 * the server closes it (or a few seconds pass). */
static void *client_main(void *ud)
{
	struct client *c = ud;
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)c->port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char version[12], b[64];
	uint8_t n, type = 2, challenge[VNC_AUTH_CHALLENGE_LEN], answer[VNC_AUTH_CHALLENGE_LEN];

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		goto out;
	if (c->stage == GONE_AT_ONCE || c->stage == SILENT)
		goto hold;
	if (!read_n(fd, version, sizeof(version)) || write(fd, "RFB 003.008\n", 12) != 12)
		goto out;
	if (c->stage == VERSION_ONLY)
		goto hold;
	if (!read_n(fd, &n, 1) || n == 0 || !read_n(fd, b, n) || write(fd, &type, 1) != 1 ||
	    !read_n(fd, challenge, sizeof(challenge)))
		goto out;
	display_vnc_auth_response(challenge, c->stage == WRONG_PASSWORD ? "wrongpw!" : "ctrlpass",
				  answer);
	if (write(fd, answer, sizeof(answer)) != (ssize_t)sizeof(answer))
		goto out;
	if (c->stage == WATCHING) {
		uint8_t shared = 1;

		if (read_n(fd, b, 4) && write(fd, &shared, 1) == 1)
			read_n(fd, b, 24); /* ServerInit's fixed part */
	}
hold:
	if (c->stage != GONE_AT_ONCE) {
		struct pollfd p = { fd, POLLIN, 0 };

		while (poll(&p, 1, 4000) > 0 && read(fd, b, sizeof(b)) > 0)
			;
	}
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void test_stop_under_clients(void **state)
{
	(void)state;
	for (int round = 0; round < ROUNDS; round++) {
		struct display_vnc_share *v;
		struct client c[CLIENTS];
		char err[256];

		assert_int_equal(display_vnc_share_start("127.0.0.1", 64, 48, "ctrlpass",
							 "viewpass", wake, NULL, &v, err,
							 sizeof(err)),
				 0);
		for (int i = 0; i < CLIENTS; i++) {
			c[i] = (struct client){ .port = display_vnc_share_port(v),
						.stage = (enum stage)((i + round) % 5) };
			assert_int_equal(pthread_create(&c[i].thread, NULL, client_main, &c[i]), 0);
		}
		/* stop while they are at their stages: a round each a little
		 * later, so the stop meets each stage at each moment */
		usleep((useconds_t)(20000 + round * 25000));
		display_vnc_share_stop(v);
		for (int i = 0; i < CLIENTS; i++)
			pthread_join(c[i].thread, NULL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stop_under_clients),
	};

	return cmocka_run_group_tests_name("vnc share stop", tests, NULL, NULL);
}
