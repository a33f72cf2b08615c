/* gateway/session/session_quota.c: see session_quota.h. */
#include "gateway/session/session_quota.h"

#include "gateway/session/session_int.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void sess_note_recording_bytes(struct sess *s, int64_t bytes)
{
	s->recording_bytes = bytes;
}

/* Allocated bytes of a file, or of the regular files right in a folder. */
static uint64_t allocated(const char *path, bool folder)
{
	struct stat st;
	uint64_t sum = 0;
	struct dirent *e;
	DIR *d;

	if (!folder)
		return stat(path, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d)))
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_blocks * 512;
	closedir(d);
	return sum;
}

/* s's disk: its overlay while a guest runs, its checkpoint (memory, state
 * and disk) while paused on disk, and its recording. */
static uint64_t sess_disk(const struct sess *s)
{
	char path[PATH_MAX + 16];
	uint64_t sum = s->recording_bytes > 0 ? (uint64_t)s->recording_bytes : 0;

	if (s->guest.run_dir[0]) {
		snprintf(path, sizeof(path), "%s/disk.qcow2", s->guest.run_dir);
		sum += allocated(path, false);
	} else if (s->ckpt[0])
		sum += allocated(s->ckpt, true);
	return sum;
}

/* The templates of project: those named "PROJECT_...". */
static uint64_t templates_disk(const char *project)
{
	size_t n = strlen(project);
	uint64_t sum = 0;
	struct dirent *e;
	DIR *d = opendir(vmm_templates_dir());

	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, project, n) && e->d_name[n] == '_') {
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%s/%s", vmm_templates_dir(), e->d_name);
			sum += (uint64_t)vmm_template_bytes(dir);
		}
	if (d)
		closedir(d);
	return sum;
}

/* Whether s's guest holds the host's CPUs and memory. */
static bool holds_host(const struct sess *s)
{
	return s->state == SESS_STARTING || s->state == SESS_READY ||
	       (s->state == SESS_PAUSED && s->pause == SESS_PAUSE_MEMORY) || s->job;
}

void sess_project_tally(struct gw *gw, const char *project, bool with_disk,
			struct project_tally *out)
{
	memset(out, 0, sizeof(*out));
	for (struct sess *s = gw->sessions; s; s = s->next) {
		if (strcmp(s->req.project, project))
			continue;
		out->sessions++;
		if (holds_host(s)) {
			out->vcpus += s->vcpus;
			out->memory_mib += s->memory_mib;
		}
		if (with_disk)
			out->disk_bytes += sess_disk(s);
	}
	if (with_disk)
		out->disk_bytes += templates_disk(project);
}

json_t *project_tally_json(const struct project_tally *t)
{
	return json_pack("{s:I, s:I, s:I, s:I}", "sessions", (json_int_t)t->sessions, "vcpus",
			 (json_int_t)t->vcpus, "memory_mib", (json_int_t)t->memory_mib,
			 "disk_bytes", (json_int_t)t->disk_bytes);
}

/* 429 "quota": p's quota k is limit; held says what it holds. */
static int refuse(struct api_error *e, const struct project *p, enum project_quota_kind k,
		  const char *held)
{
	char msg[320];

	snprintf(msg, sizeof(msg), "project %s's quota \"%s\" is %lld: %s", p->name,
		 project_quota_names[k], (long long)project_quota_get(&p->quota, k), held);
	api_error_set(e, 429, "quota", msg);
	return -EDQUOT;
}

/* refuse() for a count: what p holds and what the operation asks more. */
static int refuse_count(struct api_error *e, const struct project *p, enum project_quota_kind k,
			int64_t held, int asked)
{
	char why[128];

	snprintf(why, sizeof(why), "it holds %lld, and this asks %d more", (long long)held, asked);
	return refuse(e, p, k, why);
}

int sess_check_quota(struct gw *gw, const char *project, const struct quota_ask *ask,
		     struct api_error *e)
{
	const struct project *p;
	struct project_tally t;
	int64_t limit;

	if (!project || !*project)
		return 0;
	if (!(p = projects_find_const(&gw->projects, project)))
		return api_error_set(e, 404, "unknown_project", "the project is gone");
	limit = p->quota.disk_gib;
	sess_project_tally(gw, project, ask->disk && limit != PROJECT_NO_LIMIT, &t);
	if (ask->sessions && p->quota.sessions != PROJECT_NO_LIMIT &&
	    t.sessions + ask->sessions > p->quota.sessions)
		return refuse_count(e, p, QUOTA_SESSIONS, t.sessions, ask->sessions);
	if (ask->vcpus && p->quota.vcpus != PROJECT_NO_LIMIT &&
	    t.vcpus + ask->vcpus > p->quota.vcpus)
		return refuse_count(e, p, QUOTA_VCPUS, t.vcpus, ask->vcpus);
	if (ask->memory_mib && p->quota.memory_mib != PROJECT_NO_LIMIT &&
	    t.memory_mib + ask->memory_mib > p->quota.memory_mib)
		return refuse_count(e, p, QUOTA_MEMORY_MIB, t.memory_mib, ask->memory_mib);
	/* What a disk write will take is known once it is made: refused when
	 * the project is at its quota already. */
	if (ask->disk && limit != PROJECT_NO_LIMIT && t.disk_bytes >= (uint64_t)limit << 30) {
		char why[128];

		snprintf(why, sizeof(why),
			 "its sessions, recordings and templates take %.2f GiB already: delete "
			 "some first",
			 (double)t.disk_bytes / (1 << 30));
		return refuse(e, p, QUOTA_DISK_GIB, why);
	}
	return 0;
}
