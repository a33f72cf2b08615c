/* tests/unit/test_shim_proto.c: the shim's pure parts: its command line
 * built by the gateway's side and parsed by the shim (round trip, bad
 * values, a missing "--"), the hello line (exact form only), and the
 * record patch of an abandoned guest (vmm-qemu/shim_proto.c,
 * shim_record.c). */
#include "vmm-qemu/shim_proto.h"
#include "vmm-qemu/shim_record.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void test_args_round_trip(void **state)
{
	char *qemu[] = { "qemu-system-x86_64", "-incoming", "defer", "-S", NULL };
	struct vmm_shim_args
		a = { .run_dir = "/run/v/vm-abc",
		      .grace_s = 120,
		      .abandon_pause = true,
		      .record = "/var/lib/vitrine/sessions/s1.json",
		      .drop_privileges = true,
		      .cred = { .uid = 999, .gid = 995, .groups = { 995, 108 }, .n_groups = 2 },
		      .keep_fds = { 7, 12 },
		      .n_keep_fds = 2,
		      .lease_fd = 9,
		      .netns = true,
		      .mntns = true,
		      .ro = { "/var/lib/vitrine/images", "/var/lib/vitrine/templates" },
		      .n_ro = 2,
		      .rw = { "/var/lib/vitrine/templates/t/ram" },
		      .n_rw = 1,
		      .keep = { "/run/v/vm-abc", "/tmp/t" },
		      .n_keep = 2,
		      .fsize = 5ULL << 30,
		      .nofile = 1024,
		      .nproc = 256,
		      .cgroups = { "/sys/fs/cgroup/memory/vitrine/vm-abc",
				   "/sys/fs/cgroup/pids/vitrine/vm-abc" },
		      .n_cgroups = 2,
		      .log_cap = 1 << 20,
		      .qemu_argv = qemu },
		b;
	struct strv v = { 0 };
	char err[512];

	(void)state;
	assert_int_equal(vmm_shim_args_build("/usr/bin/vitrine", &a, &v, err, sizeof(err)), 0);
	assert_string_equal(v.v[0], "/usr/bin/vitrine");
	assert_string_equal(v.v[1], "shim");
	assert_int_equal(vmm_shim_args_parse((int)v.len - 1, v.v + 1, &b, err, sizeof(err)), 0);
	assert_string_equal(b.run_dir, a.run_dir);
	assert_int_equal(b.grace_s, 120);
	assert_true(b.abandon_pause);
	assert_string_equal(b.record, a.record);
	assert_true(b.drop_privileges);
	assert_int_equal(b.cred.uid, 999);
	assert_int_equal(b.cred.gid, 995);
	assert_int_equal(b.cred.n_groups, 2);
	assert_int_equal(b.cred.groups[1], 108);
	assert_int_equal(b.n_keep_fds, 2);
	assert_int_equal(b.keep_fds[1], 12);
	assert_int_equal(b.lease_fd, 9);
	assert_true(b.netns);
	assert_true(b.mntns);
	assert_int_equal(b.n_ro, 2);
	assert_string_equal(b.ro[1], "/var/lib/vitrine/templates");
	assert_int_equal(b.n_rw, 1);
	assert_string_equal(b.rw[0], "/var/lib/vitrine/templates/t/ram");
	assert_int_equal(b.n_keep, 2);
	assert_string_equal(b.keep[1], "/tmp/t");
	assert_true(b.fsize == 5ULL << 30);
	assert_int_equal(b.nofile, 1024);
	assert_int_equal(b.nproc, 256);
	assert_int_equal(b.n_cgroups, 2);
	assert_string_equal(b.cgroups[1], "/sys/fs/cgroup/pids/vitrine/vm-abc");
	assert_true(b.log_cap == 1 << 20);
	for (int i = 0; qemu[i]; i++)
		assert_string_equal(b.qemu_argv[i], qemu[i]);
	assert_null(b.qemu_argv[4]);
	strv_free(&v);

	/* The least: no record, no credentials, kill. */
	a.record = NULL;
	a.drop_privileges = false;
	a.abandon_pause = false;
	a.n_keep_fds = 0;
	a.lease_fd = -1;
	a.netns = false;
	a.mntns = false;
	a.fsize = 0;
	a.nofile = a.nproc = 0;
	a.n_cgroups = 0;
	a.log_cap = 0;
	assert_int_equal(vmm_shim_args_build("/v", &a, &v, err, sizeof(err)), 0);
	assert_int_equal(vmm_shim_args_parse((int)v.len - 1, v.v + 1, &b, err, sizeof(err)), 0);
	assert_null(b.record);
	assert_false(b.drop_privileges);
	assert_false(b.abandon_pause);
	assert_int_equal(b.n_keep_fds, 0);
	assert_int_equal(b.lease_fd, -1);
	assert_false(b.netns);
	assert_false(b.mntns);
	assert_int_equal(b.n_ro, 0);
	assert_int_equal(b.n_rw, 0);
	assert_int_equal(b.n_keep, 0);
	assert_true(b.fsize == 0);
	assert_int_equal(b.nofile, 0);
	assert_int_equal(b.n_cgroups, 0);
	assert_true(b.log_cap == 0);
	strv_free(&v);
}

