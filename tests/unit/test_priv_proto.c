/* tests/unit/test_priv_proto.c: what the gateway asks of its root helper
 * and what the helper answers (vmm-qemu/priv_proto.c): requests round trip
 * and anything but the table's operations with their exact argument counts
 * is refused; replies parse in their one form only; and the helper's
 * policy on run dirs (vmm_privd_run_dir_ok) passes what mkdtemp makes in
 * its run base and nothing else. */
#include "vmm-qemu/priv_proto.h"
#include "vmm-qemu/privd.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void test_request_round_trip(void **state)
{
	const char *argv[] = { "/var/lib/vitrine/run/vm-aB3xYz" };
	char buf[PRIV_REQ_MAX], err[256];
	struct priv_req q;
	int n;

	(void)state;
	n = priv_req_format(PRIV_RUN_DIR_REMOVE, argv, 1, buf, sizeof(buf));
	assert_int_equal(n, (int)(strlen("run-dir-remove") + 1 + strlen(argv[0]) + 1));
	assert_memory_equal(buf, "run-dir-remove\0/var/lib/vitrine/run/vm-aB3xYz\0", (size_t)n);
	assert_int_equal(priv_req_parse(buf, (size_t)n, &q, err, sizeof(err)), 0);
	assert_int_equal(q.op, PRIV_RUN_DIR_REMOVE);
	assert_int_equal(q.argc, 1);
	assert_string_equal(q.argv[0], argv[0]);

	n = priv_req_format(PRIV_SWEEP, NULL, 0, buf, sizeof(buf));
	assert_int_equal(n, 6);
	assert_int_equal(priv_req_parse(buf, (size_t)n, &q, err, sizeof(err)), 0);
	assert_int_equal(q.op, PRIV_SWEEP);
	assert_int_equal(q.argc, 0);
	assert_string_equal(priv_op_name(PRIV_SWEEP), "sweep");

	{
		const char *two[] = { "/r/vm-aB3xYz", "3000" };

		n = priv_req_format(PRIV_SHIM_TERMINATE, two, 2, buf, sizeof(buf));
		assert_int_equal(priv_req_parse(buf, (size_t)n, &q, err, sizeof(err)), 0);
		assert_int_equal(q.op, PRIV_SHIM_TERMINATE);
		assert_string_equal(q.argv[1], "3000");
		assert_int_equal(priv_req_format(PRIV_SHIM_TERMINATE, two, 1, buf, sizeof(buf)),
				 -EINVAL);
	}
	assert_null(priv_op_name(PRIV_OP_COUNT));
}

