/* vmm-qemu/priv.c: see priv.h. */
#include "vmm-qemu/priv.h"

#include "common/log.h"
#include "vmm-qemu/privd.h"
#include "vmm-qemu/proc.h"
#include "vmm-qemu/sweep.h"
#include "vmm-qemu/vm_find.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The helper: set once by vmm_priv_start, read by any thread after. */
static int ctl_fd = -1;
static struct vmm_proc helper = { .pidfd = -1 };
static char helper_base[PATH_MAX];

int vmm_priv_start(const char *bin, const char *run_base, const char *gateway, char *err,
		   size_t errlen)
{
	char fd_text[16];
	int sv[2], rc;

	if (ctl_fd >= 0) {
		snprintf(err, errlen, "the root helper runs already");
		return -EALREADY;
	}
	if (strlen(run_base) >= sizeof(helper_base)) {
		snprintf(err, errlen, "run base too long");
		return -ENAMETOOLONG;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -errno;
	}
	snprintf(fd_text, sizeof(fd_text), "%d", sv[1]);
	{
		char *argv[] = { (char *)bin, "privd",	       "--fd",
				 fd_text,     "--run-base",    (char *)run_base,
				 "--gateway", (char *)gateway, NULL };

		rc = vmm_proc_spawn(argv, NULL, &sv[1], 1, NULL, &helper, err, errlen);
	}
	close(sv[1]);
	if (rc < 0) {
		close(sv[0]);
		return rc;
	}
	snprintf(helper_base, sizeof(helper_base), "%s", run_base);
	ctl_fd = sv[0];
	return 0;
}

bool vmm_priv_running(void)
{
	return ctl_fd >= 0;
}

int vmm_priv_pid(void)
{
	return ctl_fd >= 0 ? (int)helper.pid : 0;
}

void vmm_priv_stop(void)
{
	if (ctl_fd < 0)
		return;
	close(ctl_fd);
	ctl_fd = -1;
	if (!vmm_proc_wait(&helper, 5000))
		log_warn("privd", "the root helper outlived its socket by 5 s: killed");
	vmm_proc_release(&helper);
	helper.pidfd = -1;
}

/* Sends the request with the socket its answer is to come on. */
static int send_request(const char *req, size_t n, int reply_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl = { 0 };
	struct iovec iov = { .iov_base = (void *)req, .iov_len = n };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &reply_fd, sizeof(int));
	return sendmsg(ctl_fd, &m, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -errno;
}

int vmm_priv_call(enum priv_op op, const char *const *argv, int argc, char *msg, size_t msglen)
{
	char req[PRIV_REQ_MAX], reply[PRIV_REPLY_MAX];
	struct pollfd p = { .events = POLLIN };
	int sv[2], n, rc, answer;
	ssize_t got;

	if (ctl_fd < 0) {
		snprintf(msg, msglen, "no root helper runs");
		return -ENOTCONN;
	}
	n = priv_req_format(op, argv, argc, req, sizeof(req));
	if (n < 0) {
		snprintf(msg, msglen, "a request the helper would refuse: %s", strerror(-n));
		return n;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(msg, msglen, "socketpair: %s", strerror(errno));
		return -errno;
	}
	rc = send_request(req, (size_t)n, sv[1]);
	close(sv[1]); /* the helper's copy is the only one left: its exit ends the wait */
	if (rc < 0) {
		snprintf(msg, msglen, "ask the root helper: %s", strerror(-rc));
		close(sv[0]);
		return rc;
	}
	p.fd = sv[0];
	do
		rc = poll(&p, 1, PRIV_CALL_TIMEOUT_MS);
	while (rc < 0 && errno == EINTR);
	got = rc > 0 ? recv(sv[0], reply, sizeof(reply), 0) : -1;
	close(sv[0]);
	if (rc == 0) {
		snprintf(msg, msglen, "the root helper did not answer %s within %d s",
			 priv_op_name(op), PRIV_CALL_TIMEOUT_MS / 1000);
		return -ETIMEDOUT;
	}
	if (got <= 0) {
		snprintf(msg, msglen, "the root helper answered nothing to %s", priv_op_name(op));
		return -EPIPE;
	}
	if (priv_reply_parse(reply, (size_t)got, &answer, msg, msglen) < 0) {
		snprintf(msg, msglen, "the root helper's answer to %s is not one",
			 priv_op_name(op));
		return -EPROTO;
	}
	return answer;
}

/* Whether a call failed because the helper is gone (killed, crashed):
 * a gateway that is root itself then does the work in-process, after
 * saying so once. */
static bool helper_lost(int rc)
{
	static int said;

	if ((rc != -EPIPE && rc != -ECONNRESET && rc != -ECONNREFUSED) || geteuid() != 0)
		return false;
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		log_error("privd", "the root helper is gone: its work is done in the gateway");
	return true;
}

/* Whether path is in the helper's run base (and so its to act on). */
static bool helpers(const char *path)
{
	size_t n = strlen(helper_base);

	return ctl_fd >= 0 && !strncmp(path, helper_base, n) && (!path[n] || path[n] == '/');
}

int vmm_priv_run_dir_remove(const char *run_dir)
{
	const char *argv[] = { run_dir };
	char msg[PRIV_MSG_MAX];
	int rc = helpers(run_dir) ? vmm_priv_call(PRIV_RUN_DIR_REMOVE, argv, 1, msg, sizeof(msg))
				  : vmm_privd_remove_run_dir(run_dir, msg, sizeof(msg));

	if (helper_lost(rc))
		rc = vmm_privd_remove_run_dir(run_dir, msg, sizeof(msg));

	if (rc < 0)
		log_warn("vmm", "%s", msg);
	return rc;
}

int vmm_priv_sweep(const char *run_base)
{
	char msg[PRIV_MSG_MAX];
	int rc;

	if (!helpers(run_base) || strcmp(run_base, helper_base))
		return vmm_sweep_stale(run_base);
	rc = vmm_priv_call(PRIV_SWEEP, NULL, 0, msg, sizeof(msg));
	if (helper_lost(rc))
		return vmm_sweep_stale(run_base);
	if (rc < 0) {
		log_warn("vmm", "%s", msg);
		return rc;
	}
	return atoi(msg);
}

int vmm_priv_shim_terminate(const char *run_dir, int ms, char *err, size_t errlen)
{
	char text[16];
	const char *argv[] = { run_dir, text };
	int rc;

	if (!helpers(run_dir))
		return vmm_shim_terminate(run_dir, ms, err, errlen);
	snprintf(text, sizeof(text), "%d", ms);
	rc = vmm_priv_call(PRIV_SHIM_TERMINATE, argv, 2, err, errlen);
	return helper_lost(rc) ? vmm_shim_terminate(run_dir, ms, err, errlen) : rc;
}
