/* tests/lib/fake_monitor.c: see fake_monitor.h. */
#include "tests/lib/fake_monitor.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SYNC_PREFIX "\xff{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":"

/* Reads one line (one command) a byte at a time, so nothing after it is
 * consumed, taking any SCM_RIGHTS fd that comes with it (*passed, else -1). */
static int read_line(int fd, char *buf, size_t len, int *passed)
{
	size_t used = 0;

	*passed = -1;
	while (used + 1 < len) {
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = { .iov_base = buf + used, .iov_len = 1 };
		struct msghdr msg = { .msg_iov = &iov,
				      .msg_iovlen = 1,
				      .msg_control = ctl.b,
				      .msg_controllen = sizeof(ctl.b) };
		ssize_t r = recvmsg(fd, &msg, 0);
		struct cmsghdr *cm;

		if (r <= 0)
			return -1;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_type != SCM_RIGHTS)
				continue;
			if (*passed >= 0)
				close(*passed);
			memcpy(passed, CMSG_DATA(cm), sizeof(int));
		}
		if (buf[used++] == '\n')
			break;
	}
	buf[used] = '\0';
	return 0;
}

struct ids {
	long id, prev;
	char sync[32];
};

/* text with the @ placeholders replaced, into out; returns its length. */
static size_t expand(const char *text, const struct ids *ids, char *out, size_t outlen)
{
	size_t o = 0;

	for (const char *p = text; *p && o + 40 < outlen; p++) {
		if (!strncmp(p, "@ID", 3)) {
			o += (size_t)snprintf(out + o, outlen - o, "%ld", ids->id);
			p += 2;
		} else if (!strncmp(p, "@PREV", 5)) {
			o += (size_t)snprintf(out + o, outlen - o, "%ld", ids->prev);
			p += 4;
		} else if (!strncmp(p, "@SYNC", 5)) {
			o += (size_t)snprintf(out + o, outlen - o, "%s", ids->sync);
			p += 4;
		} else {
			out[o++] = *p;
		}
	}
	return o;
}

/* Records the first thing that went wrong. */
__attribute__((format(printf, 2, 3))) static void fail(struct fake_monitor *f, const char *fmt, ...)
{
	va_list ap;

	if (f->failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(f->failure, sizeof(f->failure), fmt, ap);
	va_end(ap);
}

/* Checks one expected line, recording a mismatch in f->failure. */
static void expect(struct fake_monitor *f, const struct fake_step *s, const char *line, int passed,
		   struct ids *ids)
{
	const char *p;

	if (s->kind == FAKE_EXPECT_SYNC) {
		if (strncmp(line, SYNC_PREFIX, strlen(SYNC_PREFIX)) != 0) {
			fail(f, "not a sync: %.200s", line);
			return;
		}
		snprintf(ids->sync, sizeof(ids->sync), "%lld",
			 strtoll(line + strlen(SYNC_PREFIX), NULL, 10));
		if (f->n_syncs < 4)
			snprintf(f->sync_ids[f->n_syncs++], sizeof(f->sync_ids[0]), "%s",
				 ids->sync);
		return;
	}
	ids->prev = ids->id;
	if ((p = strstr(line, "\"id\":")))
		ids->id = strtol(p + 5, NULL, 10);
	if (!strstr(line, s->text))
		fail(f, "got %.200s, want %.200s", line, s->text);
	if (s->kind == FAKE_EXPECT_FD) {
		ssize_t n = passed >= 0 ? read(passed, f->fd_content, sizeof(f->fd_content) - 1)
					: -1;

		if (n < 0)
			fail(f, "no fd with %s", s->text);
	}
}

static void *fake_main(void *arg)
{
	struct fake_monitor *f = arg;
	int c = accept(f->listen_fd, NULL, NULL);
	struct ids ids = { 0 };

	if (c < 0)
		fail(f, "accept: %s", strerror(errno));
	for (const struct fake_step *s = f->script; c >= 0 && s->kind != FAKE_HANG_UP; s++) {
		char line[4096], out[4096];
		int passed = -1;
		size_t o;

		switch (s->kind) {
		case FAKE_SEND:
			o = expand(s->text, &ids, out, sizeof(out));
			if (write(c, out, o) != (ssize_t)o)
				fail(f, "write failed");
			break;
		case FAKE_SLEEP_MS:
			usleep((useconds_t)s->ms * 1000);
			break;
		case FAKE_EXPECT:
		case FAKE_EXPECT_FD:
		case FAKE_EXPECT_SYNC:
			if (read_line(c, line, sizeof(line), &passed) < 0) {
				fail(f, "EOF waiting for %s", s->text ? s->text : "the sync");
				goto out;
			}
			/* A mismatch is recorded and the script goes on, so that the
			 * client gets its replies and the test reports this. */
			expect(f, s, line, passed, &ids);
			if (passed >= 0)
				close(passed);
			break;
		case FAKE_ANSWER_ALL:
			while (read_line(c, line, sizeof(line), &passed) == 0) {
				if (passed >= 0)
					close(passed);
				o = expand(s->text, &ids, out, sizeof(out));
				if (write(c, out, o) != (ssize_t)o)
					break;
				f->answered++;
			}
			goto out;
		case FAKE_HANG_UP:
			break;
		}
	}
out:
	if (c >= 0)
		close(c);
	return NULL;
}

int fake_monitor_start(struct fake_monitor *f, const char *name, const struct fake_step *script)
{
	static atomic_int serial;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int rc;

	memset(f, 0, sizeof(*f));
	f->name = name;
	f->script = script;
	snprintf(f->path, sizeof(f->path), "/tmp/vitrine-fake-monitor-%d-%d.sock", (int)getpid(),
		 atomic_fetch_add(&serial, 1));
	unlink(f->path);
	strcpy(sa.sun_path, f->path);
	f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->listen_fd < 0)
		return -errno;
	if (bind(f->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(f->listen_fd, 1) < 0) {
		rc = -errno;
		goto fail;
	}
	rc = -pthread_create(&f->thread, NULL, fake_main, f);
	if (rc == 0)
		return 0;
fail:
	close(f->listen_fd);
	unlink(f->path);
	return rc;
}

const char *fake_monitor_finish(struct fake_monitor *f)
{
	pthread_join(f->thread, NULL);
	close(f->listen_fd);
	unlink(f->path);
	return f->failure[0] ? f->failure : NULL;
}
