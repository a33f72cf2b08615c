/* tests/unit/test_usage.c: metering's arithmetic (phases, the formulas,
 * CPU across QEMUs and adoption), the record round trip, the usage log
 * (retention, selection by time, reading back and compacting), and the
 * CSV of GET /v1/usage. */
#include "gateway/api/api_int.h"
#include "gateway/session/usage.h"
#include "gateway/session/usage_log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <errno.h>
#include <cmocka.h>

static void test_phases_and_formulas(void **state)
{
	struct sess_usage u = { 0 };
	struct usage_totals t;

	(void)state;
	usage_enter(&u, USAGE_RUNNING, 1000);
	usage_enter(&u, USAGE_PAUSED_MEMORY, 11000); /* 10 s running */
	usage_enter(&u, USAGE_RUNNING, 14000); /* 3 s paused in memory */
	usage_enter(&u, USAGE_PAUSED_DISK, 16000); /* 2 s more running */
	u.screenshots = 4;
	usage_totals(&u, 21000, 2, 2048, 100, &t); /* 5 s on disk, still open */
	assert_true(t.seconds_running == 12.0);
	assert_true(t.seconds_paused_memory == 3.0);
	assert_true(t.seconds_paused_disk == 5.0);
	assert_true(t.vcpu_seconds == 24.0); /* 2 vCPUs x 12 s */
	assert_true(t.memory_gib_seconds == 30.0); /* 2 GiB x (12 + 3) s */
	assert_int_equal(t.screenshots, 4);
	usage_enter(&u, USAGE_NONE, 22000);
	usage_totals(&u, 99000, 2, 2048, 100, &t); /* ended: no more accrues */
	assert_true(t.seconds_paused_disk == 6.0);
	assert_true(t.seconds_running == 12.0);
}

static void test_cpu_across_qemus(void **state)
{
	struct sess_usage u = { 0 }, back;
	struct usage_totals t;
	json_t *rec;

	(void)state;
	usage_cpu_reading(&u, 100, 250, 1);
	usage_cpu_reading(&u, 100, 400, 2);
	usage_cpu_reading(&u, 200, 50, 3); /* a new QEMU (resumed from disk) */
	usage_totals(&u, 3, 1, 256, 100, &t);
	assert_true(t.qemu_cpu_seconds == 4.5);
	/* a gateway that adopts QEMU 200 goes on from its last reading */
	rec = usage_record_json(&u);
	assert_int_equal(usage_record_parse(rec, &back), 0);
	json_decref(rec);
	usage_cpu_reading(&back, 200, 80, 4);
	usage_totals(&back, 4, 1, 256, 100, &t);
	assert_true(t.qemu_cpu_seconds == 4.8);
	/* a record that is not one */
	rec = json_pack("{s:i}", "running_ms", -1);
	assert_int_equal(usage_record_parse(rec, &back), -EINVAL);
	json_decref(rec);
}

static json_t *entry(const char *id, long long created, long long ended)
{
	return json_pack("{s:s, s:s, s:i, s:i, s:I, s:I, s:{s:f, s:I}}", "id", id, "image", "tiny",
			 "vcpus", 1, "memory_mib", 256, "created_unix_ms", (json_int_t)created,
			 "ended_unix_ms", (json_int_t)ended, "usage", "vcpu_seconds", 1.5,
			 "screenshots", (json_int_t)3);
}

static void test_log_retention_select_reload(void **state)
{
	char dir[] = "/tmp/test_usage_XXXXXX", err[256], path[64];
	struct usage_log *l;
	json_t *out;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(l = usage_log_open(dir, 3, err, sizeof(err)));
	for (int i = 0; i < 5; i++) {
		char id[8];

		snprintf(id, sizeof(id), "s%d", i);
		usage_log_add(l, entry(id, 1000 * i, 1000 * i + 500));
	}
	out = json_array();
	usage_log_select(l, 0, 0, out);
	assert_int_equal(json_array_size(out), 3); /* the newest 3 */
	assert_string_equal(json_string_value(json_object_get(json_array_get(out, 0), "id")), "s2");
	json_array_clear(out);
	usage_log_select(l, 3, 3, out); /* [3 ms, 3 ms]: only s0 lived then, and it is gone */
	assert_int_equal(json_array_size(out), 0);
	usage_log_select(l, 2600, 3100, out);
	assert_int_equal(json_array_size(out), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(out, 0), "id")), "s3");
	usage_log_close(l);
	/* read back: the file has all 5 lines; retention keeps 3, and with more
	 * than twice that in the file it is compacted */
	snprintf(path, sizeof(path), "%s/usage.jsonl", dir);
	assert_non_null(l = usage_log_open(dir, 2, err, sizeof(err)));
	json_array_clear(out);
	usage_log_select(l, 0, 0, out);
	assert_int_equal(json_array_size(out), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(out, 1), "id")), "s4");
	usage_log_close(l);
	{
		char line[512];
		int lines = 0;

		assert_non_null(f = fopen(path, "r"));
		while (fgets(line, sizeof(line), f))
			lines++;
		fclose(f);
		assert_int_equal(lines, 2); /* 5 > 2 x 2: rewritten */
	}
	json_decref(out);
	unlink(path);
	rmdir(dir);
}

static void test_overlaps(void **state)
{
	(void)state;
	assert_true(usage_overlaps(10, 20, 0, 0));
	assert_true(usage_overlaps(10, 20, 15, 0));
	assert_false(usage_overlaps(10, 20, 21, 0));
	assert_false(usage_overlaps(10, 20, 0, 9));
	assert_true(usage_overlaps(10, 0, 1000, 0)); /* still running */
}

static void test_csv(void **state)
{
	json_t *list = json_array();
	char *csv;

	(void)state;
	json_array_append_new(list, entry("vmabc", 5, 9));
	json_object_set_new(json_array_get(list, 0), "template", json_string("t1"));
	assert_non_null(csv = api_usage_csv(list));
	assert_string_equal(
		csv, "id,image,template,vcpus,memory_mib,created_unix_ms,ended_unix_ms,"
		     "seconds_running,seconds_paused_memory,seconds_paused_disk,vcpu_seconds,"
		     "memory_gib_seconds,qemu_cpu_seconds,screenshots,actions,commands,"
		     "egress_bytes_up,egress_bytes_down,disk_bytes\r\n"
		     "vmabc,tiny,t1,1,256,5,9,,,,1.500,,,3,,,,,\r\n");
	free(csv);
	json_decref(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phases_and_formulas),
		cmocka_unit_test(test_cpu_across_qemus),
		cmocka_unit_test(test_log_retention_select_reload),
		cmocka_unit_test(test_overlaps),
		cmocka_unit_test(test_csv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
