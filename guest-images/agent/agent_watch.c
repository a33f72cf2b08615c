/* guest-images/agent/agent_watch.c: `vitrine-agent watch [--recursive] DIR`,
 * the guest's side of E2B's filesystem watching (docs/e2b.md). The gateway
 * runs it as an ordinary command over an EXEC channel; it watches DIR with
 * inotify (recursive: every directory below it too, new ones as they come)
 * and prints one line per event until it is killed (the agent kills its
 * process group when the channel closes) or its parent goes.
 *
 * Output on stdout (gateway/e2b/e2b_watch.h reads it):
 *   ready      once the watches are in place
 *   T NAME     an event; T: c create, w write, d remove, r rename, m chmod
 *              (attributes); NAME relative to DIR ("." for DIR itself),
 *              '\' and newline written as "\\" and "\n"
 * The events are fsnotify's, as E2B's envd reports them: a create is
 * IN_CREATE or IN_MOVED_TO, a rename IN_MOVED_FROM. A directory made in a
 * recursive watch is watched at once and what it already holds is
 * reported as created (it may have been filled before the watch was in
 * place: `mkdir -p a/b`); one moved in is watched, its contents not
 * reported.
 *
 * Exit status (WATCH_EXIT_*, with a reason on stderr): 3 DIR does not
 * exist, 4 it is not a directory, 5 events were lost (the kernel's queue
 * overflowed), 2 bad arguments, 1 anything else. */
#define _GNU_SOURCE
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define WATCH_EXIT_FAILED 1
#define WATCH_EXIT_USAGE 2
#define WATCH_EXIT_MISSING 3
#define WATCH_EXIT_NOT_DIR 4
#define WATCH_EXIT_OVERFLOW 5

#define MASK                                                                                       \
	(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_ATTRIB | IN_MODIFY | IN_DELETE |             \
	 IN_DELETE_SELF | IN_MOVE_SELF)

struct watch {
	int wd;
	char *rel; /* owned; "" for DIR */
};

static struct {
	int fd;
	const char *root; /* DIR, without trailing slashes ("/" stays) */
	bool recursive;
	struct watch *w;
	size_t n, cap;
	char out[64 * 1024];
	size_t out_len;
} wt = { .fd = -1 };

static void out_flush(void)
{
	size_t off = 0;

	while (off < wt.out_len) {
		ssize_t n = write(1, wt.out + off, wt.out_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			exit(0); /* nobody reads any more */
		off += (size_t)n;
	}
	wt.out_len = 0;
}

static void out_byte(char c)
{
	if (wt.out_len == sizeof(wt.out))
		out_flush();
	wt.out[wt.out_len++] = c;
}

/* One event line: type, then rel + "/" + name escaped ("." when both are
 * empty). */
static void emit(char type, const char *rel, const char *name)
{
	const char *parts[3] = { rel, *rel && *name ? "/" : "", name };

	out_byte(type);
	out_byte(' ');
	if (!*rel && !*name)
		out_byte('.');
	for (int i = 0; i < 3; i++)
		for (const char *p = parts[i]; *p; p++) {
			if (*p == '\\' || *p == '\n')
				out_byte('\\');
			out_byte(*p == '\n' ? 'n' : *p);
		}
	out_byte('\n');
}

static void fail(int code, const char *what, int err)
{
	out_flush();
	fprintf(stderr, "%s: %s\n", what, strerror(err));
	exit(code);
}

/* rel joined under DIR, malloc'd. */
static char *full_path(const char *rel)
{
	char *p;

	if (asprintf(&p, "%s%s%s", wt.root, strcmp(wt.root, "/") && *rel ? "/" : "", rel) < 0)
		fail(WATCH_EXIT_FAILED, "out of memory", ENOMEM);
	return p;
}

static struct watch *find(int wd)
{
	for (size_t i = 0; i < wt.n; i++)
		if (wt.w[i].wd == wd)
			return &wt.w[i];
	return NULL;
}

static void forget(struct watch *w)
{
	free(w->rel);
	*w = wt.w[--wt.n];
}

/* Watches rel (a directory under DIR, "" for DIR); recursive: everything
 * below it too, each entry reported as created when report. A directory
 * gone or closed to us meanwhile is skipped; running out of watches is
 * fatal (events would be missed). */
static void add_tree(const char *rel, bool report)
{
	char *path = full_path(rel);
	uint32_t extra = *rel ? IN_ONLYDIR | IN_DONT_FOLLOW : IN_ONLYDIR;
	int wd = inotify_add_watch(wt.fd, path, MASK | extra);
	struct watch *w;
	struct dirent *e;
	DIR *d;

	if (wd < 0) {
		if (!*rel || errno == ENOSPC || errno == ENOMEM)
			fail(errno == ENOTDIR  ? WATCH_EXIT_NOT_DIR
			     : errno == ENOENT ? WATCH_EXIT_MISSING
					       : WATCH_EXIT_FAILED,
			     path, errno);
		free(path);
		return;
	}
	if ((w = find(wd))) { /* the same directory by another name */
		free(w->rel);
	} else {
		if (wt.n == wt.cap) {
			size_t cap = wt.cap ? 2 * wt.cap : 64;
			struct watch *nw = realloc(wt.w, cap * sizeof(*nw));

			if (!nw)
				fail(WATCH_EXIT_FAILED, "out of memory", ENOMEM);
			wt.w = nw;
			wt.cap = cap;
		}
		w = &wt.w[wt.n++];
		w->wd = wd;
	}
	if (!(w->rel = strdup(rel)))
		fail(WATCH_EXIT_FAILED, "out of memory", ENOMEM);
	if (!wt.recursive || !(d = opendir(path))) {
		free(path);
		return;
	}
	while ((e = readdir(d))) {
		char *child;
		bool dir = e->d_type == DT_DIR;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&child, "%s%s%s", rel, *rel ? "/" : "", e->d_name) < 0)
			fail(WATCH_EXIT_FAILED, "out of memory", ENOMEM);
		if (report)
			emit('c', child, "");
		if (e->d_type == DT_UNKNOWN) {
			struct stat st;

			dir = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			      S_ISDIR(st.st_mode);
		}
		if (dir)
			add_tree(child, report);
		free(child);
	}
	closedir(d);
	free(path);
}

