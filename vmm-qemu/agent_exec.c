/* vmm-qemu/agent_exec.c: see agent_exec.h. A command is a channel whose
 * callbacks (the link's thread) collect its output into a handle, under the
 * handle's lock; the channel's close says it ended. agent_exec_run waits on
 * a condition that end signals. */
#include "vmm-qemu/agent_exec.h"

#include "common/timedwait.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A command's handle: the owner's reference and the channel's (until
 * closed ran), freed when both are gone. */
struct agent_exec {
	atomic_int refs;
	struct agent_link *l; /* held */
	uint32_t chan;
	pthread_mutex_t mu; /* the rest; done runs under it */
	agent_exec_done_fn done; /* NULL once the owner closed the handle */
	void *ud;
	void (*on_output)(void *ud, uint8_t stream, const void *data, size_t len);
	void *on_output_ud;
	size_t max;
	struct agent_exec_result r;
	bool ended, exited, bad_exit, timed_out;
	char reason[256];
};

static int put(char **buf, size_t *len, size_t *cap, const char *k, const char *v)
{
	size_t n = strlen(k) + strlen(v) + 1;

	if (*len + n > AGENT_MAX_PAYLOAD)
		return -E2BIG;
	if (*len + n > *cap) {
		size_t c = *cap ? *cap * 2 : 1024;
		char *p;

		while (c < *len + n)
			c *= 2;
		if (!(p = realloc(*buf, c)))
			return -ENOMEM;
		*buf = p;
		*cap = c;
	}
	memcpy(*buf + *len, k, strlen(k));
	memcpy(*buf + *len + strlen(k), v, strlen(v) + 1);
	*len += n;
	return 0;
}

int agent_exec_payload(const struct agent_exec_spec *spec, char **out, size_t *len)
{
	char *buf = NULL, num[32];
	size_t n = 0, cap = 0;
	int rc = 0;

	for (const char *const *a = spec->argv; a && *a && !rc; a++)
		rc = put(&buf, &n, &cap, "arg=", *a);
	for (const char *const *e = spec->env; e && *e && !rc; e++)
		rc = put(&buf, &n, &cap, "env=", *e);
	if (!rc && spec->cwd)
		rc = put(&buf, &n, &cap, "cwd=", spec->cwd);
	if (!rc && spec->uid >= 0) {
		snprintf(num, sizeof(num), "%d", spec->uid);
		rc = put(&buf, &n, &cap, "uid=", num);
	}
	if (!rc && spec->gid >= 0) {
		snprintf(num, sizeof(num), "%d", spec->gid);
		rc = put(&buf, &n, &cap, "gid=", num);
	}
	if (!rc && spec->pty_cols && spec->pty_rows) {
		snprintf(num, sizeof(num), "%ux%u", spec->pty_cols, spec->pty_rows);
		rc = put(&buf, &n, &cap, "pty=", num);
	}
	if (rc || !n) {
		free(buf);
		return rc ? rc : -EINVAL;
	}
	*out = buf;
	*len = n;
	return 0;
}

static void append(char **buf, size_t *len, bool *trunc, size_t max, const void *p, size_t n)
{
	char *b;

	if (*len + n > max) {
		*trunc = true;
		n = max - *len;
	}
	if (!n || !(b = realloc(*buf, *len + n + 1)))
		return;
	memcpy(b + *len, p, n);
	*len += n;
	b[*len] = '\0';
	*buf = b;
}

static void put_ref(struct agent_exec *x)
{
	if (atomic_fetch_sub(&x->refs, 1) != 1)
		return;
	agent_exec_result_free(&x->r);
	agent_link_release(x->l);
	pthread_mutex_destroy(&x->mu);
	free(x);
}

static void on_opened(void *u, const char *info)
{
	struct agent_exec *x = u;

	pthread_mutex_lock(&x->mu);
	if (!strncmp(info, "pid=", 4))
		x->r.pid = strtoll(info + 4, NULL, 10);
	pthread_mutex_unlock(&x->mu);
}

