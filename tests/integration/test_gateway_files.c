/* tests/integration/test_gateway_files.c: large files through the native
 * files route on the tiny guest (a session with RAM for the file, whose
 * /tmp is its initramfs): a file up and down, made and hashed as they go
 * by the client, with the same SHA-256 back and the gateway's peak RSS
 * (VmHWM) within a bound well under the file's size of what it was before
 * (the gateway held a bounded part of it at any time, whatever the
 * client's and the guest's speeds). The file is VITRINE_TEST_FILE_MIB
 * MiB: 48 in the suite (its time budget: 512 MiB through TCG's
 * virtio-serial takes minutes), 512 with `make test-large-files`. A body
 * declared past
 * --files-max-bytes refused 413 before any of it is sent, leaving nothing
 * behind (the path absent, no temporary file); a chunked upload taken
 * whole. (A chunked body past the limit, refused midway, would cost this
 * test 600 MiB more through TCG.) */
#include "tests/lib/files_client.h"
#include "tests/lib/gateway_proc.h"

#include "common/http_client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define DEFAULT_MIB 48
/* The gateway holds about the agent's windows of a transfer (a few MiB):
 * the bound is far above that and at most half the file. Under ASan freed
 * memory stays in its quarantine (256 MiB by default, past any such
 * bound): the gateway runs with a small one (setup), and redzones and
 * shadow get half as much again. */
#ifdef __SANITIZE_ADDRESS__
#define RSS_SLACK_KIB (24 * 1024)
#else
#define RSS_SLACK_KIB (16 * 1024)
#endif

static struct gateway_proc gw;
static struct gateway_session s;
static uint64_t big, limit; /* the file's bytes; --files-max-bytes */

static int setup(void **state)
{
	const char *env = getenv("VITRINE_TEST_FILE_MIB");
	int mib = env && atoi(env) >= 48 ? atoi(env) : DEFAULT_MIB;
	char max[32], body[96];
	const char *args[] = { "--files-max-bytes", max, NULL };

	(void)state;
	big = (uint64_t)mib << 20;
	limit = big + (88ull << 20);
	snprintf(max, sizeof(max), "%llu", (unsigned long long)limit);
#ifdef __SANITIZE_ADDRESS__
	{
		const char *was = getenv("ASAN_OPTIONS");
		char opts[512];

		snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=8", was ? was : "",
			 was && *was ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1); /* the gateway's, inherited */
	}
#endif
	if (gateway_proc_start(&gw, args) < 0)
		return -1;
	/* RAM for the file in the guest's /tmp, twice over */
	snprintf(body, sizeof(body), "{\"image\":\"tiny\",\"memory_mib\":%d}", 2 * mib + 256);
	return gateway_proc_create_session(&gw, body, 180, &s);
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	gateway_proc_stop(&gw);
	return 0;
}

/* Whether the guest's /tmp holds name (ls -a). */
static bool guest_tmp_has(const char *name)
{
	static const char body[] = "{\"cmd\":\"ls\",\"args\":[\"-a\",\"/tmp\"]}";
	struct http_resp r;
	char path[96];
	bool has;

	snprintf(path, sizeof(path), "/v1/sessions/%s/exec", s.id);
	assert_int_equal(http_request("127.0.0.1", gw.port, "POST", path, s.control, body,
				      sizeof(body) - 1, 60, &r),
			 0);
	assert_int_equal(r.status, 200);
	has = r.body && strstr(r.body, name);
	http_resp_free(&r);
	return has;
}

static void test_big_round_trip(void **state)
{
	char sent[65] = "", got[65] = "";
	long before, after;
	uint64_t len;

	(void)state;
	before = files_vmhwm_kib(gw.pid);
	assert_true(before > 0);
	assert_int_equal(files_put(gw.port, s.control, s.id, "/tmp/big.bin", big, 27, 0, sent),
			 200);
	assert_int_equal(files_get(gw.port, s.control, s.id, "/tmp/big.bin", &len, got), 200);
	after = files_vmhwm_kib(gw.pid);
	printf("# %llu MiB up and down: VmHWM %ld KiB before, %ld KiB after (bound +%d)\n",
	       (unsigned long long)(big >> 20), before, after, RSS_SLACK_KIB);
	assert_int_equal(len, big);
	assert_string_equal(got, sent);
	assert_true(after - before < RSS_SLACK_KIB);
}

static void test_over_the_limit(void **state)
{
	char sent[65], got[65];
	uint64_t len;

	(void)state;
	/* declared: refused before a byte of it is sent */
	assert_int_equal(files_put_head_only(gw.port, s.control, s.id, "/tmp/over.bin", limit + 1),
			 413);
	assert_int_equal(files_get(gw.port, s.control, s.id, "/tmp/over.bin", &len, got), 404);
	assert_false(guest_tmp_has(".vitrine-upload"));
	/* chunked and under it: whole */
	assert_int_equal(files_put(gw.port, s.control, s.id, "/tmp/chunked.bin", 3 << 20, 9, 1,
				   sent),
			 200);
	assert_int_equal(files_get(gw.port, s.control, s.id, "/tmp/chunked.bin", &len, got), 200);
	assert_int_equal(len, 3 << 20);
	assert_string_equal(got, sent);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_over_the_limit),
		cmocka_unit_test(test_big_round_trip),
	};

	return cmocka_run_group_tests_name("large files", tests, setup, teardown);
}
