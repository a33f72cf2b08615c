/* gateway/cli/cmd_misc.c: the small maintenance subcommand `vitrine accel`
 * (which accelerator guests would get, and why). */
#include "gateway/cli/cli.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/vm.h"

#include <stdio.h>

int cmd_accel(int argc, char **argv)
{
	struct vmm_image img;
	enum vmm_accel a;
	char err[512], why[256];

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: vitrine accel [IMAGE]\n");
		return 2;
	}
	if (vmm_image_load(argc == 2 ? argv[1] : "tiny", &img, err, sizeof(err)) < 0) {
		fprintf(stderr, "vitrine accel: %s\n", err);
		return 1;
	}
	vmm_accel_resolve(VMM_ACCEL_AUTO, &img, "qemu-system-x86_64", &a, why, sizeof(why));
	printf("%s (%s)\n", vmm_accel_name(a), why);
	return 0;
}
