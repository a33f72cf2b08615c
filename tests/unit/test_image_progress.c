/* tests/unit/test_image_progress.c: the image builds' progress
 * (guest-images/lib.sh: steps_begin, step, progress_lines, steps_through,
 * progress_bar), run by bash as the recipes run it: off a terminal one
 * plain line per step with its time, in order, and no carriage return;
 * on a pseudo-terminal a redrawn bar with percents that counts apt's
 * packages within a step, cleared at the end. */
#include <errno.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* A build of four steps: one with apt's output through progress_lines,
 * two begun by the log lines of a function run by steps_through, a last
 * one. Its stderr goes to stdout (the test reads one stream). */
static const char script[] =
	"exec 2>&1; source guest-images/lib.sh; IMAGE_NAME=t\n"
	"inner() { log 'first part'; echo x >&2; log 'second part'; }\n"
	"steps_begin 4\n"
	"step install\n"
	"printf '%s\\n' '0 upgraded, 2 newly installed, 0 to remove' 'Unpacking a' "
	"'Unpacking b' 'Setting up a' 'Setting up b' | progress_lines '  apt: '\n"
	"steps_through 2 inner\n"
	"step last\n"
	"steps_end\n";

/* Rewrites every step time "(12s)" in out as "(Ns)": how long a step took
 * depends on how loaded the machine is, not on the code under test. */
static void blank_times(char *out)
{
	char *r = out, *w = out;

	while (*r) {
		size_t digits = 0;

		if (r[0] == '(')
			while (r[1 + digits] >= '0' && r[1 + digits] <= '9')
				digits++;
		if (digits && r[1 + digits] == 's' && r[2 + digits] == ')') {
			memcpy(w, "(Ns)", 4);
			w += 4;
			r += 3 + digits;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

/* Runs the script with bash, on a pseudo-terminal when tty; returns its
 * exit status with what it wrote in out, its times blanked. */
static int run(bool tty, char *out, size_t len)
{
	size_t used = 0;
	pid_t pid;
	int fd[2], st;

	if (tty) {
		pid = forkpty(&fd[0], NULL, NULL, NULL);
	} else {
		assert_int_equal(pipe(fd), 0);
		pid = fork();
		if (pid == 0) {
			dup2(fd[1], 1);
			close(fd[0]);
		}
		close(fd[1]);
	}
	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("bash", "bash", "-c", script, (char *)NULL);
		_exit(127);
	}
	for (;;) { /* a pty ends with EIO once the child is gone */
		ssize_t n = read(fd[0], out + used, len - 1 - used);

		if (n > 0 && (used += (size_t)n) < len - 1)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	out[used] = '\0';
	blank_times(out);
	close(fd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Fails unless each of want appears in out, in that order. */
static void in_order(const char *out, const char *const *want)
{
	const char *at = out;

	for (; *want; want++) {
		const char *p = strstr(at, *want);

		if (!p)
			fail_msg("'%s' missing (or out of order) in:\n%s", *want, out);
		at = p + strlen(*want);
	}
}

static void test_plain_off_a_terminal(void **state)
{
	static const char *const want[] = {
		"  apt: Unpacking a\n",
		"[image t] [1/4] install (Ns)\n",
		"[image t] first part\n",
		"x\n",
		"[image t] [2/4] first part (Ns)\n",
		"[image t] second part\n",
		"[image t] [3/4] second part (Ns)\n",
		"[image t] [4/4] last (Ns)\n",
		NULL,
	};
	char out[8192];

	(void)state;
	assert_int_equal(run(false, out, sizeof(out)), 0);
	in_order(out, want);
	assert_null(strchr(out, '\r'));
	assert_null(strchr(out, '%'));
	/* each step's line once */
	assert_null(strstr(strstr(out, "[1/4] install") + 1, "[1/4] install"));
}

static void test_bar_on_a_terminal(void **state)
{
	static const char *const want[] = {
		"\r[....................]   0% [1/4] install (Ns)\033[K",
		"  apt: Unpacking a",
		"\r[#...................]   6% [1/4] install",
		"\r[#####...............]  25% [1/4] install",
		"[image t] first part",
		"\r[#####...............]  25% [2/4] first part",
		"\r[##########..........]  50% [3/4] second part",
		"\r[###############.....]  75% [4/4] last (Ns)\033[K",
		NULL,
	};
	char out[16384];

	(void)state;
	assert_int_equal(run(true, out, sizeof(out)), 0);
	in_order(out, want);
	/* no plain step lines, and the bar is cleared at the end */
	assert_null(strstr(out, "] [1/4] install (Ns)\r\n"));
	assert_string_equal(strrchr(out, '\r'), "\r\033[K");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_off_a_terminal),
		cmocka_unit_test(test_bar_on_a_terminal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
