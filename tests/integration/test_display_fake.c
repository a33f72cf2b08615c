/* tests/integration/test_display_fake.c: the mirror against an in-process
 * fake VNC server (libvncserver, like its examples/server/pnmshow.c) on a
 * unix socket: first frame, changes with exact damage, a resolution change,
 * freshness round trips with nothing changed, settling, the pointer shape,
 * screen sizes over the display limits (refused without allocating them),
 * a connection the server ends (made again) and a server gone for good. */
#include "common/fsutil.h"
#include "display/mirror.h"

#include <errno.h>
#include <pthread.h>
#include <rfb/rfb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

enum fake_op { OP_NONE, OP_FILL, OP_RESIZE, OP_DISCONNECT, OP_GONE, OP_CURSOR };

/* Server framebuffers larger than this are mapped, never touched: a screen
 * of 16384x16384 costs the test no memory (the mirror must refuse it before
 * reading its pixels). */
#define HUGE_FB_BYTES ((size_t)64 << 20)

struct fake_server {
	rfbScreenInfoPtr screen;
	char *fb; /* owned, current framebuffer */
	size_t fb_mapped; /* fb's mapping length; 0: fb is from calloc */
	int w, h;
	int listen_fd;
	char path[108];
	pthread_t thread;
	atomic_bool stop, animate;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum fake_op op; /* pending operation, run by the server thread */
	struct display_rect rect;
	uint32_t rgb;
};

static struct fake_server srv;
static struct display_mirror *mirror;
static atomic_int frames_seen;

static void fill(char *fb, int stride_px, struct display_rect r, uint32_t rgb)
{
	for (int y = r.y; y < r.y + r.h; y++)
		for (int x = r.x; x < r.x + r.w; x++) {
			unsigned char *p = (unsigned char *)fb + ((size_t)y * stride_px + x) * 4;

			p[0] = (unsigned char)(rgb >> 16);
			p[1] = (unsigned char)(rgb >> 8);
			p[2] = (unsigned char)rgb;
			p[3] = 0;
		}
}

static void run_op(void)
{
	switch (srv.op) {
	case OP_FILL:
		fill(srv.fb, srv.w, srv.rect, srv.rgb);
		rfbMarkRectAsModified(srv.screen, srv.rect.x, srv.rect.y, srv.rect.x + srv.rect.w,
				      srv.rect.y + srv.rect.h);
		break;
	case OP_RESIZE: {
		char *old = srv.fb;
		size_t old_mapped = srv.fb_mapped, bytes = (size_t)srv.rect.w * srv.rect.h * 4;

		if (bytes > HUGE_FB_BYTES) {
			srv.fb = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			assert_true(srv.fb != MAP_FAILED);
			srv.fb_mapped = bytes;
		} else {
			srv.fb = calloc(bytes, 1);
			srv.fb_mapped = 0;
		}
		srv.w = srv.rect.w;
		srv.h = srv.rect.h;
		if (!srv.fb_mapped)
			fill(srv.fb, srv.w, (struct display_rect){ 0, 0, srv.w, srv.h }, srv.rgb);
		rfbNewFramebuffer(srv.screen, srv.fb, srv.w, srv.h, 8, 3, 4);
		if (old_mapped)
			munmap(old, old_mapped);
		else
			free(old);
		break;
	}
	case OP_CURSOR: {
		/* A 4x4 pointer, hot spot (1, 1); freed by rfbScreenCleanup. */
		rfbCursorPtr c = rfbMakeXCursor(4, 4, "xx  xx  x   x   ", "xxx xxx xx  x   ");

		c->xhot = 1;
		c->yhot = 1;
		rfbSetCursor(srv.screen, c);
		break;
	}
	case OP_GONE: /* no more connections, then as OP_DISCONNECT */
		close(srv.listen_fd);
		srv.listen_fd = -1;
		unlink(srv.path);
		/* fall through */
	case OP_DISCONNECT: {
		rfbClientIteratorPtr it = rfbGetClientIterator(srv.screen);
		rfbClientPtr cl;

		while ((cl = rfbClientIteratorNext(it)))
			rfbCloseClient(cl);
		rfbReleaseClientIterator(it);
		break;
	}
	case OP_NONE:
		break;
	}
	srv.op = OP_NONE;
}

