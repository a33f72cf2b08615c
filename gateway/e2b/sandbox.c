/* gateway/e2b/sandbox.c: see sandbox.h. A process's memory is freed on
 * the loop only: the link's thread marks its channel closed, the loop
 * (e2b_sandbox_reap_all) drops the channel's reference. */
#include "gateway/e2b/sandbox.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/e2b/connect.h"
#include "gateway/e2b/desktop_serve.h"
#include "gateway/e2b/e2b_msg.h"
#include "gateway/e2b/e2b_req.h"
#include "gateway/e2b/watcher.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/sess_agent.h"
#include "vmm-qemu/agent_exec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct e2b_proc *all; /* loop thread */
static uint32_t next_served_pid = E2B_SERVED_PID_BASE; /* loop thread */

static void notify(struct sess_listener *l, struct sess *s, enum sess_signal sig, const void *data);
static void served_end(struct e2b_proc *p, int sig);

/* The sandbox's own fields from what its session kept (e2b_sandbox_save)
 * before a restart; fields missing or of the wrong kind keep their
 * defaults (the record is the gateway's, but may be old or damaged). */
static void restore(struct e2b_sandbox *sb, const json_t *kept)
{
	const json_t *v;

	if ((v = json_object_get(kept, "template_id")) && json_is_string(v) &&
	    json_string_length(v) < sizeof(sb->template_id))
		snprintf(sb->template_id, sizeof(sb->template_id), "%s", json_string_value(v));
	if ((v = json_object_get(kept, "metadata")) && json_is_object(v))
		json_object_update(sb->metadata, (json_t *)v);
	if ((v = json_object_get(kept, "env_vars")) && json_is_object(v))
		json_object_update(sb->env_vars, (json_t *)v);
	if ((v = json_object_get(kept, "started_unix_ms")) && json_is_integer(v) &&
	    json_integer_value(v) > 0)
		sb->started_unix_ms = json_integer_value(v);
	if ((v = json_object_get(kept, "auto_pause")) && json_is_boolean(v))
		sb->auto_pause = json_is_true(v);
	if ((v = json_object_get(kept, "timeout_s")) && json_is_integer(v) &&
	    json_integer_value(v) > 0 && json_integer_value(v) <= 86400)
		sb->timeout_s = (int)json_integer_value(v);
	if ((v = json_object_get(kept, "envd_grant_id")) && json_is_string(v) &&
	    json_string_length(v) == AUTH_GRANT_ID_LEN)
		snprintf(sb->envd_grant_id, sizeof(sb->envd_grant_id), "%s", json_string_value(v));
}

/* A new sandbox for s, from what s kept of it when it has (a gateway
 * restarted since it was made), else empty. NULL when out of memory. */
static struct e2b_sandbox *sandbox_new(struct sess *s)
{
	struct e2b_sandbox *sb = calloc(1, sizeof(*sb));

	if (!sb)
		return NULL;
	sb->metadata = json_object();
	sb->env_vars = json_object();
	if (!sb->metadata || !sb->env_vars) {
		json_decref(sb->metadata);
		json_decref(sb->env_vars);
		free(sb);
		return NULL;
	}
	sb->started_unix_ms = fs_unix_ms();
	sb->timeout_s = E2B_DEFAULT_TIMEOUT_S;
	restore(sb, sess_ext_get(s, "e2b"));
	sb->s = s;
	sb->listener.notify = notify;
	sess_listen(s, &sb->listener);
	e2b_sandbox_metrics_start(sb);
	return sb;
}

struct e2b_sandbox *e2b_sandbox_of(struct sess *s)
{
	struct sess_listener *l = sess_find_listener(s, notify);

	if (l)
		return lws_container_of(l, struct e2b_sandbox, listener);
	/* made through the E2B API before a restart */
	return sess_ext_get(s, "e2b") ? sandbox_new(s) : NULL;
}

struct e2b_sandbox *e2b_sandbox_get(struct sess *s)
{
	struct e2b_sandbox *sb = e2b_sandbox_of(s);

	return sb ? sb : sandbox_new(s);
}

