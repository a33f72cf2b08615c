/* bench/bench_isolation.c: what each guest's jail (vmm-qemu/jail.h: a uid
 * of its own, a network namespace, a mount namespace, rlimits, a cgroup)
 * costs. Restore from a template to the screen being back, with and
 * without the jail and with it less one part (cgroup, netns, mntns, own
 * uid) to show each part's cost, all
 * interleaved in one run (median of N each), and the ratio; then one cold
 * boot in its cgroup: its peak memory (v1 memory.max_usage_in_bytes)
 * against the limit, and QEMU's anonymous memory outside guest RAM and the
 * TCG code buffer (smaps), which cgroup.h's VMM_CGROUP_OVERHEAD_MIB must
 * cover; and the namespace steps alone (a child that makes each and
 * exits, against one that only exits). Run as root.
 *
 * usage: bench_isolation [--image tiny|desktop] [--runs N] [--no-overhead]
 * The template is made in a temporary dir under the run base and removed. */
#include "common/fsutil.h"
#include "tests/lib/ppm.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/jail.h"
#include "vmm-qemu/mount_ns.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/tpl_ram.h"

#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
		if (vmm_vm_screendump(vm, shot_path, "ppm", err, sizeof(err)) < 0 ||
		    ppm_load(shot_path, &img) < 0) {
			fprintf(stderr, "screendump: %s\n", err);
			return -1;
		}
		unlink(shot_path);
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

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The variants compared: no jail (QEMU as root, the host's network, no
 * cgroup; the rlimits cost nothing and stay), the whole jail, and the
 * whole jail less one part, which shows that part's cost. */
enum { V_OFF, V_ON, V_NO_CGROUP, V_NO_NETNS, V_NO_MNTNS, V_NO_UID, N_VARIANTS };
static const char *const variant_names[N_VARIANTS] = {
	"without the jail",	 "with it",
	"with it but no cgroup", "with it but no netns",
	"with it but no mntns",	 "with it but as root",
};

static void variant(int v, const struct vmm_jail_config *dflt)
{
	struct vmm_jail_config c = *dflt;

	if (v == V_OFF)
		c = (struct vmm_jail_config){
			.allow_root = true, .no_cgroup = true, .no_netns = true, .no_mntns = true
		};
	else if (v == V_NO_CGROUP)
		c.no_cgroup = true;
	else if (v == V_NO_NETNS)
		c.no_netns = true;
	else if (v == V_NO_MNTNS)
		c.no_mntns = true;
	else if (v == V_NO_UID)
		c = (struct vmm_jail_config){ .allow_root = true };
	vmm_jail_configure(&c);
}

static int restore(const struct vmm_template *t, const struct ppm *want, int64_t *ms)
{
	struct vmm_vm_opts opts = { 0 };
	struct vmm_vm *vm = NULL;
	int64_t t0 = fs_now_ms();
	char err[2048];
	int rc = vmm_template_restore(t, &opts, &vm, NULL, err, sizeof(err));

	if (rc < 0)
		fprintf(stderr, "restore: %s\n", err);
	else if ((rc = wait_screen(vm, want, 30000)) < 0)
		fprintf(stderr, "restore: screen not back\n");
	*ms = fs_now_ms() - t0;
	vmm_vm_destroy(vm);
	return rc;
}

/* A number from QEMU's v1 memory cgroup (the line ":memory:" of its
 * /proc/PID/cgroup), or -1. */
static long long cgroup_value(pid_t pid, const char *file)
{
	char path[PATH_MAX], line[512], *text = NULL;
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	path[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *k = strstr(line, ":memory:");

		if (k) {
			k[8 + strcspn(k + 8, "\n")] = '\0';
			snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/%s", k + 8, file);
		}
	}
	fclose(f);
	if (path[0] && fs_read_file(path, 64, &text, NULL) == 0)
		v = strtoll(text, NULL, 10);
	free(text);
	return v;
}

/* QEMU's anonymous memory outside guest RAM and the TCG code buffer (the
 * mappings of those sizes, give or take a guard page), from smaps: what
 * the cgroup's margin over RAM + code buffer must hold (shared libraries
 * are the page cache's, charged once for every guest). -1 on error. */
