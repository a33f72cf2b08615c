/* tests/integration/test_agent_xwait.c: `vitrine-agent xwait MASK
 * [TIMEOUT_MS]` (guest-images/agent/agent_xwait.c), the barrier the gateway
 * puts between held modifiers and a click (plan.h PLAN_X_SYNC), built for
 * the host and run against Xvfb: it waits while X does not hold the mask
 * and returns as soon as it does (a key held through XTEST by xdotool, a
 * button); it times out saying so; with no X server it says there is none;
 * bad arguments are a usage error. */
#include "common/fsutil.h"
#include "tests/lib/xvfb.h"

#include <libgen.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char agent[4200], display[16];
static pid_t xvfb;

static pid_t spawn(const char *const *argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		setenv("DISPLAY", display, 1);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* xwait's exit status, and how long it took in *ms. */
static int xwait(const char *mask, const char *timeout_ms, int64_t *ms)
{
	const char *argv[] = { agent, "xwait", mask, timeout_ms, NULL };
	int64_t t0 = fs_now_ms();
	int rc = wait_exit(spawn(argv));

	if (ms)
		*ms = fs_now_ms() - t0;
	return rc;
}

static int setup(void **state)
{
	const char *gw = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char dir[4096];

	(void)state;
	snprintf(dir, sizeof(dir), "%s", gw);
	snprintf(agent, sizeof(agent), "%s/vitrine-agent", dirname(dir));
	xvfb = xvfb_start(140 + getpid() % 100, "640x480x24", display, sizeof(display));
	return xvfb > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	xvfb_stop(xvfb);
	return 0;
}

static void test_waits_for_the_mask(void **state)
{
	const char *hold_shift[] = { "xdotool", "keydown", "shift", "sleep",
				     "3",	"keyup",   "shift", NULL };
	const char *hold_ctrl_button[] = { "xdotool", "keydown", "ctrl", "mousedown",
					   "1",	      "sleep",	 "3",	 "mouseup",
					   "1",	      "keyup",	 "ctrl", NULL };
	int64_t ms;
	pid_t holder;

	(void)state;
	/* nothing held: it waits its time out, and says so */
	assert_int_equal(xwait("1", "300", &ms), 1);
	assert_true(ms >= 300);
	/* shift held (XTEST, as long as xdotool runs): at once */
	holder = spawn(hold_shift);
	usleep(700 * 1000);
	assert_int_equal(xwait("1", "5000", &ms), 0);
	print_message("shift seen in %lld ms\n", (long long)ms);
	assert_true(ms < 2000);
	/* every bit of the mask: shift alone is not shift+ctrl */
	assert_int_equal(xwait("5", "300", NULL), 1);
	assert_int_equal(wait_exit(holder), 0);
	/* released: waiting again */
	assert_int_equal(xwait("1", "300", NULL), 1);
	/* a modifier and a button together */
	holder = spawn(hold_ctrl_button);
	usleep(700 * 1000);
	assert_int_equal(xwait("260", "5000", NULL), 0); /* Control 4 + Button1 256 */
	assert_int_equal(wait_exit(holder), 0);
}

static void test_no_x_and_bad_arguments(void **state)
{
	const char *none[] = { agent, "xwait", "1", "100", NULL };
	char saved[16];
	pid_t pid;

	(void)state;
	snprintf(saved, sizeof(saved), "%s", display);
	snprintf(display, sizeof(display), ":9"); /* nobody's */
	pid = spawn(none);
	snprintf(display, sizeof(display), "%s", saved);
	assert_int_equal(wait_exit(pid), 3);
	assert_int_equal(xwait("x", "100", NULL), 2);
	assert_int_equal(xwait("1", "-5", NULL), 2);
	assert_int_equal(xwait("70000", "100", NULL), 2);
	assert_int_equal(xwait("1", "60001", NULL), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_for_the_mask),
		cmocka_unit_test(test_no_x_and_bad_arguments),
	};

	return cmocka_run_group_tests_name("vitrine-agent xwait against Xvfb", tests, setup,
					   teardown);
}