int e2b_sandbox_save(struct e2b_sandbox *sb)
{
	json_t *kept = json_pack("{s:s, s:O, s:O, s:I, s:b, s:i}", "template_id", sb->template_id,
				 "metadata", sb->metadata, "env_vars", sb->env_vars,
				 "started_unix_ms", (json_int_t)sb->started_unix_ms, "auto_pause",
				 sb->auto_pause, "timeout_s", sb->timeout_s);

	if (kept && sb->envd_grant_id[0] &&
	    json_object_set_new(kept, "envd_grant_id", json_string(sb->envd_grant_id)) < 0) {
		json_decref(kept);
		kept = NULL;
	}
	return kept ? sess_ext_set(sb->s, "e2b", kept) : -ENOMEM;
}

const char *e2b_sandbox_envd_token(struct e2b_sandbox *sb)
{
	struct sess *s = sb->s;
	const struct auth_grant *g;
	struct api_error e;

	if (sess_control_token(s)[0])
		return sess_control_token(s);
	if (sb->envd_token[0])
		return sb->envd_token;
	/* The last process's is unknown to this one: it goes. While its
	 * revocation cannot be recorded it still works, and stays named. */
	if (sb->envd_grant_id[0]) {
		int rc = sess_grant_revoke(s, sb->envd_grant_id);

		if (rc < 0 && rc != -ENOENT) {
			log_warn("e2b",
				 "%s: no envd token for a connect: the last one's "
				 "revocation could not be recorded",
				 sess_id(s));
			return NULL;
		}
	}
	sb->envd_grant_id[0] = '\0';
	g = sess_grant_add(s, AUTH_RIGHTS_CONTROL, 0, sb->envd_token, &e);
	if (!g) {
		sb->envd_token[0] = '\0';
		log_warn("e2b", "%s: no envd token for a connect: %s", sess_id(s), e.message);
		return NULL;
	}
	snprintf(sb->envd_grant_id, sizeof(sb->envd_grant_id), "%s", g->id);
	e2b_sandbox_save(sb);
	return sb->envd_token;
}

static void unlink_proc(struct e2b_sandbox *sb, struct e2b_proc *p)
{
	for (struct e2b_proc **pp = &sb->procs; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			sb->n_procs--;
			break;
		}
	p->sb = NULL;
	p->next = NULL;
}

static void notify(struct sess_listener *l, struct sess *s, enum sess_signal sig, const void *data)
{
	struct e2b_sandbox *sb = lws_container_of(l, struct e2b_sandbox, listener);

	(void)data;
	if (sig == SESS_SIGNAL_GUEST_STOPPING) {
		/* The guest pauses or stops (not a fork or a save, which keep
		 * it running): the streams drop as E2B's connections do. A
		 * memory pause keeps the agent link and the processes; a stop
		 * or a pause to disk takes them (their closed callbacks). */
		const char *busy = sess_busy_with(s);

		if (busy && strcmp(busy, "pausing"))
			return;
		for (struct e2b_proc *p = sb->procs; p; p = p->next) {
			p->guest_gen++;
			p->guest_gone = true;
		}
		lws_cancel_service(sess_gw(s)->ctx); /* their streams look */
		return;
	}
	if (sig != SESS_SIGNAL_DESTROY)
		return;
	while (sb->procs) {
		struct e2b_proc *p = sb->procs;
		bool closed;

		unlink_proc(sb, p);
		p->guest_gone = true;
		pthread_mutex_lock(&p->mu);
		closed = p->closed;
		pthread_mutex_unlock(&p->mu);
		if (p->chan && !closed)
			agent_chan_close(p->link, p->chan, "the sandbox was killed");
		else if (p->served && !closed)
			served_end(p, 9);
		e2b_proc_release(p); /* the table's */
	}
	e2b_watchers_end(sb, "the sandbox is gone");
	e2b_sandbox_metrics_stop(sb);
	sess_unlisten(s, l);
	json_decref(sb->metadata);
	json_decref(sb->env_vars);
	free(sb);
}

/* ---- the channel's side (link thread) ---- */

static void wake(struct e2b_proc *p)
{
	lws_cancel_service(p->ctx);
}

