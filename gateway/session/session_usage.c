/* gateway/session/session_usage.c: see session_usage.h. */
#include "gateway/session/session_usage.h"

#include "common/fsutil.h"
#include "gateway/core/metrics_proc.h"
#include "gateway/egress/egress.h"
#include "gateway/session/session_int.h"
#include "gateway/session/usage_log.h"
#include "vmm-qemu/vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static enum usage_phase phase_of(const struct sess *s)
{
	enum usage_phase p = USAGE_NONE;

	switch (s->state) {
	case SESS_STARTING:
	case SESS_READY:
		p = USAGE_RUNNING;
		break;
	case SESS_PAUSED:
		p = s->pause == SESS_PAUSE_DISK ? USAGE_PAUSED_DISK : USAGE_PAUSED_MEMORY;
		break;
	case SESS_FAILED:
		break;
	}
	return p;
}

void sess_usage_state(struct sess *s)
{
	enum usage_phase p = phase_of(s);

	if (p != s->usage.phase)
		usage_enter(&s->usage, p, fs_now_ms());
}

void sess_usage_adopted(struct sess *s)
{
	s->usage.phase = phase_of(s); /* since: as the record said */
}

void sess_usage_tick(struct sess *s)
{
	int64_t now = fs_now_ms();
	char path[64], *text = NULL;
	uint64_t ticks;
	pid_t pid;

	/* Not while a job holds the guest (its QEMU lives on meanwhile) */
	if (!s->vm || s->job || now - s->usage.cpu_read_ms < USAGE_CPU_READ_MS)
		return;
	pid = vmm_vm_qemu_pid(s->vm);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pid > 0 && fs_read_file(path, 4096, &text, NULL) == 0 &&
	    metrics_proc_stat_ticks(text, &ticks) == 0)
		usage_cpu_reading(&s->usage, pid, ticks, now);
	else
		s->usage.cpu_read_ms = now;
	free(text);
	/* Time in each phase survives a crash through the record's phase
	 * start; the counts and CPU time since the record was last written
	 * would not: written now and then, not on every count (it fsyncs). */
	if (now - s->usage.saved_ms >= USAGE_SAVE_MS) {
		s->usage.saved_ms = now;
		sess_save(s);
	}
}

/* Allocated bytes of the guest's disk overlay: in its run dir while it
 * runs, in its checkpoint when paused on disk. */
static unsigned long long disk_bytes(const struct sess *s)
{
	char path[PATH_MAX + 16];
	struct stat st;

	if (s->guest.run_dir[0])
		snprintf(path, sizeof(path), "%s/disk.qcow2", s->guest.run_dir);
	else if (s->ckpt[0])
		snprintf(path, sizeof(path), "%s/disk.qcow2", s->ckpt);
	else
		return 0;
	return stat(path, &st) == 0 ? (unsigned long long)st.st_blocks * 512 : 0;
}

json_t *sess_usage_json(const struct sess *s)
{
	struct usage_totals t;

	usage_totals(&s->usage, fs_now_ms(), s->vcpus, s->memory_mib, sysconf(_SC_CLK_TCK), &t);
	egress_bytes(s->egress, &t.egress_bytes_up, &t.egress_bytes_down);
	t.disk_bytes = disk_bytes(s);
	return usage_totals_json(&t);
}

json_t *sess_usage_entry(const struct sess *s, bool ended)
{
	int64_t now_unix = fs_unix_ms();
	json_t *j = json_pack("{s:s, s:s, s:i, s:i, s:I, s:o, s:o}", "id", s->id, "image",
			      s->req.image, "vcpus", s->vcpus, "memory_mib", s->memory_mib,
			      "created_unix_ms",
			      (json_int_t)(now_unix - (fs_now_ms() - s->created_ms)),
			      "ended_unix_ms", ended ? json_integer(now_unix) : json_null(),
			      "usage", sess_usage_json(s));

	if (j && s->template_name[0])
		json_object_set_new(j, "template", json_string(s->template_name));
	if (j && s->req.project[0])
		json_object_set_new(j, "project", json_string(s->req.project));
	return j;
}

void sess_usage_ended(struct sess *s)
{
	usage_enter(&s->usage, USAGE_NONE, fs_now_ms());
	if (s->gw->usage_log)
		usage_log_add(s->gw->usage_log, sess_usage_entry(s, true));
}

void sess_usage_totals(const struct sess *s, long hz, struct usage_totals *out)
{
	usage_totals(&s->usage, fs_now_ms(), s->vcpus, s->memory_mib, hz, out);
}