static void on_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct agent_exec *x = u;
	struct agent_exec_result *r = &x->r;
	uint8_t stream = flags & AGENT_STREAM_MASK;

	pthread_mutex_lock(&x->mu);
	if (stream == AGENT_STREAM_STDERR)
		append(&r->err, &r->err_len, &r->err_truncated, x->max, p, n);
	else
		append(&r->out, &r->out_len, &r->out_truncated, x->max, p, n);
	/* Under the lock: after agent_exec_close its owner's hook is gone. */
	if (x->on_output && x->done)
		x->on_output(x->on_output_ud, stream, p, n);
	pthread_mutex_unlock(&x->mu);
	agent_chan_ack(x->l, x->chan, n);
}

/* Decimal 0..max, digits only, all of s. */
static int parse_small(const char *s, int max)
{
	int v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || (v = v * 10 + (*s - '0')) > max)
			return -1;
	}
	return v;
}

int agent_exit_parse(const char *status, int *exit_code, int *signal)
{
	int v;

	if (!status)
		return -EPROTO;
	if (!strncmp(status, "exit=", 5) && (v = parse_small(status + 5, 255)) >= 0) {
		*exit_code = v;
		*signal = 0;
		return 0;
	}
	if (!strncmp(status, "signal=", 7) && (v = parse_small(status + 7, 64)) > 0) {
		*exit_code = -1;
		*signal = v;
		return 0;
	}
	return -EPROTO;
}

static void on_exit_status(void *u, const char *status)
{
	struct agent_exec *x = u;
	int code, sig;

	pthread_mutex_lock(&x->mu);
	if (agent_exit_parse(status, &code, &sig) == 0) {
		x->exited = true;
		x->r.exit_code = code;
		x->r.signal = sig;
	} else {
		x->bad_exit = true;
		snprintf(x->reason, sizeof(x->reason),
			 "the guest agent's exit status is malformed: \"%.64s\"", status);
	}
	pthread_mutex_unlock(&x->mu);
}

/* The channel's last callback: the command ended; the link lets go. */
static void on_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct agent_exec *x = u;

	(void)in;
	(void)out;
	pthread_mutex_lock(&x->mu);
	if (!x->bad_exit)
		snprintf(x->reason, sizeof(x->reason), "%s", reason);
	x->ended = true;
	if (x->done)
		x->done(x->ud);
	pthread_mutex_unlock(&x->mu);
	put_ref(x);
}

static const struct agent_chan_ops exec_ops = {
	.opened = on_opened,
	.data = on_data,
	.exit = on_exit_status,
	.closed = on_closed,
};

