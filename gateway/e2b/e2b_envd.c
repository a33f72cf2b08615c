/* gateway/e2b/e2b_envd.c: envd, E2B's in-sandbox daemon, served by the
 * gateway for the sandbox a request names (e2b_api.h): Connect-RPC's
 * process.Process and filesystem.Filesystem with the JSON codec (Start,
 * Connect and WatchDir stream their events over HTTP/1.1 until the
 * process or watch ends: no Content-Length, the connection closes after
 * the end-of-stream frame), the plain /files and /health. Processes and
 * watchers run through the session's vitrine-agent (gateway/e2b/sandbox.h
 * and watcher.h hold them); a stream that goes away leaves its process
 * running, but ends its watcher. */
#include "display/encode.h"
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/e2b/connect.h"
#include "gateway/e2b/desktop_serve.h"
#include "gateway/e2b/e2b_api.h"
#include "gateway/e2b/e2b_files.h"
#include "gateway/e2b/e2b_fs.h"
#include "gateway/e2b/e2b_msg.h"
#include "gateway/e2b/e2b_req.h"
#include "gateway/e2b/e2b_watch.h"
#include "gateway/e2b/sandbox.h"
#include "gateway/e2b/watcher.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/session.h"
#include "gateway/stream/stream_hub.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRITE_MAX (64 * 1024)
#define KEEPALIVE_US (15 * LWS_US_PER_SEC)
#define STREAM_HOLD_S 3600
#define FILES_TIMEOUT_S 120
/* How long CreateWatcher waits for the guest's watcher to be in place. */
#define WATCH_START_US (30 * LWS_US_PER_SEC)

/* A streamed answer (Start, Connect, WatchDir), or a CreateWatcher
 * waiting for its watcher (create_wait: answered as a unary call). */
struct e2b_stream {
	struct e2b_stream *next; /* streams */
	struct http_req *r;
	struct e2b_proc *p; /* attached; NULL for a stream that only says an error */
	struct e2b_watcher *w; /* held: WatchDir's watcher (ended with the stream), or the one
				* a CreateWatcher waits for */
	bool create_wait, answered;
	uint64_t cursor; /* in p's output */
	unsigned gen_attached; /* p's guest_gen when it attached */
	bool started, ended, closing;
	struct bytebuf out; /* frames not yet written, from off */
	size_t off;
	lws_sorted_usec_list_t sul_keep;
};

static struct e2b_stream *streams; /* loop thread */

/* s runs, and its agent link will be up in a moment (it is being
 * connected, or s is busy with a job that hands it back, an adoption). */
static bool agent_coming(struct sess *s)
{
	return sess_state_of(s) == SESS_READY && (sess_busy(s) || !e2b_agent_up(s));
}

/* Whether E2B's proxy would find no running sandbox behind s: it is
 * gone, paused (or pausing, resuming), not up yet, or failed. envd is
 * not reached then, so every door of it answers as the proxy does. */
static bool not_running(struct sess *s)
{
	const char *busy = s ? sess_busy_with(s) : NULL;

	return !s || sess_state_of(s) != SESS_READY || (busy && !strcmp(busy, "pausing"));
}

/* ---- answers ---- */

/* The proxy's answer for a sandbox that does not run (502, which the
 * SDK's isRunning() reads as false and its RPCs as `unavailable`); the
 * body is the proxy's JSON. Before any token is checked, as the proxy
 * does: it tells no more than /health always did. */
static void proxy_not_running(struct http_req *r, struct sess *s)
{
	bool paused = s && sess_state_of(s) == SESS_PAUSED;

	if (r->method == M_POST)
		r->close_after = true; /* its body may not be in: not read */
	http_reply_json(r, 502,
			json_pack("{s:s, s:s, s:i}", "sandboxId", e2b_call_of(r)->sandbox,
				  "message",
				  paused ? "The sandbox is paused" : "The sandbox was not found",
				  "code", 502));
}

static void unary_error(struct http_req *r, enum connect_code c, const char *message)
{
	char *text = connect_error_json(c, message);

	if (!text) {
		http_reply_json(r, 500, NULL);
		return;
	}
	http_reply_bytes(r, connect_code_http(c), "application/json", text, strlen(text));
	free(text);
}