static void on_opened(void *u, const char *info)
{
	struct e2b_proc *p = u;

	pthread_mutex_lock(&p->mu);
	p->pid = strncmp(info, "pid=", 4) ? 0 : (uint32_t)strtoul(info + 4, NULL, 10);
	p->opened = true;
	pthread_mutex_unlock(&p->mu);
	wake(p);
}

void e2b_proc_output(struct e2b_proc *p, bool err, const void *d, size_t n)
{
	pthread_mutex_lock(&p->mu);
	e2b_out_add(&p->out, E2B_PROC_OUTPUT, err, d, n);
	pthread_mutex_unlock(&p->mu);
}

static void on_data(void *u, uint8_t flags, const void *d, size_t n)
{
	struct e2b_proc *p = u;

	e2b_proc_output(p, (flags & AGENT_STREAM_MASK) == AGENT_STREAM_STDERR, d, n);
	agent_chan_ack(p->link, p->chan, n);
	wake(p);
}

static void on_exit_status(void *u, const char *status)
{
	struct e2b_proc *p = u;
	int code, sig;

	pthread_mutex_lock(&p->mu);
	if (agent_exit_parse(status, &code, &sig) < 0) {
		snprintf(p->error, sizeof(p->error), "the guest agent's exit status is malformed");
	} else {
		p->exited = true;
		p->exit_code = code;
		p->exit_signal = sig;
	}
	pthread_mutex_unlock(&p->mu);
}

static void on_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct e2b_proc *p = u;

	(void)in;
	(void)out;
	pthread_mutex_lock(&p->mu);
	if (!p->exited && !p->error[0])
		snprintf(p->error, sizeof(p->error), "%s",
			 reason[0] ? reason : "the process is gone");
	p->closed = true;
	pthread_mutex_unlock(&p->mu);
	wake(p);
}

static const struct agent_chan_ops proc_ops = {
	.opened = on_opened,
	.data = on_data,
	.exit = on_exit_status,
	.closed = on_closed,
};

/* ---- the loop's side ---- */

static void on_deadline(lws_sorted_usec_list_t *sul)
{
	struct e2b_proc *p = lws_container_of(sul, struct e2b_proc, sul);

	p->killed = true;
	e2b_proc_signal(p, 9);
}

static void join_table(struct e2b_sandbox *sb, struct e2b_proc *p, int64_t timeout_ms)
{
	p->sb = sb;
	p->next = sb->procs;
	sb->procs = p;
	sb->n_procs++;
	p->next_all = all;
	all = p;
	if (timeout_ms > 0)
		lws_sul_schedule(p->ctx, 0, &p->sul, on_deadline,
				 (lws_usec_t)timeout_ms * LWS_US_PER_MS);
}

