/* tests/unit/test_argv.c: session spec -> QEMU command line (vmm-qemu/argv.c,
 * spec.c), URL encoding for the kernel command line, and spec limits. */
#include "vmm-qemu/argv.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static struct vmm_image desktop_image(void)
{
	struct vmm_image img = { .name = "desktop" };

	strcpy(img.kernel, "/img/vmlinuz");
	strcpy(img.initrd, "/img/initrd.img");
	strcpy(img.rootfs, "/img/rootfs.img");
	strcpy(img.append, "console=ttyS0 quiet");
	return img;
}

/* Index of the argument equal to s, or -1. */
static int find_arg(const struct strv *v, const char *s)
{
	for (size_t i = 0; i < v->len; i++)
		if (!strcmp(v->v[i], s))
			return (int)i;
	return -1;
}

/* The value that follows option opt whose value contains needle. */
static const char *opt_with(const struct strv *v, const char *opt, const char *needle)
{
	for (size_t i = 0; i + 1 < v->len; i++)
		if (!strcmp(v->v[i], opt) && strstr(v->v[i + 1], needle))
			return v->v[i + 1];
	return NULL;
}

static void test_tcg_desktop(void **state)
{
	struct vmm_image img = desktop_image();
	struct vmm_spec spec;
	struct strv v;
	char err[256];

	(void)state;
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.accel = VMM_ACCEL_TCG;
	spec.url = "https://example.test/a b?q=\"x\"&y='1'";
	spec.has_page = true;
	assert_int_equal(vmm_argv_build(&spec, "qemu-system-x86_64", "/run/v/vm-1", &v, err,
					sizeof(err)),
			 0);
	assert_string_equal(v.v[0], "qemu-system-x86_64");
	assert_non_null(opt_with(&v, "-accel", "tcg,thread=multi,tb-size=256"));
	assert_non_null(opt_with(&v, "-cpu", "max"));
	assert_true(find_arg(&v, "-nodefaults") > 0);
	assert_true(find_arg(&v, "-no-user-config") > 0);
	assert_non_null(opt_with(&v, "-M", "q35"));
	assert_non_null(opt_with(&v, "-smp", "2"));
	assert_non_null(opt_with(&v, "-m", "2048"));
	assert_non_null(opt_with(&v, "-device", "virtio-gpu-pci,xres=1280,yres=800"));
	assert_non_null(opt_with(&v, "-device", "virtio-tablet-pci"));
	assert_non_null(opt_with(&v, "-device", "virtio-keyboard-pci"));
	assert_non_null(opt_with(&v, "-device", "virtio-blk-pci,drive=disk0"));
	assert_non_null(opt_with(&v, "-drive", "file=/run/v/vm-1/disk.qcow2,"));
	assert_non_null(opt_with(&v, "-qmp", "unix:/run/v/vm-1/qmp.sock,server=on,wait=off"));
	assert_non_null(opt_with(&v, "-vnc", "unix:/run/v/vm-1/vnc.sock"));
	assert_non_null(opt_with(&v, "-chardev", "path=/run/v/vm-1/qga.sock"));
	assert_non_null(
		opt_with(&v, "-chardev", "id=agent0,path=/run/v/vm-1/agent.sock,server=on"));
	assert_non_null(
		opt_with(&v, "-device", "virtserialport,chardev=agent0,name=org.vitrine.agent.0"));
	assert_non_null(
		opt_with(&v, "-chardev", "file,id=serial0,path=/run/v/vm-1/serial.log,append=on"));
	assert_non_null(opt_with(&v, "-serial", "chardev:serial0"));
	assert_non_null(
		opt_with(&v, "-fw_cfg", "name=opt/vitrine/page,file=/run/v/vm-1/page.html"));
	assert_non_null(opt_with(&v, "-sandbox", "spawn=deny"));
	assert_non_null(opt_with(&v, "-sandbox", "elevateprivileges=deny"));
	/* Privileges are dropped before exec, never by QEMU (see proc.h). */
	assert_int_equal(find_arg(&v, "-runas"), -1);
	assert_string_equal(opt_with(&v, "-append", "console"),
			    "console=ttyS0 quiet panic=1 vitrine.width=1280 vitrine.height=800 "
			    "vitrine.url=https://example.test/a%20b?q=%22x%22&y=%271%27");
	/* Nothing may listen on the network. */
	for (size_t i = 0; i < v.len; i++) {
		assert_null(strstr(v.v[i], "tcp:"));
		assert_null(strstr(v.v[i], "host="));
		assert_null(strstr(v.v[i], "-netdev"));
	}
	strv_free(&v);
}

static void test_kvm_tiny_no_disk_no_page(void **state)
{
	struct vmm_image img = desktop_image();
	struct vmm_spec spec;
	struct strv v;
	char err[256];

	(void)state;
	img.rootfs[0] = '\0';
	img.append[0] = '\0';
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.accel = VMM_ACCEL_KVM;
	spec.width = 1024;
	spec.height = 768;
	spec.sandbox = false;
	assert_int_equal(vmm_argv_build(&spec, "qemu", "/r", &v, err, sizeof(err)), 0);
	assert_non_null(opt_with(&v, "-accel", "kvm"));
	assert_non_null(opt_with(&v, "-cpu", "host"));
	assert_int_equal(find_arg(&v, "-drive"), -1);
	assert_int_equal(find_arg(&v, "-fw_cfg"), -1);
	assert_int_equal(find_arg(&v, "-sandbox"), -1);
	assert_string_equal(opt_with(&v, "-append", "panic"),
			    "panic=1 vitrine.width=1024 vitrine.height=768");
	strv_free(&v);
}