static void plain_error(struct http_req *r, int status, const char *message)
{
	http_reply_json(r, status,
			json_pack("{s:i, s:o}", "code", status, "message",
				  api_error_text(message)));
}

static void on_keepalive(lws_sorted_usec_list_t *sul)
{
	struct e2b_stream *st = lws_container_of(sul, struct e2b_stream, sul_keep);

	if (st->create_wait) { /* the guest's watcher did not come up */
		static const char why[] = "the guest's watcher did not start in time";

		if (!st->answered)
			unary_error(st->r, CONNECT_UNAVAILABLE, why);
		st->answered = true;
		e2b_watcher_stop(st->w, CONNECT_UNAVAILABLE, why);
		return;
	}
	if (st->started && !st->ended)
		e2b_msg_frame(&st->out, 0, st->w ? e2b_watch_msg_keepalive() : e2b_msg_keepalive());
	api_hold(st->r, STREAM_HOLD_S);
	lws_callback_on_writable(st->r->wsi);
	lws_sul_schedule(st->r->gw->ctx, 0, &st->sul_keep, on_keepalive, KEEPALIVE_US);
}

static int stream_write(struct http_req *r)
{
	struct e2b_call *c = e2b_call_of(r);
	struct e2b_stream *st = c ? c->stream : NULL;
	unsigned char *b;
	size_t n;

	if (!st || st->closing)
		return -1;
	if (st->off == st->out.len) {
		st->out.len = st->off = 0;
		if (st->p && !st->ended && st->p->guest_gen != st->gen_attached) {
			/* its guest paused or stopped under it: dropped, as E2B's
			 * connection is (the SDK reads "terminated" as that) */
			st->ended = true;
			if (e2b_msg_end_stream(&st->out, CONNECT_UNKNOWN, "terminated") < 0)
				return -1;
		}
		if (st->p && !st->ended &&
		    e2b_proc_drain(st->p, &st->cursor, &st->started, &st->ended, &st->out) < 0)
			return -1;
		if (st->w && !st->ended &&
		    e2b_watcher_drain(st->w, &st->started, &st->ended, &st->out) < 0)
			return -1;
	}
	if (st->off < st->out.len) {
		n = st->out.len - st->off < WRITE_MAX ? st->out.len - st->off : WRITE_MAX;
		if (!(b = malloc(LWS_PRE + n)))
			return -1;
		memcpy(b + LWS_PRE, st->out.data + st->off, n);
		if (lws_write(r->wsi, b + LWS_PRE, n, LWS_WRITE_HTTP) != (int)n) {
			free(b);
			return -1;
		}
		free(b);
		st->off += n;
		api_hold(r, STREAM_HOLD_S);
		lws_callback_on_writable(r->wsi);
		return 0;
	}
	if (st->ended) {
		/* Out: close on the next writable, once lws has sent it all. */
		st->closing = true;
		lws_callback_on_writable(r->wsi);
	}
	return 0;
}

static struct e2b_stream *stream_new(struct http_req *r)
{
	struct e2b_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->r = r;
	st->next = streams;
	streams = st;
	e2b_call_of(r)->stream = st;
	api_hold(r, STREAM_HOLD_S);
	return st;
}

/* Answers r with a stream: of p's events (attached here) from cursor,
 * of w's (the caller's reference, taken), or (both NULL, or p with its
 * streams all taken) of the end-of-stream frame with c and message. */
