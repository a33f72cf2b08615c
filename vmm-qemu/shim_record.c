/* vmm-qemu/shim_record.c: see shim_record.h. */
#include "vmm-qemu/shim_record.h"

#include "common/fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool vmm_shim_record_names(const json_t *rec, const char *run_dir)
{
	const json_t *guest = json_object_get(rec, "guest");
	const char *dir = json_string_value(json_object_get(guest, "run_dir"));

	return json_is_object(rec) && dir && !strcmp(dir, run_dir);
}

int vmm_shim_record_abandon(json_t *rec, const struct vmm_shim_abandon *a)
{
	json_t *ab = json_pack("{s:I, s:s, s:i}", "at_unix_ms", (json_int_t)a->at_unix_ms, "action",
			       a->paused ? "pause" : "kill", "grace_s", a->grace_s);
	int rc;

	if (!ab)
		return -ENOMEM;
	if (a->paused)
		rc = json_object_set_new(rec, "state", json_string("paused_disk")) |
		     json_object_set_new(rec, "checkpoint", json_string(a->checkpoint));
	else
		rc = json_object_set_new(rec, "state", json_string("failed")) |
		     json_object_set_new(rec, "error", json_string(a->error));
	json_object_del(rec, "guest");
	rc |= json_object_set_new(rec, "abandoned", ab);
	return rc ? -ENOMEM : 0;
}

int vmm_shim_record_load(const char *path, const char *run_dir, json_t **out, char *err,
			 size_t errlen)
{
	char *text = NULL;
	json_t *rec;
	int rc;

	*out = NULL;
	rc = fs_read_file(path, 16u << 20, &text, NULL);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		snprintf(err, errlen, "read %s: %s", path, strerror(-rc));
		return rc;
	}
	rec = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	free(text);
	if (!vmm_shim_record_names(rec, run_dir)) {
		json_decref(rec);
		return 0;
	}
	*out = rec;
	return 1;
}

int vmm_shim_record_patch(const char *path, const char *run_dir, const struct vmm_shim_abandon *a,
			  char *err, size_t errlen)
{
	struct stat st;
	json_t *rec;
	char *text = NULL;
	int rc = vmm_shim_record_load(path, run_dir, &rec, err, errlen);

	if (rc <= 0)
		return rc;
	rc = vmm_shim_record_abandon(rec, a);
	if (rc == 0 && !(text = json_dumps(rec, JSON_INDENT(2))))
		rc = -ENOMEM;
	json_decref(rec);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	rc = fs_write_file_atomic(path, text, strlen(text),
				  stat(path, &st) == 0 ? st.st_mode & 07777 : 0600);
	free(text);
	if (rc < 0) {
		snprintf(err, errlen, "write %s: %s", path, strerror(-rc));
		return rc;
	}
	return 1;
}
