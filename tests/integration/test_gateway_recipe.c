/* tests/integration/test_gateway_recipe.c: templates from a recipe (POST
 * /v1/templates {"name", "recipe"}, `vitrine template build -f FILE`;
 * docs/templates.md) on the tiny guest, in a VITRINE_HOME of the test's own
 * (the tiny image linked in): bad recipes are 400/404 and start nothing; a
 * two-step recipe (a file copied in, a command as root writing a file)
 * builds, reporting each step's output; a session restored from it has both
 * files (the copied one with its mode); the same recipe again is up to date
 * (200 at once, the same template); a changed step rebuilds it; a failing
 * step fails the build with its output and exit code and leaves no template
 * dir, no session and no guest; a step that prints, sleeps and prints shows
 * its first line while it runs and the second after (in the build's JSON,
 * and in `vitrine template build`'s lines, into a pipe and on a terminal,
 * in order); the CLI reads a host file into a copy step and says "up to
 * date" the second time. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/test_home.h"

#include <errno.h>
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static char home[128], tpl[48];

static int setup(void **state)
{
	(void)state;
	snprintf(tpl, sizeof(tpl), "rc-%d", (int)getpid());
	if (test_home_make(home, sizeof(home), "recipe", false) != 0)
		return -1;
	setenv("VITRINE_HOME", home, 1);
	return gateway_proc_start(&gw, NULL);
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	gateway_proc_stop(&gw);
	fs_rm_rf(home); /* its templates too */
	return 0;
}

static struct http_resp req(const char *method, const char *path, const char *body, int status,
			    const char *code)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, gw.key, body,
			      body ? strlen(body) : 0, 60, &r);

	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("%s %s -> %d %.600s (want %d %s)", method, path, r.status,
			 r.body ? r.body : "", status, code ? code : "");
	return r;
}

static const char *str(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "";
}

/* The body posting recipe (JSON text) for template name, in a buffer of
 * its own (good until the next call: nothing to free when a check fails). */
static const char *body_of(const char *name, const char *recipe)
{
	static char b[8192];

	snprintf(b, sizeof(b), "{\"name\":\"%s\",\"recipe\":%s}", name, recipe);
	return b;
}

/* Polls GET /v1/templates/name until it is no longer building; the last
 * answer in *out. Fails when it builds for more than 120 s. */
static void wait_built(const char *name, struct http_resp *out)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	for (int i = 0;; i++) {
		r = req("GET", path, NULL, 200, NULL);
		if (strcmp(str(r.json, "status"), "building"))
			break;
		http_resp_free(&r);
		if (i > 600)
			fail_msg("template %s still building after 120 s", name);
		usleep(200 * 1000);
	}
	*out = r;
}

/* Builds name from recipe: 202, then ready. Its JSON in *out. */
static void build(const char *name, const char *recipe, struct http_resp *out)
{
	struct http_resp r = req("POST", "/v1/templates", body_of(name, recipe), 202, NULL);

	assert_string_equal(str(r.json, "status"), "building");
	assert_true(strlen(str(r.json, "recipe_hash")) == 64);
	http_resp_free(&r);
	wait_built(name, &r);
	if (strcmp(str(r.json, "status"), "ready"))
		fail_msg("template %s: %s", name, r.body);
	*out = r;
}

