/* vmm-qemu/agent_exec.c: see agent_exec.h. The caller's thread waits on a
 * condition the link's callbacks signal. */
#include "vmm-qemu/agent_exec.h"

#include "common/timedwait.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KILL_GRACE_MS 5000 /* for the EXIT after a SIGKILL */

struct waiter {
	struct agent_link *l;
	const struct agent_exec_spec *spec;
	uint32_t chan;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t max;
	struct agent_exec_result *r;
	bool done, exited, bad_exit;
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

static void on_opened(void *u, const char *info)
{
	struct waiter *w = u;

	pthread_mutex_lock(&w->mu);
	if (!strncmp(info, "pid=", 4))
		w->r->pid = strtoll(info + 4, NULL, 10);
	pthread_mutex_unlock(&w->mu);
}

static void on_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct waiter *w = u;
	struct agent_exec_result *r = w->r;

	pthread_mutex_lock(&w->mu);
	if ((flags & AGENT_STREAM_MASK) == AGENT_STREAM_STDERR)
		append(&r->err, &r->err_len, &r->err_truncated, w->max, p, n);
	else
		append(&r->out, &r->out_len, &r->out_truncated, w->max, p, n);
	pthread_mutex_unlock(&w->mu);
	if (w->spec->on_output)
		w->spec->on_output(w->spec->on_output_ud, flags & AGENT_STREAM_MASK, p, n);
	agent_chan_ack(w->l, w->chan, n);
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
	struct waiter *w = u;
	int code, sig;

	pthread_mutex_lock(&w->mu);
	if (agent_exit_parse(status, &code, &sig) == 0) {
		w->exited = true;
		w->r->exit_code = code;
		w->r->signal = sig;
	} else {
		w->bad_exit = true;
		snprintf(w->reason, sizeof(w->reason),
			 "the guest agent's exit status is malformed: \"%.64s\"", status);
	}
	pthread_mutex_unlock(&w->mu);
}

static void on_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct waiter *w = u;

	(void)in;
	(void)out;
	pthread_mutex_lock(&w->mu);
	if (!w->bad_exit)
		snprintf(w->reason, sizeof(w->reason), "%s", reason);
	w->done = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static const struct agent_chan_ops exec_ops = {
	.opened = on_opened,
	.data = on_data,
	.exit = on_exit_status,
	.closed = on_closed,
};

int agent_exec_run(struct agent_link *l, const struct agent_exec_spec *spec,
		   struct agent_exec_result *r, char *err, size_t errlen)
{
	struct waiter w = {
		.l = l, .spec = spec, .r = r, .max = spec->max_output ? spec->max_output : 1 << 20
	};
	struct timespec until;
	char *payload;
	size_t plen;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = agent_exec_payload(spec, &payload, &plen)) < 0) {
		snprintf(err, errlen,
			 rc == -E2BIG ? "the command line and environment are too long"
				      : "no command");
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	pthread_mutex_init(&w.mu, NULL);
	timedwait_cond_init(&w.cv);
	/* w must be set before the first callback can run: open under w.mu. */
	pthread_mutex_lock(&w.mu);
	w.chan = agent_chan_open(l, AGENT_EXEC, payload, plen, &exec_ops, &w);
	free(payload);
	if (!w.chan) {
		pthread_mutex_unlock(&w.mu);
		snprintf(err, errlen, "the guest agent is not connected");
		rc = -EPIPE;
		goto out;
	}
	pthread_mutex_unlock(&w.mu);
	if (spec->in_len)
		agent_chan_send(l, w.chan, AGENT_DATA, AGENT_STREAM_STDOUT, spec->in, spec->in_len);
	agent_chan_send(l, w.chan, AGENT_EOF, 0, NULL, 0);
	until = timedwait_deadline(spec->timeout_ms);
	pthread_mutex_lock(&w.mu);
	while (!w.done && pthread_cond_timedwait(&w.cv, &w.mu, &until) == 0) {
	}
	if (!w.done) {
		r->timed_out = true;
		pthread_mutex_unlock(&w.mu);
		agent_chan_send(l, w.chan, AGENT_SIGNAL, 0, "9", 1);
		until = timedwait_deadline(KILL_GRACE_MS);
		pthread_mutex_lock(&w.mu);
		while (!w.done && pthread_cond_timedwait(&w.cv, &w.mu, &until) == 0) {
		}
		if (!w.done) { /* the agent is stuck: cut the channel */
			pthread_mutex_unlock(&w.mu);
			agent_chan_close(l, w.chan, "timed out");
			pthread_mutex_lock(&w.mu);
			while (!w.done)
				pthread_cond_wait(&w.cv, &w.mu);
		}
	}
	pthread_mutex_unlock(&w.mu);
	if (w.exited || r->timed_out) {
		rc = 0;
	} else if (w.bad_exit) {
		snprintf(err, errlen, "%s", w.reason);
		rc = -EPROTO;
	} else if (!strcmp(w.reason, "agent link lost") || !strcmp(w.reason, "agent link closed")) {
		snprintf(err, errlen, "%s", w.reason);
		rc = -EPIPE;
	} else {
		snprintf(err, errlen, "%s", w.reason[0] ? w.reason : "the command did not start");
		rc = -EREMOTEIO;
	}
out:
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
	if (rc < 0)
		agent_exec_result_free(r);
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
