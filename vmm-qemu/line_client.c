/* vmm-qemu/line_client.c: see line_client.h. */
#include "vmm-qemu/line_client.h"

#include "common/fsutil.h"
#include "common/unixsock.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int line_client_connect(struct line_client *lc, const char *path, int timeout_ms,
			const struct line_client_ops *ops, void *machine, const char *peer,
			char *err, size_t errlen)
{
	int fd = unixsock_connect(path, timeout_ms, err, errlen);

	*lc = (struct line_client){
		.fd = fd < 0 ? -1 : fd, .ops = ops, .machine = machine, .peer = peer
	};
	return fd < 0 ? fd : 0;
}

void line_client_close(struct line_client *lc)
{
	if (lc->fd >= 0)
		close(lc->fd);
	lc->fd = -1;
}

short line_client_poll_events(const struct line_client *lc)
{
	const char *data;
	size_t len;
	int fd;

	return POLLIN | (lc->ops->next_output(lc->machine, &data, &len, &fd) ? POLLOUT : 0);
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

int line_client_flush(struct line_client *lc, char *err, size_t errlen)
{
	const char *data;
	size_t len;
	int fd;

	while (lc->ops->next_output(lc->machine, &data, &len, &fd)) {
		ssize_t w = send_chunk(lc->fd, data, len, fd);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (w < 0) {
			int e = errno;

			snprintf(err, errlen, "write: %s", strerror(e));
			return e == EPIPE || e == ECONNRESET ? -EPIPE : -e;
		}
		lc->ops->output_done(lc->machine, (size_t)w);
	}
	return 0;
}

int line_client_service(struct line_client *lc, short revents, char *err, size_t errlen)
{
	int rc = 0;

	if (revents & (POLLIN | POLLHUP | POLLERR))
		rc = unixsock_drain(lc->fd, lc->ops->feed, lc->machine, lc->peer, err, errlen);
	return rc < 0 ? rc : line_client_flush(lc, err, errlen);
}

int line_client_run_until(struct line_client *lc, const bool *done, int64_t until_ms, char *err,
			  size_t errlen)
{
	int rc = line_client_flush(lc, err, errlen);

	while (rc == 0 && !*done) {
		struct pollfd p = { .fd = lc->fd, .events = line_client_poll_events(lc) };
		int64_t left = until_ms - fs_now_ms();
		int n;

		if (left <= 0)
			break;
		n = poll(&p, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			break;
		}
		if (n > 0)
			rc = line_client_service(lc, p.revents, err, errlen);
	}
	return rc;
}
