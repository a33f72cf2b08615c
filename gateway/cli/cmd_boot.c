/* gateway/cli/cmd_boot.c: `vitrine boot`: boot one guest from an image, wait until
 * it reports ready, optionally save a screenshot, tear it down. The first
 * end-to-end path through vmm-qemu, used by the boot benchmark too. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/vm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_URL VMM_PAGE_URL

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

static void print_summary(const struct boot_config *o, struct vmm_vm *vm, enum vmm_accel accel,
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
	struct boot_config o;
	struct vmm_vm *vm = NULL;
	char err[2048], why[256];
	int64_t t0 = fs_now_ms();
	int rc = cli_boot_parse(&o, argc, argv, err, sizeof(err));

	if ((rc = cli_cmd_answer(&cli_boot_cmd, rc, err)) >= 0)
		return rc;
	if (vmm_image_load(o.image, &img, err, sizeof(err)) < 0) {
		fprintf(stderr, "vitrine boot: %s\n", err);
		return 1;
	}
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.width = o.width;
	spec.height = o.height;
	spec.vcpus = o.vcpus;
	spec.memory_mib = o.memory_mib ? o.memory_mib : img.rootfs[0] ? 2048 : 256;
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
