/*
 * tinymode: switches the tiny guest's screen to a given size, for the chaos
 * test of a guest that goes to a huge resolution (docs/security.md).
 *
 * The tiny guest draws on /dev/fb0, whose size the kernel's fbdev emulation
 * fixes at boot; the only way to another size is DRM's KMS API, as a
 * compositor would do it: a dumb buffer of W x H, a framebuffer on it and
 * DRM_IOCTL_MODE_SETCRTC with a mode of W x H on the connected connector's
 * CRTC. The mode lasts only as long as the DRM file that set it is open
 * (closing it removes its framebuffers, and the kernel gives the screen
 * back to fbdev and tinyfb's pattern), so tinymode leaves a child behind
 * that holds the file, in a session of its own so that the agent that ran
 * the command does not wait for it or kill it.
 *
 * Usage (as root):
 *   tinymode WxH   ends the holder of an earlier tinymode, sets W x H,
 *                  prints "tinymode: WxH pid=P" and exits 0 once the
 *                  mode is on the screen; P holds it until SIGTERM
 *   tinymode off   ends the holder: the screen goes back to tinyfb
 * On an error (the kernel refused the size, no connected output) it prints
 * "tinymode: <what>: <errno text>" and exits 1, the screen unchanged.
 *
 * The picture: background 0x402010; 64x64 squares in the corners, top-left
 * 0x00FF00, top-right 0x0000FF, bottom-left 0xFFFF00, bottom-right 0xFF00FF
 * (tinyfb's corners, so a cropped view shows which corner it kept); a
 * 0xFFFFFF grid line every 512 pixels both ways. While it holds the mode,
 * the holder marks clicks as tinyfb does (tinyfb's own marks go to fb0,
 * unseen meanwhile): a 5x5 square of 0xFF0000 with its centre 0xFFFFFF at
 * the pointer, absolute axes mapped to W x H as libinput maps them,
 * x = (abs - min) * W / (max - min + 1), so a test sees where a click at
 * the new size landed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <drm.h>
#include <drm_mode.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CARD "/dev/dri/card0"
#define PIDFILE "/tmp/tinymode.pid"
#define MAX_OBJS 16
#define SQUARE 64
#define GRID 512
#define MAX_INPUTS 8

static void die(int report, const char *what, int err)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "tinymode: %s: %s\n", what, strerror(err));

	if (write(report, msg, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

/* Ends the holder named in PIDFILE, if any, and waits (up to 5 s) until it
 * is gone, so that its DRM file is closed before ours opens. */
static void end_holder(void)
{
	FILE *f = fopen(PIDFILE, "r");
	int pid = 0;

	if (!f)
		return;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	unlink(PIDFILE);
	if (pid <= 1 || kill(pid, SIGTERM) < 0)
		return;
	for (int i = 0; i < 500 && kill(pid, 0) == 0; i++)
		usleep(10000);
}

static void fill(uint32_t *px, uint32_t pitch_px, uint32_t x0, uint32_t y0, uint32_t w, uint32_t h,
		 uint32_t colour)
{
	for (uint32_t y = y0; y < y0 + h; y++)
		for (uint32_t x = x0; x < x0 + w; x++)
			px[(size_t)y * pitch_px + x] = colour;
}

static void draw(uint32_t *px, uint32_t pitch_px, uint32_t w, uint32_t h)
{
	fill(px, pitch_px, 0, 0, w, h, 0x402010);
	for (uint32_t x = GRID; x < w; x += GRID)
		fill(px, pitch_px, x, 0, 1, h, 0xFFFFFF);
	for (uint32_t y = GRID; y < h; y += GRID)
		fill(px, pitch_px, 0, y, w, 1, 0xFFFFFF);
	fill(px, pitch_px, 0, 0, SQUARE, SQUARE, 0x00FF00);
	fill(px, pitch_px, w - SQUARE, 0, SQUARE, SQUARE, 0x0000FF);
	fill(px, pitch_px, 0, h - SQUARE, SQUARE, SQUARE, 0xFFFF00);
	fill(px, pitch_px, w - SQUARE, h - SQUARE, SQUARE, SQUARE, 0xFF00FF);
}