static void *server_main(void *arg)
{
	int tick = 0;

	(void)arg;
	while (!atomic_load(&srv.stop)) {
		int fd = accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd >= 0)
			rfbNewClient(srv.screen, fd);
		pthread_mutex_lock(&srv.lock);
		if (srv.op != OP_NONE) {
			run_op();
			pthread_cond_broadcast(&srv.cond);
		}
		pthread_mutex_unlock(&srv.lock);
		if (atomic_load(&srv.animate) && ++tick % 10 == 0) {
			fill(srv.fb, srv.w, (struct display_rect){ 0, 0, 1, 1 },
			     (uint32_t)tick * 0x010101);
			rfbMarkRectAsModified(srv.screen, 0, 0, 1, 1);
		}
		rfbProcessEvents(srv.screen, 5000);
	}
	return NULL;
}

/* Runs op on the server thread and waits until it ran. */
static void server_do(enum fake_op op, struct display_rect r, uint32_t rgb)
{
	pthread_mutex_lock(&srv.lock);
	srv.op = op;
	srv.rect = r;
	srv.rgb = rgb;
	while (srv.op != OP_NONE)
		pthread_cond_wait(&srv.cond, &srv.lock);
	pthread_mutex_unlock(&srv.lock);
}

static void on_frame(void *ud)
{
	(void)ud;
	atomic_fetch_add(&frames_seen, 1);
}

