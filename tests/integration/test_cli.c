/* tests/integration/test_cli.c: the `vitrine` command line: bad input gets a
 * message and a non-zero exit (2 for usage, 1 for failures), and `vitrine
 * boot` of the tiny guest works end to end, screenshot included. */
#include "common/fsutil.h"
#include "tests/lib/shell.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Runs `vitrine ARGS` through the shell; returns its exit status and puts
 * stdout+stderr in out. */
static int vitrine(const char *args, char *out, size_t len)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", bin, args);
	return shell_run(cmd, out, len);
}

static void expect(const char *args, int status, const char *needle)
{
	char out[8192];
	int st = vitrine(args, out, sizeof(out));

	if (st != status || !strstr(out, needle))
		fail_msg("`vitrine %s` exited %d (want %d) saying:\n%s(want '%s')", args, st,
			 status, out, needle);
}

static void test_usage_errors(void **state)
{
	(void)state;
	expect("", 2, "usage: vitrine COMMAND");
	expect("frobnicate", 2, "unknown command 'frobnicate'");
	expect("boot", 2, "--image is required");
	expect("boot --image tiny --width 5", 2, "--width must be a whole number in 320..3840");
	expect("boot --image tiny --vcpus x", 2, "--vcpus must be a whole number");
	expect("boot --image tiny --accel hvf", 2, "--accel must be auto, kvm or tcg");
	expect("boot --image tiny --screenshot out.gif", 2, "must end in .png or .ppm");
	expect("boot --image tiny extra", 2, "unexpected argument 'extra'");
	expect("boot --help", 0, "usage: vitrine boot");
	expect("gc extra", 2, "usage: vitrine gc");
	expect("gc extra", 2, "vitrine gc: unexpected argument 'extra'");
	/* and a gc that did its work says so and exits 0 (it exited 255
	 * once its line came from the option table) */
	{
		char dir[] = "/tmp/vitrine-cli-gc-XXXXXX", args[128];

		assert_non_null(mkdtemp(dir));
		snprintf(args, sizeof(args), "gc --dry-run --state-dir %s", dir);
		expect(args, 0, "records; would remove");
		fs_rm_rf(dir);
	}
	expect("boot --template t --help", 0, "usage: vitrine boot --template NAME");
	expect("boot --template t --hold x", 2, "--hold must be a whole number in 0..86400");
	expect("boot --template t --image tiny", 2, "unrecognized option '--image'");
	expect("template create --help", 0, "usage: vitrine template create NAME --image IMAGE");
	expect("template create t", 2, "need NAME and --image");
}

static void test_failures(void **state)
{
	(void)state;
	expect("boot --image no-such-image", 1, "image no-such-image is not built");
	expect("boot --image tiny --page /nonexistent.html", 1, "/nonexistent.html");
}

static void test_boot_tiny_with_screenshot(void **state)
{
	char path[64], args[160], out[8192];
	char *png = NULL;
	size_t len = 0;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/vitrine-cli-%d.png", (int)getpid());
	snprintf(args, sizeof(args), "boot --image tiny --json --screenshot %s", path);
	assert_int_equal(vitrine(args, out, sizeof(out)), 0);
	if (!strstr(out, "\"ready\":true") || !strstr(out, "\"name\":\"ready\""))
		fail_msg("unexpected output:\n%s", out);
	assert_int_equal(fs_read_file(path, 1 << 24, &png, &len), 0);
	assert_true(len > 1000);
	assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
	free(png);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_boot_tiny_with_screenshot),
	};

	return cmocka_run_group_tests_name("vitrine CLI", tests, NULL, NULL);
}
