/* bench/bench_boot.c: cold boot of the guest images to "ready", median of N
 * runs, with the time of each boot phase the guest reports (host wall clock
 * since QEMU was spawned, and the guest's own uptime).
 *
 * Baseline, measured in the same run: the desktop rootfs booted the way the
 * first prototype did, with Debian's compressed kernel and its stock
 * initramfs-tools initrd (udev coldplug and settle) instead of our ELF kernel
 * and busybox initramfs, up to the phase "rootfs". That is where the two
 * paths differ: from there on both run the same rootfs init, and the stock
 * initrd loads no GPU driver (our rootfs carries no modules), so the
 * baseline cannot go further. The ratio to rootfs is printed, and the
 * baseline's time to ready projected from it (ours after rootfs added).
 *
 * usage: bench_boot [--runs N] [--images tiny,desktop] [--no-baseline] */
#include "tests/lib/stats.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/vm.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RUNS 9
#define MAX_NAMES 8

struct series {
	const char *label;
	int runs;
	char names[MAX_NAMES][24]; /* phase names in the order first seen */
	int n_names;
	double wall[MAX_NAMES][MAX_RUNS], uptime[MAX_NAMES][MAX_RUNS];
	int have[MAX_NAMES];
	int failures;
};

static double median(const double *v, int n)
{
	double s[MAX_RUNS];

	if (n == 0)
		return -1;
	memcpy(s, v, (size_t)n * sizeof(*s));
	stats_sort(s, n);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static int name_index(struct series *s, const char *name)
{
	for (int i = 0; i < s->n_names; i++)
		if (!strcmp(s->names[i], name))
			return i;
	if (s->n_names == MAX_NAMES)
		return -1;
	snprintf(s->names[s->n_names], sizeof(s->names[0]), "%s", name);
	return s->n_names++;
}

static int boot_once(const struct vmm_image *img, enum vmm_accel accel, const char *page,
		     const char *until, struct series *s)
{
	struct vmm_vm_opts opts = { .page_file = page };
	const struct vmm_phase *ph;
	struct vmm_spec spec;
	struct vmm_vm *vm = NULL;
	char err[2048];
	int rc;
	size_t n;

	vmm_spec_defaults(&spec);
	spec.image = img;
	spec.accel = accel;
	if (!img->rootfs[0])
		spec.memory_mib = 256;
	if (page)
		spec.url = "file:///run/vitrine/page.html";
	rc = vmm_vm_start(&spec, &opts, &vm, err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_wait_phase(vm, until, 300000, err, sizeof(err));
	if (vm) {
		n = vmm_vm_phases(vm, &ph);
		for (size_t i = 0; i < n; i++) {
			int k = name_index(s, ph[i].name);

			if (k < 0 || s->have[k] >= MAX_RUNS)
				continue;
			s->wall[k][s->have[k]] = ph[i].wall_ms / 1000.0;
			s->uptime[k][s->have[k]] = ph[i].uptime_s;
			s->have[k]++;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "bench: %s: %s\n", s->label, err);
		s->failures++;
	}
	vmm_vm_destroy(vm);
	return rc;
}

static void print_series(const struct series *s)
{
	printf("\n%s: %d runs, %d failed\n", s->label, s->runs, s->failures);
	printf("  %-12s %12s %14s\n", "phase", "host s (med)", "guest up (med)");
	for (int i = 0; i < s->n_names; i++)
		printf("  %-12s %12.2f %14.2f   (n=%d)\n", s->names[i],
		       median(s->wall[i], s->have[i]), median(s->uptime[i], s->have[i]),
		       s->have[i]);
}

static double ready_median(const struct series *s)
{
	for (int i = 0; i < s->n_names; i++)
		if (!strcmp(s->names[i], "ready") && s->have[i] == s->runs)
			return median(s->wall[i], s->have[i]);
	return -1;
}

static double phase_median(const struct series *s, const char *name)
{
	for (int i = 0; i < s->n_names; i++)
		if (!strcmp(s->names[i], name))
			return median(s->wall[i], s->have[i]);
	return -1;
}

static void print_ratio(const struct series *base, const struct series *ours)
{
	double b = phase_median(base, "rootfs"), o = phase_median(ours, "rootfs");
	double r = ready_median(ours);

	if (b <= 0 || o <= 0) {
		printf("\n  no ratio: a series never reached rootfs\n");
		return;
	}
	printf("\n  to rootfs: baseline %.2f s, ours %.2f s: %.2fx faster\n", b, o, b / o);
	if (r > 0)
		printf("  to ready: baseline projected %.2f s (its rootfs + our %.2f s after "
		       "rootfs), ours %.2f s: %.2fx faster\n",
		       b + r - o, r - o, r, (b + r - o) / r);
}

/* Points img at Debian's own kernel and initramfs-tools initrd in /boot (the
 * linux-image-amd64 package the images are built from installs both).
 * Returns 0, or -ENOENT when there is none. */
static int stock_kernel(struct vmm_image *img)
{
	glob_t g;
	int rc = -ENOENT;

	if (glob("/boot/initrd.img-*-amd64", 0, NULL, &g) != 0)
		return rc;
	for (size_t i = g.gl_pathc; i-- > 0 && rc < 0;) {
		const char *kv = g.gl_pathv[i] + strlen("/boot/initrd.img-");

		snprintf(img->initrd, sizeof(img->initrd), "%s", g.gl_pathv[i]);
		snprintf(img->kernel, sizeof(img->kernel), "/boot/vmlinuz-%s", kv);
		if (access(img->kernel, R_OK) == 0)
			rc = 0;
	}
	globfree(&g);
	return rc;
}

int main(int argc, char **argv)
{
	const char *images = "tiny,desktop", *page = "bench/pages/ready.html";
	bool baseline = true;
	char why[256], err[1024];
	enum vmm_accel accel;
	int runs = 3;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--images") && i + 1 < argc)
			images = argv[++i];
		else if (!strcmp(argv[i], "--no-baseline"))
			baseline = false;
		else {
			fprintf(stderr,
				"usage: bench_boot [--runs N] [--images tiny,desktop] [--no-baseline]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "bench_boot: --runs must be 1..%d\n", MAX_RUNS);
		return 2;
	}
	for (const char *p = images; *p;) {
		size_t len = strcspn(p, ",");
		char name[64];
		struct vmm_image img;
		struct series *ours = calloc(1, sizeof(*ours));

		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		p += len + (p[len] == ',');
		if (vmm_image_load(name, &img, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_boot: %s\n", err);
			return 1;
		}
		vmm_accel_resolve(VMM_ACCEL_AUTO, &img, "qemu-system-x86_64", &accel, why,
				  sizeof(why));
		printf("== %s under %s (%s)\n", name, vmm_accel_name(accel), why);
		fflush(stdout);
		ours->label = name;
		ours->runs = runs;
		for (int r = 0; r < runs; r++)
			boot_once(&img, accel, img.rootfs[0] ? page : NULL, "ready", ours);
		print_series(ours);
		if (img.rootfs[0]) {
			double ready = ready_median(ours);

			printf("  target: ready <= 40 s under TCG: %s (%.2f s)\n",
			       ready > 0 && ready <= 40 ? "met" : "NOT met", ready);
		}
		if (baseline && img.rootfs[0]) {
			struct series *base = calloc(1, sizeof(*base));
			struct vmm_image old = img;

			if (stock_kernel(&old) < 0) {
				printf("  baseline skipped: no /boot/initrd.img-* from initramfs-tools\n");
				free(base);
				free(ours);
				continue;
			}
			snprintf(
				old.append, sizeof(old.append),
				"root=/dev/vda rw init=/usr/local/lib/vitrine/init console=ttyS0 quiet");
			base->label =
				"baseline to rootfs (bzImage + initramfs-tools initrd, same rootfs)";
			base->runs = runs;
			for (int r = 0; r < runs; r++)
				boot_once(&old, accel, page, "rootfs", base);
			print_series(base);
			print_ratio(base, ours);
			free(base);
		}
		free(ours);
		fflush(stdout);
	}
	return 0;
}