static int setup(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int argc = 1;
	char *argv[] = { "fake", NULL };

	(void)state;
	rfbLogEnable(0);
	srv.w = 320;
	srv.h = 200;
	srv.fb = calloc((size_t)srv.w * srv.h, 4);
	fill(srv.fb, srv.w, (struct display_rect){ 0, 0, srv.w, srv.h }, 0x336699);
	srv.screen = rfbGetScreen(&argc, argv, srv.w, srv.h, 8, 3, 4);
	if (!srv.screen)
		return -1;
	srv.screen->frameBuffer = srv.fb;
	srv.screen->port = 0; /* no TCP listener: we hand it unix connections */
	srv.screen->ipv6port = 0;
	srv.screen->autoPort = FALSE;
	srv.screen->alwaysShared = TRUE;
	srv.screen->cursor = NULL; /* no server-drawn cursor over the pixels */
	rfbInitServer(srv.screen);
	snprintf(srv.path, sizeof(srv.path), "/tmp/vitrine-fake-vnc-%d.sock", (int)getpid());
	unlink(srv.path);
	strcpy(sa.sun_path, srv.path);
	srv.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (srv.listen_fd < 0 || bind(srv.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(srv.listen_fd, 4) < 0)
		return -1;
	pthread_mutex_init(&srv.lock, NULL);
	pthread_cond_init(&srv.cond, NULL);
	return pthread_create(&srv.thread, NULL, server_main, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	display_mirror_stop(mirror);
	atomic_store(&srv.stop, true);
	pthread_join(srv.thread, NULL);
	rfbShutdownServer(srv.screen, TRUE);
	rfbScreenCleanup(srv.screen);
	if (srv.fb_mapped)
		munmap(srv.fb, srv.fb_mapped);
	else
		free(srv.fb);
	close(srv.listen_fd);
	unlink(srv.path);
	return 0;
}

/* The frame equals the server's framebuffer, pixel for pixel. */
static void assert_frame_is_server(const struct display_frame *f)
{
	pthread_mutex_lock(&srv.lock);
	assert_int_equal(f->width, srv.w);
	assert_int_equal(f->height, srv.h);
	for (int y = 0; y < srv.h; y++)
		for (int x = 0; x < srv.w; x++) {
			const unsigned char *p = (unsigned char *)srv.fb +
						 ((size_t)y * srv.w + x) * 4;
			uint32_t want = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];

			if (display_frame_pixel(f, x, y) != want)
				fail_msg("(%d,%d) is %06x, server has %06x", x, y,
					 display_frame_pixel(f, x, y), want);
		}
	pthread_mutex_unlock(&srv.lock);
}

static void test_start_errors(void **state)
{
	struct display_mirror *m = (void *)1;
	char err[256];

	(void)state;
	assert_int_equal(display_mirror_start("/nonexistent/vnc.sock", NULL, NULL, &m, err,
					      sizeof(err)),
			 -ENOENT);
	assert_null(m);
	assert_non_null(strstr(err, "/nonexistent/vnc.sock"));
	assert_int_equal(display_mirror_start("/tmp", NULL, NULL, &m, err, sizeof(err)), -ENOTSOCK);
	display_mirror_stop(NULL);
}

static void test_first_frame(void **state)
{
	struct display_frame *f;
	char err[256];

	(void)state;
	assert_int_equal(display_mirror_start(srv.path, on_frame, NULL, &mirror, err, sizeof(err)),
			 0);
	assert_int_equal(display_mirror_wait_frame(mirror, 0, 5000, &f), 0);
	assert_true(f->seq > 0);
	assert_int_equal(f->damage.n, 1);
	assert_int_equal(f->damage.bounds.w, 320);
	assert_int_equal(f->damage.bounds.h, 200);
	assert_frame_is_server(f);
	/* on_frame runs right after the frame is published: allow it a moment. */
	for (int i = 0; i < 100 && atomic_load(&frames_seen) < 1; i++)
		usleep(10 * 1000);
	assert_true(atomic_load(&frames_seen) >= 1);
	display_frame_unref(f);
}

static void test_change_has_exact_damage(void **state)
{
	struct display_rect r = { 10, 20, 30, 40 };
	struct display_frame *before = display_mirror_latest(mirror), *f;

	(void)state;
	server_do(OP_FILL, r, 0xFF0000);
	assert_int_equal(display_mirror_wait_frame(mirror, before->seq, 5000, &f), 0);
	assert_int_equal(f->seq, before->seq + 1);
	assert_int_equal(display_frame_pixel(f, 10, 20), 0xFF0000);
	assert_int_equal(display_frame_pixel(f, 39, 59), 0xFF0000);
	assert_int_equal(display_frame_pixel(f, 40, 60), 0x336699);
	assert_int_equal(f->damage.bounds.x, r.x);
	assert_int_equal(f->damage.bounds.y, r.y);
	assert_int_equal(f->damage.bounds.w, r.w);
	assert_int_equal(f->damage.bounds.h, r.h);
	assert_true(f->changed_ms >= before->changed_ms);
	assert_frame_is_server(f);
	/* The old frame is immutable: it still shows the old colour. */
	assert_int_equal(display_frame_pixel(before, 10, 20), 0x336699);
	display_frame_unref(before);
	display_frame_unref(f);
}

static void test_unchanged_pixels_publish_nothing(void **state)
{
	struct display_frame *before = display_mirror_latest(mirror), *f;

	(void)state;
	/* Marked modified but the same colour: the mirror sees no change. */
	server_do(OP_FILL, (struct display_rect){ 10, 20, 30, 40 }, 0xFF0000);
	assert_int_equal(display_mirror_wait_fresh(mirror, 2000), 0);
	f = display_mirror_latest(mirror);
	assert_int_equal(f->seq, before->seq);
	display_frame_unref(f);
	display_frame_unref(before);
}

static void test_fresh_round_trip(void **state)
{
	struct display_frame *before = display_mirror_latest(mirror), *f;
	int64_t t0 = fs_now_ms();

	(void)state;
	for (int i = 0; i < 20; i++)
		assert_int_equal(display_mirror_wait_fresh(mirror, 2000), 0);
	print_message("fresh round trip, nothing changed: %.1f ms\n", (fs_now_ms() - t0) / 20.0);
	f = display_mirror_latest(mirror);
	assert_int_equal(f->seq, before->seq); /* the probe itself is no change */
	display_frame_unref(f);
	/* A change made before the call is in the mirror when it returns. */
	server_do(OP_FILL, (struct display_rect){ 100, 100, 5, 5 }, 0x00FF00);
	assert_int_equal(display_mirror_wait_fresh(mirror, 2000), 0);
	f = display_mirror_latest(mirror);
	assert_int_equal(display_frame_pixel(f, 102, 102), 0x00FF00);
	display_frame_unref(f);
	display_frame_unref(before);
}

static void test_resolution_change(void **state)
{
	struct display_frame *f = display_mirror_latest(mirror);
	uint64_t seq = f->seq;

	(void)state;
	display_frame_unref(f);
	server_do(OP_RESIZE, (struct display_rect){ 0, 0, 400, 300 }, 0x123456);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(display_mirror_wait_frame(mirror, seq, 5000, &f), 0);
		seq = f->seq;
		if (f->width == 400)
			break;
		display_frame_unref(f);
	}
	assert_int_equal(f->width, 400);
	assert_int_equal(f->height, 300);
	assert_int_equal(f->stride, 1600);
	assert_int_equal(f->damage.bounds.w, 400);
	assert_int_equal(f->damage.bounds.h, 300);
	assert_frame_is_server(f);
	display_frame_unref(f);
	/* Changes keep flowing at the new size. */
	server_do(OP_FILL, (struct display_rect){ 390, 290, 10, 10 }, 0xFFFFFF);
	assert_int_equal(display_mirror_wait_frame(mirror, seq, 5000, &f), 0);
	assert_int_equal(display_frame_pixel(f, 399, 299), 0xFFFFFF);
	display_frame_unref(f);
}

