/* vmm-qemu/shim_record.h: what an abandoned guest's shim writes into its
 * session's record on disk (the gateway's registry: one JSON object per
 * session, which names the guest's run dir in guest.run_dir). The shim only
 * touches a record that names its own run dir, and rewrites it atomically
 * (common/fsutil.h: fs_write_file_atomic), keeping every field it does not
 * own. */
#ifndef VITRINE_VMM_SHIM_RECORD_H
#define VITRINE_VMM_SHIM_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What became of the guest. */
struct vmm_shim_abandon {
	bool paused; /* else killed */
	const char *checkpoint; /* paused: the held checkpoint's folder */
	const char *error; /* killed: the session's error sentence */
	int64_t at_unix_ms;
	int grace_s;
};

/* Whether rec is a JSON object whose guest.run_dir is run_dir. Pure. */
bool vmm_shim_record_names(const json_t *rec, const char *run_dir);

/* Patches rec (an object) in place: paused: "state": "paused_disk",
 * "checkpoint": dir; killed: "state": "failed", "error": sentence; both:
 * "guest" deleted, "abandoned": {"at_unix_ms", "action": "pause"|"kill",
 * "grace_s"}. Returns 0 or -ENOMEM. Pure. */
int vmm_shim_record_abandon(json_t *rec, const struct vmm_shim_abandon *a);

/* Loads the record at path into *out (a new reference) when it names
 * run_dir. Returns 1 (it does), 0 (missing, not JSON, not an object or
 * another run dir: *out NULL) or -errno for a read error other than a
 * missing file, with err. */
int vmm_shim_record_load(const char *path, const char *run_dir, json_t **out, char *err,
			 size_t errlen);

/* Loads the record at path, and when it still names run_dir patches it
 * (vmm_shim_record_abandon) and writes it back atomically, keeping its
 * mode. Returns 1 (patched), 0 (not ours: untouched) or -errno with err. */
int vmm_shim_record_patch(const char *path, const char *run_dir, const struct vmm_shim_abandon *a,
			  char *err, size_t errlen);

#endif
