/* vmm-qemu/qmp_client.c: see qmp_client.h. */
#include "vmm-qemu/qmp_client.h"

#include "common/fsutil.h"
#include "common/unixsock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct qmp_client {
	int fd; /* owned */
	struct qmp *qmp; /* owned */
};

int qmp_client_connect(const char *path, int timeout_ms, qmp_event_fn on_event, void *ud,
		       struct qmp_client **out, char *err, size_t errlen)
{
	struct qmp_client *c;
	int fd = unixsock_connect(path, timeout_ms, err, errlen);

	if (fd < 0)
		return fd;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->qmp = qmp_create(on_event, ud))) {
		free(c);
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->fd = fd;
	*out = c;
	return 0;
}

void qmp_client_destroy(struct qmp_client *c)
{
	if (!c)
		return;
	close(c->fd);
	qmp_destroy(c->qmp);
	free(c);
}

int qmp_client_fd(const struct qmp_client *c)
{
	return c->fd;
}

struct qmp *qmp_client_qmp(struct qmp_client *c)
{
	return c->qmp;
}

short qmp_client_poll_events(struct qmp_client *c)
{
	const char *data;
	size_t len;
	int fd;

	return POLLIN | (qmp_next_output(c->qmp, &data, &len, &fd) ? POLLOUT : 0);
}

/* Sends one chunk, with its fd as SCM_RIGHTS when it has one. */
static ssize_t send_chunk(int sock, const char *data, size_t len, int fd)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL);
}

static int flush_output(struct qmp_client *c, char *err, size_t errlen)
{
	const char *data;
	size_t len;
	int fd;

	while (qmp_next_output(c->qmp, &data, &len, &fd)) {
		ssize_t w = send_chunk(c->fd, data, len, fd);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (w < 0) {
			int e = errno;

			snprintf(err, errlen, "write: %s", strerror(e));
			return e == EPIPE || e == ECONNRESET ? -EPIPE : -e;
		}
		qmp_output_done(c->qmp, (size_t)w);
	}
	return 0;
}

static int feed(void *ud, const char *bytes, size_t len, char *err, size_t errlen)
{
	return qmp_feed(ud, bytes, len, err, errlen);
}

int qmp_client_service(struct qmp_client *c, short revents, char *err, size_t errlen)
{
	int rc = 0;

	if (revents & (POLLIN | POLLHUP | POLLERR))
		rc = unixsock_drain(c->fd, feed, c->qmp, "QEMU's monitor", err, errlen);
	/* Replies may have queued commands: try to write even without POLLOUT. */
	return rc < 0 ? rc : flush_output(c, err, errlen);
}

struct call_state {
	bool done;
	json_t *ret;
	struct qmp_error error;
	bool failed;
};

static void call_done(void *ud, const json_t *ret, const struct qmp_error *qerr)
{
	struct call_state *st = ud;

	st->done = true;
	if (qerr) {
		st->failed = true;
		st->error = *qerr;
	} else {
		st->ret = json_incref((json_t *)ret);
	}
}

int qmp_client_call(struct qmp_client *c, const char *cmd, json_t *args, int fd, json_t **ret,
		    int timeout_ms, char *err, size_t errlen)
{
	struct call_state st = { 0 };
	int64_t deadline = fs_now_ms() + timeout_ms;
	int64_t id;
	int rc;

	id = qmp_command(c->qmp, cmd, args, fd, call_done, &st);
	if (id < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = flush_output(c, err, errlen);
	while (rc == 0 && !st.done) {
		struct pollfd p = { .fd = c->fd, .events = qmp_client_poll_events(c) };
		int64_t left = deadline - fs_now_ms();
		int n;

		if (left <= 0) {
			snprintf(err, errlen, "%s: no reply within %d ms", cmd, timeout_ms);
			rc = -ETIMEDOUT;
			break;
		}
		n = poll(&p, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			break;
		}
		if (n > 0)
			rc = qmp_client_service(c, p.revents, err, errlen);
	}
	/* The reply may arrive in the same read as the monitor's hang-up; the
	 * hang-up is seen again by the next read. */
	if (st.done)
		rc = 0;
	if (rc < 0) {
		/* A late reply must not land in st, which lives on this stack. */
		if (!st.done)
			qmp_forget(c->qmp, (uint64_t)id);
		json_decref(st.ret);
		return rc;
	}
	if (st.failed) {
		snprintf(err, errlen, "%s: %s: %s", cmd, st.error.cls, st.error.desc);
		return -EREMOTEIO;
	}
	if (ret)
		*ret = st.ret;
	else
		json_decref(st.ret);
	return 0;
}
