/* gateway/cli/cmd_boot.c: `vitrine boot`: boot one guest from an image, wait until
 * it reports ready, optionally save a screenshot, tear it down. The first
 * end-to-end path through vmm-qemu, used by the boot benchmark too. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/cli/cli.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/vm.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_URL VMM_PAGE_URL

static void boot_usage(FILE *f)
{
	fprintf(f,
		"usage: vitrine boot --image NAME [options]\n"
		"  --image NAME        guest image (tiny, desktop) or a directory holding image.json\n"
		"  --url URL           page Chromium opens (desktop)\n"
		"  --page FILE         host HTML file shown to the guest (default URL: %s)\n"
		"  --width N --height N  screen size (default 1280x800)\n"
		"  --vcpus N           virtual CPUs (default 2)\n"
		"  --memory MIB        guest memory (default 2048; tiny 256)\n"
		"  --accel auto|kvm|tcg  accelerator (default auto: KVM when it works)\n"
		"  --timeout S         give up when not ready after S seconds (default 180)\n"
		"  --screenshot FILE   save the screen once ready (.png or .ppm)\n"
		"  --hold S            keep the guest running S seconds after ready\n"
		"  --json              print a JSON summary (phases, timings) on stdout\n",
		PAGE_URL);
}

struct boot_opts {
	const char *image, *url, *page, *screenshot;
	int width, height, vcpus, memory, timeout_s, hold_s;
	bool memory_set, json;
	enum vmm_accel accel;
};

static int parse_opts(int argc, char **argv, struct boot_opts *o)
{
	static const struct option longopts[] = {
		{ "image", required_argument, 0, 'i' },
		{ "url", required_argument, 0, 'u' },
		{ "page", required_argument, 0, 'p' },
		{ "width", required_argument, 0, 'W' },
		{ "height", required_argument, 0, 'H' },
		{ "vcpus", required_argument, 0, 'c' },
		{ "memory", required_argument, 0, 'm' },
		{ "accel", required_argument, 0, 'a' },
		{ "timeout", required_argument, 0, 't' },
		{ "screenshot", required_argument, 0, 's' },
		{ "hold", required_argument, 0, 'h' },
		{ "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, '?' },
		{ 0, 0, 0, 0 },
	};
	int c, rc = 0;

	*o = (struct boot_opts){ .width = 1280,
				 .height = 800,
				 .vcpus = 2,
				 .memory = 2048,
				 .timeout_s = 180,
				 .accel = VMM_ACCEL_AUTO };
	optind = 1;
	while (rc == 0 && (c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->image = optarg;
			break;
		case 'u':
			o->url = optarg;
			break;
		case 'p':
			o->page = optarg;
			break;
		case 's':
			o->screenshot = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'W':
			rc = cli_parse_int("--width", optarg, VMM_MIN_WIDTH, VMM_MAX_WIDTH,
					   &o->width);
			break;
		case 'H':
			rc = cli_parse_int("--height", optarg, VMM_MIN_HEIGHT, VMM_MAX_HEIGHT,
					   &o->height);
			break;
		case 'c':
			rc = cli_parse_int("--vcpus", optarg, 1, VMM_MAX_VCPUS, &o->vcpus);
			break;
		case 'm':
			rc = cli_parse_int("--memory", optarg, VMM_MIN_MEMORY_MIB,
					   VMM_MAX_MEMORY_MIB, &o->memory);
			o->memory_set = true;
			break;
		case 't':
			rc = cli_parse_int("--timeout", optarg, 1, 3600, &o->timeout_s);
			break;
		case 'h':
			rc = cli_parse_int("--hold", optarg, 0, 86400, &o->hold_s);
			break;
		case 'a':
			if (vmm_accel_parse(optarg, &o->accel) < 0) {
				fprintf(stderr,
					"vitrine boot: --accel must be auto, kvm or tcg, not '%s'\n",
					optarg);
				rc = -1;
			}
			break;
		default:
			boot_usage(stderr);
			return -1;
		}
	}
	if (rc == 0 && optind < argc) {
		fprintf(stderr, "vitrine boot: unexpected argument '%s'\n", argv[optind]);
		rc = -1;
	}
	if (rc == 0 && !o->image) {
		fprintf(stderr, "vitrine boot: --image is required\n");
		boot_usage(stderr);
		rc = -1;
	}
	if (rc == 0 && o->screenshot) {
		const char *dot = strrchr(o->screenshot, '.');

		if (!dot || (strcmp(dot, ".png") && strcmp(dot, ".ppm"))) {
			fprintf(stderr, "vitrine boot: --screenshot must end in .png or .ppm\n");
			rc = -1;
		}
	}
	return rc;
}

/* Waits for phase in short steps so ^C is honoured. */
static int wait_ready(struct vmm_vm *vm, int timeout_s, char *err, size_t errlen)
{
	int64_t deadline = fs_now_ms() + (int64_t)timeout_s * 1000;

	while (!cli_interrupted) {
		int left = (int)(deadline - fs_now_ms());
		int rc = vmm_vm_wait_phase(vm, "ready", left < 250 ? (left > 0 ? left : 0) : 250,
					   err, errlen);

		if (rc != -ETIMEDOUT || left <= 250)
			return rc;
	}
	snprintf(err, errlen, "interrupted");
	return -EINTR;
}