static int parse(char **argv, char *err, size_t errlen)
{
	struct vmm_shim_args a;
	int argc = 0;

	while (argv[argc])
		argc++;
	return vmm_shim_args_parse(argc, argv, &a, err, errlen);
}

static void test_bad_args(void **state)
{
	char err[512];
	char *no_dash[] = { "shim", "--run-dir", "/r/vm-1", "--grace-s", "3", "qemu", NULL };
	char *no_qemu[] = { "shim", "--run-dir", "/r/vm-1", "--grace-s", "3", "--", NULL };
	char *no_grace[] = { "shim", "--run-dir", "/r/vm-1", "--", "qemu", NULL };
	char *bad_grace[] = { "shim", "--run-dir", "/r", "--grace-s", "3x", "--", "q", NULL };
	char *bad_mode[] = { "shim",	     "--run-dir", "/r", "--grace-s", "3",
			     "--on-abandon", "keep",	  "--", "q",	     NULL };
	char *low_fd[] = { "shim",	"--run-dir", "/r", "--grace-s", "3",
			   "--keep-fd", "2",	     "--", "q",		NULL };
	char *uid_only[] = { "shim",  "--run-dir", "/r", "--grace-s", "3",
			     "--uid", "5",	   "--", "q",	      NULL };
	char *unknown[] = { "shim", "--frobnicate", "--run-dir", "/r", "--", "q", NULL };
	char *zero_fsize[] = { "shim",	  "--run-dir", "/r", "--grace-s", "3",
			       "--fsize", "0",	       "--", "q",	  NULL };
	char *neg_fsize[] = { "shim",	 "--run-dir", "/r", "--grace-s", "3",
			      "--fsize", "-5",	      "--", "q",	 NULL };
	char *rel_cgroup[] = { "shim",	   "--run-dir", "/r", "--grace-s", "3",
			       "--cgroup", "vm-1",	"--", "q",	   NULL };
	char *low_lease[] = { "shim",	    "--run-dir", "/r", "--grace-s", "3",
			      "--lease-fd", "1",	 "--", "q",	    NULL };
	char *tiny_cap[] = { "shim",	  "--run-dir", "/r", "--grace-s", "3",
			     "--log-cap", "100",       "--", "q",	  NULL };
	char *ro_alone[] = { "shim", "--run-dir", "/r", "--grace-s", "3",
			     "--ro", "/images",	  "--", "q",	     NULL };
	char *rel_ro[] = { "shim", "--run-dir", "/r", "--grace-s", "3", "--mntns",
			   "--ro", "images",	"--", "q",	   NULL };
	char *keep_alone[] = { "shim",	     "--run-dir", "/r", "--grace-s", "3",
			       "--keep-dir", "/tmp/r",	  "--", "q",	     NULL };
	char *rel_keep[] = { "shim",	   "--run-dir", "/r", "--grace-s", "3", "--mntns",
			     "--keep-dir", "r",		"--", "q",	   NULL };
	char *three_ro[] = { "shim",	"--run-dir", "/r", "--grace-s", "3",
			     "--mntns", "--ro",	     "/a", "--ro",	"/b",
			     "--ro",	"/c",	     "--", "q",		NULL };
	char *four_cgroups[] = { "shim", "--run-dir", "/r", "--grace-s", "3",  "--cgroup",
				 "/a",	 "--cgroup",  "/b", "--cgroup",	 "/c", "--cgroup",
				 "/d",	 "--",	      "q",  NULL };

	(void)state;
	assert_int_equal(parse(no_dash, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "usage"));
	assert_int_equal(parse(no_qemu, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(no_grace, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(bad_grace, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "3x"));
	assert_int_equal(parse(bad_mode, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "keep"));
	assert_int_equal(parse(low_fd, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(uid_only, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(unknown, err, sizeof(err)), -EINVAL);
	/* Paths for a mount namespace only with one, absolute, as many as fit. */
	assert_int_equal(parse(ro_alone, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(rel_ro, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(keep_alone, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(rel_keep, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(three_ro, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(zero_fsize, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(neg_fsize, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(rel_cgroup, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(low_lease, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(four_cgroups, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse(tiny_cap, err, sizeof(err)), -EINVAL);
}

static void test_hello(void **state)
{
	char buf[VMM_SHIM_HELLO_MAX];
	size_t n = vmm_shim_hello_format(buf, sizeof(buf), 4242, 4243);
	pid_t s = 0, q = 0;

	(void)state;
	assert_string_equal(buf, "vitrine-shim 1 pid=4242 qemu=4243\n");
	assert_int_equal(vmm_shim_hello_parse(buf, n, &s, &q), 0);
	assert_int_equal(s, 4242);
	assert_int_equal(q, 4243);
	/* Exactly that form: no other version, spacing, sign or missing newline. */
	assert_int_equal(vmm_shim_hello_parse("vitrine-shim 2 pid=1 qemu=2\n", 28, &s, &q),
			 -EPROTO);
	assert_int_equal(vmm_shim_hello_parse("vitrine-shim 1  pid=1 qemu=2\n", 29, &s, &q),
			 -EPROTO);
	assert_int_equal(vmm_shim_hello_parse("vitrine-shim 1 pid=+1 qemu=2\n", 29, &s, &q),
			 -EPROTO);
	assert_int_equal(vmm_shim_hello_parse("vitrine-shim 1 pid=1 qemu=2", 27, &s, &q), -EPROTO);
	assert_int_equal(vmm_shim_hello_parse("vitrine-shim 1 pid=0 qemu=2\n", 28, &s, &q),
			 -EPROTO);
	assert_int_equal(vmm_shim_hello_parse("", 0, &s, &q), -EPROTO);
}

static void test_record_patch(void **state)
{
	json_t *rec = json_pack("{s:s, s:s, s:{s:s}, s:i}", "id", "s1", "state", "running", "guest",
				"run_dir", "/r/vm-1", "other", 7);
	struct vmm_shim_abandon paused = { .paused = true,
					   .checkpoint = "/r/vm-ckpt-2",
					   .at_unix_ms = 1700000000123,
					   .grace_s = 180 };
	struct vmm_shim_abandon killed = { .error = "abandoned: gone",
					   .at_unix_ms = 5,
					   .grace_s = 1 };
	json_t *ab;

	(void)state;
	assert_true(vmm_shim_record_names(rec, "/r/vm-1"));
	assert_false(vmm_shim_record_names(rec, "/r/vm-2"));
	assert_false(vmm_shim_record_names(json_object_get(rec, "id"), "/r/vm-1"));
	assert_false(vmm_shim_record_names(NULL, "/r/vm-1"));
	assert_int_equal(vmm_shim_record_abandon(rec, &paused), 0);
	assert_string_equal(json_string_value(json_object_get(rec, "state")), "paused_disk");
	assert_string_equal(json_string_value(json_object_get(rec, "checkpoint")), "/r/vm-ckpt-2");
	assert_null(json_object_get(rec, "guest"));
	assert_int_equal(json_integer_value(json_object_get(rec, "other")), 7);
	ab = json_object_get(rec, "abandoned");
	assert_int_equal(json_integer_value(json_object_get(ab, "at_unix_ms")), 1700000000123);
	assert_string_equal(json_string_value(json_object_get(ab, "action")), "pause");
	assert_int_equal(json_integer_value(json_object_get(ab, "grace_s")), 180);
	assert_false(vmm_shim_record_names(rec, "/r/vm-1")); /* no guest any more */
	assert_int_equal(vmm_shim_record_abandon(rec, &killed), 0);
	assert_string_equal(json_string_value(json_object_get(rec, "state")), "failed");
	assert_string_equal(json_string_value(json_object_get(rec, "error")), "abandoned: gone");
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(rec, "abandoned"), "action")),
			    "kill");
	json_decref(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args_round_trip),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_record_patch),
	};

	return cmocka_run_group_tests_name("shim protocol", tests, NULL, NULL);
}
