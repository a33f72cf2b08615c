/* tests/fuzz/fuzz_vnc.c: libFuzzer target for the screen mirror
 * (display/mirror.c): libvncclient reads what QEMU's VNC server sends and
 * calls the mirror's callbacks (framebuffer size, bitmaps, fills, copies,
 * finished updates, pointer shapes), which QEMU, and so a guest that took
 * it over, chooses. A thread of the target plays the server on a unix
 * socket (made for each input, removed once accepted): it sends the version and "no authentication", then the input
 * (ServerInit onwards: size, pixel format, name, then server messages),
 * then closes; display_mirror_start connects as the gateway does. Checked
 * besides "no crash" (ASan sees the mirror's buffers; libvncclient itself
 * is the system's, uninstrumented):
 *   - a start fails cleanly or the mirror runs until the connection ends
 *     (-EPIPE with a reason), whatever the bytes;
 *   - every published frame is within the size limits of frame.h, its
 *     damage inside it, every pixel readable; a pointer shape is 1..256 a
 *     side with its hot spot on it. */
#include "display/frame.h"
#include "display/mirror.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char sock_path[108];
static int listen_fd = -1;

struct server {
	const uint8_t *data;
	size_t size;
};

static void write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return; /* the client hung up: the rest is unread */
		p += n;
		len -= (size_t)n;
	}
}

/* Accepts the mirror, says "RFB 003.008", offers security type None and
 * accepts it, then sends the input and closes its side; reads (and drops)
 * what the client says until the client closes. */
static void *serve(void *arg)
{
	static const uint8_t hello[] = "RFB 003.008\n";
	static const uint8_t security[] = { 1, 1 }, ok[] = { 0, 0, 0, 0 };
	struct server *s = arg;
	uint8_t buf[4096];
	int fd = accept(listen_fd, NULL, NULL);

	unlink(sock_path);
	close(listen_fd);
	if (fd < 0)
		return NULL;
	write_all(fd, hello, sizeof(hello) - 1);
	write_all(fd, security, sizeof(security));
	write_all(fd, ok, sizeof(ok));
	write_all(fd, s->data, s->size);
	shutdown(fd, SHUT_WR);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(sock_path, sizeof(sock_path), "/tmp/fuzz_vnc.%d.sock", (int)getpid());
	return 0;
}

/* A listener at sock_path for one connection (serve() removes the path). */
static void listen_once(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	unlink(sock_path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(listen_fd, 1) < 0) {
		perror("fuzz_vnc: listen");
		abort();
	}
}

static void check_frame(const struct display_frame *f)
{
	unsigned sum = 0;

	if (!display_size_ok(f->width, f->height) || f->stride < f->width * 4 || !f->pixels ||
	    f->damage.n < 0 || f->damage.n > DISPLAY_DAMAGE_MAX)
		__builtin_trap();
	for (int i = 0; i < f->damage.n; i++) {
		const struct display_rect *r = &f->damage.rects[i];

		if (r->x < 0 || r->y < 0 || r->w < 0 || r->h < 0 || r->x + r->w > f->width ||
		    r->y + r->h > f->height)
			__builtin_trap();
	}
	for (size_t i = 0; i < (size_t)f->stride * (size_t)f->height; i += 61)
		sum += f->pixels[i];
	sum += f->pixels[(size_t)f->stride * (size_t)f->height - 1];
	(void)sum;
}

static void check_cursor(const struct display_cursor *c)
{
	unsigned sum = 0;

	if (c->width < 1 || c->width > 256 || c->height < 1 || c->height > 256 || c->hot_x < 0 ||
	    c->hot_x >= c->width || c->hot_y < 0 || c->hot_y >= c->height)
		__builtin_trap();
	for (size_t i = 0; i < (size_t)c->width * (size_t)c->height * 4; i++)
		sum += c->rgba[i];
	(void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct server s = { data, size };
	struct display_mirror *m = NULL;
	struct display_frame *f;
	struct display_cursor *c;
	pthread_t server;
	uint64_t seq = 0;
	char err[512];
	int rc;

	listen_once();
	if (pthread_create(&server, NULL, serve, &s))
		abort();
	rc = display_mirror_start(sock_path, NULL, NULL, &m, err, sizeof(err));
	if (rc == 0) {
		/* Frames until the connection ends (the server closes after the input). */
		while ((rc = display_mirror_wait_frame(m, seq, 5000, &f)) == 0) {
			check_frame(f);
			seq = f->seq;
			display_frame_unref(f);
		}
		if (rc != -EPIPE || !display_mirror_error(m)[0])
			__builtin_trap();
		if ((f = display_mirror_latest(m))) {
			check_frame(f);
			display_frame_unref(f);
		}
		if ((c = display_mirror_cursor(m))) {
			check_cursor(c);
			display_cursor_unref(c);
		}
		display_mirror_stop(m);
	} else if (m || !err[0]) {
		__builtin_trap();
	}
	pthread_join(server, NULL);
	return 0;
}
