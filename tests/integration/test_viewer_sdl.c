/* tests/integration/test_viewer_sdl.c: vitrine-view, the SDL2 viewer, under
 * Xvfb against `vitrine serve` with a tiny guest: its window shows the
 * session's screen (an xwd dump of the display matches a screenshot), and
 * with a control token and --control, a click in its window (xdotool) marks
 * the guest's screen, while a view-token viewer's click does not; keys typed
 * on a French (AZERTY) X keyboard reach the (US) guest as the characters
 * typed, not as the US positions' (a, z, m from the keys US has q, w and
 * ';' on). */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"
#include "tests/lib/xvfb.h"
#include "tests/lib/xwd.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define W 1280
#define H 800

static struct gateway_proc gw;
static char sid[64], ctl[64], view[64], url[256], display[16], view_bin[4096];
static pid_t xvfb;

static pid_t spawn(const char *const *argv, const char *token, int *out_fd)
{
	int p[2] = { -1, -1 };
	pid_t pid;

	if (out_fd && pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		setenv("DISPLAY", display, 1);
		if (token) {
			setenv("VITRINE_TOKEN", token, 1);
			/* vitrine-view: SDL's X11, D-Bus and Mesa keep allocations
			 * to exit; other sanitizer errors still fail it. */
			setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		}
		if (out_fd) {
			dup2(p[1], 1);
			close(p[0]);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (out_fd) {
		close(p[1]);
		*out_fd = p[0];
	}
	return pid;
}

/* SIGTERMs pid and returns its exit status (-1 when it did not exit). */
static int stop(pid_t pid)
{
	int st = 0;

	if (pid <= 0)
		return -1;
	kill(pid, SIGTERM);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Waits for pid to exit; its exit status, or -1. */
static int stop_wait(pid_t pid)
{
	int st = 0;

	if (pid <= 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* The tiny guest's line as its console last printed it ("VITRINE
 * text=..."), or NULL (free it). */
static char *guest_text(void)
{
	char *last = NULL;
	DIR *d = opendir(gw.run_base);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[PATH_MAX], *log = NULL, *p;

		if (strncmp(e->d_name, "vm-", 3))
			continue;
		snprintf(path, sizeof(path), "%s/%s/serial.log", gw.run_base, e->d_name);
		if (fs_read_file(path, 1 << 22, &log, NULL) < 0)
			continue;
		for (p = log; (p = strstr(p, "VITRINE text=")); p++) {
			size_t n = strcspn(p + 13, "\r\n");

			free(last);
			last = strndup(p + 13, n);
		}
		free(log);
	}
	if (d)
		closedir(d);
	return last;
}

static int start_xvfb(void)
{
	xvfb = xvfb_start(40 + getpid() % 100, "1280x800x24", display, sizeof(display));
	return xvfb > 0 ? 0 : -1;
}

static int setup(void **state)
{
	const char *body = "{\"image\":\"tiny\",\"width\":1280,\"height\":800}";
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char tmp[4096];
	struct gateway_session created;

	(void)state;
	snprintf(tmp, sizeof(tmp), "%s", bin);
	snprintf(view_bin, sizeof(view_bin), "%s/vitrine-view", dirname(tmp));
	if (start_xvfb() < 0 || gateway_proc_start(&gw, NULL) < 0)
		return -1;
	if (gateway_proc_create_session(&gw, body, 120, &created) < 0)
		return -1;
	snprintf(sid, sizeof(sid), "%s", created.id);
	snprintf(ctl, sizeof(ctl), "%s", created.control);
	snprintf(view, sizeof(view), "%s", created.view);
	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/v1/sessions/%s/stream", gw.port, sid);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	stop(xvfb);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* The viewer's stdout lines read so far (a line asked for may have come
 * before the one another wait was looking for). */
static char seen[1 << 16];
static size_t seen_len;

static long find_seen(const char *prefix)
{
	/* Whole lines only: the last one may still be arriving. */
	for (char *p = seen, *nl; (nl = strchr(p, '\n')); p = nl + 1)
		if (!strncmp(p, prefix, strlen(prefix)))
			return strtol(p + strlen(prefix), NULL, 10);
	return -1;
}

/* Reads the viewer's stdout until a line starting with prefix has been
 * seen (or 20 s pass); returns the number after the prefix (0 when none),
 * or -1. */
static long wait_line(int fd, const char *prefix)
{
	int64_t deadline = fs_now_ms() + 20000;
	long v;

	while ((v = find_seen(prefix)) < 0 && fs_now_ms() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char ch;

		if (poll(&pfd, 1, 500) <= 0)
			continue;
		if (read(fd, &ch, 1) <= 0)
			return -1;
		if (seen_len + 2 < sizeof(seen)) {
			seen[seen_len++] = ch;
			seen[seen_len] = '\0';
		}
	}
	return v;
}

/* Waits for the viewer to show its first frame; returns its seq, or -1. */
static long wait_shown(int fd)
{
	return wait_line(fd, "vitrine-view: shown frame seq=");
}

static struct ppm capture_display(void)
{
	const char *argv[] = { "xwd", "-root", "-silent", NULL };
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	struct ppm img = { 0 };
	int fd;
	pid_t pid = spawn(argv, NULL, &fd);
	ssize_t r;

	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 1 << 22;
			buf = realloc(buf, cap);
		}
		r = read(fd, buf + len, cap - len);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	waitpid(pid, NULL, 0);
	assert_int_equal(xwd_decode(buf, len, &img), 0);
	free(buf);
	return img;
}

static struct ppm screenshot_png(void)
{
	struct ppm img;

	assert_int_equal(gateway_proc_screenshot(&gw, sid, gw.key, &img), 0);
	return img;
}

static bool mark_near(const struct ppm *img, int x, int y)
{
	for (int dy = -4; dy <= 4; dy++)
		for (int dx = -4; dx <= 4; dx++)
			if (ppm_pixel(img, x + dx, y + dy) == 0xFF0000)
				return true;
	return false;
}

static void xdotool_click(int x, int y)
{
	char xs[16], ys[16];
	const char *argv[] = { "xdotool", "mousemove", "--sync", xs, ys, "click", "1", NULL };
	pid_t pid;
	int st;

	snprintf(xs, sizeof(xs), "%d", x);
	snprintf(ys, sizeof(ys), "%d", y);
	pid = spawn(argv, NULL, NULL);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_window_shows_the_session(void **state)
{
	const char *argv[] = { view_bin, "--verbose", url, NULL };
	struct ppm shown, shot;
	long seq;
	double d;
	int fd;
	pid_t v;

	(void)state;
	seen_len = 0;
	seen[0] = '\0';
	v = spawn(argv, view, &fd);
	seq = wait_shown(fd);
	assert_true(seq > 0);
	usleep(300 * 1000); /* let the X server finish the last drawing */
	shown = capture_display();
	shot = screenshot_png();
	d = ppm_mean_diff(&shown, &shot);
	assert_true(d >= 0); /* the same size */
	printf("    vitrine-view window vs screenshot: mean difference %.2f\n", d);
	if (d > 4.0)
		fail_msg("the window does not show the session: mean difference %.2f", d);
	assert_true(ppm_close(ppm_pixel(&shown, 20, 20), 0x00FF00, 40));
	assert_true(ppm_close(ppm_pixel(&shown, W - 20, H - 20), 0xFF00FF, 40));
	ppm_free(&shown);
	ppm_free(&shot);

	/* A view token's click forwards nothing. */
	xdotool_click(1000, 200);
	usleep(1500 * 1000);
	shot = screenshot_png();
	assert_false(mark_near(&shot, 1000, 200));
	ppm_free(&shot);
	assert_int_equal(stop(v), 0); /* SDL turns SIGTERM into a quit: a clean exit */
	close(fd);
}

static void test_control_click_marks_the_guest(void **state)
{
	const char *argv[] = { view_bin, "--verbose", "--control", url, NULL };
	int64_t deadline;
	struct ppm shot;
	int fd;
	pid_t v;
	bool marked = false;

	(void)state;
	seen_len = 0;
	seen[0] = '\0';
	v = spawn(argv, ctl, &fd);
	assert_true(wait_shown(fd) > 0);
	/* --control takes the lease once connected; the window says so. */
	if (wait_line(fd, "vitrine-view: you control") < 0)
		fail_msg("vitrine-view --control never took control");
	{
		struct http_resp r;
		char path[160];
		const char *a = "{\"action\":\"mouse_move\",\"coordinate\":[1,1]}";

		/* An agent is refused meanwhile. */
		snprintf(path, sizeof(path), "/v1/sessions/%s/actions", sid);
		assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path, ctl, a, strlen(a),
					      30, &r),
				 0);
		assert_int_equal(r.status, 409);
		http_resp_free(&r);
	}
	xdotool_click(600, 250);
	deadline = fs_now_ms() + 15000;
	while (!marked && fs_now_ms() < deadline) {
		shot = screenshot_png();
		marked = mark_near(&shot, 600, 250);
		ppm_free(&shot);
		if (!marked)
			usleep(200 * 1000);
	}
	assert_true(marked);
	/* The person's keyboard is French: what they type arrives as typed. */
	{
		const char *kbd[] = { "setxkbmap", "-display", display, "fr", NULL };
		const char *keys[] = { "xdotool", "key", "--delay", "80", "a", "z", "m", NULL };
		char *text = NULL;

		assert_int_equal(stop_wait(spawn(kbd, NULL, NULL)), 0);
		assert_int_equal(stop_wait(spawn(keys, NULL, NULL)), 0);
		deadline = fs_now_ms() + 15000;
		while (fs_now_ms() < deadline) {
			free(text);
			text = guest_text();
			if (text && !strcmp(text, "azm"))
				break;
			usleep(200 * 1000);
		}
		if (!text || strcmp(text, "azm"))
			fail_msg("the guest's line is \"%s\", want \"azm\"", text ? text : "");
		free(text);
	}
	assert_int_equal(stop(v), 0); /* SDL turns SIGTERM into a quit: a clean exit */
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_shows_the_session),
		cmocka_unit_test(test_control_click_marks_the_guest),
	};

	return cmocka_run_group_tests_name("vitrine-view under Xvfb (tiny guest)", tests, setup,
					   teardown);
}