static void stream_start(struct http_req *r, struct e2b_proc *p, struct e2b_watcher *w,
			 uint64_t cursor, enum connect_code c, const char *message)
{
	struct e2b_stream *st = stream_new(r);
	char full[96];

	if (!st) {
		e2b_watcher_stop(w, CONNECT_INTERNAL, "out of memory");
		e2b_watcher_release(w);
		http_reply_json(r, 500, NULL);
		return;
	}
	st->cursor = cursor;
	st->w = w;
	if (p && e2b_proc_attach(p) < 0) {
		snprintf(full, sizeof(full), "this process has %d streams already",
			 E2B_PROC_STREAMS);
		p = NULL;
		c = CONNECT_RESOURCE_EXHAUSTED;
		message = full;
	}
	if (p) {
		st->p = p;
		st->gen_attached = p->guest_gen;
	} else if (w) {
		/* its frames come as the guest's watcher sends */
	} else if (e2b_msg_end_stream(&st->out, c, message) < 0) {
		e2b_envd_release(e2b_call_of(r));
		http_reply_json(r, 500, NULL);
		return;
	} else {
		st->ended = st->started = true;
	}
	if (p || w)
		lws_sul_schedule(r->gw->ctx, 0, &st->sul_keep, on_keepalive, KEEPALIVE_US);
	http_reply_until_close(r, 200, "application/connect+json", stream_write);
}

void e2b_envd_release(struct e2b_call *c)
{
	struct e2b_stream *st = c->stream;

	e2b_files_release(c);
	if (!st)
		return;
	for (struct e2b_stream **pp = &streams; *pp; pp = &(*pp)->next)
		if (*pp == st) {
			*pp = st->next;
			break;
		}
	lws_sul_cancel(&st->sul_keep);
	e2b_proc_detach(st->p); /* the process runs on */
	if (st->w && !(st->create_wait && st->answered))
		e2b_watcher_stop(st->w, CONNECT_CANCELED, "the client went away");
	e2b_watcher_release(st->w);
	bytebuf_free(&st->out);
	free(st);
	c->stream = NULL;
}

/* A CreateWatcher's answer, once its watcher is in place or failed. */
static void create_answer(struct e2b_stream *st)
{
	char err[256];
	bool ready, ended;
	int code;

	e2b_watcher_state(st->w, &ready, &ended, &code, err, sizeof(err));
	if (ready) {
		http_reply_json(st->r, 200, json_pack("{s:s}", "watcherId", st->w->id));
	} else if (ended) {
		unary_error(st->r, (enum connect_code)code, err);
		e2b_watcher_stop(st->w, (enum connect_code)code, err);
	} else {
		return;
	}
	st->answered = true;
	lws_sul_cancel(&st->sul_keep);
}

void e2b_envd_poke_all(void)
{
	for (struct e2b_stream *st = streams; st; st = st->next)
		if (!st->create_wait)
			lws_callback_on_writable(st->r->wsi);
		else if (!st->answered)
			create_answer(st);
}

/* ---- process.Process ---- */

static int64_t connect_timeout_ms(struct http_req *r)
{
	char buf[32];
	int n = lws_hdr_custom_copy(r->wsi, buf, sizeof(buf), "connect-timeout-ms:", 19);

	return n > 0 ? strtoll(buf, NULL, 10) : 0;
}

/* The desktop SDK's command that config ({cmd, args}: the SDK's own) is,
 * into *op; DESKTOP_NONE when it is none. */
static enum desktop_kind desktop_of(const json_t *config, struct desktop_op *op)
{
	const char *argv[256];
	json_t *args = json_object_get(config, "args"), *v;
	size_t i, n = json_array_size(args);

	if (n > sizeof(argv) / sizeof(argv[0]))
		return DESKTOP_NONE;
	json_array_foreach(args, i, v) if (!(argv[i] = json_string_value(v))) return DESKTOP_NONE;
	return desktop_cmd_parse_argv(json_string_value(json_object_get(config, "cmd")), argv, n,
				      op);
}

/* Where a process is started: the one place a command line of the SDK
 * becomes a process. The desktop SDK's commands (docs/e2b-desktop.md) are
 * served by the gateway as processes of its own; its input waits its turn
 * while a person holds the live view's control (409 for the native
 * actions: `aborted` here). Anything else runs in the guest. */
