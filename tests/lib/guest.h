/* tests/lib/guest.h: booting a guest for a test group and watching what its
 * console says, shared by the integration and end-to-end tests. */
#ifndef VITRINE_TESTS_GUEST_H
#define VITRINE_TESTS_GUEST_H

#include "vmm-qemu/vm.h"

#include <stdbool.h>

struct test_guest {
	struct vmm_vm *vm;
	struct vmm_image image;
	int width, height;
	/* Console markers seen so far, oldest first (a log, not a ring: tests are short). */
	struct vmm_marker *seen;
	size_t n_seen, cap_seen;
};

/* Boots image (accelerator auto) at w x h with an optional host page and
 * url, and waits for phase=ready. Returns 0, or -errno after printing why. */
int test_guest_boot(struct test_guest *g, const char *image, int w, int h, const char *page,
		    const char *url, int timeout_ms);
void test_guest_destroy(struct test_guest *g);

/* Waits until a marker with key=value (value NULL: any) arrives after index
 * *from; on success sets *from past it and returns that marker. */
const struct vmm_marker *test_guest_wait_marker(struct test_guest *g, size_t *from, const char *key,
						const char *value, int timeout_ms);

/* A QMP input-send-event; returns 0 or -errno after printing why. */
int test_guest_input(struct test_guest *g, json_t *events);
/* Moves to (x, y) and clicks button. */
int test_guest_click(struct test_guest *g, int x, int y, const char *button);
/* Presses and releases qcode, with modifier (qcode or NULL) held. */
int test_guest_key(struct test_guest *g, const char *modifier, const char *qcode);
/* Screendump to a PPM under /tmp, loaded into img. Returns 0 or -errno. */
struct ppm;
int test_guest_screen(struct test_guest *g, struct ppm *img);

#endif
