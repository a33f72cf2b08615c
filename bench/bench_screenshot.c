/* bench/bench_screenshot.c: screenshot latency with the tiny guest at
 * 1280x800, N shots each: (a) the mirror's latest frame -> JPEG q80,
 * (b) a fresh frame (display_mirror_wait_fresh) -> JPEG q80, (c) QMP
 * screendump as PNG, the way screenshots were taken before the mirror.
 * Prints p50/p95 and the ratio (c)/(a). Targets: (a) p50 <= 20 ms and
 * (c)/(a) >= 5.
 *
 * usage: bench_screenshot [--shots N] */
#include "display/encode.h"
#include "display/mirror.h"
#include "tests/lib/stats.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SHOTS 500

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void report(const char *label, double *v, int n, double *p50)
{
	*p50 = stats_pct(v, n, 0.5);
	printf("%-34s p50 %7.2f ms  p95 %7.2f ms  (n=%d)\n", label, *p50, stats_pct(v, n, 0.95), n);
}

/* One shot through the mirror; fresh: wait for a confirmed-current frame. */
static int mirror_shot(struct display_mirror *m, bool fresh, size_t *bytes)
{
	struct display_encode_opts o = { .format = DISPLAY_FORMAT_JPEG, .quality = 80 };
	struct display_frame *f;
	struct display_image *img;
	char err[256];

	if (fresh && display_mirror_wait_fresh(m, 5000) < 0)
		return -1;
	f = display_mirror_latest(m);
	if (!f || display_encode(f, &o, &img, err, sizeof(err)) < 0) {
		display_frame_unref(f);
		return -1;
	}
	*bytes = img->len;
	display_image_unref(img);
	display_frame_unref(f);
	return 0;
}

int main(int argc, char **argv)
{
	static double a[MAX_SHOTS], b[MAX_SHOTS], c[MAX_SHOTS];
	struct vmm_vm_opts opts = { 0 };
	struct display_mirror *m = NULL;
	struct vmm_image img;
	struct vmm_spec spec;
	struct vmm_vm *vm = NULL;
	char err[2048], why[256], path[600];
	double pa, pb, pc;
	size_t bytes = 0;
	int shots = 50, rc = 1;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--shots") && i + 1 < argc)
			shots = atoi(argv[++i]);
	if (shots < 1 || shots > MAX_SHOTS) {
		fprintf(stderr, "usage: bench_screenshot [--shots 1..%d]\n", MAX_SHOTS);
		return 2;
	}
	if (vmm_image_load("tiny", &img, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_screenshot: %s\n", err);
		return 1;
	}
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.width = 1280;
	spec.height = 800;
	spec.memory_mib = 256;
	vmm_accel_resolve(VMM_ACCEL_AUTO, &img, "qemu-system-x86_64", &spec.accel, why,
			  sizeof(why));
	if (vmm_vm_start(&spec, &opts, &vm, err, sizeof(err)) < 0 ||
	    vmm_vm_wait_phase(vm, "ready", 60000, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_screenshot: tiny guest: %s\n", err);
		goto out;
	}
	vmm_vm_socket(vm, VMM_SOCKET_VNC, path, sizeof(path));
	if (display_mirror_start(path, NULL, NULL, &m, err, sizeof(err)) < 0 ||
	    display_mirror_wait_fresh(m, 5000) < 0) {
		fprintf(stderr, "bench_screenshot: mirror: %s\n", err);
		goto out;
	}
	for (int i = 0; i < shots; i++) {
		double t0 = now_ms();

		if (mirror_shot(m, false, &bytes) < 0)
			goto fail;
		a[i] = now_ms() - t0;
	}
	for (int i = 0; i < shots; i++) {
		double t0 = now_ms();

		if (mirror_shot(m, true, &bytes) < 0)
			goto fail;
		b[i] = now_ms() - t0;
	}
	snprintf(path, sizeof(path), "/tmp/vitrine-bench-%d.png", (int)getpid());
	for (int i = 0; i < shots; i++) {
		double t0 = now_ms();

		if (vmm_vm_screendump(vm, path, "png", err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_screenshot: screendump: %s\n", err);
			goto out;
		}
		c[i] = now_ms() - t0;
	}
	unlink(path);
	printf("tiny guest 1280x800, JPEG q80 of the tiny pattern: %zu bytes\n", bytes);
	report("(a) mirror latest -> JPEG q80", a, shots, &pa);
	report("(b) mirror fresh -> JPEG q80", b, shots, &pb);
	report("(c) QMP screendump PNG", c, shots, &pc);
	printf("ratio (c)/(a) p50: %.1fx  (targets: (a) p50 <= 20 ms, ratio >= 5x)\n", pc / pa);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bench_screenshot: mirror shot failed: %s\n",
		m ? display_mirror_error(m) : "");
out:
	display_mirror_stop(m);
	vmm_vm_destroy(vm);
	return rc;
}