static struct e2b_proc *process_start(struct sess *s, struct e2b_sandbox *sb,
				      const json_t *exec_body, json_t *config, const char *tag,
				      bool keep_stdin, const struct e2b_pty_size *pty,
				      int64_t timeout_ms, int *code, char *err, size_t errlen)
{
	struct desktop_op *op = malloc(sizeof(*op)); /* ~11 KiB: not on the loop's stack */
	enum desktop_kind kind = op ? desktop_of(config, op) : DESKTOP_NONE;
	struct e2b_proc *p;

	if (kind == DESKTOP_NONE || pty->cols) { /* the desktop SDK's never asks for one */
		free(op);
		return e2b_proc_start(sb, exec_body, config, tag, keep_stdin, pty->cols, pty->rows,
				      timeout_ms, code, err, errlen);
	}
	if (desktop_kind_is_input(kind) && stream_controller(s)) {
		snprintf(err, errlen,
			 "a person (%s) holds control of this session in the live view",
			 stream_controller(s));
		*code = CONNECT_ABORTED;
		free(op);
		return NULL;
	}
	/* The stream's password never reaches List, the audit log or a
	 * recording. */
	if (kind == DESKTOP_X11VNC_PASSWD && desktop_redact_secret(config, op->name) < 0) {
		snprintf(err, errlen, "out of memory");
		*code = CONNECT_INTERNAL;
		free(op);
		return NULL;
	}
	p = e2b_proc_serve(sb, op, config, tag, timeout_ms, code, err, errlen);
	free(op);
	return p;
}

/* The one message of a server-streaming call's body, or -EINVAL with
 * the stream answered. */
static int stream_message(struct http_req *r, const uint8_t **msg, size_t *len)
{
	uint8_t flags;
	int n = connect_frame_parse(r->body, r->body_len, CONNECT_MAX_MESSAGE, &flags, msg, len);

	if (n > 0 && (size_t)n == r->body_len && !(flags & CONNECT_FLAG_END))
		return 0;
	stream_start(r, NULL, NULL, 0, CONNECT_INVALID_ARGUMENT,
		     n == -E2BIG    ? "the message is too large"
		     : n == -EPROTO ? "compressed messages are not supported"
				    : "the body must be one Connect envelope");
	return -EINVAL;
}

static void rpc_start(struct http_req *r, struct sess *s, bool root)
{
	struct e2b_sandbox *sb = e2b_sandbox_get(s);
	char err[256], tag[E2B_TAG_MAX];
	const uint8_t *msg;
	json_t *exec_body, *config = NULL;
	struct e2b_pty_size pty;
	struct e2b_proc *p;
	bool keep_stdin;
	size_t len;
	int code;

	if (stream_message(r, &msg, &len) < 0)
		return;
	if (!sb) {
		stream_start(r, NULL, NULL, 0, CONNECT_INTERNAL, "out of memory");
		return;
	}
	exec_body = e2b_start_parse((const char *)msg, len, sb->env_vars, root, &config, tag,
				    sizeof(tag), &keep_stdin, &pty, err, sizeof(err));
	if (!exec_body) {
		stream_start(r, NULL, NULL, 0, CONNECT_INVALID_ARGUMENT, err);
		return;
	}
	p = process_start(s, sb, exec_body, config, tag, keep_stdin, &pty, connect_timeout_ms(r),
			  &code, err, sizeof(err));
	json_decref(exec_body);
	json_decref(config);
	if (!p) {
		stream_start(r, NULL, NULL, 0, (enum connect_code)code, err);
		return;
	}
	sess_count_use(s, 0, 0, 1);
	api_audit_set(r, "argv", json_pack("[O]", json_object_get(p->config, "cmd")));
	json_array_extend(json_object_get(r->audit_fields, "argv"),
			  json_object_get(p->config, "args"));
	api_audit_set(r, "user", json_string(root ? "root" : "desktop"));
	stream_start(r, p, NULL, 0, CONNECT_OK, NULL);
}

static struct e2b_proc *selected(struct sess *s, const struct e2b_proc_req *q)
{
	struct e2b_sandbox *sb = e2b_sandbox_of(s);

	return sb ? e2b_proc_find(sb, q->pid, q->tag) : NULL;
}

