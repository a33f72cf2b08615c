/*
 * tinyfb: the display program of Vitrine's `tiny` test guest.
 *
 * Integration tests boot the tiny guest, look at its screen and send it
 * pointer and keyboard events; this program gives them something exact to
 * check. It draws a fixed test pattern on /dev/fb0, then marks every click
 * and echoes every key, both on screen and as lines on /dev/ttyS0.
 *
 * Test pattern (W x H = the framebuffer's visible resolution, colours 0xRRGGBB):
 *   background                                          0x203040
 *   square  x [0, 64)      y [0, 64)       top-left     0x00FF00 (green)
 *   square  x [W-64, W)    y [0, 64)       top-right    0x0000FF (blue)
 *   square  x [0, 64)      y [H-64, H)     bottom-left  0xFFFF00 (yellow)
 *   square  x [W-64, W)    y [H-64, H)     bottom-right 0xFF00FF (magenta)
 *   bar     x [64, W-64)   y [80, 96)                   0x00FFFF (cyan)
 *   text area x [16, W-16) y [H/2-40, H/2+40)           0x000000, glyphs
 *           in 0xE0E0E0 (8x8 font at 2x), 4 lines of 20 px from
 *           (24, H/2-38), (W-48)/16 characters a line
 * A click draws a 5x5 square centred on the pointer in 0xFF0000 with the
 * centre pixel 0xFFFFFF; neither colour appears anywhere else.
 *
 * Lines printed on /dev/ttyS0 (one write each):
 *   VITRINE input=eventN name=<device_name>       once per device opened,
 *                                                  blanks in the name as '_'
 *   VITRINE phase=ready uptime=<s> width=W height=H
 *   VITRINE click x=X y=Y button=left|right|middle   on button press
 *   VITRINE key code=N                             on key press (Linux keycode)
 *   VITRINE text=<current line>                    after a printable key or
 *                                                  Backspace
 *   VITRINE line=<finished line>                   on Enter
 *   VITRINE warning=kd-graphics ...                if fbcon cannot be silenced
 *   VITRINE error=<what> ...                       then exit status 1
 * Characters past the end of a text line are dropped (still printed as keys);
 * Enter on the last line clears the text area and starts again at the top.
 *
 * Absolute axes map to pixels as libinput does:
 * x = (abs - min) * W / (max - min + 1), clamped to the screen.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fb.h>
#include <linux/input.h>
#include <linux/kd.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define BG_COLOUR 0x203040u
#define TEXT_BG 0x000000u
#define TEXT_FG 0xE0E0E0u
#define SQUARE 64
#define BAR_Y 80
#define BAR_H 16
#define TEXT_LINES 4
#define LINE_H 20
#define GLYPH 16 /* 8x8 glyphs drawn at 2x */
#define MAX_DEVS 16
#define RESCAN_MS 5000 /* keep looking for new input devices this long */
#define READY_WAIT_MS 3000 /* wait this long for a pointer and a keyboard */

/* font8x8_basic (public domain, after Marcel Sondaar / IBM VGA fonts):
 * U+0020..U+007E, a byte a row from the top, bit 0 = leftmost pixel. */
