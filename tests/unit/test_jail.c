/* tests/unit/test_jail.c: the pure parts of a guest's jail
 * (vmm-qemu/jail.h, cgroup.h): the uid range's syntax and bounds, the
 * file-size limit, /etc/subuid ranges overlapping it, and the cgroup
 * limits derived from a guest's size. */
#include "vmm-qemu/cgroup.h"
#include "vmm-qemu/jail.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

static void test_uid_range(void **state)
{
	uid_t a = 7, b = 7;

	(void)state;
	assert_int_equal(vmm_uid_range_parse("900000-900999", &a, &b), 0);
	assert_int_equal(a, 900000);
	assert_int_equal(b, 900999);
	assert_int_equal(vmm_uid_range_parse("5-5", &a, &b), 0);
	assert_int_equal(a, 5);
	assert_int_equal(b, 5);
	assert_int_equal(vmm_uid_range_parse("none", &a, &b), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 0);
	assert_int_equal(vmm_uid_range_parse(VMM_QEMU_UIDS_DEFAULT, &a, &b), 0);
	assert_true(a > 65535 && b >= a);
	/* uid 0 never, nor reversed, open, signed, spaced, huge or too wide. */
	assert_int_equal(vmm_uid_range_parse("0-10", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("10-9", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("10-", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("-10", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("10", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("+10-20", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("10--20", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse(" 10-20", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("10-20x", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("1-4294967295", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("2147483647-2147483648", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("100000-165536", &a, &b), -EINVAL);
	assert_int_equal(vmm_uid_range_parse("100000-165535", &a, &b), 0);
	assert_int_equal(vmm_uid_range_parse("", &a, &b), -EINVAL);
}

static void test_fsize(void **state)
{
	(void)state;
	/* The tiny guest: no disk, 256 MiB: its checkpoint fits, with 1 GiB over. */
	assert_true(vmm_jail_fsize(0, 256) == (256ULL << 20) + (1ULL << 30));
	/* A 2 GiB rootfs and 2 GiB of RAM: 5 GiB. */
	assert_true(vmm_jail_fsize(2ULL << 30, 2048) == 5ULL << 30);
}

static void test_cgroup_limits(void **state)
{
	struct vmm_cgroup_limits l;

	(void)state;
	vmm_cgroup_limits_for(256, 1, 256, &l);
	assert_true(l.memory_bytes ==
		    (256ULL + 256 + VMM_CGROUP_OVERHEAD_MIB + VMM_CGROUP_OVERHEAD_VCPU_MIB) << 20);
	assert_int_equal(l.vcpus, 1);
	assert_int_equal(l.pids, VMM_CGROUP_PIDS);
	/* KVM: no code buffer. */
	vmm_cgroup_limits_for(2048, 4, 0, &l);
	assert_true(l.memory_bytes ==
		    (2048ULL + VMM_CGROUP_OVERHEAD_MIB + 4 * VMM_CGROUP_OVERHEAD_VCPU_MIB) << 20);
	assert_int_equal(l.vcpus, 4);
	vmm_cgroup_limits_for(32768, 0, 512, &l);
	assert_true(l.memory_bytes ==
		    (32768ULL + 512 + VMM_CGROUP_OVERHEAD_MIB + VMM_CGROUP_OVERHEAD_VCPU_MIB)
			    << 20);
	assert_int_equal(l.vcpus, 1);
	/* The desktop (2 vCPUs, 2 GiB, TCG): over what was measured (326 MiB). */
	vmm_cgroup_limits_for(2048, 2, 256, &l);
	assert_true(l.memory_bytes - ((2048ULL + 256) << 20) >= 326ULL * 3 / 2 << 20);
	/* Above the processes a guest needs: QEMU's threads under TCG. */
	assert_true(VMM_CGROUP_PIDS >= VMM_QEMU_NPROC);
}

static void test_subid_overlap(void **state)
{
	const char *text = "alice:100000:65536\nvitrine-qemu:900000:1000\nbob:165536:65536\n";
	char who[256] = "";

	(void)state;
	/* Only the installer's own reservation covers the default range. */
	assert_int_equal(vmm_subid_overlap(text, 900000, 900999, who, sizeof(who)), 0);
	assert_int_equal(vmm_subid_overlap(text, 165535, 165535, who, sizeof(who)), 1);
	assert_string_equal(who, "alice:100000:65536");
	assert_int_equal(vmm_subid_overlap(text, 231071, 231080, who, sizeof(who)), 1);
	assert_string_equal(who, "bob:165536:65536");
	assert_int_equal(vmm_subid_overlap(text, 231072, 231080, who, sizeof(who)), 0);
	assert_int_equal(vmm_subid_overlap("", 1, 10, who, sizeof(who)), 0);
	assert_int_equal(vmm_subid_overlap("junk\n::\nx:5:0\n", 1, 10, who, sizeof(who)), 0);
	assert_int_equal(vmm_subid_overlap("x:5:1", 5, 5, who, sizeof(who)), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uid_range),
		cmocka_unit_test(test_subid_overlap),
		cmocka_unit_test(test_fsize),
		cmocka_unit_test(test_cgroup_limits),
	};

	return cmocka_run_group_tests_name("jail (pure)", tests, NULL, NULL);
}