static void expect_invalid(struct vmm_spec *spec, const char *needle)
{
	struct strv v;
	char err[256] = "";

	assert_int_equal(vmm_argv_build(spec, "qemu", "/r", &v, err, sizeof(err)), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
	assert_int_equal(v.len, 0);
}

static void test_limits(void **state)
{
	struct vmm_image img = desktop_image();
	struct vmm_spec spec, base;
	char url[2000];

	(void)state;
	vmm_spec_defaults(&base);
	base.image = &img;
	base.accel = VMM_ACCEL_TCG;
	spec = base;
	spec.accel = VMM_ACCEL_AUTO;
	expect_invalid(&spec, "not resolved");
	spec = base;
	spec.vcpus = 0;
	expect_invalid(&spec, "vcpus");
	spec = base;
	spec.memory_mib = 64;
	expect_invalid(&spec, "memory_mib");
	spec = base;
	spec.width = 100;
	expect_invalid(&spec, "screen");
	spec = base;
	spec.height = 5000;
	expect_invalid(&spec, "screen");
	spec = base;
	memset(url, 'a', sizeof(url) - 1);
	url[sizeof(url) - 1] = '\0';
	spec.url = url;
	expect_invalid(&spec, "url");
	spec = base;
	spec.image = NULL;
	expect_invalid(&spec, "image");
}

static void test_run_dir_with_comma_rejected(void **state)
{
	struct vmm_image img = desktop_image();
	struct vmm_spec spec;
	struct strv v;
	char err[256];

	(void)state;
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.accel = VMM_ACCEL_TCG;
	assert_int_equal(vmm_argv_build(&spec, "qemu", "/r,x", &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ","));
}

static void test_template_ram_and_incoming(void **state)
{
	struct vmm_image img = desktop_image();
	struct vmm_spec spec;
	struct strv v;
	char err[256];

	(void)state;
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.accel = VMM_ACCEL_TCG;
	spec.ram_path = "/t/ram";
	spec.incoming = true;
	assert_int_equal(vmm_argv_build(&spec, "qemu", "/r", &v, err, sizeof(err)), 0);
	/* A clone maps the template's RAM privately (copy-on-write). */
	assert_non_null(
		opt_with(&v, "-object",
			 "memory-backend-file,id=pc.ram,size=2048M,mem-path=/t/ram,share=off"));
	assert_non_null(opt_with(&v, "-M", "q35,memory-backend=pc.ram"));
	assert_non_null(opt_with(&v, "-incoming", "defer"));
	strv_free(&v);
	spec.ram_share = true;
	spec.incoming = false;
	assert_int_equal(vmm_argv_build(&spec, "qemu", "/r", &v, err, sizeof(err)), 0);
	assert_non_null(opt_with(&v, "-object", "share=on"));
	assert_int_equal(find_arg(&v, "-incoming"), -1);
	strv_free(&v);
	spec.ram_path = "/t,x/ram";
	assert_int_equal(vmm_argv_build(&spec, "qemu", "/r", &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ram path"));
}

static void test_url_encoding(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(vmm_url_encode_cmdline("file:///run/vitrine/page.html", out, sizeof(out)),
			 0);
	assert_string_equal(out, "file:///run/vitrine/page.html");
	assert_int_equal(vmm_url_encode_cmdline("a b\t\"'\\`<>%41", out, sizeof(out)), 0);
	assert_string_equal(out, "a%20b%09%22%27%5C%60%3C%3E%41");
	assert_int_equal(vmm_url_encode_cmdline("\xc3\xbc\x7f", out, sizeof(out)), 0);
	assert_string_equal(out, "%C3%BC%7F");
	assert_int_equal(vmm_url_encode_cmdline("abc", out, 3), -ENOSPC);
	assert_int_equal(vmm_url_encode_cmdline(" ", out, 3), -ENOSPC);
	assert_int_equal(vmm_url_encode_cmdline(" ", out, 4), 0);
}

static void test_accel_names(void **state)
{
	enum vmm_accel a;

	(void)state;
	assert_int_equal(vmm_accel_parse("kvm", &a), 0);
	assert_int_equal(a, VMM_ACCEL_KVM);
	assert_string_equal(vmm_accel_name(a), "kvm");
	assert_int_equal(vmm_accel_parse("tcg", &a), 0);
	assert_int_equal(vmm_accel_parse("auto", &a), 0);
	assert_int_equal(a, VMM_ACCEL_AUTO);
	assert_int_equal(vmm_accel_parse("hvf", &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcg_desktop),
		cmocka_unit_test(test_kvm_tiny_no_disk_no_page),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_run_dir_with_comma_rejected),
		cmocka_unit_test(test_template_ram_and_incoming),
		cmocka_unit_test(test_url_encoding),
		cmocka_unit_test(test_accel_names),
	};

	return cmocka_run_group_tests_name("argv", tests, NULL, NULL);
}
