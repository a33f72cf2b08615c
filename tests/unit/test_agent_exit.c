/* tests/unit/test_agent_exit.c: the status in vitrine-agent's EXIT frame
 * (vmm-qemu/agent_exec.c, agent_exit_parse): "exit=N" and "signal=N" in
 * range; short, empty, signed, padded, overlong and out-of-range payloads
 * refused without reading past their end (the sanitizer build runs it). */
#include "vmm-qemu/agent_exec.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_exit_good(void **state)
{
	static const struct {
		const char *status;
		int code, sig;
	} cases[] = {
		{ "exit=0", 0, 0 },	 { "exit=1", 1, 0 },	  { "exit=127", 127, 0 },
		{ "exit=255", 255, 0 },	 { "signal=1", -1, 1 },	  { "signal=9", -1, 9 },
		{ "signal=15", -1, 15 }, { "signal=64", -1, 64 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code = 99, sig = 99;

		if (agent_exit_parse(cases[i].status, &code, &sig) != 0)
			fail_msg("%s: refused", cases[i].status);
		if (code != cases[i].code || sig != cases[i].sig)
			fail_msg("%s: exit %d signal %d, want %d %d", cases[i].status, code, sig,
				 cases[i].code, cases[i].sig);
	}
}

static void test_exit_bad(void **state)
{
	static const char *const bad[] = {
		"",	    "e",	  "ex",	       "exi",
		"exit",	    "exit=",	  "signal",    "signal=",
		"sig",	    "exit=-1",	  "exit=+1",   "exit= 1",
		"exit=1 ",  "exit=1\n",	  "exit=256",  "exit=1000",
		"exit=01",  "exit=00",	  "exit=x",    "exit=1x",
		"signal=0", "signal=65",  "signal=-9", "signal=9x",
		"EXIT=0",   "exit:0",	  "pid=3",     "exit=99999999999999999999",
		"status=0", "signal=009",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int code = 99, sig = 99;

		if (agent_exit_parse(bad[i], &code, &sig) != -EPROTO)
			fail_msg("\"%s\": accepted", bad[i]);
		if (code != 99 || sig != 99)
			fail_msg("\"%s\": wrote exit %d signal %d", bad[i], code, sig);
	}
	assert_int_equal(agent_exit_parse(NULL, &(int){ 0 }, &(int){ 0 }), -EPROTO);
}

/* A short payload at the very end of an allocation: the sanitizer build
 * catches a read past it. */
static void test_exit_short_heap(void **state)
{
	static const char *const shorts[] = { "", "e", "ex", "exi", "exit", "exit=", "signal=" };

	(void)state;
	for (size_t i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++) {
		size_t n = strlen(shorts[i]) + 1;
		char *p = malloc(n);
		int code = 0, sig = 0;

		assert_non_null(p);
		memcpy(p, shorts[i], n);
		assert_int_equal(agent_exit_parse(p, &code, &sig), -EPROTO);
		free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_good),
		cmocka_unit_test(test_exit_bad),
		cmocka_unit_test(test_exit_short_heap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