static const uint8_t font[95][8] = {
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 }, /*   */
	{ 0x18, 0x3C, 0x3C, 0x18, 0x18, 0x00, 0x18, 0x00 }, /* ! */
	{ 0x36, 0x36, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 }, /* " */
	{ 0x36, 0x36, 0x7F, 0x36, 0x7F, 0x36, 0x36, 0x00 }, /* # */
	{ 0x0C, 0x3E, 0x03, 0x1E, 0x30, 0x1F, 0x0C, 0x00 }, /* $ */
	{ 0x00, 0x63, 0x33, 0x18, 0x0C, 0x66, 0x63, 0x00 }, /* % */
	{ 0x1C, 0x36, 0x1C, 0x6E, 0x3B, 0x33, 0x6E, 0x00 }, /* & */
	{ 0x06, 0x06, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00 }, /* ' */
	{ 0x18, 0x0C, 0x06, 0x06, 0x06, 0x0C, 0x18, 0x00 }, /* ( */
	{ 0x06, 0x0C, 0x18, 0x18, 0x18, 0x0C, 0x06, 0x00 }, /* ) */
	{ 0x00, 0x66, 0x3C, 0xFF, 0x3C, 0x66, 0x00, 0x00 }, /* * */
	{ 0x00, 0x0C, 0x0C, 0x3F, 0x0C, 0x0C, 0x00, 0x00 }, /* + */
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C, 0x06 }, /* , */
	{ 0x00, 0x00, 0x00, 0x3F, 0x00, 0x00, 0x00, 0x00 }, /* - */
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C, 0x00 }, /* . */
	{ 0x60, 0x30, 0x18, 0x0C, 0x06, 0x03, 0x01, 0x00 }, /* / */
	{ 0x3E, 0x63, 0x73, 0x7B, 0x6F, 0x67, 0x3E, 0x00 }, /* 0 */
	{ 0x0C, 0x0E, 0x0C, 0x0C, 0x0C, 0x0C, 0x3F, 0x00 }, /* 1 */
	{ 0x1E, 0x33, 0x30, 0x1C, 0x06, 0x33, 0x3F, 0x00 }, /* 2 */
	{ 0x1E, 0x33, 0x30, 0x1C, 0x30, 0x33, 0x1E, 0x00 }, /* 3 */
	{ 0x38, 0x3C, 0x36, 0x33, 0x7F, 0x30, 0x78, 0x00 }, /* 4 */
	{ 0x3F, 0x03, 0x1F, 0x30, 0x30, 0x33, 0x1E, 0x00 }, /* 5 */
	{ 0x1C, 0x06, 0x03, 0x1F, 0x33, 0x33, 0x1E, 0x00 }, /* 6 */
	{ 0x3F, 0x33, 0x30, 0x18, 0x0C, 0x0C, 0x0C, 0x00 }, /* 7 */
	{ 0x1E, 0x33, 0x33, 0x1E, 0x33, 0x33, 0x1E, 0x00 }, /* 8 */
	{ 0x1E, 0x33, 0x33, 0x3E, 0x30, 0x18, 0x0E, 0x00 }, /* 9 */
	{ 0x00, 0x0C, 0x0C, 0x00, 0x00, 0x0C, 0x0C, 0x00 }, /* : */
	{ 0x00, 0x0C, 0x0C, 0x00, 0x00, 0x0C, 0x0C, 0x06 }, /* ; */
	{ 0x18, 0x0C, 0x06, 0x03, 0x06, 0x0C, 0x18, 0x00 }, /* < */
	{ 0x00, 0x00, 0x3F, 0x00, 0x00, 0x3F, 0x00, 0x00 }, /* = */
	{ 0x06, 0x0C, 0x18, 0x30, 0x18, 0x0C, 0x06, 0x00 }, /* > */
	{ 0x1E, 0x33, 0x30, 0x18, 0x0C, 0x00, 0x0C, 0x00 }, /* ? */
	{ 0x3E, 0x63, 0x7B, 0x7B, 0x7B, 0x03, 0x1E, 0x00 }, /* @ */
	{ 0x0C, 0x1E, 0x33, 0x33, 0x3F, 0x33, 0x33, 0x00 }, /* A */
	{ 0x3F, 0x66, 0x66, 0x3E, 0x66, 0x66, 0x3F, 0x00 }, /* B */
	{ 0x3C, 0x66, 0x03, 0x03, 0x03, 0x66, 0x3C, 0x00 }, /* C */
	{ 0x1F, 0x36, 0x66, 0x66, 0x66, 0x36, 0x1F, 0x00 }, /* D */
	{ 0x7F, 0x46, 0x16, 0x1E, 0x16, 0x46, 0x7F, 0x00 }, /* E */
	{ 0x7F, 0x46, 0x16, 0x1E, 0x16, 0x06, 0x0F, 0x00 }, /* F */
	{ 0x3C, 0x66, 0x03, 0x03, 0x73, 0x66, 0x7C, 0x00 }, /* G */
	{ 0x33, 0x33, 0x33, 0x3F, 0x33, 0x33, 0x33, 0x00 }, /* H */
	{ 0x1E, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x1E, 0x00 }, /* I */
	{ 0x78, 0x30, 0x30, 0x30, 0x33, 0x33, 0x1E, 0x00 }, /* J */
	{ 0x67, 0x66, 0x36, 0x1E, 0x36, 0x66, 0x67, 0x00 }, /* K */
	{ 0x0F, 0x06, 0x06, 0x06, 0x46, 0x66, 0x7F, 0x00 }, /* L */
	{ 0x63, 0x77, 0x7F, 0x7F, 0x6B, 0x63, 0x63, 0x00 }, /* M */
	{ 0x63, 0x67, 0x6F, 0x7B, 0x73, 0x63, 0x63, 0x00 }, /* N */
	{ 0x1C, 0x36, 0x63, 0x63, 0x63, 0x36, 0x1C, 0x00 }, /* O */
	{ 0x3F, 0x66, 0x66, 0x3E, 0x06, 0x06, 0x0F, 0x00 }, /* P */
	{ 0x1E, 0x33, 0x33, 0x33, 0x3B, 0x1E, 0x38, 0x00 }, /* Q */
	{ 0x3F, 0x66, 0x66, 0x3E, 0x36, 0x66, 0x67, 0x00 }, /* R */
	{ 0x1E, 0x33, 0x07, 0x0E, 0x38, 0x33, 0x1E, 0x00 }, /* S */
	{ 0x3F, 0x2D, 0x0C, 0x0C, 0x0C, 0x0C, 0x1E, 0x00 }, /* T */
	{ 0x33, 0x33, 0x33, 0x33, 0x33, 0x33, 0x3F, 0x00 }, /* U */
	{ 0x33, 0x33, 0x33, 0x33, 0x33, 0x1E, 0x0C, 0x00 }, /* V */
	{ 0x63, 0x63, 0x63, 0x6B, 0x7F, 0x77, 0x63, 0x00 }, /* W */
	{ 0x63, 0x63, 0x36, 0x1C, 0x1C, 0x36, 0x63, 0x00 }, /* X */
	{ 0x33, 0x33, 0x33, 0x1E, 0x0C, 0x0C, 0x1E, 0x00 }, /* Y */
	{ 0x7F, 0x63, 0x31, 0x18, 0x4C, 0x66, 0x7F, 0x00 }, /* Z */
	{ 0x1E, 0x06, 0x06, 0x06, 0x06, 0x06, 0x1E, 0x00 }, /* [ */
	{ 0x03, 0x06, 0x0C, 0x18, 0x30, 0x60, 0x40, 0x00 }, /* \ */
	{ 0x1E, 0x18, 0x18, 0x18, 0x18, 0x18, 0x1E, 0x00 }, /* ] */
	{ 0x08, 0x1C, 0x36, 0x63, 0x00, 0x00, 0x00, 0x00 }, /* ^ */
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF }, /* _ */
	{ 0x0C, 0x0C, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00 }, /* ` */
	{ 0x00, 0x00, 0x1E, 0x30, 0x3E, 0x33, 0x6E, 0x00 }, /* a */
	{ 0x07, 0x06, 0x06, 0x3E, 0x66, 0x66, 0x3B, 0x00 }, /* b */
	{ 0x00, 0x00, 0x1E, 0x33, 0x03, 0x33, 0x1E, 0x00 }, /* c */
	{ 0x38, 0x30, 0x30, 0x3E, 0x33, 0x33, 0x6E, 0x00 }, /* d */
	{ 0x00, 0x00, 0x1E, 0x33, 0x3F, 0x03, 0x1E, 0x00 }, /* e */
	{ 0x1C, 0x36, 0x06, 0x0F, 0x06, 0x06, 0x0F, 0x00 }, /* f */
	{ 0x00, 0x00, 0x6E, 0x33, 0x33, 0x3E, 0x30, 0x1F }, /* g */
	{ 0x07, 0x06, 0x36, 0x6E, 0x66, 0x66, 0x67, 0x00 }, /* h */
	{ 0x0C, 0x00, 0x0E, 0x0C, 0x0C, 0x0C, 0x1E, 0x00 }, /* i */
	{ 0x30, 0x00, 0x30, 0x30, 0x30, 0x33, 0x33, 0x1E }, /* j */
	{ 0x07, 0x06, 0x66, 0x36, 0x1E, 0x36, 0x67, 0x00 }, /* k */
	{ 0x0E, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x1E, 0x00 }, /* l */
	{ 0x00, 0x00, 0x33, 0x7F, 0x7F, 0x6B, 0x63, 0x00 }, /* m */
	{ 0x00, 0x00, 0x1F, 0x33, 0x33, 0x33, 0x33, 0x00 }, /* n */
	{ 0x00, 0x00, 0x1E, 0x33, 0x33, 0x33, 0x1E, 0x00 }, /* o */
	{ 0x00, 0x00, 0x3B, 0x66, 0x66, 0x3E, 0x06, 0x0F }, /* p */
	{ 0x00, 0x00, 0x6E, 0x33, 0x33, 0x3E, 0x30, 0x78 }, /* q */
	{ 0x00, 0x00, 0x3B, 0x6E, 0x66, 0x06, 0x0F, 0x00 }, /* r */
	{ 0x00, 0x00, 0x3E, 0x03, 0x1E, 0x30, 0x1F, 0x00 }, /* s */
	{ 0x08, 0x0C, 0x3E, 0x0C, 0x0C, 0x2C, 0x18, 0x00 }, /* t */
	{ 0x00, 0x00, 0x33, 0x33, 0x33, 0x33, 0x6E, 0x00 }, /* u */
	{ 0x00, 0x00, 0x33, 0x33, 0x33, 0x1E, 0x0C, 0x00 }, /* v */
	{ 0x00, 0x00, 0x63, 0x6B, 0x7F, 0x7F, 0x36, 0x00 }, /* w */
	{ 0x00, 0x00, 0x63, 0x36, 0x1C, 0x36, 0x63, 0x00 }, /* x */
	{ 0x00, 0x00, 0x33, 0x33, 0x33, 0x3E, 0x30, 0x1F }, /* y */
	{ 0x00, 0x00, 0x3F, 0x19, 0x0C, 0x26, 0x3F, 0x00 }, /* z */
	{ 0x38, 0x0C, 0x0C, 0x07, 0x0C, 0x0C, 0x38, 0x00 }, /* { */
	{ 0x18, 0x18, 0x18, 0x00, 0x18, 0x18, 0x18, 0x00 }, /* | */
	{ 0x07, 0x0C, 0x0C, 0x38, 0x0C, 0x0C, 0x07, 0x00 }, /* } */
	{ 0x6E, 0x3B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 }, /* ~ */
};