static long own_rss_kib(pid_t pid, long ram_kib, long tb_kib)
{
	char path[64], line[512];
	long size = 0, rss, own = 0;
	bool skip = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Size: %ld kB", &size) == 1)
			skip = (size >= ram_kib && size <= ram_kib + 4096) ||
			       (tb_kib && size >= tb_kib && size <= tb_kib + 4096);
		else if (sscanf(line, "Anonymous: %ld kB", &rss) == 1 && !skip)
			own += rss;
	}
	fclose(f);
	return own;
}

/* One cold boot in its cgroup: its peak, and QEMU's own memory. */
static int overhead(void)
{
	struct vmm_vm_opts opts = { 0 };
	struct vmm_vm *vm = NULL;
	struct vmm_spec spec;
	char err[2048];
	long long peak, limit;
	long own;
	int tb;

	base_spec(&spec);
	tb = spec.accel == VMM_ACCEL_KVM ? 0 : spec.tb_size_mib ? spec.tb_size_mib : 256;
	if (vmm_vm_start(&spec, &opts, &vm, err, sizeof(err)) < 0 ||
	    wait_screen(vm, NULL, 300000) < 0) {
		fprintf(stderr, "boot: %s\n", err);
		vmm_vm_destroy(vm);
		return -1;
	}
	sleep(image.rootfs[0] ? 10 : 2); /* the desktop's page settles */
	peak = cgroup_value(vmm_vm_qemu_pid(vm), "memory.max_usage_in_bytes");
	limit = cgroup_value(vmm_vm_qemu_pid(vm), "memory.limit_in_bytes");
	own = own_rss_kib(vmm_vm_qemu_pid(vm), (long)spec.memory_mib << 10, (long)tb << 10);
	if (peak < 0)
		printf("%s: no v1 memory cgroup: peak not measured\n", image_name);
	else
		printf("%s: cold boot peak %lld MiB in its cgroup, limit %lld MiB (RAM %d + code "
		       "buffer %d + margin %d + %d per vCPU)\n",
		       image_name, peak >> 20, limit >> 20, spec.memory_mib, tb,
		       VMM_CGROUP_OVERHEAD_MIB, VMM_CGROUP_OVERHEAD_VCPU_MIB);
	printf("%s: QEMU's own anonymous memory (outside RAM and code buffer): %ld MiB\n",
	       image_name, own / 1024);
	vmm_vm_destroy(vm);
	return 0;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A child that makes step's namespace (0: none, CLONE_NEWNET, or
 * CLONE_NEWNS with the images and templates read-only) and exits: the
 * median of 51, in microseconds, from fork to reaped. */
static long step_us(int step)
{
	char ro[2][PATH_MAX];
	const char *dirs[2] = { ro[0], ro[1] };
	size_t n = 0;
	long us[51];

	if (realpath(vmm_images_dir(), ro[n]))
		n++;
	if (realpath(vmm_templates_dir(), ro[n]))
		n++;
	for (int i = 0; i < 51; i++) {
		int64_t t0 = now_us();
		pid_t pid = fork();
		int st;

		if (pid == 0)
			_exit(step == CLONE_NEWNET ? (unshare(CLONE_NEWNET) < 0)
			      : step == CLONE_NEWNS
				      ? (vmm_mntns_enter(dirs, n, NULL, 0, NULL, 0) < 0)
				      : 0);
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return -1;
		us[i] = (long)(now_us() - t0);
	}
	for (int i = 1; i < 51; i++) /* insertion sort: 51 values */
		for (int j = i; j > 0 && us[j - 1] > us[j]; j--) {
			long t = us[j];

			us[j] = us[j - 1];
			us[j - 1] = t;
		}
	return us[25];
}

