/* gateway/session/session_quota.h: what a project holds on this gateway
 * and its quotas (core/project_table.h) held before anything is made: a
 * create, fork, resume or template save past one is refused with 429
 * "quota" naming it. Loop thread; a handful of stat calls a session, and a
 * look at the templates' folder only when a disk quota is set. */
#ifndef VITRINE_GATEWAY_SESSION_QUOTA_H
#define VITRINE_GATEWAY_SESSION_QUOTA_H

#include "gateway/core/api_error.h"
#include "gateway/core/gw.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* What a project holds: its sessions (every state), the vCPUs and memory
 * of those whose guest holds the host (starting, running, paused in
 * memory), and the disk its sessions' overlays, checkpoints and recordings
 * and its templates take (with_disk only; else 0). */
struct project_tally {
	int64_t sessions, vcpus, memory_mib;
	uint64_t disk_bytes;
};
void sess_project_tally(struct gw *gw, const char *project, bool with_disk,
			struct project_tally *out);
/* {"sessions", "vcpus", "memory_mib", "disk_bytes"}. */
json_t *project_tally_json(const struct project_tally *t);

/* What an operation would add: sessions (a create or fork: 1), vcpus and
 * memory_mib (of a guest it starts), disk (it writes to disk: every one
 * but a resume from memory). */
struct quota_ask {
	int sessions, vcpus, memory_mib;
	bool disk;
};
/* 0 when project (NULL or "": the operator's, no quota) may do ask, else
 * -EDQUOT with *e: 429 "quota", the message naming the quota, its limit
 * and what the project holds. A project that is gone holds nothing: 404. */
int sess_check_quota(struct gw *gw, const char *project, const struct quota_ask *ask,
		     struct api_error *e);

/* The recorder says how many bytes s's recording takes on disk now. */
void sess_note_recording_bytes(struct sess *s, int64_t bytes);

#endif