/* Runs cmd in a session restored from name; its stdout into out. */
static void run_in(const char *name, const char *cmd, char *out, size_t len)
{
	struct gateway_session s;
	char body[256], path[128];
	json_t *j;
	struct http_resp r;
	char *text;

	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", name);
	if (gateway_proc_create_session(&gw, body, 120, &s) < 0)
		fail_msg("no session from %s", name);
	j = json_pack("{s:s, s:s}", "cmd", cmd, "user", "root");
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec", s.id);
	r = req("POST", path, text, 200, NULL);
	free(text);
	snprintf(out, len, "%s", str(r.json, "stdout"));
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s", s.id);
	r = req("DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);
}

static size_t count(const char *path, const char *key)
{
	struct http_resp r = req("GET", path, NULL, 200, NULL);
	size_t n = json_array_size(json_object_get(r.json, key));

	http_resp_free(&r);
	return n;
}

/* No template dir of name or its staging name, no session, and (within
 * 15 s, the dispose job's time) no guest. */
static void nothing_left(const char *name)
{
	char dir[512];
	struct stat st;
	int i;

	snprintf(dir, sizeof(dir), "%s/templates/%s", home, name);
	assert_int_not_equal(stat(dir, &st), 0);
	snprintf(dir, sizeof(dir), "%s/templates/%s--next", home, name);
	assert_int_not_equal(stat(dir, &st), 0);
	assert_int_equal(count("/v1/sessions", "sessions"), 0);
	for (i = 0; i < 150 && gateway_proc_guests(&gw) > 0; i++)
		usleep(100 * 1000);
	assert_int_equal(gateway_proc_guests(&gw), 0);
}

static void test_bad_recipes(void **state)
{
	static const struct {
		const char *body;
		int status;
		const char *code;
	} cases[] = {
		{ "{\"name\":\"x\",\"recipe\":{\"image\":\"tiny\",\"nope\":1}}", 400,
		  "invalid_argument" },
		{ "{\"name\":\"x\",\"recipe\":{\"steps\":[]}}", 400, "invalid_argument" },
		{ "{\"name\":\"x\",\"recipe\":{\"image\":\"tiny\",\"steps\":[{\"run\":\"true\","
		  "\"copy\":{}}]}}",
		  400, "invalid_argument" },
		{ "{\"name\":\"x\",\"recipe\":{\"image\":\"tiny\",\"steps\":[{\"copy\":{\"to\":"
		  "\"/tmp/a\",\"src\":\"/etc/passwd\"}}]}}",
		  400, "invalid_argument" },
		{ "{\"name\":\"x\",\"recipe\":{\"image\":\"tiny\",\"steps\":[{\"run\":\"true\","
		  "\"user\":\"bob\"}]}}",
		  400, "invalid_argument" },
		{ "{\"name\":\"x\",\"recipe\":{\"image\":\"tiny\",\"width\":5}}", 400,
		  "out_of_range" },
		{ "{\"name\":\"x\",\"recipe\":[1]}", 400, "invalid_argument" },
		{ "{\"name\":\"x\",\"recipe\":{\"image\":\"tiny\"},\"image\":\"tiny\"}", 400,
		  "invalid_argument" },
		{ "{\"name\":\"Bad\",\"recipe\":{\"image\":\"tiny\"}}", 400, "invalid_argument" },
		{ "{\"name\":\"x\",\"recipe\":{\"image\":\"nosuchimage\"}}", 404, "unknown_image" },
		{ "{\"name\":\"x\",\"recipe\":{\"template\":\"nosuchtpl\"}}", 404,
		  "unknown_template" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_resp r = req("POST", "/v1/templates", cases[i].body, cases[i].status,
					 cases[i].code);

		http_resp_free(&r);
	}
	nothing_left("x");
}

#define RECIPE(word)                                                                               \
	"{\"image\":\"tiny\",\"memory_mib\":256,\"steps\":["                                       \
	"{\"name\":\"greeting\",\"copy\":{\"to\":\"/home/vitrine/greeting.txt\","                  \
	"\"content\":\"hello from a recipe\\n\",\"mode\":\"0600\"}},"                              \
	"{\"name\":\"mark\",\"run\":\"echo " word " > /tmp/built.txt && echo wrote " word "\","    \
	"\"user\":\"root\"}]}"

static void test_build_restore_rebuild(void **state)
{
	struct http_resp r, t;
	char out[512], hash[80];
	const char *body;
	json_t *steps;
	int64_t t0;
	json_int_t created;

	(void)state;
	build(tpl, RECIPE("one"), &t);
	assert_true(json_is_true(json_object_get(t.json, "up_to_date")) == false);
	created = json_integer_value(json_object_get(t.json, "created_at"));
	http_resp_free(&t);

	run_in(tpl,
	       "cat /home/vitrine/greeting.txt /tmp/built.txt; stat -c %a "
	       "/home/vitrine/greeting.txt",
	       out, sizeof(out));
	assert_string_equal(out, "hello from a recipe\none\n600\n");

	/* The same recipe: up to date, at once, the same template. */
	body = body_of(tpl, RECIPE("one"));
	t0 = fs_now_ms();
	r = req("POST", "/v1/templates", body, 200, NULL);
	assert_true(fs_now_ms() - t0 < 2000);
	assert_true(json_is_true(json_object_get(r.json, "up_to_date")));
	assert_string_equal(str(r.json, "status"), "ready");
	assert_int_equal(json_integer_value(json_object_get(r.json, "created_at")), created);
	snprintf(hash, sizeof(hash), "%s", str(r.json, "recipe_hash"));
	assert_int_equal(strlen(hash), 64);
	http_resp_free(&r);
	assert_int_equal(count("/v1/sessions", "sessions"), 0); /* nothing was started */

	/* A changed step: built again; its steps' output reported while it builds. */
	body = body_of(tpl, RECIPE("two"));
	r = req("POST", "/v1/templates", body, 202, NULL);
	assert_string_not_equal(str(r.json, "recipe_hash"), hash);
	steps = json_object_get(r.json, "steps");
	assert_int_equal(json_array_size(steps), 2);
	assert_string_equal(str(json_array_get(steps, 0), "name"), "greeting");
	assert_string_equal(str(json_array_get(steps, 0), "kind"), "copy");
	assert_string_equal(str(json_array_get(steps, 1), "kind"), "run");
	http_resp_free(&r);
	{
		char path[128];
		bool seen = false;

		snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
		for (int i = 0; i < 600; i++) {
			json_t *s1;

			r = req("GET", path, NULL, 200, NULL);
			s1 = json_array_get(json_object_get(r.json, "steps"), 1);
			if (s1 && !strcmp(str(s1, "status"), "ok")) {
				assert_string_equal(str(s1, "stdout"), "wrote two\n");
				assert_int_equal(json_integer_value(
							 json_object_get(s1, "exit_code")),
						 0);
				seen = true;
			}
			if (strcmp(str(r.json, "status"), "building"))
				break;
			http_resp_free(&r);
			usleep(100 * 1000);
		}
		if (strcmp(str(r.json, "status"), "ready"))
			fail_msg("rebuild: %s", r.body);
		if (!seen)
			fail_msg("the second step's output was never reported");
		http_resp_free(&r);
	}
	run_in(tpl, "cat /tmp/built.txt", out, sizeof(out));
	assert_string_equal(out, "two\n");
	r = req("POST", "/v1/templates", body_of(tpl, RECIPE("two")), 200, NULL);
	assert_string_not_equal(str(r.json, "recipe_hash"), hash);
	http_resp_free(&r);
	nothing_left("rc-none"); /* no session, no guest */
	{
		char path[128];

		snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
		r = req("DELETE", path, NULL, 200, NULL);
		http_resp_free(&r);
	}
}

static void test_failing_step(void **state)
{
	char name[64];
	const char *body;
	struct http_resp r;
	json_t *steps;

	(void)state;
	snprintf(name, sizeof(name), "%s-fail", tpl);
	body = body_of(name, "{\"image\":\"tiny\",\"memory_mib\":256,\"steps\":["
			     "{\"run\":\"echo fine\"},"
			     "{\"name\":\"breaks\",\"run\":\"echo half; echo broken >&2; exit 3\"},"
			     "{\"run\":\"echo never\"}]}");
	r = req("POST", "/v1/templates", body, 202, NULL);
	http_resp_free(&r);
	wait_built(name, &r);
	assert_string_equal(str(r.json, "status"), "failed");
	if (!strstr(str(r.json, "error"), "step 2 (breaks) exited with status 3") ||
	    !strstr(str(r.json, "error"), "broken"))
		fail_msg("error: %s", str(r.json, "error"));
	steps = json_object_get(r.json, "steps");
	assert_string_equal(str(json_array_get(steps, 0), "status"), "ok");
	assert_string_equal(str(json_array_get(steps, 0), "stdout"), "fine\n");
	assert_string_equal(str(json_array_get(steps, 1), "status"), "failed");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(steps, 1), "exit_code")),
			 3);
	assert_string_equal(str(json_array_get(steps, 1), "stdout"), "half\n");
	assert_string_equal(str(json_array_get(steps, 1), "stderr"), "broken\n");
	assert_string_equal(str(json_array_get(steps, 2), "status"), "pending");
	assert_null(json_object_get(r.json, "session"));
	http_resp_free(&r);
	nothing_left(name);
	{
		char path[128];

		/* The failure is kept to be read, and forgotten on DELETE. */
		snprintf(path, sizeof(path), "/v1/templates/%s", name);
		r = req("DELETE", path, NULL, 404, "unknown_template");
		http_resp_free(&r);
		r = req("GET", path, NULL, 404, "unknown_template");
		http_resp_free(&r);
	}
}

