/* gateway/e2b/sandbox_metrics.c: a sandbox's metrics samples (e2b_metrics.h)
 * taken on the loop every E2B_METRICS_INTERVAL_MS while its guest runs:
 * QEMU's CPU time from the session's usage (read from /proc by the
 * session's heartbeat), its resident memory from /proc/PID/statm (one
 * small read, no page-table walk), the disk overlay's allocated bytes from
 * the usage, and for diskTotal those plus the free room of the run base's
 * filesystem (what the overlay could still grow to: the guest's own disk
 * size is not read). A paused or starting sandbox gets no samples. */
#include "gateway/e2b/sandbox.h"

#include "common/fsutil.h"
#include "gateway/core/gw.h"
#include "gateway/session/session_usage.h"
#include "vmm-qemu/vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* QEMU's resident bytes (statm's second field), 0 when unknown. */
static uint64_t resident_bytes(pid_t pid)
{
	char path[64], *text = NULL;
	unsigned long long size, resident;
	uint64_t bytes = 0;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	if (pid > 0 && fs_read_file(path, 4096, &text, NULL) == 0 &&
	    sscanf(text, "%llu %llu", &size, &resident) == 2)
		bytes = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
	free(text);
	return bytes;
}

static void sample(struct e2b_sandbox *sb)
{
	struct sess *s = sb->s;
	json_t *usage;
	struct statvfs vfs;
	struct e2b_reading rd = { .unix_ms = fs_unix_ms(), .mono_ms = fs_now_ms() };

	if (sess_state_of(s) != SESS_READY || sess_busy(s))
		return;
	if (!sb->metrics && !(sb->metrics = calloc(1, sizeof(*sb->metrics))))
		return;
	if (!(usage = sess_usage_json(s)))
		return;
	rd.cpu_seconds = json_real_value(json_object_get(usage, "qemu_cpu_seconds"));
	rd.disk_used = (uint64_t)json_integer_value(json_object_get(usage, "disk_bytes"));
	json_decref(usage);
	rd.cpus = sess_vcpus(s);
	rd.mem_total = (uint64_t)sess_memory_mib(s) << 20;
	rd.mem_used = resident_bytes(sess_qemu_pid(s));
	if (rd.mem_used > rd.mem_total)
		rd.mem_used = rd.mem_total; /* QEMU's own memory beside the guest's */
	rd.disk_total = rd.disk_used;
	if (statvfs(vmm_run_base(NULL), &vfs) == 0)
		rd.disk_total += (uint64_t)vfs.f_bavail * vfs.f_frsize;
	e2b_metrics_add(sb->metrics, &rd);
}

static void on_timer(lws_sorted_usec_list_t *sul)
{
	struct e2b_sandbox *sb = lws_container_of(sul, struct e2b_sandbox, metrics_sul);

	sample(sb);
	lws_sul_schedule(sess_gw(sb->s)->ctx, 0, &sb->metrics_sul, on_timer,
			 E2B_METRICS_INTERVAL_MS * LWS_US_PER_MS);
}

void e2b_sandbox_metrics_start(struct e2b_sandbox *sb)
{
	lws_sul_schedule(sess_gw(sb->s)->ctx, 0, &sb->metrics_sul, on_timer,
			 E2B_METRICS_INTERVAL_MS * LWS_US_PER_MS);
}

void e2b_sandbox_metrics_stop(struct e2b_sandbox *sb)
{
	lws_sul_cancel(&sb->metrics_sul);
	free(sb->metrics);
	sb->metrics = NULL;
}

json_t *e2b_sandbox_metrics_json(struct e2b_sandbox *sb, int64_t start_s, int64_t end_s)
{
	static const struct e2b_metrics none;

	if (!sb->metrics ||
	    fs_unix_ms() - e2b_metrics_newest_ms(sb->metrics) >= E2B_METRICS_INTERVAL_MS)
		sample(sb);
	return e2b_metrics_json(sb->metrics ? sb->metrics : &none, start_s, end_s);
}
