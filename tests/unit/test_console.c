/* tests/unit/test_console.c: the guest's VITRINE console lines
 * (vmm-qemu/console.c) and image.json parsing (vmm-qemu/image.c). */
#include "vmm-qemu/console.h"
#include "vmm-qemu/image.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static int parse(const char *s, struct vmm_marker *m)
{
	return vmm_console_parse_line(s, strlen(s), m);
}

static void test_phase_line(void **state)
{
	struct vmm_marker m;

	(void)state;
	assert_int_equal(parse("VITRINE phase=ready uptime=4.52 width=1280 height=800\r\n", &m), 1);
	assert_int_equal(m.n, 4);
	assert_string_equal(vmm_marker_get(&m, "phase"), "ready");
	assert_string_equal(vmm_marker_get(&m, "uptime"), "4.52");
	assert_string_equal(vmm_marker_get(&m, "height"), "800");
	assert_null(vmm_marker_get(&m, "missing"));
}

static void test_text_runs_to_end_and_prefix_skipped(void **state)
{
	struct vmm_marker m;

	(void)state;
	assert_int_equal(parse("[    3.1] random: crng init done VITRINE text=hello world = x", &m),
			 1);
	assert_string_equal(vmm_marker_get(&m, "text"), "hello world = x");
	assert_int_equal(parse("VITRINE key=1 text=", &m), 1);
	assert_string_equal(vmm_marker_get(&m, "text"), "");
}

static void test_event_word(void **state)
{
	struct vmm_marker m;

	(void)state;
	assert_int_equal(parse("VITRINE click x=0 y=799 button=left", &m), 1);
	assert_string_equal(vmm_marker_get(&m, "event"), "click");
	assert_string_equal(vmm_marker_get(&m, "y"), "799");
	assert_int_equal(parse("VITRINE key", &m), 1);
	assert_string_equal(vmm_marker_get(&m, "event"), "key");
	/* Only the first word may be bare. */
	assert_int_equal(parse("VITRINE input=event2 name=QEMU Virtio", &m), -EINVAL);
}

static void test_not_markers(void **state)
{
	struct vmm_marker m;

	(void)state;
	assert_int_equal(parse("Linux version 6.1.0", &m), 0);
	assert_int_equal(parse("VITRINEphase=x", &m), 0);
	assert_int_equal(parse("", &m), 0);
}

static void test_malformed_markers(void **state)
{
	struct vmm_marker m;
	char many[600] = "VITRINE";

	(void)state;
	assert_int_equal(parse("VITRINE phase x", &m), -EINVAL);
	assert_int_equal(parse("VITRINE =x", &m), -EINVAL);
	assert_int_equal(parse("VITRINE   ", &m), -EINVAL);
	assert_int_equal(parse("VITRINE aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1", &m), -EINVAL);
	for (int i = 0; i < VMM_MARKER_MAX_KV + 1; i++)
		strcat(many, " k=v");
	assert_int_equal(parse(many, &m), -EINVAL);
}

static void test_long_value_truncated(void **state)
{
	struct vmm_marker m;
	char line[1200] = "VITRINE error=";

	(void)state;
	memset(line + strlen(line), 'x', 1000);
	assert_int_equal(parse(line, &m), 1);
	assert_int_equal(strlen(vmm_marker_get(&m, "error")), sizeof(m.kv[0].value) - 1);
}

static void test_image_json(void **state)
{
	struct vmm_image img;
	char err[256];

	(void)state;
	assert_int_equal(
		vmm_image_parse(
			"{\"name\":\"desktop\",\"kernel\":\"vmlinuz\",\"initrd\":\"initrd.img\","
			"\"rootfs\":\"rootfs.img\",\"append\":\"console=ttyS0\"}",
			"/i/desktop", &img, err, sizeof(err)),
		0);
	assert_string_equal(img.name, "desktop");
	assert_string_equal(img.kernel, "/i/desktop/vmlinuz");
	assert_string_equal(img.initrd, "/i/desktop/initrd.img");
	assert_string_equal(img.rootfs, "/i/desktop/rootfs.img");
	assert_string_equal(img.append, "console=ttyS0");
	assert_int_equal(
		vmm_image_parse(
			"{\"name\":\"tiny\",\"kernel\":\"k\",\"initrd\":\"i\",\"rootfs\":null}",
			"/i/tiny", &img, err, sizeof(err)),
		0);
	assert_string_equal(img.rootfs, "");
	assert_string_equal(img.append, "");
	assert_int_equal(
		vmm_image_parse("{\"name\":\"x\",\"kernel\":\"../../etc/passwd\",\"initrd\":\"i\"}",
				"/i/x", &img, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "file names"));
	assert_int_equal(vmm_image_parse("{\"name\":\"x\",\"initrd\":\"i\"}", "/i/x", &img, err,
					 sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "kernel"));
	assert_int_equal(vmm_image_parse("{\"name\":", "/i/x", &img, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phase_line),
		cmocka_unit_test(test_text_runs_to_end_and_prefix_skipped),
		cmocka_unit_test(test_event_word),
		cmocka_unit_test(test_not_markers),
		cmocka_unit_test(test_malformed_markers),
		cmocka_unit_test(test_long_value_truncated),
		cmocka_unit_test(test_image_json),
	};

	return cmocka_run_group_tests_name("console", tests, NULL, NULL);
}