static void test_request_refusals(void **state)
{
	static const struct {
		const char *data;
		size_t n;
	} bad[] = {
		{ "", 0 }, /* nothing */
		{ "sweep", 5 }, /* not NUL-ended */
		{ "\0", 1 }, /* an empty name */
		{ "rm\0/x\0", 6 }, /* no such operation */
		{ "run-dir-remove\0", 15 }, /* an argument short */
		{ "run-dir-remove\0/a\0/b\0", 21 }, /* one too many */
		{ "sweep\0x\0", 8 }, /* sweep takes none */
		{ "run-dir-remove\0\0", 16 }, /* an empty argument */
		{ "run-dir-remove\0/a\nb\0", 20 }, /* a newline */
		{ "run-dir-remove\0/a\0\0\0\0", 22 }, /* empty fields after */
		{ "sweep\0\0", 7 },
		{ "shim-terminate\0/a\0", 18 }, /* its wait missing */
	};
	const char *nl[] = { "/a\nb" }, *empty[] = { "" }, *none[] = { NULL };
	static char big[PRIV_REQ_MAX + 64];
	char buf[PRIV_REQ_MAX], err[256];
	struct priv_req q;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(buf, bad[i].data, bad[i].n);
		err[0] = '\0';
		if (priv_req_parse(buf, bad[i].n, &q, err, sizeof(err)) != -EINVAL)
			fail_msg("case %zu was accepted", i);
		assert_true(err[0]);
	}
	/* an argument of PATH_MAX bytes, and a datagram past the limit */
	memset(big, 'a', sizeof(big));
	memcpy(big, "run-dir-remove", 15);
	big[15 + PATH_MAX] = '\0';
	assert_int_equal(priv_req_parse(big, 15 + PATH_MAX + 1, &q, err, sizeof(err)), -EINVAL);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(priv_req_parse(big, sizeof(big), &q, err, sizeof(err)), -EINVAL);

	assert_int_equal(priv_req_format(PRIV_RUN_DIR_REMOVE, nl, 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(priv_req_format(PRIV_RUN_DIR_REMOVE, empty, 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(priv_req_format(PRIV_RUN_DIR_REMOVE, none, 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(priv_req_format(PRIV_SWEEP, nl, 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(priv_req_format(PRIV_OP_COUNT, NULL, 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(priv_req_format(PRIV_SWEEP, NULL, 0, buf, 5), -ENAMETOOLONG);
}

static void test_replies(void **state)
{
	char buf[PRIV_REPLY_MAX], msg[PRIV_MSG_MAX], big[2 * PRIV_MSG_MAX];
	int n, rc = 1;

	(void)state;
	n = priv_reply_format(0, "3 removed", buf, sizeof(buf));
	assert_int_equal(n, 12);
	assert_int_equal(priv_reply_parse(buf, (size_t)n, &rc, msg, sizeof(msg)), 0);
	assert_int_equal(rc, 0);
	assert_string_equal(msg, "3 removed");

	n = priv_reply_format(-EPERM, "not\na run dir", buf, sizeof(buf));
	assert_int_equal(priv_reply_parse(buf, (size_t)n, &rc, msg, sizeof(msg)), 0);
	assert_int_equal(rc, -EPERM);
	assert_string_equal(msg, "not a run dir");

	n = priv_reply_format(-ENOENT, NULL, buf, sizeof(buf));
	assert_int_equal(priv_reply_parse(buf, (size_t)n, &rc, msg, sizeof(msg)), 0);
	assert_int_equal(rc, -ENOENT);
	assert_string_equal(msg, "");

	/* a long message is cut to fit, and still parses */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = priv_reply_format(-EIO, big, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(priv_reply_parse(buf, (size_t)n, &rc, msg, sizeof(msg)), 0);
	assert_int_equal(strlen(msg), PRIV_MSG_MAX - 1);
	assert_int_equal(priv_reply_format(0, "x", buf, 3), -ENAMETOOLONG);

	/* one form only */
	static const struct {
		const char *data;
		size_t n;
	} bad[] = {
		{ "0", 1 },	    { "0\0", 2 },	 { "1\0\0", 3 },      { "-0\0\0", 4 },
		{ "00\0\0", 4 },    { "+1\0\0", 4 },	 { " -1\0\0", 5 },    { "-01\0\0", 5 },
		{ "-4096\0\0", 7 }, { "-12345\0\0", 8 }, { "-1\0a\0b\0", 7 }, { "-1\0ab", 5 },
		{ "\0\0", 2 },	    { "-1x\0\0", 5 },	 { "", 0 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (priv_reply_parse(bad[i].data, bad[i].n, &rc, msg, sizeof(msg)) != -EPROTO)
			fail_msg("reply %zu was accepted", i);
	assert_int_equal(priv_reply_parse("-4095\0\0", 7, &rc, msg, sizeof(msg)), 0);
	assert_int_equal(rc, -4095);
}

static void test_run_dir_policy(void **state)
{
	const char *base = "/var/lib/vitrine/run";

	(void)state;
	assert_true(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/vm-aB3xYz"));
	assert_true(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/vm-000000"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/vm-aB3xY"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/vm-aB3xYz0"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/vm-aB3xY/"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/vm-../../"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/vm-a.b-cd"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/ck-aB3xYz"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/run/x/vm-aB3xYz"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/runx/vm-aB3xYz"));
	assert_false(vmm_privd_run_dir_ok(base, "/var/lib/vitrine/vm-aB3xYz"));
	assert_false(vmm_privd_run_dir_ok(base, "/etc"));
	assert_false(vmm_privd_run_dir_ok(base, "/"));
	assert_false(vmm_privd_run_dir_ok(base, ""));
	assert_false(vmm_privd_run_dir_ok("", "/vm-aB3xYz"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_round_trip),
		cmocka_unit_test(test_request_refusals),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_run_dir_policy),
	};

	return cmocka_run_group_tests_name("root helper protocol", tests, NULL, NULL);
}