int agent_exec_start(struct agent_link *l, const struct agent_exec_spec *spec,
		     agent_exec_done_fn done, void *ud, struct agent_exec **out, char *err,
		     size_t errlen)
{
	struct agent_exec *x;
	char *payload;
	size_t plen;
	int rc;

	if ((rc = agent_exec_payload(spec, &payload, &plen)) < 0) {
		snprintf(err, errlen,
			 rc == -E2BIG ? "the command line and environment are too long"
				      : "no command");
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	if (!(x = calloc(1, sizeof(*x)))) {
		free(payload);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	atomic_init(&x->refs, 2); /* the owner's and the channel's */
	x->l = agent_link_hold(l);
	x->done = done;
	x->ud = ud;
	x->on_output = spec->on_output;
	x->on_output_ud = spec->on_output_ud;
	x->max = spec->max_output ? spec->max_output : 1 << 20;
	pthread_mutex_init(&x->mu, NULL);
	/* x->chan must be set before the first callback can run: open under mu. */
	pthread_mutex_lock(&x->mu);
	x->chan = agent_chan_open(l, AGENT_EXEC, payload, plen, &exec_ops, x);
	pthread_mutex_unlock(&x->mu);
	free(payload);
	if (!x->chan) {
		atomic_store(&x->refs, 1); /* no channel: no closed to come */
		put_ref(x);
		snprintf(err, errlen, "the guest agent is not connected");
		return -EPIPE;
	}
	if (spec->in_len)
		agent_chan_send(l, x->chan, AGENT_DATA, AGENT_STREAM_STDOUT, spec->in,
				spec->in_len);
	agent_chan_send(l, x->chan, AGENT_EOF, 0, NULL, 0);
	*out = x;
	return 0;
}

void agent_exec_kill(struct agent_exec *x)
{
	bool ended;

	pthread_mutex_lock(&x->mu);
	ended = x->ended;
	if (!ended)
		x->timed_out = true;
	pthread_mutex_unlock(&x->mu);
	if (!ended)
		agent_chan_send(x->l, x->chan, AGENT_SIGNAL, 0, "9", 1);
}

void agent_exec_cut(struct agent_exec *x, const char *reason)
{
	bool ended;

	pthread_mutex_lock(&x->mu);
	ended = x->ended;
	pthread_mutex_unlock(&x->mu);
	if (!ended)
		agent_chan_close(x->l, x->chan, reason);
}

int agent_exec_outcome(struct agent_exec *x, struct agent_exec_result *r, char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&x->mu);
	*r = x->r;
	memset(&x->r, 0, sizeof(x->r));
	r->timed_out = x->timed_out;
	if (x->exited || x->timed_out) {
		rc = 0;
	} else if (x->bad_exit) {
		snprintf(err, errlen, "%s", x->reason);
		rc = -EPROTO;
	} else if (!strcmp(x->reason, "agent link lost") ||
		   !strcmp(x->reason, "agent link closed")) {
		snprintf(err, errlen, "%s", x->reason);
		rc = -EPIPE;
	} else {
		snprintf(err, errlen, "%s", x->reason[0] ? x->reason : "the command did not start");
		rc = -EREMOTEIO;
	}
	pthread_mutex_unlock(&x->mu);
	if (rc < 0)
		agent_exec_result_free(r);
	return rc;
}

void agent_exec_close(struct agent_exec *x)
{
	bool ended;

	if (!x)
		return;
	pthread_mutex_lock(&x->mu);
	x->done = NULL;
	ended = x->ended;
	pthread_mutex_unlock(&x->mu);
	if (!ended)
		agent_chan_close(x->l, x->chan, "closed by its owner");
	put_ref(x);
}

/* agent_exec_run's side of a command: its end, signalled. */
struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
};

static void wake_waiter(void *ud)
{
	struct waiter *w = ud;

	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Waits up to ms for w (forever when ms < 0); true once it ended. */
static bool wait_end(struct waiter *w, int ms)
{
	struct timespec until = timedwait_deadline(ms < 0 ? 0 : ms);
	bool done;

	pthread_mutex_lock(&w->mu);
	while (!w->done) {
		if (ms < 0)
			pthread_cond_wait(&w->cv, &w->mu);
		else if (pthread_cond_timedwait(&w->cv, &w->mu, &until) != 0)
			break;
	}
	done = w->done;
	pthread_mutex_unlock(&w->mu);
	return done;
}

int agent_exec_run(struct agent_link *l, const struct agent_exec_spec *spec,
		   struct agent_exec_result *r, char *err, size_t errlen)
{
	struct waiter w = { .done = false };
	struct agent_exec *x;
	int rc;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&w.mu, NULL);
	timedwait_cond_init(&w.cv);
	rc = agent_exec_start(l, spec, wake_waiter, &w, &x, err, errlen);
	if (rc == 0) {
		if (!wait_end(&w, spec->timeout_ms)) {
			agent_exec_kill(x);
			if (!wait_end(&w, AGENT_EXEC_KILL_GRACE_MS)) {
				agent_exec_cut(x, "timed out"); /* the agent is stuck */
				wait_end(&w, -1);
			}
		}
		rc = agent_exec_outcome(x, r, err, errlen);
		agent_exec_close(x);
	}
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
	return rc;
}

void agent_exec_result_free(struct agent_exec_result *r)
{
	if (!r)
		return;
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}
