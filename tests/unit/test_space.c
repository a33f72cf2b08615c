/* tests/unit/test_space.c: the free-space decision (common/space.h): what
 * fits with the margin to spare, what does not and the sentence it gets,
 * sizes that would wrap, and the look at a real filesystem. */
#include "common/space.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <cmocka.h>

#define MIB (1024ull * 1024ull)

static void test_decide(void **state)
{
	char err[256] = "";

	(void)state;
	/* 256 MiB of RAM needs 256 + 64 free. */
	assert_int_equal(space_decide(256 * MIB, 320 * MIB, "x", "/d", err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(space_decide(256 * MIB, 320 * MIB - 1, "pausing to disk", "/run", err,
				      sizeof(err)),
			 -ENOSPC);
	assert_string_equal(err, "not enough free space: pausing to disk needs about 256 MiB in "
				 "/run (with 64 MiB to spare), which has 319 MiB free");
	/* Nothing to write still wants the margin. */
	assert_int_equal(space_decide(0, 64 * MIB, "x", "/d", err, sizeof(err)), 0);
	assert_int_equal(space_decide(0, 63 * MIB, "x", "/d", err, sizeof(err)), -ENOSPC);
	/* A need that would wrap past 2^64 with the margin never fits. */
	assert_int_equal(space_decide(UINT64_MAX - MIB, UINT64_MAX, "x", "/d", err, sizeof(err)),
			 -ENOSPC);
	/* Rounded up: one byte over a MiB says 2. */
	assert_int_equal(space_decide(MIB + 1, 0, "saving", "/t", err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "about 2 MiB in /t"));
}

static void test_check(void **state)
{
	char err[256] = "";
	uint64_t avail = 0;

	(void)state;
	assert_int_equal(space_free("/", &avail), 0);
	assert_true(avail > 0);
	assert_int_equal(space_free("/no/such/dir", &avail), -ENOENT);
	/* A filesystem that cannot be asked: no refusal, the write says. */
	assert_int_equal(space_check("/no/such/dir", UINT64_MAX / 2, "x", err, sizeof(err)), 0);
	/* Past any disk's size. */
	assert_int_equal(space_check("/", UINT64_MAX / 2, "x", err, sizeof(err)), -ENOSPC);
	/* The hook lowers an estimate, never raises one. */
	setenv("VITRINE_TEST_SPACE_NEED_MIB", "1", 1);
	assert_int_equal(space_check("/", avail - 128 * MIB, "x", err, sizeof(err)), 0);
	setenv("VITRINE_TEST_SPACE_NEED_MIB", "999999999999", 1);
	assert_int_equal(space_check("/", 0, "x", err, sizeof(err)),
			 avail >= 64 * MIB ? 0 : -ENOSPC);
	unsetenv("VITRINE_TEST_SPACE_NEED_MIB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests_name("free space", tests, NULL, NULL);
}