/* US layout, indexed by Linux keycode (KEY_ESC = 1 ... KEY_SPACE = 57). */
static const char keymap[2][KEY_SPACE + 1] = {
	"\0\0"
	"1234567890-="
	"\0\0"
	"qwertyuiop[]"
	"\0\0"
	"asdfghjkl;'`"
	"\0"
	"\\zxcvbnm,./"
	"\0\0\0"
	" ",
	"\0\0"
	"!@#$%^&*()_+"
	"\0\0"
	"QWERTYUIOP{}"
	"\0\0"
	"ASDFGHJKL:\"~"
	"\0"
	"|ZXCVBNM<>?"
	"\0\0\0"
	" ",
};

struct fb {
	int fd;
	uint8_t *mem;
	size_t size;
	int width, height, stride; /* stride in bytes */
	int xoff, yoff;
	unsigned rshift, gshift, bshift;
};

struct dev {
	int fd;
	int num; /* N of /dev/input/eventN */
	bool pointer, keyboard;
	struct input_absinfo ax, ay;
	size_t have; /* bytes of a partial event in buf */
	uint8_t buf[64 * sizeof(struct input_event)];
};

struct tiny {
	struct fb fb;
	int out; /* /dev/ttyS0 */
	struct dev devs[MAX_DEVS];
	int ndevs;
	int x, y; /* pointer position in pixels */
	unsigned pending; /* buttons pressed since the last SYN_REPORT */
	bool shift_l, shift_r, caps;
	char line[256];
	int len, row, cols;
};