static void rpc_connect(struct http_req *r, struct sess *s)
{
	struct e2b_proc_req q;
	const uint8_t *msg;
	struct e2b_proc *p;
	char err[160];
	size_t len;

	if (stream_message(r, &msg, &len) < 0)
		return;
	if (e2b_proc_req_parse(E2B_CALL_CONNECT, (const char *)msg, len, &q, err, sizeof(err)) <
	    0) {
		stream_start(r, NULL, NULL, 0, CONNECT_INVALID_ARGUMENT, err);
		return;
	}
	p = selected(s, &q);
	e2b_proc_req_free(&q);
	if (!p) {
		stream_start(r, NULL, NULL, 0, CONNECT_NOT_FOUND, "no such process");
		return;
	}
	/* what comes from now on */
	stream_start(r, p, NULL, e2b_proc_output_end(p), CONNECT_OK, NULL);
}

/* A client-streaming call's answer, whole: its one (empty) message
 * unless it failed, then the end of the stream with c. */
static void client_stream_answer(struct http_req *r, enum connect_code c, const char *message)
{
	struct bytebuf out = { 0 };

	if ((c == CONNECT_OK && e2b_msg_frame(&out, 0, json_object()) < 0) ||
	    e2b_msg_end_stream(&out, c, message) < 0)
		http_reply_json(r, 500, NULL);
	else
		http_reply_bytes(r, 200, "application/connect+json", out.data, out.len);
	bytebuf_free(&out);
}

/* SendInput, SendSignal, CloseStdin, Update and StreamInput: each a
 * unary answer ({} once done). StreamInput is client streaming: its
 * envelopes came whole in the body, and its answer is a stream of one
 * empty message. */
static void rpc_unary(struct http_req *r, struct sess *s, enum e2b_proc_call call, bool streamed)
{
	struct e2b_proc_req q;
	struct e2b_proc *p;
	char err[160];
	int rc = 0;

	if ((streamed ? e2b_stream_input_parse(r->body, r->body_len, &q, err, sizeof(err))
		      : e2b_proc_req_parse(call, r->body, r->body_len, &q, err, sizeof(err))) < 0) {
		if (streamed)
			client_stream_answer(r, CONNECT_INVALID_ARGUMENT, err);
		else
			unary_error(r, CONNECT_INVALID_ARGUMENT, err);
		return;
	}
	if (!(p = selected(s, &q))) {
		e2b_proc_req_free(&q);
		if (streamed)
			client_stream_answer(r, CONNECT_NOT_FOUND, "no such process");
		else
			unary_error(r, CONNECT_NOT_FOUND, "no such process");
		return;
	}
	if (call == E2B_CALL_SEND_INPUT && q.input_len)
		rc = e2b_proc_input(p, q.input, q.input_len);
	else if (call == E2B_CALL_CLOSE_STDIN)
		rc = e2b_proc_close_stdin(p);
	else if (call == E2B_CALL_SEND_SIGNAL)
		rc = e2b_proc_signal(p, q.signal);
	else if (call == E2B_CALL_UPDATE && q.pty.cols)
		rc = e2b_proc_resize(p, q.pty.cols, q.pty.rows);
	e2b_proc_req_free(&q);
	if (streamed)
		client_stream_answer(r,
				     rc == -ENOBUFS ? CONNECT_RESOURCE_EXHAUSTED
				     : rc < 0	    ? CONNECT_UNAVAILABLE
						    : CONNECT_OK,
				     rc < 0 ? "the process cannot take that now" : NULL);
	else if (rc == -ENOTTY)
		unary_error(r, CONNECT_FAILED_PRECONDITION, "the process has no terminal");
	else if (rc < 0)
		unary_error(r, rc == -ENOBUFS ? CONNECT_RESOURCE_EXHAUSTED : CONNECT_UNAVAILABLE,
			    "the process cannot take that now");
	else
		http_reply_json(r, 200, json_object());
}

/* ---- filesystem.Filesystem's watching ---- */

static const char *home_of(bool root)
{
	return root ? "/root" : "/home/vitrine";
}

