/* tests/unit/test_exec_parse.c: the body of POST /v1/sessions/{id}/exec
 * turned into what the agent runs: the user, the environment, the working
 * directory, shell or no shell, and every refusal; and the files routes'
 * paths and the guest's directory listings. */
#include "gateway/api/api_int.h"
#include "gateway/guest/exec.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* What body runs, as "cwd|root?|argv...|--|env...", into out. */
static int joined(const char *body, char *out, size_t len)
{
	struct api_error e;
	struct exec_job *j = exec_parse(body, strlen(body), &e);
	size_t n = 0;

	out[0] = '\0';
	if (!j) {
		snprintf(out, len, "%d %s", e.status, e.code);
		return -1;
	}
	n += (size_t)snprintf(out + n, len - n, "%s|%s", exec_cwd(j),
			      exec_as_root(j) ? "root" : "user");
	for (const char *const *a = exec_argv(j); *a; a++)
		n += (size_t)snprintf(out + n, len - n, "|%s", *a);
	n += (size_t)snprintf(out + n, len - n, "|--");
	for (const char *const *a = exec_env(j); *a; a++)
		n += (size_t)snprintf(out + n, len - n, "|%s", *a);
	exec_free(j);
	return 0;
}

#define PROXY_ENV                                                                                  \
	"http_proxy=http://127.0.0.1:3128|https_proxy=http://127.0.0.1:3128|"                      \
	"HTTP_PROXY=http://127.0.0.1:3128|HTTPS_PROXY=http://127.0.0.1:3128|"                      \
	"no_proxy=localhost,127.0.0.1,::1"

static void test_command_lines(void **state)
{
	char out[2048];

	(void)state;
	assert_int_equal(joined("{\"cmd\":\"ls -la\"}", out, sizeof(out)), 0);
	assert_string_equal(
		out,
		"/home/vitrine|user|/bin/sh|-c|ls -la|--|HOME=/home/vitrine|"
		"USER=vitrine|PATH=/usr/local/bin:/usr/bin:/bin|LANG=C.UTF-8|DISPLAY=:0|" PROXY_ENV);
	assert_int_equal(joined("{\"cmd\":\"/bin/echo\",\"args\":[\"a b\",\"c\"],\"user\":\"root\","
				"\"cwd\":\"/tmp\",\"env\":{\"K\":\"v=1\"}}",
				out, sizeof(out)),
			 0);
	assert_string_equal(out,
			    "/tmp|root|/bin/echo|a b|c|--|HOME=/root|USER=root|"
			    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin|"
			    "LANG=C.UTF-8|DISPLAY=:0|" PROXY_ENV "|K=v=1");
}

static void test_refusals(void **state)
{
	static const char *bad[] = {
		"{}",
		"{\"cmd\":\"\"}",
		"{\"cmd\":5}",
		"{\"cmd\":\"x\",\"user\":\"admin\"}",
		"{\"cmd\":\"x\",\"cwd\":\"tmp\"}",
		"{\"cmd\":\"x\",\"timeout\":0}",
		"{\"cmd\":\"x\",\"timeout\":601}",
		"{\"cmd\":\"x\",\"timeout\":\"5\"}",
		"{\"cmd\":\"x\",\"args\":\"a\"}",
		"{\"cmd\":\"x\",\"args\":[1]}",
		"{\"cmd\":\"x\",\"env\":[\"A=1\"]}",
		"{\"cmd\":\"x\",\"env\":{\"A=B\":\"1\"}}",
		"{\"cmd\":\"x\",\"env\":{\"A\":1}}",
		"{\"cmd\":\"x\",\"stdin\":5}",
		"{\"cmd\":\"x\",\"stdin_b64\":\"***\"}",
		"{\"cmd\":\"x\",\"extra\":1}",
		"{\"cmd\":\"x\",\"cmd\":\"y\"}",
		"[\"x\"]",
		"not json",
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (joined(bad[i], out, sizeof(out)) == 0)
			fail_msg("accepted %s", bad[i]);
		if (strncmp(out, "400 ", 4))
			fail_msg("%s -> %s", bad[i], out);
	}
}

