/* gateway/session/usage.h: what a session used, for metering and billing:
 * time in each phase (running, paused in memory, paused on disk), what that
 * cost in vCPU and memory terms, its QEMU's CPU time, egress bytes, and the
 * screenshots, actions and commands it served. A session carries one
 * (sess::usage, kept in its record so a restart does not lose it); once it
 * ends, its last figures go to the usage log (usage_log.h). The arithmetic
 * is pure and unit-tested; docs/api.md states the formulas:
 *   vcpu_seconds       = vcpus x seconds running
 *   memory_gib_seconds = memory GiB x (seconds running + paused in memory)
 * ("running" counts from creation: a booting or restoring guest runs). */
#ifndef VITRINE_GATEWAY_USAGE_H
#define VITRINE_GATEWAY_USAGE_H

#include <jansson.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum usage_phase { USAGE_NONE, USAGE_RUNNING, USAGE_PAUSED_MEMORY, USAGE_PAUSED_DISK };

struct sess_usage {
	enum usage_phase phase;
	int64_t since_ms; /* monotonic: when phase began */
	int64_t running_ms, paused_memory_ms, paused_disk_ms; /* closed intervals */
	uint64_t screenshots, actions, commands;
	uint64_t cpu_ticks_done; /* of QEMUs gone (and of the current one up to its last reading) */
	pid_t cpu_pid; /* the QEMU last read, 0: none */
	uint64_t cpu_ticks_seen; /* its ticks at that reading */
	int64_t cpu_read_ms; /* when */
	int64_t saved_ms; /* when the session's record was last written for these */
};

/* Figures at one moment (the open phase counted up to then). */
struct usage_totals {
	double seconds_running, seconds_paused_memory, seconds_paused_disk;
	double vcpu_seconds, memory_gib_seconds, qemu_cpu_seconds;
	uint64_t screenshots, actions, commands;
	uint64_t egress_bytes_up, egress_bytes_down;
	uint64_t disk_bytes;
};

/* Closes the open phase at now and opens p. */
void usage_enter(struct sess_usage *u, enum usage_phase p, int64_t now_ms);
/* A reading of the session's QEMU (pid 0: none runs): ticks of CPU (utime
 * + stime) it has used. A new pid adds the old one's last reading. */
void usage_cpu_reading(struct sess_usage *u, pid_t pid, uint64_t ticks, int64_t now_ms);
/* The totals at now for a session of vcpus and memory_mib (clock ticks per
 * second: hz). Egress and disk come from elsewhere: the caller fills them. */
void usage_totals(const struct sess_usage *u, int64_t now_ms, int vcpus, int memory_mib, long hz,
		  struct usage_totals *out);
/* {"seconds_running", ..., "disk_bytes"}. NULL when out of memory. */
json_t *usage_totals_json(const struct usage_totals *t);
/* What a record keeps of u (the closed intervals, counts, CPU ticks), and
 * back (0, or -EINVAL: then u is zero). The open phase is the caller's. */
json_t *usage_record_json(const struct sess_usage *u);
int usage_record_parse(const json_t *j, struct sess_usage *u);

#endif
