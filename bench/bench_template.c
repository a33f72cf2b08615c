/* bench/bench_template.c: what templates buy. Cold boot against restore from
 * a template (median of 5) to the screen being there, and the host memory
 * (sum of PSS, /proc/PID/smaps_rollup) of N restored against N booted guests.
 *
 * usage: bench_template [--image tiny|desktop] [--guests N] [--runs N]
 * The template is made in a temporary dir under the run base and removed. */
#include "common/fsutil.h"
#include "tests/lib/ppm.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/snapshot.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_GUESTS 8

static const char *image_name = "tiny";
static struct vmm_image image;
static enum vmm_accel accel;
static char shot_path[64];

static void base_spec(struct vmm_spec *spec)
{
	vmm_spec_defaults(spec);
	spec->image = &image;
	spec->accel = accel;
	if (!image.rootfs[0])
		spec->memory_mib = 256;
}

static int screen(struct vmm_vm *vm, struct ppm *img)
{
	char err[1024];

	if (vmm_vm_screendump(vm, shot_path, "ppm", err, sizeof(err)) < 0) {
		fprintf(stderr, "screendump: %s\n", err);
		return -1;
	}
	int rc = ppm_load(shot_path, img);

	unlink(shot_path);
	return rc;
}

/* Polls the screen until it equals want (or, want NULL, until the guest
 * reports ready and the screen is not blank). Returns 0 or -1. */
static int wait_screen(struct vmm_vm *vm, const struct ppm *want, int timeout_ms)
{
	int64_t deadline = fs_now_ms() + timeout_ms;
	char err[2048];

	while (fs_now_ms() < deadline) {
		struct ppm img;
		bool ok;

		if (!want && vmm_vm_wait_phase(vm, "ready", 20, err, sizeof(err)) < 0)
			continue;
		if (screen(vm, &img) < 0)
			return -1;
		ok = want ? img.width == want->width && img.height == want->height &&
				     !memcmp(img.rgb, want->rgb, (size_t)img.width * img.height * 3)
			  : ppm_count(&img, 0x000000, 0) < (size_t)img.width * img.height;
		ppm_free(&img);
		if (ok)
			return 0;
		usleep(10 * 1000);
	}
	return -1;
}

static long pss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pss: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int boot(struct vmm_vm **vm, int64_t *ms)
{
	struct vmm_vm_opts opts = { 0 };
	struct vmm_spec spec;
	int64_t t0 = fs_now_ms();
	char err[2048];

	base_spec(&spec);
	if (vmm_vm_start(&spec, &opts, vm, err, sizeof(err)) < 0) {
		fprintf(stderr, "boot: %s\n", err);
		return -1;
	}
	if (wait_screen(*vm, NULL, 300000) < 0) {
		fprintf(stderr, "boot: no screen\n");
		return -1;
	}
	*ms = fs_now_ms() - t0;
	return 0;
}

static int restore(const struct vmm_template *t, const struct ppm *want, struct vmm_vm **vm,
		   int64_t *ms)
{
	struct vmm_vm_opts opts = { 0 };
	int64_t t0 = fs_now_ms();
	char err[2048];

	if (vmm_template_restore(t, &opts, vm, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "restore: %s\n", err);
		return -1;
	}
	if (wait_screen(*vm, want, 30000) < 0) {
		fprintf(stderr, "restore: screen not back\n");
		return -1;
	}
	*ms = fs_now_ms() - t0;
	return 0;
}

