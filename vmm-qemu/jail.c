/* vmm-qemu/jail.c: see jail.h. */
#include "vmm-qemu/jail.h"

#include "common/fsutil.h"
#include "vmm-qemu/image.h"
#include "vmm-qemu/mount_ns.h"
#include "vmm-qemu/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RANGE 65536

static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vmm_jail_config config;
static bool configured;
/* What the jail could not do, for vmm_jail_report (under config_lock). */
static char config_note[160], cgroup_note[320], ns_note[2][200];
/* What the last cgroup made said: 1 made, 0 never asked, or -errno. */
static int cgroup_last;

int vmm_uid_range_parse(const char *s, uid_t *first, uid_t *last)
{
	unsigned long a, b;
	char *end;

	if (!strcmp(s, "none")) {
		*first = *last = 0;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	a = strtoul(s, &end, 10);
	if (errno || *end != '-' || end[1] < '0' || end[1] > '9')
		return -EINVAL;
	b = strtoul(end + 1, &end, 10);
	if (errno || *end || a < 1 || a > b || b >= 1UL << 31 || b - a >= MAX_RANGE)
		return -EINVAL;
	*first = (uid_t)a;
	*last = (uid_t)b;
	return 0;
}

int vmm_subid_overlap(const char *text, uid_t first, uid_t last, char *who, size_t len)
{
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		char buf[256], name[128];
		unsigned long start, count;

		if (n < sizeof(buf)) {
			memcpy(buf, line, n);
			buf[n] = '\0';
			if (sscanf(buf, "%127[^:]:%lu:%lu", name, &start, &count) == 3 && count &&
			    start <= last && start + count - 1 >= first &&
			    strcmp(name, "vitrine-qemu")) {
				snprintf(who, len, "%s", buf);
				return 1;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

int vmm_uid_range_check(uid_t first, uid_t last, char *err, size_t errlen)
{
	static const char *const subid[] = { "/etc/subuid", "/etc/subgid" };
	struct passwd *pw;
	struct group *gr;
	int rc = 0;

	setpwent();
	while (rc == 0 && (pw = getpwent()))
		if (pw->pw_uid >= first && pw->pw_uid <= last) {
			snprintf(err, errlen, "uid %u in the QEMU range %u-%u is user %s",
				 (unsigned)pw->pw_uid, (unsigned)first, (unsigned)last,
				 pw->pw_name);
			rc = -EEXIST;
		}
	endpwent();
	setgrent();
	while (rc == 0 && (gr = getgrent()))
		if (gr->gr_gid >= first && gr->gr_gid <= last) {
			snprintf(err, errlen, "gid %u in the QEMU range %u-%u is group %s",
				 (unsigned)gr->gr_gid, (unsigned)first, (unsigned)last,
				 gr->gr_name);
			rc = -EEXIST;
		}
	endgrent();
	for (size_t i = 0; rc == 0 && i < 2; i++) {
		char *text = NULL, who[256];

		if (fs_read_file(subid[i], 1 << 20, &text, NULL) == 0 &&
		    vmm_subid_overlap(text, first, last, who, sizeof(who))) {
			snprintf(err, errlen, "%s: '%s' overlaps the QEMU range %u-%u", subid[i],
				 who, (unsigned)first, (unsigned)last);
			rc = -EEXIST;
		}
		free(text);
	}
	return rc;
}

static bool env_yes(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "1");
}

void vmm_jail_configure(const struct vmm_jail_config *cfg)
{
	pthread_mutex_lock(&config_lock);
	config = *cfg;
	configured = true;
	pthread_mutex_unlock(&config_lock);
}

void vmm_jail_config_get(struct vmm_jail_config *out)
{
	pthread_mutex_lock(&config_lock);
	if (!configured) {
		const char *r = getenv("VITRINE_QEMU_UIDS"),
			   *root = getenv("VITRINE_ALLOW_ROOT_QEMU");

		memset(&config, 0, sizeof(config));
		if (vmm_uid_range_parse(r && *r ? r : VMM_QEMU_UIDS_DEFAULT, &config.first,
					&config.last) < 0) {
			snprintf(config_note, sizeof(config_note),
				 "VITRINE_QEMU_UIDS='%.64s' is not FIRST-LAST or none: no range",
				 r);
			config.first = config.last = 0;
		}
		config.allow_root = root && !strcmp(root, "1");
		config.allow_no_cgroup = env_yes("VITRINE_ALLOW_NO_CGROUP");
		configured = true;
	}
	*out = config;
	pthread_mutex_unlock(&config_lock);
}

unsigned long long vmm_jail_fsize(unsigned long long rootfs_bytes, int memory_mib)
{
	return rootfs_bytes + ((unsigned long long)memory_mib << 20) + (1ULL << 30);
}

static const char *lock_dir(void)
{
	const char *d = getenv("VITRINE_UID_LOCK_DIR");

	return d && *d ? d : "/run/vitrine/qemu-uids";
}

/* Ends whatever still runs as uid (a former guest's QEMU between its
 * shim's death and its own, or anything it left behind): a child that
 * becomes uid and sends SIGKILL to every process it may signal. */
static void kill_uid(uid_t uid)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (setresgid(uid, uid, uid) == 0 && setresuid(uid, uid, uid) == 0)
			kill(-1, SIGKILL);
		_exit(0);
	}
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
}

/* Leases the first free uid of first..last. Returns the lock's fd (with
 * *uid) or -EAGAIN / -errno with err. */
static int lease_uid(uid_t first, uid_t last, uid_t *uid, char *err, size_t errlen)
{
	const char *dir = lock_dir();
	char path[PATH_MAX];
	int rc = fs_mkdir_p(dir, 0700);

	if (rc < 0) {
		snprintf(err, errlen, "create %s: %s", dir, strerror(-rc));
		return rc;
	}
	for (uid_t u = first; u <= last && u >= first; u++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%u", dir, (unsigned)u);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			rc = -errno;
			snprintf(err, errlen, "open %s: %s", path, strerror(errno));
			return rc;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			kill_uid(u);
			*uid = u;
			return fd;
		}
		close(fd);
	}
	snprintf(err, errlen, "every uid of the QEMU range %u-%u is in use (see --qemu-uids)",
		 (unsigned)first, (unsigned)last);
	return -EAGAIN;
}