static void rpc_watch_dir(struct http_req *r, struct sess *s, bool root)
{
	struct e2b_sandbox *sb = e2b_sandbox_get(s);
	struct e2b_watch_req q;
	struct e2b_watcher *w;
	const uint8_t *msg;
	char err[256];
	size_t len;
	int code;

	if (stream_message(r, &msg, &len) < 0)
		return;
	if (!sb) {
		stream_start(r, NULL, NULL, 0, CONNECT_INTERNAL, "out of memory");
		return;
	}
	if (e2b_watch_req_parse(E2B_WATCH_DIR, (const char *)msg, len, home_of(root), &q, err,
				sizeof(err)) < 0) {
		stream_start(r, NULL, NULL, 0, CONNECT_INVALID_ARGUMENT, err);
		return;
	}
	if (!(w = e2b_watcher_start(sb, &q, root, false, connect_timeout_ms(r), &code, err,
				    sizeof(err)))) {
		stream_start(r, NULL, NULL, 0, (enum connect_code)code, err);
		return;
	}
	stream_start(r, NULL, w, 0, CONNECT_OK, NULL);
}

static void rpc_create_watcher(struct http_req *r, struct sess *s, bool root)
{
	struct e2b_sandbox *sb = e2b_sandbox_get(s);
	struct e2b_watch_req q;
	struct e2b_stream *st;
	struct e2b_watcher *w;
	char err[256];
	int code;

	if (!sb) {
		unary_error(r, CONNECT_INTERNAL, "out of memory");
		return;
	}
	if (e2b_watch_req_parse(E2B_WATCH_CREATE, r->body, r->body_len, home_of(root), &q, err,
				sizeof(err)) < 0) {
		unary_error(r, CONNECT_INVALID_ARGUMENT, err);
		return;
	}
	if (!(w = e2b_watcher_start(sb, &q, root, true, 0, &code, err, sizeof(err)))) {
		unary_error(r, (enum connect_code)code, err);
		return;
	}
	if (!(st = stream_new(r))) {
		e2b_watcher_stop(w, CONNECT_INTERNAL, "out of memory");
		e2b_watcher_release(w);
		unary_error(r, CONNECT_INTERNAL, "out of memory");
		return;
	}
	/* answered by create_answer once the guest's watcher is in place */
	st->w = w;
	st->create_wait = true;
	lws_sul_schedule(r->gw->ctx, 0, &st->sul_keep, on_keepalive, WATCH_START_US);
}

/* GetWatcherEvents and RemoveWatcher. */
static void rpc_watcher(struct http_req *r, struct sess *s, enum e2b_watch_call call)
{
	struct e2b_sandbox *sb = e2b_sandbox_of(s);
	struct e2b_watch_req q;
	struct e2b_watcher *w;
	char err[256], msg[300];
	json_t *events;
	int code;

	if (e2b_watch_req_parse(call, r->body, r->body_len, "/", &q, err, sizeof(err)) < 0) {
		unary_error(r, CONNECT_INVALID_ARGUMENT, err);
		return;
	}
	if (!sb || !(w = e2b_watcher_find(sb, q.id))) {
		snprintf(msg, sizeof(msg), "watcher with id %s not found", q.id);
		unary_error(r, CONNECT_NOT_FOUND, msg);
		return;
	}
	if (call == E2B_WATCH_REMOVE) {
		e2b_watcher_stop(w, CONNECT_CANCELED, "the watcher was removed");
		http_reply_json(r, 200, json_object());
	} else if ((events = e2b_watcher_take(w, &code, err, sizeof(err)))) {
		http_reply_json(r, 200, events);
	} else {
		unary_error(r, (enum connect_code)code, err);
	}
}

/* filesystem.Filesystem's unary calls, as commands (gateway/e2b/e2b_fs.h);
 * answered by e2b_envd_resume. */
