/* tests/unit/test_run_dir.c: the socket names of a run dir
 * (vmm-qemu/run_dir.c): each socket's path, a buffer too small, a path too
 * long for a unix socket address, an unknown socket, QEMU's folder q (and a
 * run dir of before without it), and QEMU's command line naming the same
 * paths. */
#include "vmm-qemu/argv.h"
#include "vmm-qemu/run_dir.h"
#include "vmm-qemu/run_owner.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void test_each_socket(void **state)
{
	char buf[108];

	(void)state;
	assert_int_equal(vmm_run_dir_socket("/run/v/vm-1", VMM_SOCKET_QMP, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/v/vm-1/qmp.sock");
	assert_int_equal(vmm_run_dir_socket("/run/v/vm-1", VMM_SOCKET_VNC, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/v/vm-1/vnc.sock");
	assert_int_equal(vmm_run_dir_socket("/run/v/vm-1", VMM_SOCKET_QGA, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/v/vm-1/qga.sock");
	assert_int_equal(vmm_run_dir_socket("/run/v/vm-1", VMM_SOCKET_AGENT, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/v/vm-1/agent.sock");
	assert_int_equal(vmm_run_dir_socket("/run/v/vm-1", VMM_SOCKET_SHIM, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/v/vm-1/shim.sock");
}

static void test_too_long(void **state)
{
	char small[21], big[4096], dir[200];

	(void)state;
	/* "/run/v/vm-1/qmp.sock" is 20 bytes: it fits 21, not 20. */
	assert_int_equal(vmm_run_dir_socket("/run/v/vm-1", VMM_SOCKET_QMP, small, sizeof(small)),
			 0);
	assert_int_equal(vmm_run_dir_socket("/run/v/vm-1", VMM_SOCKET_QMP, small, 20),
			 -ENAMETOOLONG);
	assert_string_equal(small, "");
	assert_int_equal(vmm_run_dir_socket("/run/v/vm-1", VMM_SOCKET_QMP, NULL, 0), -ENAMETOOLONG);
	/* A big buffer does not help a path a unix socket cannot hold: 107
	 * bytes pass, 108 do not. */
	memset(dir, 'd', sizeof(dir));
	dir[0] = '/';
	dir[107 - strlen("/qmp.sock")] = '\0';
	assert_int_equal(vmm_run_dir_socket(dir, VMM_SOCKET_QMP, big, sizeof(big)), 0);
	assert_int_equal(strlen(big), 107);
	assert_int_equal(vmm_run_dir_socket(dir, VMM_SOCKET_AGENT, big, sizeof(big)),
			 -ENAMETOOLONG);
	assert_string_equal(big, "");
}

/* A run dir with a folder q puts QEMU's sockets there (the shim's stays in
 * the run dir); one without (or with a link named q) is a run dir of before. */
static void test_qemu_folder(void **state)
{
	char dir[64], q[80], buf[108], want[108];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/vitrine-run-dir-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(vmm_run_dir_qemu(dir, buf, sizeof(buf)), 0);
	assert_string_equal(buf, dir);
	snprintf(q, sizeof(q), "%s/q", dir);
	assert_int_equal(symlink("/tmp", q), 0); /* a link is not the folder */
	assert_int_equal(vmm_run_dir_socket(dir, VMM_SOCKET_QMP, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/qmp.sock", dir);
	assert_string_equal(buf, want);
	assert_int_equal(unlink(q), 0);
	assert_int_equal(mkdir(q, 0700), 0);
	assert_int_equal(vmm_run_dir_qemu(dir, buf, sizeof(buf)), 0);
	assert_string_equal(buf, q);
	assert_int_equal(vmm_run_dir_socket(dir, VMM_SOCKET_AGENT, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/q/agent.sock", dir);
	assert_string_equal(buf, want);
	assert_int_equal(vmm_run_dir_socket(dir, VMM_SOCKET_SHIM, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/shim.sock", dir);
	assert_string_equal(buf, want);
	assert_int_equal(vmm_run_dir_qemu(dir, buf, 4), -ENAMETOOLONG);
	assert_int_equal(rmdir(q), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_unknown_socket(void **state)
{
	char buf[108] = "x";

	(void)state;
	assert_int_equal(vmm_run_dir_socket("/run/v/vm-1", (enum vmm_socket)42, buf, sizeof(buf)),
			 -EINVAL);
	assert_string_equal(buf, "");
}

/* QEMU is told the same paths that the clients connect to. */
static void test_argv_uses_them(void **state)
{
	struct vmm_image img = { .name = "t", .kernel = "/k", .initrd = "/i", .append = "" };
	struct vmm_spec spec;
	char buf[108], want[160], dir[120], err[256];
	struct strv v;
	bool seen[4] = { false };

	(void)state;
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.accel = VMM_ACCEL_TCG;
	assert_int_equal(vmm_argv_build(&spec, "qemu", "/r/vm-2", &v, err, sizeof(err)), 0);
	for (int s = VMM_SOCKET_QMP; s <= VMM_SOCKET_AGENT; s++) {
		assert_int_equal(vmm_run_dir_socket("/r/vm-2", (enum vmm_socket)s, buf,
						    sizeof(buf)),
				 0);
		bool unix_opt = s == VMM_SOCKET_QMP || s == VMM_SOCKET_VNC;

		snprintf(want, sizeof(want), "%s%s", unix_opt ? "unix:" : "path=", buf);
		for (size_t i = 0; i < v.len; i++)
			seen[s] |= strstr(v.v[i], want) != NULL;
		assert_true(seen[s]);
	}
	strv_free(&v);
	/* A run dir too long for its socket names is refused. */
	memset(dir, 'd', sizeof(dir));
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	assert_int_equal(vmm_argv_build(&spec, "qemu", dir, &v, err, sizeof(err)), -ENAMETOOLONG);
	assert_non_null(strstr(err, "too long"));
}

/* The owner record's line (run_owner.h): a round trip, and what is not
 * one line of a pid, a start time and a gateway id. */
static void test_owner_record(void **state)
{
	struct vmm_run_owner o = { .pid = 4242, .start_time = 987654321 }, back;
	char line[PATH_MAX + 64];
	int n;

	(void)state;
	snprintf(o.gateway, sizeof(o.gateway), "/var/lib/vitrine/sessions");
	n = vmm_run_owner_format(&o, line, sizeof(line));
	assert_int_equal(n, (int)strlen("4242 987654321 /var/lib/vitrine/sessions\n"));
	assert_int_equal(vmm_run_owner_parse(line, (size_t)n, &back), 0);
	assert_int_equal(back.pid, 4242);
	assert_true(back.start_time == 987654321ull);
	assert_string_equal(back.gateway, "/var/lib/vitrine/sessions");
	/* No gateway; a gateway with a space. */
	assert_int_equal(vmm_run_owner_parse("7 1 \n", 5, &back), 0);
	assert_string_equal(back.gateway, "");
	assert_int_equal(vmm_run_owner_parse("7 1 /a b\n", 9, &back), 0);
	assert_string_equal(back.gateway, "/a b");
	assert_int_equal(vmm_run_owner_format(&o, line, 10), -ENAMETOOLONG);
	/* Refused. */
	const char *bad[] = {
		"",	    "\n",	"7 1 x",     "0 1 x\n",	   "-7 1 x\n",
		"7 x\n",    "7\n",	"x 1 y\n",   "7 1 a\nb\n", "99999999999 1 x\n",
		"7  1 x\n", "07 1 x\n", "7 1 a\tb\n"
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(vmm_run_owner_parse(bad[i], strlen(bad[i]), &back), -EPROTO);
	assert_int_equal(vmm_run_owner_parse("7 1 a\0b\n", 8, &back), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_socket),    cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_unknown_socket), cmocka_unit_test(test_argv_uses_them),
		cmocka_unit_test(test_owner_record),   cmocka_unit_test(test_qemu_folder),
	};

	return cmocka_run_group_tests_name("run dir sockets", tests, NULL, NULL);
}