/* In a child, the namespace step as proc.c takes it: 0 or an errno. */
static int try_netns(void)
{
	return unshare(CLONE_NEWNET) == 0 ? 0 : errno;
}

/* Kept: /tmp itself, so that the probe clones a tree and moves it back
 * as a guest's run dir there would be. */
static int try_mntns(void)
{
	static const char *const keep[] = { "/tmp" };

	return vmm_mntns_enter(NULL, 0, NULL, 0, keep, 1) == 0 ? 0 : errno;
}

/* Can this process give a child a namespace of this kind? (Not in a
 * container without CAP_SYS_ADMIN, say.) Asked once per kind, in a child;
 * the answer is kept in *known, and a no is said once (what: what guests
 * then share). */
static bool ns_works(int (*try)(void), int *known, const char *kind, const char *what, char *note,
		     size_t note_len)
{
	pid_t pid;
	int st, e = 0;

	pthread_mutex_lock(&config_lock);
	if (*known < 0) {
		pid = fork();
		if (pid == 0)
			_exit(try() & 0xff);
		while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		e = pid < 0 ? errno : WIFEXITED(st) ? WEXITSTATUS(st) : EIO;
		*known = e == 0;
		if (!*known)
			snprintf(note, note_len, "no %s namespace for QEMU (%s): %s", kind,
				 strerror(e), what);
	}
	pthread_mutex_unlock(&config_lock);
	return *known;
}

static bool netns_works(void)
{
	static int known = -1; /* under config_lock */

	return ns_works(try_netns, &known, "network", "guests' QEMUs share the host's network",
			ns_note[0], sizeof(ns_note[0]));
}

