/* vmm-qemu/cgroup.c: see cgroup.h. Where the hierarchies are comes from
 * /proc/self/mountinfo, where we are in them from /proc/self/cgroup;
 * $VITRINE_CGROUP_V2_ROOT replaces both for v2 (tests/unit/test_cgroup_v2.c
 * lays out a fake hierarchy there: no host here has a v2 one with
 * controllers, so the v2 path has run against that fake only). */
#include "vmm-qemu/cgroup.h"

#include "common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CPU_PERIOD_US 100000
#define V2_LEAF "vitrine-gateway" /* where the gateway moves to in its v2 cgroup */

/* snprintf into err, truncation allowed (paths make long sentences). */
__attribute__((format(printf, 3, 4))) static void errf(char *err, size_t errlen, const char *fmt,
						       ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void vmm_cgroup_limits_for(int memory_mib, int vcpus, int tb_mib, struct vmm_cgroup_limits *out)
{
	unsigned long long mib;

	out->vcpus = vcpus > 0 ? vcpus : 1;
	mib = (unsigned long long)memory_mib + (unsigned long long)tb_mib +
	      VMM_CGROUP_OVERHEAD_MIB +
	      (unsigned long long)out->vcpus * VMM_CGROUP_OVERHEAD_VCPU_MIB;
	out->memory_bytes = mib << 20;
	out->pids = VMM_CGROUP_PIDS;
}

/* Does the comma-separated list opts hold word? */
static bool has_word(const char *opts, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return true;
	return false;
}

/* Our path in the hierarchy whose /proc/self/cgroup controllers field
 * holds ctrl ("" for v2's "0::" line) into out. Returns 0 or -ENOENT. */
static int own_path(const char *ctrl, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 64];
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc < 0 && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		if (*ctrl ? !has_word(c1 + 1, ctrl) : (c1[1] != '\0' || strncmp(line, "0:", 2)))
			continue;
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		snprintf(out, len, "%s", c2 + 1);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* The mount point of the hierarchy (fstype "cgroup2", or "cgroup" with
 * ctrl in its options) and the root it mounts, from mountinfo. */
static int find_mount(const char *ctrl, char *mnt, size_t mlen, char *root, size_t rlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4 * PATH_MAX];
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc < 0 && fgets(line, sizeof(line), f)) {
		char r[PATH_MAX], m[PATH_MAX], type[32], super[512];
		char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
		    sscanf(dash + 3, "%31s %*s %511s", type, super) != 2)
			continue;
		if (*ctrl ? strcmp(type, "cgroup") || !has_word(super, ctrl)
			  : strcmp(type, "cgroup2"))
			continue;
		snprintf(mnt, mlen, "%s", m);
		snprintf(root, rlen, "%s", r);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* The test hook: a folder to take as our own v2 cgroup (v1 is then not
 * looked at), or NULL. */
static const char *v2_override(void)
{
	const char *d = getenv("VITRINE_CGROUP_V2_ROOT");

	return d && *d ? d : NULL;
}

