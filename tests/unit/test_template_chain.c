/* tests/unit/test_template_chain.c: how deep a template saved from a
 * session stacks its disk (vmm-qemu/template_from.h): one layer more than
 * its parent's, and back to one, flattened, past the limit. */
#include "vmm-qemu/template_from.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static void test_chain_depth(void **state)
{
	bool flat = true;

	(void)state;
	assert_int_equal(vmm_template_chain_depth(0, 0, &flat), 1); /* on the rootfs */
	assert_false(flat);
	assert_int_equal(vmm_template_chain_depth(1, 0, &flat), 2);
	assert_false(flat);
	assert_int_equal(vmm_template_chain_depth(VMM_TEMPLATE_CHAIN_MAX - 1, 0, &flat),
			 VMM_TEMPLATE_CHAIN_MAX);
	assert_false(flat);
	assert_int_equal(vmm_template_chain_depth(VMM_TEMPLATE_CHAIN_MAX, 0, &flat), 1);
	assert_true(flat);
	/* a limit of the caller's */
	assert_int_equal(vmm_template_chain_depth(1, 2, &flat), 2);
	assert_false(flat);
	assert_int_equal(vmm_template_chain_depth(2, 2, &flat), 1);
	assert_true(flat);
	assert_int_equal(vmm_template_chain_depth(0, 1, &flat), 1);
	assert_false(flat);
	assert_int_equal(vmm_template_chain_depth(1, 1, &flat), 1);
	assert_true(flat);
	/* a depth that cannot be (a broken template.json): flattened */
	assert_int_equal(vmm_template_chain_depth(-1, 0, &flat), 1);
	assert_true(flat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_depth),
	};

	return cmocka_run_group_tests_name("template chains", tests, NULL, NULL);
}