/* A step that prints, sleeps, prints: the gap is what streaming must show. */
#define SLOW_STEP "{\"name\":\"slow\",\"run\":\"echo one; sleep 3; echo two\"}"
#define SLOW_RECIPE(tag)                                                                           \
	"{\"image\":\"tiny\",\"memory_mib\":256,\"steps\":[{\"run\":\"echo " tag "\"}," SLOW_STEP  \
	"]}"

/* GET /v1/templates/NAME while a step runs carries its output so far:
 * "one" (and not "two") while it sleeps, well before it ends; "two" once it
 * printed it; byte counts that add up. */
static void test_streamed_output(void **state)
{
	char name[64], path[128];
	struct http_resp r;
	int64_t seen_one = 0, ended = 0;

	(void)state;
	snprintf(name, sizeof(name), "%s-stream", tpl);
	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	r = req("POST", "/v1/templates", body_of(name, SLOW_RECIPE("api")), 202, NULL);
	http_resp_free(&r);
	for (int i = 0;; i++) {
		json_t *step;
		const char *status;

		if (i > 1200)
			fail_msg("template %s still building after 120 s", name);
		r = req("GET", path, NULL, 200, NULL);
		step = json_array_get(json_object_get(r.json, "steps"), 1);
		status = str(step, "status");
		if (!strcmp(status, "running") && !strcmp(str(step, "stdout"), "one\n")) {
			assert_int_equal(json_integer_value(json_object_get(step, "stdout_bytes")),
					 4);
			assert_int_equal(json_integer_value(json_object_get(step, "stderr_bytes")),
					 0);
			assert_null(json_object_get(step, "stderr"));
			if (!seen_one)
				seen_one = fs_now_ms();
		} else if (!strcmp(status, "running")) {
			/* Before its first line, or in the moment after its second. */
			const char *out = str(step, "stdout");

			if (strcmp(out, "") && strcmp(out, "one\ntwo\n"))
				fail_msg("running step's stdout: '%s'", out);
			if (!strcmp(out, ""))
				assert_int_equal(json_integer_value(
							 json_object_get(step, "stdout_bytes")),
						 0);
		} else if (!strcmp(status, "ok") && !ended) {
			ended = fs_now_ms();
			assert_string_equal(str(step, "stdout"), "one\ntwo\n");
			assert_int_equal(json_integer_value(json_object_get(step, "stdout_bytes")),
					 8);
		}
		if (strcmp(str(r.json, "status"), "building"))
			break;
		http_resp_free(&r);
		usleep(100 * 1000);
	}
	if (strcmp(str(r.json, "status"), "ready"))
		fail_msg("%s: %s", name, r.body);
	http_resp_free(&r);
	if (!seen_one || !ended)
		fail_msg("the step's first line was never seen while it ran (%lld, %lld)",
			 (long long)seen_one, (long long)ended);
	/* It sleeps 3 s between the two: its first line must show long before
	 * it ends (without streaming both would come at the end). */
	if (ended - seen_one < 1000)
		fail_msg("'one' seen only %lld ms before the step ended",
			 (long long)(ended - seen_one));
	r = req("DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);
}

/* One line the CLI printed and when it came (ms since its start). */
struct timed_line {
	char text[256];
	int64_t ms;
};

/* Reads fd (the CLI's stderr) to its end, line by line with each line's
 * time; up to max lines into lines. Returns how many. */
static int read_lines(int fd, struct timed_line *lines, int max)
{
	char buf[8192];
	size_t used = 0;
	int n = 0;
	int64_t t0 = fs_now_ms();

	for (;;) {
		ssize_t got = read(fd, buf + used, sizeof(buf) - 1 - used);
		char *nl;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) /* EIO: the terminal's other side closed */
			break;
		used += (size_t)got;
		buf[used] = '\0';
		while ((nl = strchr(buf, '\n'))) {
			*nl = '\0';
			if (n < max) {
				/* a terminal's line ends in \r\n */
				size_t len = strcspn(buf, "\r");

				snprintf(lines[n].text, sizeof(lines[n].text), "%.*s", (int)len,
					 buf);
				lines[n++].ms = fs_now_ms() - t0;
			}
			used -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, used + 1);
		}
		if (used == sizeof(buf) - 1)
			used = 0; /* a line too long to matter */
	}
	return n;
}