/* The first connected connector and a CRTC it can use. */
static void find_output(int fd, int report, uint32_t *conn_id, uint32_t *crtc_id)
{
	uint32_t conns[MAX_OBJS], crtcs[MAX_OBJS], encs[MAX_OBJS];
	struct drm_mode_card_res res = { 0 };

	if (ioctl(fd, DRM_IOCTL_MODE_GETRESOURCES, &res) < 0)
		die(report, "DRM_IOCTL_MODE_GETRESOURCES", errno);
	if (res.count_connectors > MAX_OBJS || res.count_crtcs > MAX_OBJS ||
	    res.count_encoders > MAX_OBJS)
		die(report, "more outputs than it knows", E2BIG);
	res.connector_id_ptr = (uintptr_t)conns;
	res.crtc_id_ptr = (uintptr_t)crtcs;
	res.encoder_id_ptr = (uintptr_t)encs;
	res.count_fbs = 0;
	if (ioctl(fd, DRM_IOCTL_MODE_GETRESOURCES, &res) < 0)
		die(report, "DRM_IOCTL_MODE_GETRESOURCES", errno);
	for (uint32_t i = 0; i < res.count_connectors; i++) {
		struct drm_mode_get_connector c = { .connector_id = conns[i] };
		struct drm_mode_get_encoder e = { 0 };

		if (ioctl(fd, DRM_IOCTL_MODE_GETCONNECTOR, &c) < 0)
			die(report, "DRM_IOCTL_MODE_GETCONNECTOR", errno);
		if (c.connection != 1 /* connected */)
			continue;
		*conn_id = conns[i];
		e.encoder_id = c.encoder_id ? c.encoder_id : res.count_encoders ? encs[0] : 0;
		if (e.encoder_id && ioctl(fd, DRM_IOCTL_MODE_GETENCODER, &e) == 0) {
			if (e.crtc_id) {
				*crtc_id = e.crtc_id;
				return;
			}
			for (uint32_t k = 0; k < res.count_crtcs; k++)
				if (e.possible_crtcs & (1u << k)) {
					*crtc_id = crtcs[k];
					return;
				}
		}
		if (res.count_crtcs) {
			*crtc_id = crtcs[0];
			return;
		}
	}
	die(report, "no connected output", ENODEV);
}

/* The mode's picture, for the click marks. */
struct screen {
	int fd; /* CARD, held open */
	uint32_t fb_id;
	uint32_t *px;
	uint32_t pitch_px, w, h;
};

/* Fills [x, x+w) x [y, y+h), clipped to the screen, and has it shown
 * (a dumb buffer's later writes reach the host on DIRTYFB). */
static void fill_shown(const struct screen *sc, int x, int y, int w, int h, uint32_t colour)
{
	int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
	int x1 = x + w > (int)sc->w ? (int)sc->w : x + w;
	int y1 = y + h > (int)sc->h ? (int)sc->h : y + h;
	struct drm_clip_rect clip;
	struct drm_mode_fb_dirty_cmd dirty = { .fb_id = sc->fb_id, .num_clips = 1 };

	if (x0 >= x1 || y0 >= y1)
		return;
	fill(sc->px, sc->pitch_px, (uint32_t)x0, (uint32_t)y0, (uint32_t)(x1 - x0),
	     (uint32_t)(y1 - y0), colour);
	clip = (struct drm_clip_rect){ (unsigned short)x0, (unsigned short)y0, (unsigned short)x1,
				       (unsigned short)y1 };
	dirty.clips_ptr = (uintptr_t)&clip;
	ioctl(sc->fd, DRM_IOCTL_MODE_DIRTYFB, &dirty);
}