static void test_settled(void **state)
{
	struct display_settle_result r;

	(void)state;
	assert_int_equal(display_mirror_wait_settled(mirror, 200, 2000, &r), 0);
	assert_true(r.settled);
	assert_true(r.quiet_ms >= 200);
	atomic_store(&srv.animate, true); /* a change every ~50 ms */
	assert_int_equal(display_mirror_wait_settled(mirror, 300, 1000, &r), 0);
	atomic_store(&srv.animate, false);
	assert_false(r.settled);
	assert_true(r.waited_ms >= 1000 && r.waited_ms < 1500);
	assert_int_equal(display_mirror_wait_settled(mirror, 300, 3000, &r), 0);
	assert_true(r.settled);
	assert_true(r.waited_ms >= 200);
	print_message("settled after animation stopped: waited %d ms\n", r.waited_ms);
}

/* libvncserver sends its default pointer as a RichCursor to a client that
 * announces it, as QEMU does for a guest's hardware cursor. */
static void test_cursor_shape(void **state)
{
	struct display_cursor *c = NULL;
	int opaque = 0;

	(void)state;
	server_do(OP_CURSOR, (struct display_rect){ 0 }, 0);
	for (int i = 0; i < 50 && !c; i++) {
		display_mirror_wait_fresh(mirror, 1000);
		c = display_mirror_cursor(mirror);
	}
	assert_non_null(c);
	assert_true(c->width >= 1 && c->width <= 256 && c->height >= 1 && c->height <= 256);
	assert_true(c->hot_x < c->width && c->hot_y < c->height);
	assert_int_equal(c->width, 4);
	assert_int_equal(c->height, 4);
	assert_int_equal(c->hot_x, 1);
	assert_int_equal(c->hot_y, 1);
	assert_true(c->serial >= 1);
	for (int i = 0; i < c->width * c->height; i++)
		opaque += c->rgba[i * 4 + 3] == 255;
	assert_int_equal(opaque, 9); /* the x of the mask */
	assert_int_equal(c->rgba[3], 255); /* (0, 0) */
	assert_int_equal(c->rgba[3 * 4 + 3], 0); /* (3, 0) */
	print_message("pointer shape %dx%d, hot spot (%d,%d), %d opaque pixels\n", c->width,
		      c->height, c->hot_x, c->hot_y, opaque);
	display_cursor_unref(c);
}

/* The process's peak virtual size (VmPeak), in KiB. */
static long vm_peak_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPeak: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* A guest switching to 16384x16384 (1 GiB of pixels): the mirror refuses
 * the size before allocating it and ends, saying why; the last good frame
 * stays readable. */
static void test_oversized_screen_ends_mirror(void **state)
{
	struct display_frame *before = display_mirror_latest(mirror), *f;
	long peak = vm_peak_kib(), grown;
	const char *err;

	(void)state;
	server_do(OP_RESIZE, (struct display_rect){ 0, 0, 16384, 16384 }, 0);
	assert_int_equal(display_mirror_wait_frame(mirror, before->seq, 5000, &f), -EPIPE);
	/* The server's own (untouched) 1 GiB mapping, and nothing like it on
	 * the mirror's side (a framebuffer would be another 1.25 GiB). */
	grown = vm_peak_kib() - peak;
	print_message("peak virtual size grew by %ld MiB\n", grown / 1024);
	assert_true(peak > 0 && grown < (1024 + 512) * 1024L);
	assert_int_equal(display_mirror_wait_fresh(mirror, 1000), -EPIPE);
	err = display_mirror_error(mirror);
	print_message("refused: %s\n", err);
	assert_non_null(strstr(err, "16384x16384"));
	assert_non_null(strstr(err, "limit"));
	f = display_mirror_latest(mirror);
	assert_ptr_equal(f, before);
	assert_int_equal(f->width, 400);
	display_frame_unref(f);
	display_frame_unref(before);
	display_mirror_stop(mirror);
	mirror = NULL;
}