/* The index of the first of lines that is text (or starts with it, when
 * prefix), -1 when none is. */
static int find_line(const struct timed_line *lines, int n, const char *text, bool prefix)
{
	for (int i = 0; i < n; i++)
		if (prefix ? !strncmp(lines[i].text, text, strlen(text))
			   : !strcmp(lines[i].text, text))
			return i;
	return -1;
}

/* Builds recipe (file text) with `vitrine template build`, its stderr into
 * a pipe or onto a terminal: the slow step's "one", "two" and status line,
 * in that order, "one" well before "two". */
static void cli_streams(const char *recipe, bool terminal)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char file[256], cmd[1024];
	struct timed_line lines[64];
	int n, one, two, status_line, st, fds[2] = { -1, -1 }, fd;
	pid_t pid;

	snprintf(file, sizeof(file), "%s/stream-%d.json", home, terminal);
	assert_int_equal(fs_write_file_atomic(file, recipe, strlen(recipe), 0644), 0);
	snprintf(cmd, sizeof(cmd),
		 "exec %s template build --gateway http://127.0.0.1:%d --api-key-file %s -f %s "
		 ">/dev/null",
		 bin, gw.port, gw.key_file, file);
	if (terminal) {
		pid = forkpty(&fd, NULL, NULL, NULL);
		assert_true(pid >= 0);
	} else {
		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		fd = fds[0];
	}
	if (pid == 0) {
		if (!terminal) {
			dup2(fds[1], 2);
			close(fds[0]);
			close(fds[1]);
		}
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (!terminal)
		close(fds[1]);
	n = read_lines(fd, lines, 64);
	close(fd);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	one = find_line(lines, n, "one", false);
	two = find_line(lines, n, "two", false);
	status_line = find_line(lines, n, "step 2/2 slow: ok in ", true);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || one < 0 || two <= one || status_line <= two ||
	    lines[two].ms - lines[one].ms < 1000) {
		for (int i = 0; i < n; i++)
			print_message("%6lld ms: %s\n", (long long)lines[i].ms, lines[i].text);
		fail_msg("%s: the lines one, two, step 2/2 not in order, or 'one' not well "
			 "before 'two' (exit %d)",
			 terminal ? "on a terminal" : "into a pipe", st);
	}
}