/* Our own cgroup's folder in the hierarchy of ctrl ("" for v2). */
static int own_dir(const char *ctrl, char *out, size_t len)
{
	char mnt[PATH_MAX], root[PATH_MAX], path[PATH_MAX];
	const char *rel;
	size_t rl;
	int rc;

	if (!*ctrl && v2_override())
		return snprintf(out, len, "%s", v2_override()) >= (int)len ? -ENAMETOOLONG : 0;
	if (*ctrl && v2_override())
		return -ENOENT;
	if ((rc = find_mount(ctrl, mnt, sizeof(mnt), root, sizeof(root))) < 0 ||
	    (rc = own_path(ctrl, path, sizeof(path))) < 0)
		return rc;
	/* A hierarchy mounted from below its root (a container) shows only
	 * what is under that root. */
	rl = strcmp(root, "/") ? strlen(root) : 0;
	if (rl && strncmp(path, root, rl))
		return -ENOENT;
	rel = path + rl;
	if (snprintf(out, len, "%s%s", mnt, strcmp(rel, "/") ? rel : "") >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static int write_str(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX + 64];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static bool file_has_word(const char *dir, const char *file, const char *word)
{
	char path[PATH_MAX + 64], *text = NULL, *save = NULL;
	bool yes = false;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (fs_read_file(path, 4096, &text, NULL) == 0) {
		for (char *t = strtok_r(text, " \n", &save); t && !yes;
		     t = strtok_r(NULL, " \n", &save))
			yes = !strcmp(t, word);
	}
	free(text);
	return yes;
}

static int make_dir(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

/* The v2 cgroup the guests' vitrine/ goes in: our own, or, once we moved
 * into our leaf (LEAF, below), its parent. */
static int v2_base(char *out, size_t len)
{
	int rc = own_dir("", out, len);
	char *slash = rc == 0 ? strrchr(out, '/') : NULL;

	if (slash && slash != out && !strcmp(slash + 1, V2_LEAF))
		*slash = '\0';
	return rc;
}

/* cgroup v2 lets no cgroup but the root both hold processes and hand
 * controllers down ("no internal processes"): the gateway, in base, moves
 * itself into base/V2_LEAF (systemd's rule for a Delegate=yes service),
 * so that base can enable them for vitrine/. Only this process moves:
 * anything else in base (a shim a former gateway left) keeps the write
 * refused. Returns 0 or -errno. */
static int v2_leave_base(const char *base)
{
	char leaf[PATH_MAX + 32];

	int rc;

	snprintf(leaf, sizeof(leaf), "%s/" V2_LEAF, base);
	rc = make_dir(leaf);
	return rc < 0 ? rc : write_str(leaf, "cgroup.procs", "0");
}

/* cgroup v2: BASE/vitrine/NAME with the controllers enabled on the way. */
static int create_v2(const char *name, const struct vmm_cgroup_limits *lim, struct vmm_cgroup *out,
		     char *err, size_t errlen)
{
	static const char *const ctrls[] = { "+memory", "+pids", "+cpu" };
	char base[PATH_MAX], parent[PATH_MAX + 16], v[64];
	char *dir = out->dirs[0];
	int rc;

	if (v2_base(base, sizeof(base)) < 0 ||
	    !file_has_word(base, "cgroup.controllers", "memory") ||
	    !file_has_word(base, "cgroup.controllers", "pids"))
		return -ENOTSUP;
	snprintf(parent, sizeof(parent), "%s/vitrine", base);
	if ((rc = make_dir(parent)) < 0) {
		errf(err, errlen, "cgroup v2: mkdir %s: %s", parent, strerror(-rc));
		return -ENOTSUP;
	}
	/* The controllers go down one level at a time; a cgroup with
	 * processes of its own cannot pass them on (except the root). */
	for (int level = 0; level < 2; level++)
		for (size_t i = 0; i < 3; i++) {
			rc = write_str(level ? parent : base, "cgroup.subtree_control", ctrls[i]);
			if (rc == -EBUSY && level == 0 && i == 0 && v2_leave_base(base) == 0)
				rc = write_str(base, "cgroup.subtree_control", ctrls[i]);
			if (rc < 0 && i < 2) {
				errf(err, errlen,
				     "cgroup v2: enable %s in %s/cgroup.subtree_control: %s "
				     "(the gateway needs a delegated subtree to itself)",
				     ctrls[i] + 1, level ? parent : base, strerror(-rc));
				return -ENOTSUP;
			}
		}
	if (snprintf(dir, PATH_MAX, "%s/%s", parent, name) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) < 0) {
		rc = -errno;
		errf(err, errlen, "cgroup v2: mkdir %s: %s", dir, strerror(errno));
		return rc;
	}
	out->v2 = true;
	out->n_dirs = 1;
	snprintf(v, sizeof(v), "%llu", lim->memory_bytes);
	rc = write_str(dir, "memory.max", v);
	if (rc == 0) {
		write_str(dir, "memory.swap.max", "0"); /* absent without swap accounting */
		snprintf(v, sizeof(v), "%d", lim->pids);
		rc = write_str(dir, "pids.max", v);
	}
	if (rc == 0 && file_has_word(dir, "cgroup.controllers", "cpu")) {
		snprintf(v, sizeof(v), "%d %d", lim->vcpus * CPU_PERIOD_US, CPU_PERIOD_US);
		rc = write_str(dir, "cpu.max", v);
		snprintf(v, sizeof(v), "%d", lim->vcpus * 100 > 10000 ? 10000 : lim->vcpus * 100);
		if (rc == 0)
			rc = write_str(dir, "cpu.weight", v);
	}
	if (rc < 0)
		errf(err, errlen, "cgroup v2: limits in %s: %s", dir, strerror(-rc));
	return rc;
}

/* cgroup v1: BASE/vitrine/NAME in each of the memory, pids and cpu
 * hierarchies (cpu may be missing: no CPU bound then). */
static int create_v1(const char *name, const struct vmm_cgroup_limits *lim, struct vmm_cgroup *out,
		     char *err, size_t errlen)
{
	static const char *const ctrls[] = { "memory", "pids", "cpu" };
	char base[PATH_MAX], v[64];

	for (size_t i = 0; i < 3; i++) {
		char *dir = out->dirs[out->n_dirs];
		int rc;

		if (own_dir(ctrls[i], base, sizeof(base)) < 0) {
			if (i == 2)
				break;
			errf(err, errlen, "cgroup v1: no %s hierarchy mounted", ctrls[i]);
			return -ENOTSUP;
		}
		if (snprintf(dir, PATH_MAX, "%s/vitrine", base) >= PATH_MAX - 64)
			return -ENAMETOOLONG;
		if ((rc = make_dir(dir)) < 0) {
			errf(err, errlen, "cgroup v1: mkdir %s: %s", dir, strerror(-rc));
			return i == 0 ? -ENOTSUP : rc;
		}
		strcat(dir, "/");
		strcat(dir, name);
		if (mkdir(dir, 0755) < 0) {
			rc = -errno;
			errf(err, errlen, "cgroup v1: mkdir %s: %s", dir, strerror(errno));
			return rc;
		}
		out->n_dirs++;
		if (i == 0) {
			snprintf(v, sizeof(v), "%llu", lim->memory_bytes);
			rc = write_str(dir, "memory.limit_in_bytes", v);
		} else if (i == 1) {
			snprintf(v, sizeof(v), "%d", lim->pids);
			rc = write_str(dir, "pids.max", v);
		} else {
			snprintf(v, sizeof(v), "%d", CPU_PERIOD_US);
			rc = write_str(dir, "cpu.cfs_period_us", v);
			snprintf(v, sizeof(v), "%d", lim->vcpus * CPU_PERIOD_US);
			if (rc == 0)
				rc = write_str(dir, "cpu.cfs_quota_us", v);
			snprintf(v, sizeof(v), "%d", lim->vcpus * 1024);
			if (rc == 0)
				rc = write_str(dir, "cpu.shares", v);
		}
		if (rc < 0) {
			errf(err, errlen, "cgroup v1: limits in %s: %s", dir, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

void vmm_cgroup_release(struct vmm_cgroup *cg)
{
	const char *dirs[VMM_JAIL_MAX_CGROUPS];

	for (size_t i = 0; i < cg->n_dirs; i++)
		dirs[i] = cg->dirs[i];
	vmm_cgroup_remove(dirs, cg->n_dirs);
	cg->n_dirs = 0;
}

int vmm_cgroup_create(const char *name, const struct vmm_cgroup_limits *lim, struct vmm_cgroup *out,
		      char *err, size_t errlen)
{
	char why2[512] = "";
	int rc;

	memset(out, 0, sizeof(*out));
	rc = create_v2(name, lim, out, why2, sizeof(why2));
	if (rc == -ENOTSUP && v2_override()) {
		vmm_cgroup_release(out);
		errf(err, errlen, "%s", why2[0] ? why2 : "cgroup v2: no memory and pids here");
	} else if (rc == -ENOTSUP) {
		vmm_cgroup_release(out);
		memset(out, 0, sizeof(*out));
		rc = create_v1(name, lim, out, err, errlen);
		if (rc == -ENOTSUP && why2[0])
			snprintf(err + strlen(err), errlen - strlen(err), "; %s", why2);
	} else if (rc < 0) {
		errf(err, errlen, "%s", why2);
	}
	if (rc < 0)
		vmm_cgroup_release(out);
	return rc;
}

/* SIGKILL to every pid listed in dir/cgroup.procs. */
static void kill_procs(const char *dir)
{
	char path[PATH_MAX + 32], *text = NULL, *save = NULL;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (fs_read_file(path, 1 << 20, &text, NULL) < 0)
		return;
	for (char *t = strtok_r(text, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
		long pid = strtol(t, NULL, 10);

		if (pid > 1)
			kill((pid_t)pid, SIGKILL);
	}
	free(text);
}

void vmm_cgroup_remove(const char *const dirs[], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!dirs[i] || !dirs[i][0] || rmdir(dirs[i]) == 0 || errno == ENOENT)
			continue;
		if (write_str(dirs[i], "cgroup.kill", "1") < 0)
			kill_procs(dirs[i]);
		/* The killed leave within milliseconds; a second at most. */
		for (int tries = 0; tries < 100 && rmdir(dirs[i]) < 0 && errno == EBUSY; tries++)
			nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
}

void vmm_cgroup_sweep(const char *name)
{
	static const char *const ctrls[] = { "", "memory", "pids", "cpu" };
	char base[PATH_MAX], dir[PATH_MAX + 80];

	if (!name[0] || strchr(name, '/'))
		return;
	for (size_t i = 0; i < 4; i++)
		if ((i ? own_dir(ctrls[i], base, sizeof(base)) : v2_base(base, sizeof(base))) ==
			    0 &&
		    snprintf(dir, sizeof(dir), "%s/vitrine/%s", base, name) < (int)sizeof(dir))
			rmdir(dir);
}
