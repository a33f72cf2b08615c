/* vmm-qemu/privd.c: see privd.h. */
#include "vmm-qemu/privd.h"

#include "common/log.h"
#include "vmm-qemu/cgroup.h"
#include "vmm-qemu/priv_proto.h"
#include "vmm-qemu/run_owner.h"
#include "vmm-qemu/sweep.h"
#include "vmm-qemu/vm_find.h"
#include "vmm-qemu/vm_int.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

bool vmm_privd_run_dir_ok(const char *run_base, const char *path)
{
	size_t n = strlen(run_base);
	const char *name;

	if (!n || strncmp(path, run_base, n) || path[n] != '/')
		return false;
	name = path + n + 1;
	if (strncmp(name, "vm-", 3) || strlen(name) != 9)
		return false;
	for (int i = 3; i < 9; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

int vmm_privd_remove_run_dir(const char *run_dir, char *msg, size_t len)
{
	const char *slash = strrchr(run_dir, '/');
	char log[PATH_MAX];
	int rc;

	if (!slash) {
		snprintf(msg, len, "%.200s is not a run dir", run_dir);
		return -EINVAL;
	}
	vmm_cgroup_sweep(slash + 1);
	rc = vmm_run_dir_remove(run_dir);
	if (rc < 0 && rc != -ENOENT) {
		snprintf(msg, len, "remove %.200s: %s", run_dir, strerror(-rc));
		return rc;
	}
	if (vm_shim_log_path(run_dir, log, sizeof(log)) == 0)
		unlink(log);
	return 0;
}

static int run_dir_remove(const char *run_base, const struct priv_req *q, char *msg, size_t len)
{
	if (!vmm_privd_run_dir_ok(run_base, q->argv[0])) {
		snprintf(msg, len, "%.200s is not a run dir of %.200s", q->argv[0], run_base);
		return -EPERM;
	}
	return vmm_privd_remove_run_dir(q->argv[0], msg, len);
}

static int sweep(const char *run_base, const struct priv_req *q, char *msg, size_t len)
{
	(void)q;
	snprintf(msg, len, "%d removed", vmm_sweep_stale(run_base));
	return 0;
}

/* The shim a run dir's record names (and only if it is that run dir's
 * shim, vm_find.h), stopped within MS (0..60000) milliseconds. */
static int shim_terminate(const char *run_base, const struct priv_req *q, char *msg, size_t len)
{
	char *end;
	long ms;

	if (!vmm_privd_run_dir_ok(run_base, q->argv[0])) {
		snprintf(msg, len, "%.200s is not a run dir of %.200s", q->argv[0], run_base);
		return -EPERM;
	}
	errno = 0;
	ms = strtol(q->argv[1], &end, 10);
	if (errno || *end || end == q->argv[1] || ms < 0 || ms > 60000) {
		snprintf(msg, len, "a wait of 0 to 60000 ms, not %.32s", q->argv[1]);
		return -EINVAL;
	}
	return vmm_shim_terminate_owned(q->argv[0], (int)ms, msg, len);
}

/* What the helper does for each operation of priv_proto.h: one row each. */
static int (*const handlers[PRIV_OP_COUNT])(const char *, const struct priv_req *, char *,
					    size_t) = {
	[PRIV_RUN_DIR_REMOVE] = run_dir_remove,
	[PRIV_SWEEP] = sweep,
	[PRIV_SHIM_TERMINATE] = shim_terminate,
};

/* In a child: one request of n bytes, answered on reply_fd. */
static void handle(const char *run_base, char *data, size_t n, bool cut, int reply_fd)
{
	char msg[PRIV_MSG_MAX] = "", out[PRIV_REPLY_MAX];
	struct priv_req q;
	int rc, len;

	if (cut) {
		snprintf(msg, sizeof(msg), "a request is at most %d bytes", PRIV_REQ_MAX);
		rc = -EINVAL;
	} else if ((rc = priv_req_parse(data, n, &q, msg, sizeof(msg))) == 0) {
		rc = handlers[q.op](run_base, &q, msg, sizeof(msg));
	}
	len = priv_reply_format(rc, msg, out, sizeof(out));
	if (len > 0 && send(reply_fd, out, (size_t)len, MSG_NOSIGNAL) < 0)
		log_warn("privd", "answer a request: %s", strerror(errno));
}

/* Receives one datagram and the reply socket that comes with it. Returns
 * the datagram's length (cut set when it was longer than buf), 0 when the
 * peer closed the socket, -errno on failure; *reply_fd is -1 when no
 * descriptor came. */
static ssize_t receive(int fd, char *buf, size_t len, bool *cut, int *reply_fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	ssize_t n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);

	*reply_fd = -1;
	if (n < 0)
		return -errno;
	*cut = m.msg_flags & (MSG_TRUNC | MSG_CTRUNC);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*reply_fd < 0)
				*reply_fd = got;
			else
				close(got); /* one is all a request brings */
		}
	}
	return n;
}

int vmm_privd_serve(int fd, const char *run_base)
{
	static char buf[PRIV_REQ_MAX + 1];
	int running = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int reply_fd, r;
		bool cut = false;
		ssize_t n;
		pid_t pid;

		while (running > 0 && waitpid(-1, NULL, WNOHANG) > 0)
			running--;
		r = poll(&p, 1, running > 0 ? 200 : -1);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		n = receive(fd, buf, sizeof(buf) - 1, &cut, &reply_fd);
		if (n == 0 || (n < 0 && n != -EINTR && n != -EAGAIN))
			break;
		if (n < 0)
			continue;
		if (reply_fd < 0) {
			log_warn("privd", "a request without a socket to answer on: dropped");
			continue;
		}
		for (; running >= PRIVD_CHILDREN_MAX; running--)
			waitpid(-1, NULL, 0);
		pid = fork();
		if (pid == 0) {
			close(fd);
			handle(run_base, buf, (size_t)n, cut, reply_fd);
			_exit(0);
		}
		if (pid < 0) {
			char out[PRIV_REPLY_MAX];
			int len = priv_reply_format(-errno, "the helper cannot fork", out,
						    sizeof(out));

			if (len > 0)
				send(reply_fd, out, (size_t)len, MSG_NOSIGNAL);
		} else {
			running++;
		}
		close(reply_fd);
	}
	while (running-- > 0)
		waitpid(-1, NULL, 0);
	return 0;
}

int vmm_privd_main(int argc, char **argv)
{
	const char *run_base = NULL, *gateway = "";
	int fd = -1;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--fd"))
			fd = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--run-base"))
			run_base = argv[i + 1];
		else if (!strcmp(argv[i], "--gateway"))
			gateway = argv[i + 1];
		else
			break;
	}
	if (fd < 3 || !run_base || !run_base[0] || argc % 2 == 0) {
		fprintf(stderr, "usage: vitrine privd --fd N --run-base DIR [--gateway ID] "
				"(internal: the gateway starts it)\n");
		return 2;
	}
	/* Its starter's death ends it, whatever the socket says. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1;
	signal(SIGINT, SIG_IGN); /* a terminal's ^C is the gateway's to act on */
	signal(SIGTERM, SIG_DFL);
	vmm_run_owner_set_gateway(gateway);
	return vmm_privd_serve(fd, run_base) == 0 ? 0 : 1;
}