static bool has_bit(const unsigned long *bits, unsigned bit)
{
	return bits[bit / (8 * sizeof(long))] >> (bit % (8 * sizeof(long))) & 1;
}

static int abs_to_px(const struct input_absinfo *a, uint32_t size)
{
	long long range = (long long)a->maximum - a->minimum + 1;
	long long v = range > 0 ? ((long long)a->value - a->minimum) * size / range : 0;

	return v < 0 ? 0 : v >= (long long)size ? (int)size - 1 : (int)v;
}

/* Marks clicks of the absolute pointers (the tablet) on the screen until
 * the process is ended. Without a pointer it only waits. */
static void mark_clicks(const struct screen *sc)
{
	struct pollfd pfd[MAX_INPUTS];
	struct input_absinfo ax[MAX_INPUTS], ay[MAX_INPUTS];
	DIR *dir = opendir("/dev/input");
	struct dirent *de;
	int n = 0, x = 0, y = 0;
	bool pressed = false;

	while (dir && (de = readdir(dir)) && n < MAX_INPUTS) {
		unsigned long evbits[1] = { 0 };
		char path[300];
		int fd;

		if (strncmp(de->d_name, "event", 5))
			continue;
		snprintf(path, sizeof(path), "/dev/input/%s", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (ioctl(fd, EVIOCGBIT(0, sizeof(evbits)), evbits) < 0 ||
		    !has_bit(evbits, EV_ABS) || ioctl(fd, EVIOCGABS(ABS_X), &ax[n]) < 0 ||
		    ioctl(fd, EVIOCGABS(ABS_Y), &ay[n]) < 0) {
			close(fd);
			continue;
		}
		pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	if (dir)
		closedir(dir);
	for (;;) {
		if (n == 0 || poll(pfd, (nfds_t)n, -1) < 0) {
			pause();
			continue;
		}
		for (int i = 0; i < n; i++) {
			struct input_event ev[64];
			ssize_t got;

			if (!(pfd[i].revents & POLLIN) ||
			    (got = read(pfd[i].fd, ev, sizeof(ev))) <= 0)
				continue;
			for (size_t k = 0; k < (size_t)got / sizeof(ev[0]); k++) {
				if (ev[k].type == EV_ABS && ev[k].code == ABS_X) {
					ax[i].value = ev[k].value;
					x = abs_to_px(&ax[i], sc->w);
				} else if (ev[k].type == EV_ABS && ev[k].code == ABS_Y) {
					ay[i].value = ev[k].value;
					y = abs_to_px(&ay[i], sc->h);
				} else if (ev[k].type == EV_KEY && ev[k].value == 1 &&
					   ev[k].code >= BTN_LEFT && ev[k].code <= BTN_MIDDLE) {
					pressed = true; /* marked once the frame's motion is in */
				} else if (ev[k].type == EV_SYN && ev[k].code == SYN_REPORT &&
					   pressed) {
					pressed = false;
					fill_shown(sc, x - 2, y - 2, 5, 5, 0xFF0000);
					fill_shown(sc, x, y, 1, 1, 0xFFFFFF);
				}
			}
		}
	}
}

/* Sets w x h on CARD and draws on it; reports "ok" or the error on report.
 * *sc is the screen it holds. */
static void set_mode(uint32_t w, uint32_t h, int report, struct screen *sc)
{
	struct drm_mode_create_dumb dumb = { .width = w, .height = h, .bpp = 32 };
	struct drm_mode_fb_cmd fb = { .width = w, .height = h, .bpp = 32, .depth = 24 };
	struct drm_mode_map_dumb map = { 0 };
	struct drm_mode_crtc crtc = { 0 };
	uint32_t conn_id = 0, crtc_id = 0;
	void *px;
	int fd = open(CARD, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die(report, CARD, errno);
	find_output(fd, report, &conn_id, &crtc_id);
	if (ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &dumb) < 0)
		die(report, "DRM_IOCTL_MODE_CREATE_DUMB", errno);
	fb.pitch = dumb.pitch;
	fb.handle = dumb.handle;
	if (ioctl(fd, DRM_IOCTL_MODE_ADDFB, &fb) < 0)
		die(report, "DRM_IOCTL_MODE_ADDFB", errno);
	map.handle = dumb.handle;
	if (ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map) < 0)
		die(report, "DRM_IOCTL_MODE_MAP_DUMB", errno);
	px = mmap(NULL, dumb.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)map.offset);
	if (px == MAP_FAILED)
		die(report, "mmap", errno);
	draw(px, dumb.pitch / 4, w, h);
	crtc.set_connectors_ptr = (uintptr_t)&conn_id;
	crtc.count_connectors = 1;
	crtc.crtc_id = crtc_id;
	crtc.fb_id = fb.fb_id;
	crtc.mode_valid = 1;
	/* A mode of our own (no output lists one this big): blanking is
	 * nominal, the virtual display only reads the visible size. */
	crtc.mode.hdisplay = (uint16_t)w;
	crtc.mode.hsync_start = (uint16_t)(w + 8);
	crtc.mode.hsync_end = (uint16_t)(w + 16);
	crtc.mode.htotal = (uint16_t)(w + 24);
	crtc.mode.vdisplay = (uint16_t)h;
	crtc.mode.vsync_start = (uint16_t)(h + 1);
	crtc.mode.vsync_end = (uint16_t)(h + 2);
	crtc.mode.vtotal = (uint16_t)(h + 3);
	crtc.mode.vrefresh = 60;
	crtc.mode.clock = (uint32_t)((uint64_t)crtc.mode.htotal * crtc.mode.vtotal * 60 / 1000);
	crtc.mode.type = DRM_MODE_TYPE_USERDEF;
	snprintf(crtc.mode.name, sizeof(crtc.mode.name), "%ux%u", w, h);
	if (ioctl(fd, DRM_IOCTL_MODE_SETCRTC, &crtc) < 0)
		die(report, "DRM_IOCTL_MODE_SETCRTC", errno);
	/* the file stays open: it holds the mode */
	*sc = (struct screen){
		.fd = fd, .fb_id = fb.fb_id, .px = px, .pitch_px = dumb.pitch / 4, .w = w, .h = h
	};
}

