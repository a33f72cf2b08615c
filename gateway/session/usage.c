/* gateway/session/usage.c: see usage.h. */
#include "gateway/session/usage.h"

#include <errno.h>
#include <string.h>

void usage_enter(struct sess_usage *u, enum usage_phase p, int64_t now_ms)
{
	int64_t d = u->since_ms && now_ms > u->since_ms ? now_ms - u->since_ms : 0;

	switch (u->phase) {
	case USAGE_RUNNING:
		u->running_ms += d;
		break;
	case USAGE_PAUSED_MEMORY:
		u->paused_memory_ms += d;
		break;
	case USAGE_PAUSED_DISK:
		u->paused_disk_ms += d;
		break;
	case USAGE_NONE:
		break;
	}
	u->phase = p;
	u->since_ms = now_ms;
}

void usage_cpu_reading(struct sess_usage *u, pid_t pid, uint64_t ticks, int64_t now_ms)
{
	if (pid != u->cpu_pid) {
		/* the old QEMU is gone: what it used up to its last reading stays */
		u->cpu_ticks_done += u->cpu_ticks_seen;
		u->cpu_ticks_seen = 0;
		u->cpu_pid = pid;
	}
	if (pid && ticks >= u->cpu_ticks_seen)
		u->cpu_ticks_seen = ticks;
	u->cpu_read_ms = now_ms;
}

void usage_totals(const struct sess_usage *u, int64_t now_ms, int vcpus, int memory_mib, long hz,
		  struct usage_totals *out)
{
	int64_t open = u->since_ms && now_ms > u->since_ms ? now_ms - u->since_ms : 0;
	int64_t run = u->running_ms + (u->phase == USAGE_RUNNING ? open : 0);
	int64_t pm = u->paused_memory_ms + (u->phase == USAGE_PAUSED_MEMORY ? open : 0);
	int64_t pd = u->paused_disk_ms + (u->phase == USAGE_PAUSED_DISK ? open : 0);

	memset(out, 0, sizeof(*out));
	out->seconds_running = run / 1000.0;
	out->seconds_paused_memory = pm / 1000.0;
	out->seconds_paused_disk = pd / 1000.0;
	out->vcpu_seconds = vcpus * out->seconds_running;
	out->memory_gib_seconds = memory_mib / 1024.0 *
				  (out->seconds_running + out->seconds_paused_memory);
	out->qemu_cpu_seconds = (double)(u->cpu_ticks_done + u->cpu_ticks_seen) /
				(double)(hz > 0 ? hz : 100);
	out->screenshots = u->screenshots;
	out->actions = u->actions;
	out->commands = u->commands;
}

json_t *usage_totals_json(const struct usage_totals *t)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "seconds_running", t->seconds_running, "seconds_paused_memory",
			 t->seconds_paused_memory, "seconds_paused_disk", t->seconds_paused_disk,
			 "vcpu_seconds", t->vcpu_seconds, "memory_gib_seconds",
			 t->memory_gib_seconds, "qemu_cpu_seconds", t->qemu_cpu_seconds,
			 "screenshots", (json_int_t)t->screenshots, "actions",
			 (json_int_t)t->actions, "commands", (json_int_t)t->commands,
			 "egress_bytes_up", (json_int_t)t->egress_bytes_up, "egress_bytes_down",
			 (json_int_t)t->egress_bytes_down, "disk_bytes", (json_int_t)t->disk_bytes);
}

json_t *usage_record_json(const struct sess_usage *u)
{
	/* the QEMU last read and its ticks: a gateway that adopts it goes on
	 * from there without counting them twice */
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:I}", "running_ms",
			 (json_int_t)u->running_ms, "paused_memory_ms",
			 (json_int_t)u->paused_memory_ms, "paused_disk_ms",
			 (json_int_t)u->paused_disk_ms, "screenshots", (json_int_t)u->screenshots,
			 "actions", (json_int_t)u->actions, "commands", (json_int_t)u->commands,
			 "cpu_ticks_done", (json_int_t)u->cpu_ticks_done, "cpu_pid",
			 (int)u->cpu_pid, "cpu_ticks_seen", (json_int_t)u->cpu_ticks_seen);
}

int usage_record_parse(const json_t *j, struct sess_usage *u)
{
	json_int_t v[8];
	int pid = 0;

	memset(u, 0, sizeof(*u));
	if (json_unpack((json_t *)j, "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:I}", "running_ms",
			&v[0], "paused_memory_ms", &v[1], "paused_disk_ms", &v[2], "screenshots",
			&v[3], "actions", &v[4], "commands", &v[5], "cpu_ticks_done", &v[6],
			"cpu_pid", &pid, "cpu_ticks_seen", &v[7]) < 0)
		return -EINVAL;
	for (int i = 0; i < 8; i++)
		if (v[i] < 0)
			return -EINVAL;
	if (pid < 0)
		return -EINVAL;
	u->cpu_pid = (pid_t)pid;
	u->cpu_ticks_seen = (uint64_t)v[7];
	u->running_ms = v[0];
	u->paused_memory_ms = v[1];
	u->paused_disk_ms = v[2];
	u->screenshots = (uint64_t)v[3];
	u->actions = (uint64_t)v[4];
	u->commands = (uint64_t)v[5];
	u->cpu_ticks_done = (uint64_t)v[6];
	return 0;
}