static void steps(void)
{
	long none = step_us(0), net = step_us(CLONE_NEWNET), mnt = step_us(CLONE_NEWNS);

	printf("namespace steps alone, median of 51 (fork to reaped): a child that exits %ld us, "
	       "with a network namespace %ld us, with the mount namespace %ld us\n",
	       none, net, mnt);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "image", required_argument, 0, 'i' },
		{ "runs", required_argument, 0, 'r' },
		{ "no-overhead", no_argument, 0, 'n' },
		{ 0, 0, 0, 0 },
	};
	static int64_t ms[N_VARIANTS][32];
	bool skip_overhead = false;
	char dir[PATH_MAX], ram[PATH_MAX], err[2048], why[256], path[PATH_MAX + 16];
	struct vmm_jail_config dflt;
	struct vmm_template t;
	struct ppm want = { 0 };
	struct vmm_spec spec;
	int runs = 7, c, status = 1;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'i')
			image_name = optarg;
		else if (c == 'r')
			runs = atoi(optarg);
		else if (c == 'n')
			skip_overhead = true;
		else
			return 2;
	}
	if (runs < 1 || runs > 32 || geteuid() != 0) {
		fprintf(stderr, "--runs 1..32, as root\n");
		return 2;
	}
	vmm_jail_config_get(&dflt);
	steps();
	snprintf(shot_path, sizeof(shot_path), "/tmp/bench-isolation-%d.ppm", (int)getpid());
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
	base_spec(&spec);
	{
		struct vmm_vm_opts opts = { 0 };
		struct vmm_vm *vm = NULL;
		int rc = vmm_template_prepare(dir, &spec, ram, sizeof(ram), err, sizeof(err));

		if (rc == 0)
			rc = vmm_vm_start(&spec, &opts, &vm, err, sizeof(err));
		if (rc == 0 && wait_screen(vm, NULL, 600000) < 0) {
			snprintf(err, sizeof(err),
				 "template guest: no screen (cgroup peak %lld MiB, failcnt %lld); "
				 "console: %s",
				 cgroup_value(vmm_vm_qemu_pid(vm), "memory.max_usage_in_bytes") >>
					 20,
				 cgroup_value(vmm_vm_qemu_pid(vm), "memory.failcnt"),
				 vmm_vm_console_tail(vm));
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
	/* The clones' sealed copy of the template's RAM (tpl_ram.h), made once
	 * per process: its cost apart, then every restore finds it made. */
	{
		int64_t t0 = fs_now_ms();
		int mfd = vmm_tpl_ram_fd(ram, err, sizeof(err));
		struct stat st;

		if (mfd < 0 || fstat(mfd, &st) < 0) {
			fprintf(stderr, "template RAM: %s\n", err);
			goto out;
		}
		printf("%s: the template's RAM (%lld MiB, %lld MiB of data) sealed into a memfd in "
		       "%lld ms\n",
		       image_name, (long long)st.st_size >> 20, (long long)st.st_blocks * 512 >> 20,
		       (long long)(fs_now_ms() - t0));
		close(mfd);
	}
	/* Interleaved, each round starting one variant later: drift hits all. */
	for (int i = 0; i < runs; i++)
		for (int k = 0; k < N_VARIANTS; k++) {
			int v = (i + k) % N_VARIANTS;

			variant(v, &dflt);
			if (restore(&t, &want, &ms[v][i]) < 0)
				goto out;
		}
	for (int v = 0; v < N_VARIANTS; v++)
		qsort(ms[v], (size_t)runs, sizeof(int64_t), cmp_i64);
	printf("%s, %s: restore to screen, median of %d: without the jail %lld ms, with it "
	       "%lld ms (%.2fx)\n",
	       image_name, vmm_accel_name(accel), runs, (long long)ms[V_OFF][runs / 2],
	       (long long)ms[V_ON][runs / 2],
	       (double)ms[V_ON][runs / 2] /
		       (double)(ms[V_OFF][runs / 2] ? ms[V_OFF][runs / 2] : 1));
	for (int v = 0; v < N_VARIANTS; v++)
		printf("  %-24s median %4lld ms, min %4lld, max %4lld\n", variant_names[v],
		       (long long)ms[v][runs / 2], (long long)ms[v][0], (long long)ms[v][runs - 1]);
	variant(V_ON, &dflt);
	if (skip_overhead)
		status = 0;
	else if (overhead() == 0)
		status = 0;
out:
	ppm_free(&want);
	fs_rm_rf(dir);
	return status;
}