static void fs_call(struct http_req *r, struct sess *s, bool root, enum e2b_fs_call call)
{
	struct e2b_call *c = e2b_call_of(r);
	struct e2b_fs_req q;
	char err[160], depth[16];

	if (e2b_fs_req_parse(call, r->body, r->body_len, home_of(root), &q, err, sizeof(err)) < 0) {
		unary_error(r, CONNECT_INVALID_ARGUMENT, err);
		return;
	}
	if (sess_state_of(s) != SESS_READY || sess_busy_with(s) || !sess_agent_of(s)) {
		unary_error(r, CONNECT_UNAVAILABLE, "the sandbox is not running");
		return;
	}
	if (call == E2B_FS_REMOVE && desktop_held_remove(s, q.path) == 0) {
		/* a served scrot's file: it never was in the guest */
		http_reply_json(r, 200, json_object());
		return;
	}
	snprintf(depth, sizeof(depth), "%d", q.depth);
	snprintf(c->files_path, sizeof(c->files_path), "%s", q.path);
	c->fs = 1 + (int)call;
	{
		const char *argv[] = { "/bin/sh", "-c", e2b_fs_script(call), "sh", q.path, q.dest,
				       depth,	  NULL };

		api_exec_start(r, s, argv, NULL, 0, FILES_TIMEOUT_S);
	}
}

static void fs_answer(struct http_req *r, const struct agent_exec_result *res)
{
	struct e2b_call *c = e2b_call_of(r);
	enum e2b_fs_call call = (enum e2b_fs_call)(c->fs - 1);
	char msg[300];

	if (res->exit_code == 0) {
		json_t *j = e2b_fs_answer(call, res->out, res->out_len);

		if (j)
			http_reply_json(r, 200, j);
		else
			unary_error(r, CONNECT_INTERNAL, "out of memory");
		return;
	}
	snprintf(msg, sizeof(msg), "%.250s: %s", c->files_path,
		 res->exit_code == E2B_FS_EXIT_MISSING	? "no such file or directory"
		 : res->exit_code == E2B_FS_EXIT_EXISTS ? "already exists"
		 : res->err_len				? res->err
							: "failed");
	unary_error(r,
		    res->exit_code == E2B_FS_EXIT_MISSING  ? CONNECT_NOT_FOUND
		    : res->exit_code == E2B_FS_EXIT_EXISTS ? CONNECT_ALREADY_EXISTS
		    : res->exit_code == 20		   ? CONNECT_INVALID_ARGUMENT
							   : CONNECT_INTERNAL,
		    msg);
}

/* A look of a call parked for the agent link: the call runs once the
 * link is up, the sandbox is no longer running, or the wait is over
 * (then refused as at once before). */
static bool agent_look(struct e2b_wait *w, bool late)
{
	struct e2b_call *c = lws_container_of(w, struct e2b_call, wait);
	struct sess *s = sess_find(c->r->gw, c->sandbox);

	if (!late && s && agent_coming(s))
		return false;
	c->agent_waited = true;
	e2b_envd(c->r);
	return true;
}

/* Whether r's call (m) is one that needs the agent link now, and it
 * is not up yet: then parked for it (true). Native exec waits for it as
 * long (gateway/guest/exec.c), and a gateway just restarted has its
 * sandboxes' links up a moment after it serves. */
static bool wait_for_agent(struct http_req *r, struct sess *s, const char *m)
{
	struct e2b_call *c = e2b_call_of(r);
	enum e2b_watch_call wcall;

	if (c->agent_waited || !agent_coming(s))
		return false;
	if (strcmp(m, "process.Process/Start") &&
	    !(e2b_watch_call_of(m, &wcall) == 0 &&
	      (wcall == E2B_WATCH_DIR || wcall == E2B_WATCH_CREATE)))
		return false;
	api_hold(r, SESS_AGENT_WAIT_MS / 1000 + 10);
	e2b_wait_start(&c->wait, r->gw->ctx, s, NULL, SESS_AGENT_WAIT_MS, agent_look);
	return true;
}

