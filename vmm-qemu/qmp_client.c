/* vmm-qemu/qmp_client.c: see qmp_client.h. The socket work is line_client.c's. */
#include "vmm-qemu/qmp_client.h"

#include "common/fsutil.h"
#include "vmm-qemu/line_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct qmp_client {
	struct line_client line; /* owns the socket */
	struct qmp *qmp; /* owned */
};

static int feed(void *machine, const char *bytes, size_t len, char *err, size_t errlen)
{
	return qmp_feed(machine, bytes, len, err, errlen);
}

static bool next_output(void *machine, const char **data, size_t *len, int *fd)
{
	return qmp_next_output(machine, data, len, fd);
}

static void output_done(void *machine, size_t n)
{
	qmp_output_done(machine, n);
}

static const struct line_client_ops qmp_ops = { feed, next_output, output_done };

int qmp_client_connect(const char *path, int timeout_ms, qmp_event_fn on_event, void *ud,
		       struct qmp_client **out, char *err, size_t errlen)
{
	struct qmp_client *c = calloc(1, sizeof(*c));
	int rc;

	if (!c || !(c->qmp = qmp_create(on_event, ud))) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = line_client_connect(&c->line, path, timeout_ms, &qmp_ops, c->qmp, "QEMU's monitor",
				 err, errlen);
	if (rc < 0) {
		qmp_destroy(c->qmp);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void qmp_client_destroy(struct qmp_client *c)
{
	if (!c)
		return;
	line_client_close(&c->line);
	qmp_destroy(c->qmp);
	free(c);
}

int qmp_client_fd(const struct qmp_client *c)
{
	return c->line.fd;
}

struct qmp *qmp_client_qmp(struct qmp_client *c)
{
	return c->qmp;
}

short qmp_client_poll_events(struct qmp_client *c)
{
	return line_client_poll_events(&c->line);
}

int qmp_client_service(struct qmp_client *c, short revents, char *err, size_t errlen)
{
	return line_client_service(&c->line, revents, err, errlen);
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
	rc = line_client_run_until(&c->line, &st.done, deadline, err, errlen);
	/* The reply may arrive in the same read as the monitor's hang-up; the
	 * hang-up is seen again by the next read. */
	if (st.done)
		rc = 0;
	else if (rc == 0) {
		snprintf(err, errlen, "%s: no reply within %d ms", cmd, timeout_ms);
		rc = -ETIMEDOUT;
	}
	if (rc < 0) {
		/* A late reply must not land in st, which lives on this stack. */
		qmp_forget(c->qmp, (uint64_t)id);
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
