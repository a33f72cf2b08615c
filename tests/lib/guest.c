/* tests/lib/guest.c: see guest.h. */
#include "tests/lib/guest.h"

#include "common/fsutil.h"
#include "tests/lib/ppm.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_marker(void *ud, const struct vmm_marker *m)
{
	struct test_guest *g = ud;

	if (g->n_seen == g->cap_seen) {
		size_t cap = g->cap_seen ? g->cap_seen * 2 : 64;
		struct vmm_marker *n = realloc(g->seen, cap * sizeof(*n));

		if (!n)
			return;
		g->seen = n;
		g->cap_seen = cap;
	}
	g->seen[g->n_seen++] = *m;
}

/* QEMU itself crashed (Debian 12's QEMU 7.2 under TCG: one vCPU thread's
 * SIGSEGV in about a thousand boots on these machines), which says nothing
 * of the guest or of Vitrine. Not SIGABRT: the limits Vitrine sets (the
 * jail's rlimits, the cgroup) can make QEMU abort, and that is ours to see. */
static bool qemu_crashed(int rc, const char *err)
{
	return rc == -ECHILD && strstr(err, "QEMU killed by signal 11 ");
}

static int boot_once(struct test_guest *g, const char *image, int w, int h, const char *page,
		     const char *url, int timeout_ms, char *err, size_t errlen)
{
	struct vmm_vm_opts opts = { .page_file = page, .on_marker = on_marker, .ud = g };
	struct vmm_spec spec;
	char why[256];
	int rc;

	memset(g, 0, sizeof(*g));
	g->width = w;
	g->height = h;
	rc = vmm_image_load(image, &g->image, err, errlen);
	if (rc < 0)
		return rc;
	vmm_spec_defaults(&spec);
	spec.image = &g->image;
	spec.width = w;
	spec.height = h;
	spec.url = url;
	if (!g->image.rootfs[0])
		spec.memory_mib = 256;
	vmm_accel_resolve(VMM_ACCEL_AUTO, &g->image, "qemu-system-x86_64", &spec.accel, why,
			  sizeof(why));
	rc = vmm_vm_start(&spec, &opts, &g->vm, err, errlen);
	if (rc == 0)
		rc = vmm_vm_wait_phase(g->vm, "ready", timeout_ms, err, errlen);
	if (rc < 0)
		test_guest_destroy(g);
	return rc;
}

/* One boot more when QEMU crashed, said on stderr in a "retry: " line
 * (tests/run.sh counts them in its summary); any other failure (and a
 * second crash) fails. */
int test_guest_boot(struct test_guest *g, const char *image, int w, int h, const char *page,
		    const char *url, int timeout_ms)
{
	char err[2048];
	int rc = boot_once(g, image, w, h, page, url, timeout_ms, err, sizeof(err));

	if (qemu_crashed(rc, err)) {
		fprintf(stderr, "retry: test guest %s: QEMU crashed, booting once more: %s\n",
			image, err);
		rc = boot_once(g, image, w, h, page, url, timeout_ms, err, sizeof(err));
	}
	if (rc < 0)
		fprintf(stderr, "test guest %s: %s\n", image, err);
	return rc;
}

void test_guest_destroy(struct test_guest *g)
{
	vmm_vm_destroy(g->vm);
	g->vm = NULL;
	free(g->seen);
	g->seen = NULL;
	g->n_seen = g->cap_seen = 0;
}

const struct vmm_marker *test_guest_wait_marker(struct test_guest *g, size_t *from, const char *key,
						const char *value, int timeout_ms)
{
	int64_t deadline = fs_now_ms() + timeout_ms;
	char err[1024];

	for (;;) {
		for (size_t i = *from; i < g->n_seen; i++) {
			const char *v = vmm_marker_get(&g->seen[i], key);

			if (v && (!value || !strcmp(v, value))) {
				*from = i + 1;
				return &g->seen[i];
			}
		}
		if (fs_now_ms() >= deadline)
			return NULL;
		if (vmm_vm_service(g->vm, 50, err, sizeof(err)) < 0) {
			fprintf(stderr, "test guest: %s\n", err);
			return NULL;
		}
	}
}

int test_guest_input(struct test_guest *g, json_t *events)
{
	char err[1024];
	int rc = vmm_vm_qmp(g->vm, "input-send-event", events, NULL, 5000, err, sizeof(err));

	if (rc < 0)
		fprintf(stderr, "test guest: %s\n", err);
	return rc;
}

int test_guest_click(struct test_guest *g, int x, int y, const char *button)
{
	int rc = test_guest_input(g, vmm_input_move(x, y, g->width, g->height));

	if (rc == 0)
		rc = test_guest_input(g, vmm_input_button(button, true));
	if (rc == 0)
		rc = test_guest_input(g, vmm_input_button(button, false));
	return rc;
}

int test_guest_key(struct test_guest *g, const char *modifier, const char *qcode)
{
	int rc = 0;

	if (modifier)
		rc = test_guest_input(g, vmm_input_key(modifier, true));
	if (rc == 0)
		rc = test_guest_input(g, vmm_input_key(qcode, true));
	if (rc == 0)
		rc = test_guest_input(g, vmm_input_key(qcode, false));
	if (rc == 0 && modifier)
		rc = test_guest_input(g, vmm_input_key(modifier, false));
	return rc;
}

int test_guest_screen(struct test_guest *g, struct ppm *img)
{
	char path[64], err[1024];
	int rc;

	snprintf(path, sizeof(path), "/tmp/vitrine-test-%d.ppm", (int)getpid());
	rc = vmm_vm_screendump(g->vm, path, "ppm", err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "test guest: %s\n", err);
		return rc;
	}
	rc = ppm_load(path, img);
	unlink(path);
	return rc;
}