static bool mntns_works(void)
{
	static int known = -1; /* under config_lock */

	return ns_works(try_mntns, &known, "mount",
			"the images and templates are held from guests' QEMUs by their modes "
			"alone",
			ns_note[1], sizeof(ns_note[1]));
}

/* Notes what a cgroup made (rc 0) or not (rc, why) means for guests:
 * without cgroups (-ENOTSUP) they run unbounded where allow says so, else
 * they are refused; another error fails every guest's start. */
static void note_cgroup(int rc, const char *why, bool allow)
{
	pthread_mutex_lock(&config_lock);
	cgroup_last = rc == 0 ? 1 : rc;
	if (rc == 0)
		cgroup_note[0] = '\0';
	else if (rc == -ENOTSUP && allow)
		snprintf(cgroup_note, sizeof(cgroup_note),
			 "no cgroup per guest: %.200s; guests' memory, CPU and processes are not "
			 "bounded apart (--allow-no-cgroup)",
			 why);
	else if (rc == -ENOTSUP)
		snprintf(cgroup_note, sizeof(cgroup_note),
			 "no cgroup per guest: %.200s; guests are refused (--allow-no-cgroup runs "
			 "them without)",
			 why);
	else
		snprintf(cgroup_note, sizeof(cgroup_note),
			 "a guest's cgroup cannot be made: %.200s; guests will fail to start", why);
	pthread_mutex_unlock(&config_lock);
}

/* Is path dir itself or below it? */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* Adds the dir of file (or dir itself when file is NULL) to out's kept
 * dirs, by the name QEMU is given (the name is what it opens: a link on
 * the way, as a test's VITRINE_HOME/images may be, must lead there in its
 * namespace too; a relative name is resolved), unless one of the
 * read-only or kept ones holds that name already. */
