/* tests/e2e/test_desktop_boot.c: the desktop guest boots to Chromium showing
 * a page handed over from the host, and the screenshot shows that page: its
 * blocks are found by exact colour, size and relative position; the guest
 * agent answers on its virtio-serial port. One boot serves the group. */
#include "tests/lib/guest.h"
#include "tests/lib/ppm.h"

#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#define W 1280
#define H 800

static struct test_guest guest;

static int setup(void **state)
{
	(void)state;
	return test_guest_boot(&guest, "desktop", W, H, "tests/e2e/pages/blocks.html",
			       "file:///run/vitrine/page.html", 300000) == 0
		       ? 0
		       : -1;
}

static int teardown(void **state)
{
	(void)state;
	test_guest_destroy(&guest);
	return 0;
}

struct box {
	int x0, y0, x1, y1;
};

static bool find_block(const struct ppm *img, uint32_t rgb, struct box *b)
{
	return ppm_find_bbox(img, rgb, 2, &b->x0, &b->y0, &b->x1, &b->y1);
}

static void test_screenshot_shows_page(void **state)
{
	struct box a, b, c;
	struct ppm img;
	bool found = false;

	(void)state;
	/* "ready" means the page loaded; the frame may land a moment later. */
	for (int tries = 0; tries < 100 && !found; tries++) {
		assert_int_equal(test_guest_screen(&guest, &img), 0);
		found = find_block(&img, 0xE0409F, &a) && find_block(&img, 0x20B060, &b) &&
			find_block(&img, 0x3050E0, &c);
		if (!found) {
			ppm_free(&img);
			usleep(200 * 1000);
		}
	}
	if (!found)
		fail_msg("the page's blocks never showed on screen");
	assert_int_equal(img.width, W);
	assert_int_equal(img.height, H);
	/* Sizes in CSS pixels at device scale 1. */
	assert_int_equal(a.x1 - a.x0 + 1, 320);
	assert_int_equal(a.y1 - a.y0 + 1, 200);
	assert_int_equal(b.x1 - b.x0 + 1, 320);
	assert_int_equal(c.x1 - c.x0 + 1, 680);
	assert_int_equal(c.y1 - c.y0 + 1, 120);
	/* Solid: every pixel of each box has the block's colour. */
	assert_int_equal(ppm_count(&img, 0xE0409F, 2), 320 * 200);
	assert_int_equal(ppm_count(&img, 0x20B060, 2), 320 * 200);
	assert_int_equal(ppm_count(&img, 0x3050E0, 2), 680 * 120);
	/* Laid out as the page says, relative to each other. */
	assert_int_equal(b.x0 - a.x0, 360);
	assert_int_equal(b.y0, a.y0);
	assert_int_equal(c.x0, a.x0);
	assert_int_equal(c.y0 - a.y0, 240);
	/* The page fills the screen's width from the left edge (maximised window). */
	assert_int_equal(a.x0, 40);
	/* The text line under the blocks rendered something dark. */
	{
		size_t dark = 0;

		for (int y = a.y0 + 380; y < a.y0 + 420 && y < H; y++)
			for (int x = 40; x < 600; x++)
				dark += (ppm_pixel(&img, x, y) & 0xFF) < 0x60;
		if (dark < 200)
			fail_msg("only %zu dark pixels where the text line should be", dark);
	}
	ppm_free(&img);
}

/* qemu-ga answers on its virtio-serial port: guest-sync echoes our id. */
static void test_guest_agent_answers(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *req = "{\"execute\":\"guest-sync\",\"arguments\":{\"id\":424242}}\n";
	char buf[512] = "";
	size_t used = 0;
	int fd;

	(void)state;
	assert_int_equal(vmm_vm_socket(guest.vm, VMM_SOCKET_QGA, sa.sun_path, sizeof(sa.sun_path)),
			 0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	for (int i = 0; i < 100 && !strstr(buf, "424242"); i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 100) == 1) {
			ssize_t r = read(fd, buf + used, sizeof(buf) - 1 - used);

			if (r <= 0)
				break;
			used += (size_t)r;
			buf[used] = '\0';
		}
	}
	close(fd);
	if (!strstr(buf, "{\"return\": 424242}"))
		fail_msg("qemu-ga said: '%s'", buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_screenshot_shows_page),
		cmocka_unit_test(test_guest_agent_answers),
	};

	return cmocka_run_group_tests_name("desktop guest boot", tests, setup, teardown);
}