/* A cwd longer than the job holds was cut to its first 1023 bytes, so the
 * command ran in another directory (found by tests/fuzz/fuzz_exec_parse). */
static void test_long_cwd(void **state)
{
	char body[1200], out[1600];
	int n;

	(void)state;
	n = snprintf(body, sizeof(body), "{\"cmd\":\"pwd\",\"cwd\":\"/");
	memset(body + n, 'a', 1022);
	snprintf(body + n + 1022, sizeof(body) - (size_t)n - 1022, "\"}");
	assert_int_equal(joined(body, out, sizeof(out)), 0); /* 1023 bytes: fits */
	assert_int_equal(strcspn(out, "|"), 1023);
	n = snprintf(body, sizeof(body), "{\"cmd\":\"pwd\",\"cwd\":\"/");
	memset(body + n, 'a', 1023);
	snprintf(body + n + 1023, sizeof(body) - (size_t)n - 1023, "\"}");
	assert_int_equal(joined(body, out, sizeof(out)), -1);
	assert_string_equal(out, "400 invalid_argument");
}

static void test_files_paths(void **state)
{
	char out[1200];

	(void)state;
	assert_int_equal(api_files_path("notes/a.txt", out, sizeof(out)), 0);
	assert_string_equal(out, "/home/vitrine/notes/a.txt");
	assert_int_equal(api_files_path("/tmp/x", out, sizeof(out)), 0);
	assert_int_equal(api_files_path("/home/vitrine", out, sizeof(out)), 0);
	assert_int_equal(api_files_path("/tmp", out, sizeof(out)), 0);
	assert_int_equal(api_files_path("a..b/c", out, sizeof(out)), 0); /* not a ".." part */
	assert_int_equal(api_files_path("../etc/passwd", out, sizeof(out)), -1);
	assert_int_equal(api_files_path("/home/vitrine/../../etc", out, sizeof(out)), -1);
	assert_int_equal(api_files_path("/tmp/..", out, sizeof(out)), -1);
	assert_int_equal(api_files_path("/etc/passwd", out, sizeof(out)), -1);
	assert_int_equal(api_files_path("/home/vitrinex/a", out, sizeof(out)), -1);
	assert_int_equal(api_files_path("/tmpx", out, sizeof(out)), -1);
	assert_int_equal(api_files_path("", out, sizeof(out)), -1);
}

/* The guest's listing: an mtime no json_int_t holds (1e300, inf, nan) was
 * converted anyway, undefined behaviour (found by
 * tests/fuzz/fuzz_files_listing); such a line is now skipped as malformed. */
static void test_files_listing(void **state)
{
	static const char text[] = "f\t1\t1e300\tbig\nf\t2\tinf\tinf\nf\t3\tnan\tnan\n"
				   "d\t4096\t1796000000.5\tDesktop\nf\t5\t-86400.0\told\n"
				   "garbage\n";
	json_t *j = api_files_listing("/home/vitrine", text, sizeof(text) - 1), *e;

	(void)state;
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "entries")), 2);
	e = json_array_get(json_object_get(j, "entries"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "name")), "Desktop");
	assert_string_equal(json_string_value(json_object_get(e, "type")), "dir");
	assert_int_equal(json_integer_value(json_object_get(e, "mtime")), 1796000000);
	e = json_array_get(json_object_get(j, "entries"), 1);
	assert_int_equal(json_integer_value(json_object_get(e, "mtime")), -86400);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command_lines), cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_long_cwd),      cmocka_unit_test(test_files_paths),
		cmocka_unit_test(test_files_listing),
	};

	return cmocka_run_group_tests_name("exec request parsing", tests, NULL, NULL);
}