int main(int argc, char **argv)
{
	unsigned w = 0, h = 0;
	char tail, msg[256];
	int pipefd[2], null;
	ssize_t n;
	pid_t pid;

	if (argc != 2 ||
	    (strcmp(argv[1], "off") && (sscanf(argv[1], "%ux%u%c", &w, &h, &tail) != 2 ||
					w < SQUARE || h < SQUARE || w > 65535 || h > 65535))) {
		fprintf(stderr, "usage: tinymode WxH (each 64..65535) | tinymode off\n");
		return 2;
	}
	end_holder();
	if (!strcmp(argv[1], "off")) {
		printf("tinymode: off\n");
		return 0;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		perror("tinymode: fork");
		return 1;
	}
	if (pid == 0) {
		struct screen sc;
		FILE *f;

		close(pipefd[0]);
		setsid();
		set_mode(w, h, pipefd[1], &sc);
		f = fopen(PIDFILE, "w");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
		n = snprintf(msg, sizeof(msg), "tinymode: %ux%u pid=%d\n", w, h, (int)getpid());
		if (write(pipefd[1], msg, (size_t)n) < 0)
			_exit(1);
		close(pipefd[1]);
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		mark_clicks(&sc); /* until SIGTERM, which ends us and the mode */
	}
	close(pipefd[1]);
	n = read(pipefd[0], msg, sizeof(msg) - 1);
	if (n <= 0) {
		fprintf(stderr, "tinymode: the holder died without a word\n");
		return 1;
	}
	msg[n] = '\0';
	fputs(msg, strstr(msg, " pid=") ? stdout : stderr);
	return strstr(msg, " pid=") ? 0 : 1;
}
