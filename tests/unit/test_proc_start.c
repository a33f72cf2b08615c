/* tests/unit/test_proc_start.c: vmm_proc_start_time (vmm-qemu/proc.c), the
 * half of a guest's identity that tells a reused pid from the process a
 * record names: it is field 22 of /proc/PID/stat (read here another way),
 * a later child's is not earlier, a process whose command name holds
 * spaces and parentheses parses, and a reaped pid is -ESRCH. */
#include "vmm-qemu/proc.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* Field 22 of /proc/pid/stat, counted from the end of the comm field. */
static unsigned long long field22(pid_t pid)
{
	char path[64], buf[1024], *p, *tok, *save = NULL;
	unsigned long long v = 0;
	FILE *f;
	int field = 2;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	p = strrchr(buf, ')');
	assert_non_null(p);
	for (tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (++field == 22) {
			v = strtoull(tok, NULL, 10);
			break;
		}
	return v;
}

static void test_self_and_child(void **state)
{
	unsigned long long mine = 0, child_start = 0;
	pid_t child;
	int st;

	(void)state;
	assert_int_equal(vmm_proc_start_time(getpid(), &mine), 0);
	assert_true(mine > 0);
	assert_int_equal(mine, field22(getpid()));
	child = fork();
	if (child == 0) {
		/* A command name that would fool a naive parser. */
		prctl(PR_SET_NAME, "a) b (c", 0, 0, 0);
		pause();
		_exit(0);
	}
	usleep(50 * 1000);
	assert_int_equal(vmm_proc_start_time(child, &child_start), 0);
	assert_int_equal(child_start, field22(child));
	assert_true(child_start >= mine);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	assert_int_equal(vmm_proc_start_time(child, &child_start), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_and_child),
	};

	return cmocka_run_group_tests_name("process start time", tests, NULL, NULL);
}
