/* guest-images/agent/agent_xwait.c: `vitrine-agent xwait MASK [TIMEOUT_MS]`,
 * a barrier the gateway puts between the modifiers it presses and the
 * pointer input they go with (gateway/action/plan.h, PLAN_X_SYNC).
 *
 * Keyboard and pointer reach the guest as two input devices. X's input
 * thread reads every device that is readable in the order they became so,
 * each device's pending events whole: a guest that did not run X for a
 * while (a busy host) finds the modifier's press and release both pending
 * on the keyboard and reads them before the click on the pointer, which
 * then has no modifier. Once X has processed the press, the keyboard has
 * nothing pending, so the click, sent next, is read before the release.
 * This waits until it has: X's own modifier and button state (QueryPointer's
 * mask, as X itself computed it) holds every bit of MASK.
 *
 * It speaks the little of the X protocol that takes (the setup without
 * authorisation: the desktop's Xorg runs without an authority file; one
 * QueryPointer on the root window every XWAIT_POLL_MS) on the display
 * $DISPLAY names (":0" when unset). MASK is decimal: ShiftMask 1, LockMask
 * 2, ControlMask 4, Mod1Mask (Alt) 8, Mod4Mask (Super) 64, Mod5Mask
 * (AltGr) 128, Button1Mask 256...
 *
 * Exit status: 0 the mask holds, 1 TIMEOUT_MS (default 2000) passed first,
 * 3 no X server to ask (no display, or it refused), 2 bad arguments (also
 * what an agent from before this mode answers). */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define XWAIT_EXIT_TIMEOUT 1
#define XWAIT_EXIT_USAGE 2
#define XWAIT_EXIT_NO_X 3
#define XWAIT_POLL_MS 5
#define XWAIT_MAX_TIMEOUT_MS 60000
#define X_QUERY_POINTER 38

static int read_full(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	for (size_t put = 0; put < n;) {
		ssize_t w = write(fd, (const char *)buf + put, n - put);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		put += (size_t)w;
	}
	return 0;
}

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Connects to display (":N" or ":N.S") and reads the setup: the socket,
 * with the first screen's root window in *root; -1 when there is no X
 * server to ask. */
static int x_open(const char *display, uint32_t *root)
{
	/* byte order 'l' (LSB first), protocol 11.0, no authorisation */
	static const unsigned char setup[12] = { 'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned char head[8], *body = NULL;
	size_t len, off;
	char *end;
	long n;
	int fd;

	if (!display || display[0] != ':')
		return -1;
	n = strtol(display + 1, &end, 10);
	if (end == display + 1 || n < 0 || n > 999 || (*end && *end != '.'))
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/.X11-unix/X%ld", n);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    write_full(fd, setup, sizeof(setup)) < 0 || read_full(fd, head, sizeof(head)) < 0 ||
	    head[0] != 1)
		goto fail;
	len = (size_t)le16(head + 6) * 4;
	if (len < 32 || len > (1u << 20) || !(body = malloc(len)) || read_full(fd, body, len) < 0)
		goto fail;
	/* the fixed part (32 bytes), the vendor (padded to 4), the pixmap
	 * formats (8 bytes each), then the first screen, its root first */
	off = 32 + (((size_t)le16(body + 16) + 3) & ~(size_t)3) + 8 * (size_t)body[21];
	if (body[20] < 1 || off + 4 > len)
		goto fail;
	*root = le32(body + off);
	free(body);
	return fd;
fail:
	free(body);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* X's modifier and button state now (QueryPointer on root); -1 on a broken
 * connection. */
static int x_mask(int fd, uint32_t root)
{
	unsigned char req[8] = { X_QUERY_POINTER, 0, 2, 0 }, reply[32];

	for (int i = 0; i < 4; i++) /* LSB first, as the setup said */
		req[4 + i] = (unsigned char)(root >> (8 * i));
	if (write_full(fd, req, sizeof(req)) < 0)
		return -1;
	/* events and errors are not asked for; anything but the reply is */
	for (;;) {
		if (read_full(fd, reply, sizeof(reply)) < 0)
			return -1;
		if (reply[0] == 1)
			return le16(reply + 24);
		if (reply[0] == 0)
			return -1; /* an error */
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int agent_xwait_main(int argc, char **argv)
{
	char *end;
	long want, timeout_ms = 2000;
	uint32_t root;
	int64_t deadline;
	int fd, mask;

	if (argc < 2 || argc > 3)
		goto usage;
	want = strtol(argv[1], &end, 10);
	if (*end || end == argv[1] || want < 0 || want > 0xffff)
		goto usage;
	if (argc == 3) {
		timeout_ms = strtol(argv[2], &end, 10);
		if (*end || end == argv[2] || timeout_ms < 0 || timeout_ms > XWAIT_MAX_TIMEOUT_MS)
			goto usage;
	}
	fd = x_open(getenv("DISPLAY") ? getenv("DISPLAY") : ":0", &root);
	if (fd < 0) {
		fprintf(stderr, "vitrine-agent xwait: no X server to ask\n");
		return XWAIT_EXIT_NO_X;
	}
	deadline = now_ms() + timeout_ms;
	for (;;) {
		mask = x_mask(fd, root);
		if (mask < 0) {
			fprintf(stderr, "vitrine-agent xwait: the X server went away\n");
			close(fd);
			return XWAIT_EXIT_NO_X;
		}
		if (((unsigned)mask & (unsigned)want) == (unsigned)want)
			break;
		if (now_ms() >= deadline) {
			fprintf(stderr, "vitrine-agent xwait: mask %d, not %ld, after %ld ms\n",
				mask, want, timeout_ms);
			close(fd);
			return XWAIT_EXIT_TIMEOUT;
		}
		usleep(XWAIT_POLL_MS * 1000);
	}
	close(fd);
	return 0;
usage:
	fprintf(stderr, "usage: vitrine-agent xwait MASK [TIMEOUT_MS]\n");
	return XWAIT_EXIT_USAGE;
}