/* `vitrine template build` prints a step's lines as they come. */
static void test_cli_streams(void **state)
{
	char recipe[512], path[160];
	struct http_resp r;

	(void)state;
	snprintf(recipe, sizeof(recipe), "{\"name\":\"%s-pipe\",%s", tpl, SLOW_RECIPE("pipe") + 1);
	cli_streams(recipe, false);
	snprintf(recipe, sizeof(recipe), "{\"name\":\"%s-tty\",%s", tpl, SLOW_RECIPE("tty") + 1);
	cli_streams(recipe, true);
	snprintf(path, sizeof(path), "/v1/templates/%s-pipe", tpl);
	r = req("DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/templates/%s-tty", tpl);
	r = req("DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);
}

/* `vitrine template build -f FILE`: a host file read into a copy step. */
static void test_cli(void **state)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char dir[256], out[256], path[160];
	struct http_resp r;
	int rc;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/cli", home);
	rc = test_sh("set -e; mkdir -p %s/files; printf 'from the host' > %s/files/note.txt; "
		     "printf '{\"name\":\"%s-cli\",\"image\":\"tiny\",\"memory_mib\":256,\"steps\":"
		     "[{\"copy\":{\"src\":\"files/note.txt\",\"to\":\"/tmp/note.txt\"}}]}' > "
		     "%s/recipe.json",
		     dir, dir, tpl, dir);
	assert_int_equal(rc, 0);
	rc = test_sh("VITRINE_URL=http://127.0.0.1:%d %s template build --api-key-file %s -f "
		     "%s/recipe.json 2>%s/err | grep -q '\"status\": \"ready\"'",
		     gw.port, bin, gw.key_file, dir, dir);
	if (rc != 0)
		test_sh("cat %s/err >&2", dir);
	assert_int_equal(rc, 0);
	rc = test_sh("VITRINE_URL=http://127.0.0.1:%d %s template build --api-key-file %s -f "
		     "%s/recipe.json 2>&1 >/dev/null | grep -q 'is up to date'",
		     gw.port, bin, gw.key_file, dir);
	assert_int_equal(rc, 0);
	snprintf(path, sizeof(path), "%s-cli", tpl);
	run_in(path, "cat /tmp/note.txt", out, sizeof(out));
	assert_string_equal(out, "from the host");
	snprintf(path, sizeof(path), "/v1/templates/%s-cli", tpl);
	r = req("DELETE", path, NULL, 200, NULL);
	http_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_recipes),  cmocka_unit_test(test_build_restore_rebuild),
		cmocka_unit_test(test_failing_step), cmocka_unit_test(test_streamed_output),
		cmocka_unit_test(test_cli),	     cmocka_unit_test(test_cli_streams),
	};

	return cmocka_run_group_tests_name("templates from recipes", tests, setup, teardown);
}
