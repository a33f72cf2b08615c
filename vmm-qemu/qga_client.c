/* vmm-qemu/qga_client.c: see qga_client.h. The socket work is line_client.c's. */
#include "vmm-qemu/qga_client.h"

#include "common/fsutil.h"
#include "vmm-qemu/line_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* guest-exec-status polling: first after this, growing by half up to the cap. */
#define EXEC_POLL_FIRST_MS 20
#define EXEC_POLL_MAX_MS 100

struct qga_client {
	struct line_client line; /* owns the socket */
	struct qga *qga; /* owned */
};

/* A positive random id, so that a stale sync reply cannot match ours. */
static int64_t random_sync_id(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)ts.tv_sec << 20 ^
		    (uint64_t)getpid();
	}
	v &= (uint64_t)INT64_MAX;
	return v ? (int64_t)v : 1;
}

static int feed(void *machine, const char *bytes, size_t len, char *err, size_t errlen)
{
	return qga_feed(machine, bytes, len, err, errlen);
}

static bool next_output(void *machine, const char **data, size_t *len, int *fd)
{
	*fd = -1;
	return qga_next_output(machine, data, len);
}

static void output_done(void *machine, size_t n)
{
	qga_output_done(machine, n);
}

static const struct line_client_ops qga_ops = { feed, next_output, output_done };

int qga_client_connect(const char *path, int timeout_ms, struct qga_client **out, char *err,
		       size_t errlen)
{
	struct qga_client *c = calloc(1, sizeof(*c));
	int rc;

	if (!c || !(c->qga = qga_create(random_sync_id()))) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = line_client_connect(&c->line, path, timeout_ms, &qga_ops, c->qga,
				 "the guest agent socket", err, errlen);
	if (rc < 0) {
		qga_destroy(c->qga);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void qga_client_destroy(struct qga_client *c)
{
	if (!c)
		return;
	line_client_close(&c->line);
	qga_destroy(c->qga);
	free(c);
}

int qga_client_fd(const struct qga_client *c)
{
	return c->line.fd;
}

struct qga *qga_client_qga(struct qga_client *c)
{
	return c->qga;
}

short qga_client_poll_events(struct qga_client *c)
{
	return line_client_poll_events(&c->line);
}

void qga_client_resync(struct qga_client *c)
{
	qga_resync(c->qga, random_sync_id());
}

int qga_client_service(struct qga_client *c, short revents, char *err, size_t errlen)
{
	return line_client_service(&c->line, revents, err, errlen);
}

struct call_state {
	bool done, failed;
	json_t *ret;
	struct qga_error error;
};

static void call_done(void *ud, const json_t *ret, const struct qga_error *qerr)
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

int qga_client_call(struct qga_client *c, const char *cmd, json_t *args, json_t **ret,
		    int timeout_ms, char *err, size_t errlen)
{
	struct call_state st = { 0 };
	int64_t handle;
	int rc;

	if (qga_broken(c->qga)) {
		json_decref(args);
		snprintf(err, errlen, "%s: %s", cmd, qga_broken(c->qga));
		return -EPROTO;
	}
	handle = qga_command(c->qga, cmd, args, call_done, &st);
	if (handle < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = line_client_run_until(&c->line, &st.done, fs_now_ms() + timeout_ms, err, errlen);
	/* The reply may arrive in the same read as a hang-up; the hang-up is
	 * seen again by the next read. */
	if (st.done)
		rc = 0;
	if (rc < 0 || !st.done) {
		/* A late reply must not land in st, which lives on this stack. */
		qga_forget(c->qga, handle);
		if (rc == 0) {
			snprintf(err, errlen, "%s: no reply from the guest agent within %d ms%s",
				 cmd, timeout_ms, qga_synced(c->qga) ? "" : " (not in sync yet)");
			qga_client_resync(c);
			rc = -ETIMEDOUT;
		}
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

static int left_ms(int64_t deadline)
{
	int64_t left = deadline - fs_now_ms();

	return left > 0 ? (int)left : 0;
}

int qga_client_exec(struct qga_client *c, const char *const *argv, const char *const *env,
		    const void *stdin_data, size_t stdin_len, int timeout_ms,
		    struct qga_exec_result *res, char *err, size_t errlen)
{
	int64_t deadline = fs_now_ms() + timeout_ms;
	int delay = EXEC_POLL_FIRST_MS;
	json_t *args, *ret = NULL;
	bool never = false;
	int rc;

	memset(res, 0, sizeof(*res));
	args = qga_exec_args(argv, env, stdin_data, stdin_len, err, errlen);
	if (!args)
		return -EINVAL;
	rc = qga_client_call(c, "guest-exec", args, &ret, timeout_ms, err, errlen);
	if (rc == 0)
		rc = qga_exec_parse_pid(ret, &res->pid, err, errlen);
	json_decref(ret);
	while (rc == 0) {
		int64_t wake = fs_now_ms() + delay;

		if (wake > deadline)
			wake = deadline;
		/* Sleeps, but notices a hang-up meanwhile. */
		rc = line_client_run_until(&c->line, &never, wake, err, errlen);
		if (rc < 0)
			break;
		if (left_ms(deadline) == 0) {
			snprintf(err, errlen, "%s (guest pid %lld) did not exit within %d ms",
				 argv[0], (long long)res->pid, timeout_ms);
			rc = -ETIMEDOUT;
			break;
		}
		ret = NULL;
		args = json_pack("{s:I}", "pid", (json_int_t)res->pid);
		rc = args ? qga_client_call(c, "guest-exec-status", args, &ret, left_ms(deadline),
					    err, errlen)
			  : -ENOMEM;
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		if (rc == 0)
			rc = qga_exec_parse_status(ret, QGA_EXEC_MAX_OUTPUT, res, err, errlen);
		json_decref(ret);
		if (rc == 0 && res->exited)
			return 0;
		delay = delay * 3 / 2 < EXEC_POLL_MAX_MS ? delay * 3 / 2 : EXEC_POLL_MAX_MS;
	}
	{
		int64_t pid = res->pid;

		qga_exec_result_free(res);
		res->pid = pid;
	}
	return rc;
}