static long pss_sum(struct vmm_vm **vms, int n)
{
	long sum = 0;

	sleep(2); /* let start-up settle */
	for (int i = 0; i < n; i++)
		sum += pss_kib(vmm_vm_proc(vms[i])->pid);
	return sum;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "image", required_argument, 0, 'i' },
		{ "guests", required_argument, 0, 'g' },
		{ "runs", required_argument, 0, 'r' },
		{ 0, 0, 0, 0 },
	};
	struct vmm_vm *vms[MAX_GUESTS] = { 0 };
	int64_t boot_ms[16], restore_ms[16];
	char dir[PATH_MAX], ram[PATH_MAX], err[2048], why[256], path[PATH_MAX + 16];
	struct vmm_template t;
	struct ppm want = { 0 };
	struct vmm_spec spec;
	int guests = 4, runs = 5, c, status = 1;
	long pss_boot, pss_restore;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'i')
			image_name = optarg;
		else if (c == 'g')
			guests = atoi(optarg);
		else if (c == 'r')
			runs = atoi(optarg);
		else
			return 2;
	}
	if (guests < 1 || guests > MAX_GUESTS || runs < 1 || runs > 16) {
		fprintf(stderr, "--guests 1..%d, --runs 1..16\n", MAX_GUESTS);
		return 2;
	}
	snprintf(shot_path, sizeof(shot_path), "/tmp/bench-template-%d.ppm", (int)getpid());
	if (vmm_image_load(image_name, &image, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	vmm_accel_resolve(VMM_ACCEL_AUTO, &image, "qemu-system-x86_64", &accel, why, sizeof(why));
	fs_mkdir_p(vmm_run_base(NULL), 0755);
	snprintf(dir, sizeof(dir), "%s/tpl-XXXXXX", vmm_run_base(NULL));
	if (!mkdtemp(dir) || chmod(dir, 0755) < 0) {
		perror("mkdtemp");
		return 1;
	}

	/* The template: boot with file-backed RAM, wait for the screen, save. */
	base_spec(&spec);
	{
		struct vmm_vm_opts opts = { 0 };
		struct vmm_vm *vm = NULL;
		int rc = vmm_template_prepare(dir, &spec, ram, sizeof(ram), err, sizeof(err));

		if (rc == 0)
			rc = vmm_vm_start(&spec, &opts, &vm, err, sizeof(err));
		if (rc == 0 && wait_screen(vm, NULL, 300000) < 0) {
			snprintf(err, sizeof(err), "template guest: no screen");
			rc = -1;
		}
		if (rc == 0)
			sleep(image.rootfs[0] ? 5 : 1);
		if (rc == 0)
			rc = vmm_template_save(vm, dir, err, sizeof(err));
		vmm_vm_destroy(vm);
		if (rc == 0)
			rc = vmm_template_load(dir, &t, err, sizeof(err));
		snprintf(path, sizeof(path), "%s/screen.ppm", dir);
		if (rc < 0 || ppm_load(path, &want) < 0) {
			fprintf(stderr, "template: %s\n", err);
			goto out;
		}
	}

	for (int i = 0; i < runs; i++) {
		struct vmm_vm *vm = NULL;
		int rc = boot(&vm, &boot_ms[i]);

		vmm_vm_destroy(vm);
		vm = NULL;
		if (rc == 0)
			rc = restore(&t, &want, &vm, &restore_ms[i]);
		vmm_vm_destroy(vm);
		if (rc < 0)
			goto out;
	}
	qsort(boot_ms, (size_t)runs, sizeof(int64_t), cmp_i64);
	qsort(restore_ms, (size_t)runs, sizeof(int64_t), cmp_i64);
	printf("%s, %s: to screen, median of %d: cold boot %lld ms, restore %lld ms (%.1fx)\n",
	       image_name, vmm_accel_name(accel), runs, (long long)boot_ms[runs / 2],
	       (long long)restore_ms[runs / 2],
	       (double)boot_ms[runs / 2] /
		       (double)(restore_ms[runs / 2] ? restore_ms[runs / 2] : 1));

	for (int i = 0; i < guests; i++) {
		int64_t ms;

		if (boot(&vms[i], &ms) < 0)
			goto out;
	}
	pss_boot = pss_sum(vms, guests);
	for (int i = 0; i < guests; i++) {
		vmm_vm_destroy(vms[i]);
		vms[i] = NULL;
	}
	for (int i = 0; i < guests; i++) {
		int64_t ms;

		if (restore(&t, &want, &vms[i], &ms) < 0)
			goto out;
	}
	pss_restore = pss_sum(vms, guests);
	printf("%s: host memory (sum of PSS) of %d guests: booted %ld MiB, restored %ld MiB "
	       "(%ld vs %ld MiB each)\n",
	       image_name, guests, pss_boot / 1024, pss_restore / 1024, pss_boot / 1024 / guests,
	       pss_restore / 1024 / guests);
	status = 0;
out:
	for (int i = 0; i < guests; i++)
		vmm_vm_destroy(vms[i]);
	ppm_free(&want);
	fs_rm_rf(dir);
	return status;
}