static void print_summary(const struct boot_opts *o, struct vmm_vm *vm, enum vmm_accel accel,
			  const char *why, int rc, const char *err, int64_t total_ms)
{
	const struct vmm_phase *ph;
	size_t n = vmm_vm_phases(vm, &ph);
	json_t *phases = json_array(), *root;
	char *text;

	for (size_t i = 0; i < n; i++) {
		json_array_append_new(phases, json_pack("{s:s, s:f, s:I}", "name", ph[i].name,
							"uptime_s", ph[i].uptime_s, "wall_ms",
							(json_int_t)ph[i].wall_ms));
		if (!o->json)
			printf("phase %-10s guest uptime %6.2f s  host %6.2f s\n", ph[i].name,
			       ph[i].uptime_s, ph[i].wall_ms / 1000.0);
	}
	if (!o->json) {
		json_decref(phases);
		return;
	}
	root = json_pack("{s:s, s:s, s:s, s:b, s:I, s:o, s:s*, s:s*}", "image", o->image, "accel",
			 vmm_accel_name(accel), "accel_reason", why, "ready", rc == 0, "total_ms",
			 (json_int_t)total_ms, "phases", phases, "screenshot", o->screenshot,
			 "error", rc ? err : NULL);
	text = root ? json_dumps(root, JSON_COMPACT) : NULL;
	if (text)
		puts(text);
	free(text);
	json_decref(root);
}

int cmd_boot(int argc, char **argv)
{
	struct vmm_vm_opts vopts = { 0 };
	struct vmm_image img;
	struct vmm_spec spec;
	struct boot_opts o;
	struct vmm_vm *vm = NULL;
	char err[2048], why[256];
	int64_t t0 = fs_now_ms();
	int rc;

	if (argc >= 2 && !strcmp(argv[1], "--help")) {
		boot_usage(stdout);
		return 0;
	}
	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	if (vmm_image_load(o.image, &img, err, sizeof(err)) < 0) {
		fprintf(stderr, "vitrine boot: %s\n", err);
		return 1;
	}
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.width = o.width;
	spec.height = o.height;
	spec.vcpus = o.vcpus;
	spec.memory_mib = o.memory_set || img.rootfs[0] ? o.memory : 256;
	spec.url = o.url ? o.url : (o.page ? PAGE_URL : NULL);
	vopts.page_file = o.page;
	if (vmm_accel_resolve(o.accel, &img, "qemu-system-x86_64", &spec.accel, why, sizeof(why)) <
	    0) {
		fprintf(stderr, "vitrine boot: KVM does not work here: %s\n", why);
		return 1;
	}
	if (spec.accel == VMM_ACCEL_TCG)
		log_warn("boot",
			 "running under TCG (%s): software emulation is slower and, per "
			 "QEMU's security docs, not a security boundary",
			 why);
	rc = vmm_vm_start(&spec, &vopts, &vm, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "vitrine boot: cannot start %s: %s\n", o.image, err);
		return 1;
	}
	log_info("boot", "%s started under %s in %s", o.image, vmm_accel_name(spec.accel),
		 vmm_vm_run_dir(vm));
	rc = wait_ready(vm, o.timeout_s, err, sizeof(err));
	if (rc == 0 && o.screenshot)
		rc = vmm_vm_screendump(vm, o.screenshot, strrchr(o.screenshot, '.') + 1, err,
				       sizeof(err));
	if (rc == 0 && o.hold_s) {
		int64_t until = fs_now_ms() + (int64_t)o.hold_s * 1000;

		log_info("boot", "holding for %d s (run dir %s)", o.hold_s, vmm_vm_run_dir(vm));
		while (rc == 0 && !cli_interrupted && fs_now_ms() < until)
			rc = vmm_vm_service(vm, 200, err, sizeof(err));
	}
	print_summary(&o, vm, spec.accel, why, rc, err, fs_now_ms() - t0);
	if (rc < 0)
		fprintf(stderr, "vitrine boot: %s: %s\n", o.image, err);
	vmm_vm_destroy(vm);
	return rc < 0 ? 1 : 0;
}