/* Stops watching rel and everything below it (a directory moved away:
 * its watches would follow it, under names no longer true). */
static void drop_tree(const char *rel)
{
	size_t n = strlen(rel);

	for (size_t i = 0; i < wt.n;) {
		struct watch *w = &wt.w[i];

		if (!strncmp(w->rel, rel, n) && (!w->rel[n] || w->rel[n] == '/')) {
			inotify_rm_watch(wt.fd, w->wd);
			forget(w);
		} else {
			i++;
		}
	}
}

static void on_event(const struct inotify_event *ev)
{
	struct watch *w = find(ev->wd);
	const char *name = ev->len ? ev->name : "";
	bool dir = ev->mask & IN_ISDIR, root;
	char *child;

	if (ev->mask & IN_Q_OVERFLOW) {
		out_flush();
		fprintf(stderr, "the event queue overflowed: events were lost\n");
		exit(WATCH_EXIT_OVERFLOW);
	}
	if (!w)
		return; /* dropped meanwhile */
	if (ev->mask & IN_IGNORED) {
		forget(w);
		return;
	}
	root = !*w->rel;
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		/* A directory below DIR: its parent's watch said it. DIR
		 * itself: said once, and nothing is watched any more. */
		if (root) {
			emit(ev->mask & IN_DELETE_SELF ? 'd' : 'r', "", "");
			drop_tree("");
		}
		return;
	}
	if (ev->mask & (IN_CREATE | IN_MOVED_TO))
		emit('c', w->rel, name);
	if (ev->mask & IN_MOVED_FROM)
		emit('r', w->rel, name);
	if (ev->mask & IN_ATTRIB)
		emit('m', w->rel, name);
	if (ev->mask & IN_MODIFY)
		emit('w', w->rel, name);
	if (ev->mask & IN_DELETE)
		emit('d', w->rel, name);
	if (!wt.recursive || !dir || !*name ||
	    !(ev->mask & (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM)))
		return;
	if (asprintf(&child, "%s%s%s", w->rel, *w->rel ? "/" : "", name) < 0)
		fail(WATCH_EXIT_FAILED, "out of memory", ENOMEM);
	if (ev->mask & IN_MOVED_FROM)
		drop_tree(child);
	else /* w may move: not used after this */
		add_tree(child, ev->mask & IN_CREATE); /* a move in brings no news */
	free(child);
}

int agent_watch_main(int argc, char **argv)
{
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	char root[PATH_MAX];
	const char *dir = NULL;
	bool bad = false;
	struct stat st;
	size_t len = 0;

	for (int i = 1; i < argc && !bad; i++) {
		if (!strcmp(argv[i], "--recursive") && !dir)
			wt.recursive = true;
		else if (!strcmp(argv[i], "--") && !dir && i + 1 < argc)
			dir = argv[++i];
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else
			bad = true;
	}
	if (bad || !dir || !*dir || (len = strlen(dir)) >= sizeof(root)) {
		fprintf(stderr, "usage: vitrine-agent watch [--recursive] [--] DIR\n");
		return WATCH_EXIT_USAGE;
	}
	/* The channel's end kills us; should the agent go first, so do we. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return WATCH_EXIT_FAILED;
	memcpy(root, dir, len + 1);
	while (len > 1 && root[len - 1] == '/')
		root[--len] = '\0';
	wt.root = root;
	if (stat(root, &st) < 0)
		fail(errno == ENOENT || errno == ENOTDIR ? WATCH_EXIT_MISSING : WATCH_EXIT_FAILED,
		     root, errno);
	if (!S_ISDIR(st.st_mode))
		fail(WATCH_EXIT_NOT_DIR, root, ENOTDIR);
	if ((wt.fd = inotify_init1(IN_CLOEXEC)) < 0)
		fail(WATCH_EXIT_FAILED, "inotify", errno);
	add_tree("", false);
	for (const char *p = "ready\n"; *p; p++)
		out_byte(*p);
	out_flush();
	for (;;) {
		ssize_t n = read(wt.fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail(WATCH_EXIT_FAILED, "reading inotify", n < 0 ? errno : EIO);
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			on_event(ev);
			p += sizeof(*ev) + ev->len;
		}
		out_flush();
	}
}