__attribute__((format(printf, 2, 3))) static void say(const struct tiny *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	memcpy(buf, "VITRINE ", 8);
	va_start(ap, fmt);
	n = vsnprintf(buf + 8, sizeof(buf) - 9, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n += 8;
	if (n > (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 1;
	buf[n++] = '\n';
	for (int done = 0; done < n;) {
		ssize_t w = write(t->out, buf + done, (size_t)(n - done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		done += (int)w;
	}
}

static void uptime(char *buf, size_t len)
{
	FILE *f = fopen("/proc/uptime", "r");

	snprintf(buf, len, "?");
	if (f) {
		if (fscanf(f, "%31s", buf) != 1)
			snprintf(buf, len, "?");
		fclose(f);
	}
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* fill_rect fills [x, x+w) x [y, y+h), clipped to the screen, with 0xRRGGBB. */
static void fill_rect(const struct fb *fb, int x, int y, int w, int h, uint32_t rgb)
{
	uint32_t px = ((rgb >> 16 & 0xff) << fb->rshift) | ((rgb >> 8 & 0xff) << fb->gshift) |
		      ((rgb & 0xff) << fb->bshift);
	int x1 = x + w, y1 = y + h;

	if (x < 0)
		x = 0;
	if (y < 0)
		y = 0;
	if (x1 > fb->width)
		x1 = fb->width;
	if (y1 > fb->height)
		y1 = fb->height;
	for (int j = y; j < y1; j++) {
		uint32_t *row = (uint32_t *)(fb->mem +
					     (size_t)(j + fb->yoff) * (size_t)fb->stride) +
				fb->xoff;
		for (int i = x; i < x1; i++)
			row[i] = px;
	}
}

/*
 * flush pushes what was drawn to the display now: DRM's fbdev emulation only
 * notices writes to the mapping through deferred I/O, which otherwise waits
 * 50 ms. Called before printing, so a test that sees a line finds the drawing
 * on the host a moment later (the last copy is still asynchronous).
 */
static void flush(const struct fb *fb)
{
	while (fsync(fb->fd) < 0 && errno == EINTR)
		;
}

static int open_fb(struct fb *fb)
{
	struct fb_var_screeninfo var;
	struct fb_fix_screeninfo fix;
	int fd = open("/dev/fb0", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ioctl(fd, FBIOGET_VSCREENINFO, &var) < 0 || ioctl(fd, FBIOGET_FSCREENINFO, &fix) < 0)
		goto fail;
	if (var.bits_per_pixel != 32 || var.red.length != 8 || var.green.length != 8 ||
	    var.blue.length != 8) {
		errno = ENOTSUP;
		goto fail;
	}
	fb->width = (int)var.xres;
	fb->height = (int)var.yres;
	fb->xoff = (int)var.xoffset;
	fb->yoff = (int)var.yoffset;
	fb->stride = (int)fix.line_length;
	fb->rshift = var.red.offset;
	fb->gshift = var.green.offset;
	fb->bshift = var.blue.offset;
	fb->size = fix.smem_len;
	if ((size_t)fb->stride * (var.yoffset + var.yres) > fb->size) {
		errno = EINVAL;
		goto fail;
	}
	fb->mem = mmap(NULL, fb->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fb->mem == MAP_FAILED)
		goto fail;
	fb->fd = fd;
	return 0;
fail:
	close(fd);
	return -1;
}

static void draw_text_area(struct tiny *t)
{
	const struct fb *fb = &t->fb;

	fill_rect(fb, 16, fb->height / 2 - 40, fb->width - 32, TEXT_LINES * LINE_H, TEXT_BG);
}

static void draw_pattern(struct tiny *t)
{
	const struct fb *fb = &t->fb;
	int w = fb->width, h = fb->height;

	fill_rect(fb, 0, 0, w, h, BG_COLOUR);
	fill_rect(fb, 0, 0, SQUARE, SQUARE, 0x00FF00);
	fill_rect(fb, w - SQUARE, 0, SQUARE, SQUARE, 0x0000FF);
	fill_rect(fb, 0, h - SQUARE, SQUARE, SQUARE, 0xFFFF00);
	fill_rect(fb, w - SQUARE, h - SQUARE, SQUARE, SQUARE, 0xFF00FF);
	fill_rect(fb, SQUARE, BAR_Y, w - 2 * SQUARE, BAR_H, 0x00FFFF);
	draw_text_area(t);
}

/* draw_cell draws character c (or a blank, for c == 0) in text cell col of the current row. */
static void draw_cell(const struct tiny *t, int col, char c)
{
	int x0 = 24 + col * GLYPH, y0 = t->fb.height / 2 - 38 + t->row * LINE_H;

	fill_rect(&t->fb, x0, y0, GLYPH, GLYPH, TEXT_BG);
	if (c < 0x20 || c > 0x7e)
		return;
	for (int r = 0; r < 8; r++)
		for (int b = 0; b < 8; b++)
			if (font[c - 0x20][r] >> b & 1)
				fill_rect(&t->fb, x0 + 2 * b, y0 + 2 * r, 2, 2, TEXT_FG);
}

static void on_key(struct tiny *t, int code)
{
	bool shift = t->shift_l || t->shift_r;
	char c = 0;

	say(t, "key code=%d", code);
	if (code == KEY_ENTER || code == KEY_KPENTER) {
		say(t, "line=%s", t->line);
		t->len = 0;
		t->line[0] = 0;
		if (++t->row == TEXT_LINES) { /* full: start again at the top */
			t->row = 0;
			draw_text_area(t);
			flush(&t->fb);
		}
		return;
	}
	if (code == KEY_BACKSPACE) {
		if (t->len > 0) {
			t->line[--t->len] = 0;
			draw_cell(t, t->len, 0);
			flush(&t->fb);
		}
		say(t, "text=%s", t->line);
		return;
	}
	if (code == KEY_CAPSLOCK)
		t->caps = !t->caps;
	if (code >= 0 && code <= KEY_SPACE)
		c = keymap[shift][code];
	if (c >= 'a' && c <= 'z' && t->caps)
		c = (char)(c - 'a' + 'A');
	else if (c >= 'A' && c <= 'Z' && t->caps)
		c = (char)(c - 'A' + 'a');
	if (!c)
		return;
	if (t->len < t->cols && t->len < (int)sizeof(t->line) - 1) {
		draw_cell(t, t->len, c);
		flush(&t->fb);
		t->line[t->len++] = c;
		t->line[t->len] = 0;
	}
	say(t, "text=%s", t->line);
}

static int abs_to_px(const struct input_absinfo *a, int size)
{
	long long range = (long long)a->maximum - a->minimum + 1;
	long long v = range > 0 ? ((long long)a->value - a->minimum) * size / range : 0;

	return v < 0 ? 0 : v >= size ? size - 1 : (int)v;
}

static void on_event(struct tiny *t, struct dev *d, const struct input_event *ev)
{
	static const char *const names[3] = { "left", "right", "middle" };

	switch (ev->type) {
	case EV_ABS:
		if (ev->code == ABS_X) {
			d->ax.value = ev->value;
			t->x = abs_to_px(&d->ax, t->fb.width);
		} else if (ev->code == ABS_Y) {
			d->ay.value = ev->value;
			t->y = abs_to_px(&d->ay, t->fb.height);
		}
		break;
	case EV_REL:
		if (ev->code == REL_X)
			t->x += ev->value;
		else if (ev->code == REL_Y)
			t->y += ev->value;
		t->x = t->x < 0 ? 0 : t->x >= t->fb.width ? t->fb.width - 1 : t->x;
		t->y = t->y < 0 ? 0 : t->y >= t->fb.height ? t->fb.height - 1 : t->y;
		break;
	case EV_KEY:
		if (ev->code == KEY_LEFTSHIFT)
			t->shift_l = ev->value != 0;
		else if (ev->code == KEY_RIGHTSHIFT)
			t->shift_r = ev->value != 0;
		if (ev->value != 1)
			break;
		if (ev->code >= BTN_LEFT && ev->code <= BTN_MIDDLE)
			t->pending |= 1u << (ev->code - BTN_LEFT); /* acted on at SYN_REPORT */
		else if (ev->code < BTN_MISC || (ev->code >= KEY_OK && ev->code < BTN_DPAD_UP))
			on_key(t, ev->code); /* not a button (e.g. QEMU's wheel, BTN_GEAR_*) */
		break;
	case EV_SYN:
		/* Handle clicks at the end of the frame, once its motion is known. */
		for (int b = 0; b < 3 && ev->code == SYN_REPORT; b++) {
			if (!(t->pending & 1u << b))
				continue;
			fill_rect(&t->fb, t->x - 2, t->y - 2, 5, 5, 0xFF0000);
			fill_rect(&t->fb, t->x, t->y, 1, 1, 0xFFFFFF);
			flush(&t->fb);
			say(t, "click x=%d y=%d button=%s", t->x, t->y, names[b]);
		}
		if (ev->code == SYN_REPORT)
			t->pending = 0;
		break;
	}
}

static bool test_bit(const unsigned long *bits, unsigned bit)
{
	return bits[bit / (8 * sizeof(long))] >> (bit % (8 * sizeof(long))) & 1;
}

/* scan_inputs opens every /dev/input/eventN not yet open. */
static void scan_inputs(struct tiny *t)
{
	DIR *dir = opendir("/dev/input");
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)) && t->ndevs < MAX_DEVS) {
		unsigned long evbits[1] = { 0 }, keybits[KEY_MAX / (8 * sizeof(long)) + 1];
		char path[64], name[128] = "?";
		struct dev *d = &t->devs[t->ndevs];
		int num, fd;
		bool known = false;

		if (sscanf(de->d_name, "event%d", &num) != 1)
			continue;
		for (int i = 0; i < t->ndevs; i++)
			known |= t->devs[i].num == num;
		if (known)
			continue;
		snprintf(path, sizeof(path), "/dev/input/event%d", num);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(d, 0, sizeof(*d));
		memset(keybits, 0, sizeof(keybits));
		d->fd = fd;
		d->num = num;
		ioctl(fd, EVIOCGNAME(sizeof(name) - 1), name);
		ioctl(fd, EVIOCGBIT(0, sizeof(evbits)), evbits);
		ioctl(fd, EVIOCGBIT(EV_KEY, sizeof(keybits)), keybits);
		if (test_bit(evbits, EV_ABS) && ioctl(fd, EVIOCGABS(ABS_X), &d->ax) == 0 &&
		    ioctl(fd, EVIOCGABS(ABS_Y), &d->ay) == 0)
			d->pointer = true;
		if (test_bit(evbits, EV_REL) || test_bit(keybits, BTN_LEFT))
			d->pointer = true;
		d->keyboard = test_bit(keybits, KEY_A);
		/* Keep the console's keyboard handler out. Pointers stay shared:
		 * tinymode's holder marks clicks on its own screen too. */
		if (d->keyboard)
			ioctl(fd, EVIOCGRAB, 1);
		t->ndevs++;
		for (char *c = name; *c; c++)
			if (*c == ' ' || *c == '=')
				*c = '_'; /* console values end at a space */
		say(t, "input=event%d name=%s", num, name);
	}
	closedir(dir);
}

static void read_dev(struct tiny *t, struct dev *d)
{
	const size_t evsz = sizeof(struct input_event);

	for (;;) {
		ssize_t n = read(d->fd, d->buf + d->have, sizeof(d->buf) - d->have);
		size_t off = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) { /* gone (ENODEV) or broken: main drops it */
			close(d->fd);
			d->fd = -1;
			return;
		}
		d->have += (size_t)n;
		for (; d->have - off >= evsz; off += evsz) {
			struct input_event ev;

			memcpy(&ev, d->buf + off, evsz);
			on_event(t, d, &ev);
		}
		memmove(d->buf, d->buf + off, d->have - off);
		d->have -= off;
	}
}

int main(void)
{
	static struct tiny t; /* large (input buffers): keep it off the stack */
	struct pollfd pfds[MAX_DEVS];
	long long start = now_ms();
	bool ready = false;
	char up[32];
	int tty;

	t.out = open("/dev/ttyS0", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (t.out < 0)
		t.out = STDOUT_FILENO;
	if (open_fb(&t.fb) < 0) {
		say(&t, "error=fb-open errno=%d (%s)", errno, strerror(errno));
		return 1;
	}
	tty = open("/dev/tty0", O_RDWR | O_CLOEXEC);
	if (tty < 0 || ioctl(tty, KDSETMODE, KD_GRAPHICS) < 0)
		say(&t, "warning=kd-graphics errno=%d (%s)", errno, strerror(errno));
	t.cols = (t.fb.width - 48) / GLYPH;
	draw_pattern(&t);
	flush(&t.fb);

	for (;;) {
		long long elapsed = now_ms() - start;
		int n = 0, r;

		for (int i = t.ndevs - 1; i >= 0; i--) /* forget devices that went away */
			if (t.devs[i].fd < 0)
				t.devs[i] = t.devs[--t.ndevs];
		if (elapsed < RESCAN_MS)
			scan_inputs(&t);
		if (!ready) {
			bool pointer = false, keyboard = false;

			for (int i = 0; i < t.ndevs; i++) {
				pointer |= t.devs[i].pointer;
				keyboard |= t.devs[i].keyboard;
			}
			if ((pointer && keyboard) || elapsed >= READY_WAIT_MS) {
				uptime(up, sizeof(up));
				say(&t, "phase=ready uptime=%s width=%d height=%d", up, t.fb.width,
				    t.fb.height);
				ready = true;
			}
		}
		for (int i = 0; i < t.ndevs; i++) {
			if (t.devs[i].fd < 0)
				continue;
			pfds[n].fd = t.devs[i].fd;
			pfds[n].events = POLLIN;
			pfds[n].revents = 0;
			n++;
		}
		r = poll(pfds, (nfds_t)n, elapsed < RESCAN_MS ? (ready ? 250 : 20) : -1);
		if (r < 0 && errno != EINTR) {
			say(&t, "error=poll errno=%d (%s)", errno, strerror(errno));
			return 1;
		}
		for (int i = 0, k = 0; i < t.ndevs && r > 0; i++) {
			if (t.devs[i].fd < 0)
				continue;
			if (pfds[k++].revents)
				read_dev(&t, &t.devs[i]);
		}
	}
}