/* A server already over the limit is refused at connect time: one side too
 * long, or both sides fine but too many pixels. */
static void test_oversized_screen_refused_at_start(void **state)
{
	static const struct display_rect sizes[] = { { 0, 0, 16384, 16384 },
						     { 0, 0, DISPLAY_MAX_SIDE + 8, 16 },
						     { 0, 0, 5000, 4000 } };
	char err[512], want[32];

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct display_mirror *m = (void *)1;

		if (i > 0)
			server_do(OP_RESIZE, sizes[i], 0x808080);
		assert_int_equal(display_mirror_start(srv.path, NULL, NULL, &m, err, sizeof(err)),
				 -EFBIG);
		assert_null(m);
		snprintf(want, sizeof(want), "%dx%d", sizes[i].w, sizes[i].h);
		assert_non_null(strstr(err, want));
	}
	print_message("refused at start: %s\n", err);
}

/* Back at a normal size, a new mirror works: nothing was left broken. */
static void test_normal_size_again(void **state)
{
	struct display_frame *f;
	char err[256];

	(void)state;
	server_do(OP_RESIZE, (struct display_rect){ 0, 0, 320, 200 }, 0x336699);
	assert_int_equal(display_mirror_start(srv.path, on_frame, NULL, &mirror, err, sizeof(err)),
			 0);
	assert_int_equal(display_mirror_wait_frame(mirror, 0, 5000, &f), 0);
	assert_int_equal(f->width, 320);
	assert_frame_is_server(f);
	display_frame_unref(f);
}

/* The server ends the connection (QEMU does when its queue towards the
 * client outgrows the screen's new size): the mirror connects again and
 * goes on, its next frame the whole screen. */
static void test_connection_ended_reconnects(void **state)
{
	struct display_frame *f = display_mirror_latest(mirror), *g;

	(void)state;
	server_do(OP_DISCONNECT, (struct display_rect){ 0 }, 0);
	assert_int_equal(display_mirror_wait_frame(mirror, f->seq, 5000, &g), 0);
	assert_int_equal(g->width, f->width);
	assert_int_equal(g->height, f->height);
	assert_int_equal(g->damage.bounds.w, g->width);
	assert_int_equal(g->damage.bounds.h, g->height);
	assert_frame_is_server(g);
	assert_string_equal(display_mirror_error(mirror), "");
	display_frame_unref(g);
	display_frame_unref(f);
	/* and it is kept fresh as before */
	assert_int_equal(display_mirror_wait_fresh(mirror, 5000), 0);
}

/* The server is gone for good: the mirror tries once and ends, saying why. */
static void test_server_gone(void **state)
{
	struct display_frame *f = display_mirror_latest(mirror), *g;

	(void)state;
	server_do(OP_GONE, (struct display_rect){ 0 }, 0);
	assert_int_equal(display_mirror_wait_frame(mirror, f->seq, 5000, &g), -EPIPE);
	assert_int_equal(display_mirror_wait_fresh(mirror, 1000), -EPIPE);
	assert_true(strlen(display_mirror_error(mirror)) > 0);
	/* The last frame stays readable. */
	g = display_mirror_latest(mirror);
	assert_ptr_equal(g, f);
	display_frame_unref(g);
	display_frame_unref(f);
	display_mirror_stop(mirror);
	mirror = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_errors),
		cmocka_unit_test(test_first_frame),
		cmocka_unit_test(test_change_has_exact_damage),
		cmocka_unit_test(test_unchanged_pixels_publish_nothing),
		cmocka_unit_test(test_fresh_round_trip),
		cmocka_unit_test(test_resolution_change),
		cmocka_unit_test(test_settled),
		cmocka_unit_test(test_cursor_shape),
		cmocka_unit_test(test_oversized_screen_ends_mirror),
		cmocka_unit_test(test_oversized_screen_refused_at_start),
		cmocka_unit_test(test_normal_size_again),
		cmocka_unit_test(test_connection_ended_reconnects),
		cmocka_unit_test(test_server_gone),
	};

	return cmocka_run_group_tests_name("display mirror, fake VNC server", tests, setup,
					   teardown);
}