static void keep_dir(struct vmm_guest_jail *out, const char *dir, const char *file)
{
	char path[PATH_MAX], *slash;
	size_t n;

	if (out->n_keep == VMM_MNTNS_MAX_KEEP ||
	    (size_t)snprintf(path, sizeof(path), "%s", file ? file : dir) >= sizeof(path))
		return;
	if (file) {
		slash = strrchr(path, '/');
		if (!slash)
			snprintf(path, sizeof(path), ".");
		else
			*slash = '\0';
	}
	if (path[0] != '/') {
		char real[PATH_MAX];

		if (!realpath(path[0] ? path : "/", real))
			return;
		snprintf(path, sizeof(path), "%s", real);
	}
	for (n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
		path[n - 1] = '\0';
	if (!path[1])
		return; /* "/": nothing to keep apart */
	for (size_t i = 0; i < out->n_ro; i++)
		if (under(path, out->ro[i]))
			return;
	for (size_t i = 0; i < out->n_keep; i++)
		if (under(path, out->keep[i]))
			return;
	snprintf(out->keep[out->n_keep++], sizeof(out->keep[0]), "%s", path);
}

/* The mount namespace's paths: the images and templates dirs that exist
 * (resolved: a bind mount follows links, the check below must too), a
 * template guest's RAM file when it lies in one of them, and what QEMU
 * opens by name elsewhere, kept where the host's places are hidden: its
 * run dir, and the image, template disk or RAM file of a spec that names
 * them by a path of their own; the images and templates too by the names
 * QEMU gets under them, where those are not their real paths. */
static void mntns_paths(const struct vmm_spec *spec, const char *run_dir,
			struct vmm_guest_jail *out)
{
	const char *dirs[VMM_MNTNS_MAX_RO] = { vmm_images_dir(), vmm_templates_dir() };
	char ram[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < VMM_MNTNS_MAX_RO; i++)
		if (realpath(dirs[i], out->ro[out->n_ro]) && stat(out->ro[out->n_ro], &st) == 0 &&
		    S_ISDIR(st.st_mode))
			out->n_ro++;
	keep_dir(out, run_dir, NULL);
	for (size_t i = 0; i < VMM_MNTNS_MAX_RO; i++)
		keep_dir(out, dirs[i], NULL);
	if (spec->image && spec->image->kernel[0])
		keep_dir(out, NULL, spec->image->kernel);
	if (spec->backing_disk)
		keep_dir(out, NULL, spec->backing_disk);
	/* A clone's RAM is /proc/self/fd/N: a memfd, nowhere to keep. */
	if (spec->ram_path && strncmp(spec->ram_path, "/proc/", 6))
		keep_dir(out, NULL, spec->ram_path);
	if (!spec->ram_path || !spec->ram_share || !realpath(spec->ram_path, ram))
		return;
	for (size_t i = 0; i < out->n_ro; i++)
		if (under(ram, out->ro[i])) {
			snprintf(out->rw[0], sizeof(out->rw[0]), "%s", ram);
			out->n_rw = 1;
			break;
		}
}

static unsigned long long rootfs_size(const struct vmm_spec *spec)
{
	struct stat st;

	if (!spec->image || !spec->image->rootfs[0] || stat(spec->image->rootfs, &st) < 0)
		return 0;
	return (unsigned long long)st.st_size;
}

int vmm_guest_jail_make(const struct vmm_spec *spec, const char *run_dir, gid_t tpl_gid,
			struct vmm_guest_jail *out, char *err, size_t errlen)
{
	const char *name = strrchr(run_dir, '/') ? strrchr(run_dir, '/') + 1 : run_dir;
	struct vmm_jail_config cfg;
	struct vmm_cgroup_limits lim;
	char why[1024] = "";
	int rc;

	memset(out, 0, sizeof(*out));
	out->lease_fd = -1;
	out->fsize = vmm_jail_fsize(rootfs_size(spec), spec->memory_mib);
	out->nofile = VMM_QEMU_NOFILE;
	out->nproc = VMM_QEMU_NPROC;
	if (geteuid() != 0)
		return 0; /* QEMU as the caller: nothing else is ours to change */
	vmm_jail_config_get(&cfg);
	if (cfg.first) {
		/* Job threads start guests at once: the reentrant lookup. */
		struct group grp, *kvm = NULL;
		char grbuf[4096];
		uid_t uid = 0;

		if (getgrnam_r("kvm", &grp, grbuf, sizeof(grbuf), &kvm) != 0)
			kvm = NULL;

		rc = lease_uid(cfg.first, cfg.last, &uid, err, errlen);
		if (rc < 0)
			return rc;
		out->lease_fd = rc;
		out->drop = true;
		out->cred.uid = uid;
		out->cred.gid = (gid_t)uid;
		out->cred.groups[out->cred.n_groups++] = (gid_t)uid;
		if (kvm)
			out->cred.groups[out->cred.n_groups++] = kvm->gr_gid;
		if (tpl_gid != (gid_t)-1)
			out->cred.groups[out->cred.n_groups++] = tpl_gid;
	} else if (!cfg.allow_root) {
		snprintf(err, errlen,
			 "refusing to run QEMU as root: no uid range for guests (give "
			 "--qemu-uids FIRST-LAST, or --allow-root-qemu to run them as root)");
		return -EPERM;
	}
	out->netns = !cfg.no_netns && netns_works();
	out->mntns = !cfg.no_mntns && mntns_works();
	if (out->mntns)
		mntns_paths(spec, run_dir, out);
	if (!cfg.no_cgroup) {
		vmm_cgroup_limits_for(spec->memory_mib, spec->vcpus,
				      spec->accel == VMM_ACCEL_KVM ? 0
				      : spec->tb_size_mib	   ? spec->tb_size_mib
								   : 256,
				      &lim);
		rc = vmm_cgroup_create(name, &lim, &out->cg, why, sizeof(why));
		if (rc == 0 || rc == -ENOTSUP)
			note_cgroup(rc, why, cfg.allow_no_cgroup);
		if (rc == -ENOTSUP && !cfg.allow_no_cgroup) {
			snprintf(err, errlen,
				 "no cgroup for the guest (%.900s): refused, as it would run "
				 "unbounded (--allow-no-cgroup runs guests without one)",
				 why);
			vmm_guest_jail_release(out);
			return rc;
		} else if (rc < 0 && rc != -ENOTSUP) {
			snprintf(err, errlen, "%s", why);
			vmm_guest_jail_release(out);
			return rc;
		}
	}
	return 0;
}

void vmm_guest_jail_view(const struct vmm_guest_jail *j, struct vmm_jail *out)
{
	memset(out, 0, sizeof(*out));
	out->cred = j->drop ? &j->cred : NULL;
	out->netns = j->netns;
	out->mntns = j->mntns;
	for (size_t i = 0; i < j->n_ro; i++)
		out->ro_paths[i] = j->ro[i];
	out->n_ro = j->n_ro;
	for (size_t i = 0; i < j->n_rw; i++)
		out->rw_paths[i] = j->rw[i];
	out->n_rw = j->n_rw;
	for (size_t i = 0; i < j->n_keep; i++)
		out->keep_paths[i] = j->keep[i];
	out->n_keep = j->n_keep;
	out->fsize = j->fsize;
	out->nofile = j->nofile;
	out->nproc = j->nproc;
	for (size_t i = 0; i < j->cg.n_dirs; i++)
		out->cgroups[i] = j->cg.dirs[i];
	out->n_cgroups = j->cg.n_dirs;
}

void vmm_guest_jail_release(struct vmm_guest_jail *j)
{
	vmm_cgroup_release(&j->cg);
	if (j->lease_fd >= 0)
		close(j->lease_fd);
	j->lease_fd = -1;
}

enum vmm_jail_cgroups vmm_jail_cgroups(void)
{
	struct vmm_jail_config cfg;
	int last;

	vmm_jail_config_get(&cfg);
	if (geteuid() != 0 || cfg.no_cgroup)
		return VMM_JAIL_CGROUPS_NONE;
	pthread_mutex_lock(&config_lock);
	last = cgroup_last;
	pthread_mutex_unlock(&config_lock);
	if (last != -ENOTSUP)
		return VMM_JAIL_CGROUPS_YES;
	return cfg.allow_no_cgroup ? VMM_JAIL_CGROUPS_NONE : VMM_JAIL_CGROUPS_REFUSED;
}

int vmm_jail_report(char *out, size_t len)
{
	struct vmm_jail_config cfg;
	struct vmm_cgroup cg;
	struct vmm_cgroup_limits lim;
	char why[256] = "", name[64];
	const char *notes[4];
	size_t used = 0;
	int n = 0;

	vmm_jail_config_get(&cfg);
	if (geteuid() == 0) {
		if (!cfg.no_netns)
			netns_works();
		if (!cfg.no_mntns)
			mntns_works();
		/* A cgroup made and removed now says whether guests will get one. */
		snprintf(name, sizeof(name), "vm-probe-%d", (int)getpid());
		vmm_cgroup_limits_for(64, 1, 0, &lim);
		if (!cfg.no_cgroup) {
			int rc = vmm_cgroup_create(name, &lim, &cg, why, sizeof(why));

			note_cgroup(rc, why, cfg.allow_no_cgroup);
			if (rc == 0)
				vmm_cgroup_release(&cg);
		}
	}
	out[0] = '\0';
	pthread_mutex_lock(&config_lock);
	notes[0] = config_note;
	notes[1] = ns_note[0];
	notes[2] = ns_note[1];
	notes[3] = cgroup_note;
	for (int i = 0; i < 4; i++) {
		if (!notes[i][0])
			continue;
		used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%s",
					 n ? "\n" : "", notes[i]);
		if (used >= len)
			used = len;
		n++;
	}
	pthread_mutex_unlock(&config_lock);
	return n;
}