static void rpc(struct http_req *r, struct sess *s, bool root)
{
	const char *m = e2b_call_of(r)->route.rpc;
	enum e2b_watch_call wcall;
	struct e2b_sandbox *sb;
	enum e2b_fs_call call;

	if (wait_for_agent(r, s, m))
		return;
	if (e2b_fs_call_of(m, &call) == 0)
		fs_call(r, s, root, call);
	else if (e2b_watch_call_of(m, &wcall) == 0 && wcall == E2B_WATCH_DIR)
		rpc_watch_dir(r, s, root);
	else if (e2b_watch_call_of(m, &wcall) == 0 && wcall == E2B_WATCH_CREATE)
		rpc_create_watcher(r, s, root);
	else if (e2b_watch_call_of(m, &wcall) == 0)
		rpc_watcher(r, s, wcall);
	else if (!strcmp(m, "process.Process/Start"))
		rpc_start(r, s, root);
	else if (!strcmp(m, "process.Process/Connect"))
		rpc_connect(r, s);
	else if (!strcmp(m, "process.Process/List")) {
		sb = e2b_sandbox_of(s);
		http_reply_json(r, 200, sb ? e2b_proc_list(sb) : json_pack("{s:[]}", "processes"));
	} else if (!strcmp(m, "process.Process/SendInput"))
		rpc_unary(r, s, E2B_CALL_SEND_INPUT, false);
	else if (!strcmp(m, "process.Process/StreamInput"))
		rpc_unary(r, s, E2B_CALL_SEND_INPUT, true);
	else if (!strcmp(m, "process.Process/SendSignal"))
		rpc_unary(r, s, E2B_CALL_SEND_SIGNAL, false);
	else if (!strcmp(m, "process.Process/CloseStdin"))
		rpc_unary(r, s, E2B_CALL_CLOSE_STDIN, false);
	else if (!strcmp(m, "process.Process/Update"))
		rpc_unary(r, s, E2B_CALL_UPDATE, false);
	else
		unary_error(r, CONNECT_UNIMPLEMENTED, "this method is not implemented by Vitrine");
}

void e2b_envd_resume(struct http_req *r, struct sess *s, bool timed_out)
{
	const struct agent_exec_result *res;
	const char *err;

	/* only filesystem calls park (/files streams: e2b_files.c) */
	if (!e2b_call_of(r)->fs || !api_exec_finished(r, s, timed_out))
		return;
	if (exec_result(r->exec, &res, &err) < 0)
		unary_error(r, CONNECT_UNAVAILABLE, err);
	else
		fs_answer(r, res);
	exec_release(r->exec);
	r->exec = NULL;
}

void e2b_envd(struct http_req *r)
{
	enum e2b_kind kind = e2b_call_of(r)->route.kind;
	struct sess *s = sess_find(r->gw, e2b_call_of(r)->sandbox);
	char auth[128], user[64];
	unsigned rights;
	bool root;

	if (!e2b_call_of(r)->files && not_running(s)) {
		proxy_not_running(r, s);
		return;
	}
	if (kind == E2B_ENVD_HEALTH) {
		http_reply_bytes(r, 204, "text/plain", "", 0);
		return;
	}
	if (kind == E2B_ENVD_NOT_FOUND || kind == E2B_BAD_METHOD) {
		plain_error(r, kind == E2B_BAD_METHOD ? 405 : 404, "no such envd call");
		return;
	}
	if (s)
		snprintf(r->audit_session, sizeof(r->audit_session), "%s", sess_id(s));
	rights = s ? e2b_rights(r, s) : 0;
	if (!s || !(rights & AUTH_R_EXEC)) {
		if (kind == E2B_ENVD_RPC)
			unary_error(r, CONNECT_UNAUTHENTICATED,
				    s ? "X-Access-Token is not valid for this sandbox"
				      : "no such sandbox");
		else
			plain_error(r, 401, "X-Access-Token is not valid for this sandbox");
		return;
	}
	if (lws_hdr_copy(r->wsi, auth, sizeof(auth), WSI_TOKEN_HTTP_AUTHORIZATION) <= 0)
		auth[0] = '\0';
	e2b_query(r, "username=", user, sizeof(user));
	if (e2b_user_parse(auth, user, &root) < 0 || (root && !(rights & AUTH_R_ROOT))) {
		if (kind == E2B_ENVD_RPC)
			unary_error(r, CONNECT_PERMISSION_DENIED,
				    "the user must be \"user\" (or \"root\", with a root token)");
		else
			plain_error(r, 403, "the user must be \"user\"");
		return;
	}
	if (kind == E2B_ENVD_FILES)
		e2b_files(r, s, root);
	else
		rpc(r, s, root);
}