struct e2b_proc *e2b_proc_start(struct e2b_sandbox *sb, const json_t *exec_body, json_t *config,
				const char *tag, bool keep_stdin, unsigned pty_cols,
				unsigned pty_rows, int64_t timeout_ms, int *code, char *err,
				size_t errlen)
{
	char *text = json_dumps(exec_body, JSON_COMPACT), *payload = NULL;
	struct api_error e;
	struct exec_job *job = text ? exec_parse(text, strlen(text), &e) : NULL;
	struct agent_exec_spec spec;
	struct agent_link *link = NULL;
	struct e2b_proc *p = NULL;
	size_t plen;

	*code = CONNECT_INVALID_ARGUMENT;
	if (!job) {
		snprintf(err, errlen, "%s", text ? e.message : "out of memory");
		free(text);
		goto fail;
	}
	free(text);
	*code = CONNECT_RESOURCE_EXHAUSTED;
	if (sb->n_procs >= E2B_PROC_MAX) {
		snprintf(err, errlen, "too many processes run in this sandbox (%d)", E2B_PROC_MAX);
		goto fail;
	}
	*code = CONNECT_UNAVAILABLE;
	if (sess_state_of(sb->s) != SESS_READY || !sess_agent_of(sb->s) ||
	    !(link = sess_agent_get(sess_agent_of(sb->s), 0))) {
		snprintf(err, errlen, "the sandbox is not running");
		goto fail;
	}
	*code = CONNECT_UNIMPLEMENTED;
	if (pty_cols && agent_link_version(link) < AGENT_VERSION_PTY) {
		snprintf(err, errlen,
			 "this sandbox's guest agent is older than PTYs (rebuild its image)");
		goto fail;
	}
	spec = (struct agent_exec_spec){ .argv = exec_argv(job),
					 .env = exec_env(job),
					 .cwd = exec_cwd(job),
					 .uid = exec_as_root(job) ? -1 : EXEC_DESKTOP_UID,
					 .gid = exec_as_root(job) ? -1 : EXEC_DESKTOP_UID,
					 .pty_cols = pty_cols,
					 .pty_rows = pty_rows };
	*code = CONNECT_INTERNAL;
	if (agent_exec_payload(&spec, &payload, &plen) < 0 || !(p = calloc(1, sizeof(*p)))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	pthread_mutex_init(&p->mu, NULL);
	p->refs = 2; /* the table, the channel */
	p->link = link;
	p->ctx = sess_gw(sb->s)->ctx;
	link = NULL;
	p->config = json_incref(config);
	p->pty = pty_cols > 0;
	snprintf(p->tag, sizeof(p->tag), "%s", tag ? tag : "");
	p->chan = agent_chan_open(p->link, AGENT_EXEC, payload, plen, &proc_ops, p);
	free(payload);
	if (!p->chan) {
		snprintf(err, errlen, "the guest agent refused the process");
		*code = CONNECT_UNAVAILABLE;
		agent_link_release(p->link);
		json_decref(p->config);
		pthread_mutex_destroy(&p->mu);
		free(p);
		p = NULL;
		goto fail;
	}
	if (!keep_stdin)
		agent_chan_send(p->link, p->chan, AGENT_EOF, 0, NULL, 0);
	join_table(sb, p, timeout_ms);
	exec_free(job);
	return p;
fail:
	exec_free(job);
	agent_link_release(link);
	return NULL;
}

/* ---- served processes (the loop only) ---- */

/* Ends a served process: exited by sig (0: its answer's exit code stands),
 * closed, so that its streams end and the reap lets it go. */
static void served_end(struct e2b_proc *p, int sig)
{
	desktop_serve_cancel(p->serving);
	p->serving = NULL;
	pthread_mutex_lock(&p->mu);
	if (!p->closed) {
		p->exited = true;
		if (sig) {
			p->exit_code = -1;
			p->exit_signal = sig;
		}
		p->closed = true;
	}
	pthread_mutex_unlock(&p->mu);
	wake(p);
}

static void served_done(void *ud, const struct desktop_answer *a)
{
	struct e2b_proc *p = ud;

	p->serving = NULL; /* freed as this returns */
	if (a->out_len)
		e2b_proc_output(p, false, a->out, a->out_len);
	if (a->err_len)
		e2b_proc_output(p, true, a->err, a->err_len);
	pthread_mutex_lock(&p->mu);
	p->exit_code = a->exit_code;
	pthread_mutex_unlock(&p->mu);
	if (!a->lingers || a->exit_code != 0)
		served_end(p, 0);
	else
		wake(p);
}

struct e2b_proc *e2b_proc_serve(struct e2b_sandbox *sb, const struct desktop_op *op, json_t *config,
				const char *tag, int64_t timeout_ms, int *code, char *err,
				size_t errlen)
{
	struct e2b_proc *p;

	*code = CONNECT_RESOURCE_EXHAUSTED;
	if (sb->n_procs >= E2B_PROC_MAX) {
		snprintf(err, errlen, "too many processes run in this sandbox (%d)", E2B_PROC_MAX);
		return NULL;
	}
	*code = CONNECT_INTERNAL;
	if (!(p = calloc(1, sizeof(*p)))) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	p->refs = 2; /* the table, the serving (in the channel's place) */
	p->served = true;
	p->ctx = sess_gw(sb->s)->ctx;
	p->config = json_incref(config);
	snprintf(p->tag, sizeof(p->tag), "%s", tag ? tag : "");
	p->pid = next_served_pid++;
	if (next_served_pid < E2B_SERVED_PID_BASE)
		next_served_pid = E2B_SERVED_PID_BASE;
	p->opened = true;
	if (!(p->serving = desktop_serve_start(sb->s, op, served_done, p))) {
		snprintf(err, errlen, "out of memory");
		json_decref(p->config);
		pthread_mutex_destroy(&p->mu);
		free(p);
		return NULL;
	}
	join_table(sb, p, timeout_ms);
	return p;
}

/* p's pid (0 until the agent said), which the link's thread writes. */
static uint32_t pid_of(struct e2b_proc *p)
{
	uint32_t pid;

	pthread_mutex_lock(&p->mu);
	pid = p->pid;
	pthread_mutex_unlock(&p->mu);
	return pid;
}

struct e2b_proc *e2b_proc_find(struct e2b_sandbox *sb, uint32_t pid, const char *tag)
{
	for (struct e2b_proc *p = sb->procs; p; p = p->next)
		if (pid ? pid_of(p) == pid : (tag && *tag && !strcmp(p->tag, tag)))
			return p;
	return NULL;
}

void e2b_proc_hold(struct e2b_proc *p)
{
	p->refs++;
}

void e2b_proc_release(struct e2b_proc *p)
{
	if (!p || --p->refs > 0)
		return;
	for (struct e2b_proc **pp = &all; *pp; pp = &(*pp)->next_all)
		if (*pp == p) {
			*pp = p->next_all;
			break;
		}
	lws_sul_cancel(&p->sul);
	e2b_out_free(&p->out);
	json_decref(p->config);
	agent_link_release(p->link);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

int e2b_proc_input(struct e2b_proc *p, const void *data, size_t len)
{
	int rc = p->served ? -EPIPE : agent_chan_send(p->link, p->chan, AGENT_DATA, 0, data, len);

	return rc < 0 ? rc : 0;
}

int e2b_proc_close_stdin(struct e2b_proc *p)
{
	int rc = p->served ? 0 : agent_chan_send(p->link, p->chan, AGENT_EOF, 0, NULL, 0);

	return rc < 0 ? rc : 0;
}

int e2b_proc_signal(struct e2b_proc *p, int sig)
{
	char s[8];
	int rc;

	if (p->served) {
		served_end(p, sig);
		return 0;
	}
	snprintf(s, sizeof(s), "%d", sig);
	rc = agent_chan_send(p->link, p->chan, AGENT_SIGNAL, 0, s, strlen(s));
	return rc < 0 ? rc : 0;
}

int e2b_proc_resize(struct e2b_proc *p, unsigned cols, unsigned rows)
{
	char size[24];
	int rc;

	if (!p->pty)
		return -ENOTTY;
	snprintf(size, sizeof(size), "%ux%u", cols, rows);
	rc = agent_chan_send(p->link, p->chan, AGENT_RESIZE, 0, size, strlen(size));
	return rc < 0 ? rc : 0;
}

int e2b_proc_attach(struct e2b_proc *p)
{
	if (p->streams >= E2B_PROC_STREAMS)
		return -EBUSY;
	p->streams++;
	e2b_proc_hold(p);
	return 0;
}

void e2b_proc_detach(struct e2b_proc *p)
{
	if (!p)
		return;
	p->streams--;
	e2b_proc_release(p);
}

uint64_t e2b_proc_output_end(struct e2b_proc *p)
{
	uint64_t end;

	pthread_mutex_lock(&p->mu);
	end = p->out.end;
	pthread_mutex_unlock(&p->mu);
	return end;
}

/* What a drain takes from p under its lock, to render after. */
struct drain_slice {
	bool opened, closed, exited, killed, caught_up;
	uint32_t pid;
	int exit_code, exit_signal;
	int n; /* pieces; -ESPIPE: the stream fell behind */
	uint64_t lost; /* then: the bytes it missed */
	char error[sizeof(((struct e2b_proc *)0)->error)];
	struct e2b_out_piece piece[E2B_DRAIN_PIECES];
	unsigned char data[E2B_DRAIN_BYTES];
};

static void take_slice(struct e2b_proc *p, uint64_t *cursor, bool started, struct drain_slice *sl)
{
	pthread_mutex_lock(&p->mu);
	sl->opened = p->opened;
	sl->closed = p->closed;
	sl->exited = p->exited;
	sl->killed = p->killed;
	sl->pid = p->pid;
	sl->exit_code = p->exit_code;
	sl->exit_signal = p->exit_signal;
	memcpy(sl->error, p->error, sizeof(sl->error));
	sl->n = 0;
	if (started || sl->opened || sl->closed)
		sl->n = e2b_out_read(&p->out, cursor, sl->data, sizeof(sl->data), sl->piece,
				     E2B_DRAIN_PIECES);
	sl->lost = sl->n == -ESPIPE ? p->out.start - *cursor : 0;
	sl->caught_up = *cursor >= p->out.end;
	pthread_mutex_unlock(&p->mu);
}

int e2b_proc_drain(struct e2b_proc *p, uint64_t *cursor, bool *started, bool *ended,
		   struct bytebuf *out)
{
	struct drain_slice *sl = malloc(sizeof(*sl)); /* 38 KiB: not on the loop's stack */
	char why[192];
	int rc = 0;

	if (!sl)
		return -ENOMEM;
	take_slice(p, cursor, *started, sl);
	if (!*started && (sl->opened || sl->closed)) {
		if (sl->opened)
			rc = e2b_msg_frame(out, 0, e2b_msg_start(sl->pid));
		*started = true;
	}
	if (!rc && sl->n == -ESPIPE) {
		snprintf(why, sizeof(why),
			 "this stream fell behind the process's output: %llu bytes of it were "
			 "dropped before it read them (%u MiB are kept a process)",
			 (unsigned long long)sl->lost, E2B_PROC_OUTPUT >> 20);
		*ended = true;
		rc = e2b_msg_end_stream(out, CONNECT_RESOURCE_EXHAUSTED, why);
	}
	for (int i = 0; !rc && i < sl->n; i++)
		rc = e2b_msg_frame(out, 0,
				   p->pty ? e2b_msg_pty(sl->data + sl->piece[i].off,
							sl->piece[i].len)
					  : e2b_msg_data(sl->piece[i].err,
							 sl->data + sl->piece[i].off,
							 sl->piece[i].len));
	if (!rc && !*ended && sl->closed && *started && sl->caught_up) {
		*ended = true;
		if (sl->exited)
			rc = e2b_msg_frame(out, 0,
					   e2b_msg_end(sl->exit_code, sl->exit_signal, NULL));
		if (!rc && !sl->exited && !sl->killed && p->guest_gone)
			rc = e2b_msg_end_stream(out, CONNECT_UNKNOWN, "terminated");
		else if (!rc)
			rc = e2b_msg_end_stream(out,
						sl->exited   ? CONNECT_OK
						: sl->killed ? CONNECT_DEADLINE_EXCEEDED
							     : CONNECT_UNAVAILABLE,
						sl->error);
	}
	free(sl);
	return rc;
}

void e2b_sandbox_reap_all(struct gw *gw)
{
	struct e2b_proc *p = all, *next;

	(void)gw;
	/* Hold the next one: releasing p may free p, never another. */
	for (; p; p = next) {
		bool closed;

		next = p->next_all;
		pthread_mutex_lock(&p->mu);
		closed = p->closed;
		pthread_mutex_unlock(&p->mu);
		if (!closed || p->chan_released)
			continue;
		p->chan_released = true;
		lws_sul_cancel(&p->sul);
		if (p->sb) {
			unlink_proc(p->sb, p);
			e2b_proc_release(p); /* the table's */
		}
		e2b_proc_release(p); /* the channel's */
	}
	e2b_watchers_reap_all();
}

json_t *e2b_proc_list(struct e2b_sandbox *sb)
{
	json_t *arr = json_array();

	for (struct e2b_proc *p = sb->procs; arr && p; p = p->next) {
		uint32_t pid = pid_of(p);
		json_t *j;

		if (!pid)
			continue;
		j = json_pack("{s:O, s:I}", "config", p->config, "pid", (json_int_t)pid);
		if (j && p->tag[0])
			json_object_set_new(j, "tag", json_string(p->tag));
		json_array_append_new(arr, j);
	}
	return arr ? json_pack("{s:o}", "processes", arr) : NULL;
}
