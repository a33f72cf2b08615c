/* vmm-qemu/qga.c: see qga.h. */
#include "vmm-qemu/qga.h"

#include "common/base64.h"
#include "vmm-qemu/line_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL '\xff'
/* A sync reply is a short line; anything longer after a sentinel is stale. */
#define SYNC_LINE_MAX 256

struct qga_cmd {
	struct qga_cmd *next; /* qga::queue_head list */
	int64_t handle;
	char *text; /* owned; ends in '\n', not NUL-terminated */
	size_t len, off; /* off: bytes written so far */
	qga_reply_fn fn;
	void *ud;
};

struct qga {
	/* Our guest-sync-delimited: 0xFF, the command, '\n'. */
	char sync_text[128];
	size_t sync_len, sync_off;
	int64_t sync_id;
	bool syncing; /* waiting for the reply that echoes sync_id */
	bool skipping; /* syncing, and dropping input until the next 0xFF */
	struct qga_cmd *in_flight; /* owned: sent or being written, awaiting its reply */
	struct qga_cmd *queue_head, **queue_tail; /* owned: not sent yet, in order */
	int64_t next_handle;
	struct line_reader in; /* owned: bytes of a line not yet terminated; 0xFF resets it */
	char broken[256]; /* set once the stream is unusable */
};

__attribute__((format(printf, 3, 4))) static void set_err(char *err, size_t errlen, const char *fmt,
							  ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void start_sync(struct qga *g, int64_t sync_id)
{
	int n = snprintf(g->sync_text, sizeof(g->sync_text),
			 "%c{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":%lld}}\n",
			 SENTINEL, (long long)sync_id);

	g->sync_len = (size_t)n; /* < sizeof(sync_text): an int64 has at most 20 digits */
	g->sync_off = 0;
	g->sync_id = sync_id;
	g->syncing = true;
	g->skipping = true;
	line_reader_reset(&g->in);
}

struct qga *qga_create(int64_t sync_id)
{
	struct qga *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->queue_tail = &g->queue_head;
	g->next_handle = 1;
	line_reader_init(&g->in, (unsigned char)SENTINEL);
	start_sync(g, sync_id);
	return g;
}

static void fail_cmd(struct qga_cmd *c, const char *cls, const char *desc)
{
	struct qga_error e;

	if (c->fn) {
		snprintf(e.cls, sizeof(e.cls), "%s", cls);
		snprintf(e.desc, sizeof(e.desc), "%s", desc);
		c->fn(c->ud, NULL, &e);
	}
	free(c->text);
	free(c);
}

void qga_destroy(struct qga *g)
{
	const char *gone = "the guest agent connection closed";

	if (!g)
		return;
	if (g->in_flight)
		fail_cmd(g->in_flight, "Disconnected", gone);
	while (g->queue_head) {
		struct qga_cmd *c = g->queue_head;

		g->queue_head = c->next;
		fail_cmd(c, "Disconnected", gone);
	}
	line_reader_free(&g->in);
	free(g);
}

int64_t qga_command(struct qga *g, const char *cmd, json_t *args, qga_reply_fn fn, void *ud)
{
	struct qga_cmd *c = NULL;
	json_t *obj;
	char *text = NULL;

	obj = json_pack("{s:s}", "execute", cmd);
	if (!obj || (args && json_object_set(obj, "arguments", args) < 0))
		goto oom;
	text = json_dumps(obj, JSON_COMPACT);
	c = calloc(1, sizeof(*c));
	if (!text || !c)
		goto oom;
	json_decref(obj);
	json_decref(args);
	c->len = strlen(text);
	text[c->len++] = '\n'; /* overwrites the NUL: text is not a C string */
	c->text = text;
	c->fn = fn;
	c->ud = ud;
	c->handle = g->next_handle++;
	*g->queue_tail = c;
	g->queue_tail = &c->next;
	return c->handle;
oom:
	free(c);
	free(text);
	json_decref(obj);
	json_decref(args);
	return -ENOMEM;
}

void qga_forget(struct qga *g, int64_t handle)
{
	struct qga_cmd **pp;

	if (g->in_flight && g->in_flight->handle == handle) {
		g->in_flight->fn = NULL; /* its reply is still due */
		return;
	}
	for (pp = &g->queue_head; *pp; pp = &(*pp)->next) {
		struct qga_cmd *c = *pp;

		if (c->handle != handle)
			continue;
		/* Not sent yet: it need not be sent at all. */
		*pp = c->next;
		if (g->queue_tail == &c->next)
			g->queue_tail = pp;
		free(c->text);
		free(c);
		return;
	}
}

void qga_resync(struct qga *g, int64_t sync_id)
{
	struct qga_cmd *c = g->in_flight;

	g->in_flight = NULL;
	start_sync(g, sync_id);
	if (c)
		fail_cmd(c, "Abandoned", "no reply in time; the agent is being resynchronised");
}

/* A line after a sentinel while syncing: our sync reply, or stale. */
static void handle_sync_line(struct qga *g, const char *line, size_t len)
{
	json_t *root = json_loadb(line, len, 0, NULL);
	json_t *ret = json_object_get(root, "return");

	if (json_is_integer(ret) && json_integer_value(ret) == g->sync_id) {
		g->syncing = false;
		g->skipping = false;
	} else {
		g->skipping = true; /* stale: wait for the next sentinel */
	}
	json_decref(root);
}

static int handle_reply_line(struct qga *g, const char *line, size_t len, char *err, size_t errlen)
{
	struct qga_cmd *c = g->in_flight;
	struct qga_error qerr;
	json_error_t jerr;
	json_t *root, *v;
	int rc = 0;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return 0;
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		set_err(err, errlen, "malformed JSON from the guest agent: %s", jerr.text);
		return -EPROTO;
	}
	if (!json_is_object(root)) {
		set_err(err, errlen, "%s", "guest agent message is not a JSON object");
		rc = -EPROTO;
	} else if (!c || c->off < c->len) {
		set_err(err, errlen, "%s", "guest agent reply to no command");
		rc = -EPROTO;
	} else if ((v = json_object_get(root, "return"))) {
		g->in_flight = NULL;
		if (c->fn)
			c->fn(c->ud, v, NULL);
		free(c->text);
		free(c);
	} else if ((v = json_object_get(root, "error"))) {
		const char *cls = json_string_value(json_object_get(v, "class"));
		const char *desc = json_string_value(json_object_get(v, "desc"));

		if (!cls) {
			set_err(err, errlen, "%s", "guest agent error reply without a class");
			rc = -EPROTO;
		} else {
			g->in_flight = NULL;
			snprintf(qerr.cls, sizeof(qerr.cls), "%s", cls);
			snprintf(qerr.desc, sizeof(qerr.desc), "%s", desc ? desc : "");
			if (c->fn)
				c->fn(c->ud, NULL, &qerr);
			free(c->text);
			free(c);
		}
	} else {
		set_err(err, errlen, "%s", "guest agent message is neither return nor error");
		rc = -EPROTO;
	}
	json_decref(root);
	return rc;
}

/* Feeds bytes while syncing, advancing *bytes and *len past those used: all
 * of them, or up to the end of the sync reply, after which the rest are
 * replies. */
static void feed_syncing(struct qga *g, const char **bytes, size_t *len)
{
	while (*len > 0 && g->syncing) {
		const char *line;
		size_t n;
		int got;

		if (g->skipping) {
			const char *ff = memchr(*bytes, SENTINEL, *len);

			if (!ff) {
				*bytes += *len;
				*len = 0;
				return;
			}
			g->skipping = false;
			line_reader_reset(&g->in);
			*len -= (size_t)(ff - *bytes) + 1;
			*bytes = ff + 1;
			continue;
		}
		/* A new sentinel before the line ended starts over there (the
		 * reader's reset byte). */
		got = line_reader_next(&g->in, SYNC_LINE_MAX, bytes, len, &line, &n, NULL, 0);
		if (got < 0) {
			/* Too long to be our reply (or no memory to look): stale. */
			g->skipping = true;
			line_reader_reset(&g->in);
		} else if (got == 1) {
			handle_sync_line(g, line, n);
		}
	}
}

int qga_feed(struct qga *g, const char *bytes, size_t len, char *err, size_t errlen)
{
	int rc = 0;

	if (g->broken[0]) {
		set_err(err, errlen, "%s", g->broken);
		return -EPROTO;
	}
	while (len > 0 && rc == 0) {
		const char *line;
		size_t n;
		int got;

		if (g->syncing) {
			feed_syncing(g, &bytes, &len);
			continue;
		}
		/* A sentinel flushes a partial line (only after a
		 * guest-sync-delimited a caller sent itself): the reader's reset
		 * byte. A callback may resync, which resets the reader: the line
		 * stays readable meanwhile. */
		got = line_reader_next(&g->in, QGA_MAX_LINE, &bytes, &len, &line, &n, err, errlen);
		if (got == 0)
			break;
		if (got == -EMSGSIZE) {
			set_err(err, errlen, "%s", "guest agent reply longer than QGA_MAX_LINE");
			rc = -EPROTO;
		} else if (got < 0) {
			rc = got;
		} else {
			rc = handle_reply_line(g, line, n, err, errlen);
		}
	}
	if (rc < 0)
		snprintf(g->broken, sizeof(g->broken), "%s", errlen ? err : "protocol error");
	return rc;
}

bool qga_next_output(struct qga *g, const char **data, size_t *len)
{
	struct qga_cmd *c;

	if (g->broken[0])
		return false;
	if (g->syncing) {
		if (g->sync_off == g->sync_len)
			return false;
		*data = g->sync_text + g->sync_off;
		*len = g->sync_len - g->sync_off;
		return true;
	}
	if (!g->in_flight && g->queue_head) {
		g->in_flight = g->queue_head;
		g->queue_head = g->in_flight->next;
		if (!g->queue_head)
			g->queue_tail = &g->queue_head;
		g->in_flight->next = NULL;
	}
	c = g->in_flight;
	if (!c || c->off == c->len)
		return false;
	*data = c->text + c->off;
	*len = c->len - c->off;
	return true;
}

void qga_output_done(struct qga *g, size_t n)
{
	if (g->syncing) {
		g->sync_off += n < g->sync_len - g->sync_off ? n : g->sync_len - g->sync_off;
		return;
	}
	if (g->in_flight)
		g->in_flight->off += n < g->in_flight->len - g->in_flight->off
					     ? n
					     : g->in_flight->len - g->in_flight->off;
}

bool qga_synced(const struct qga *g)
{
	return !g->syncing;
}

size_t qga_pending(const struct qga *g)
{
	size_t n = g->in_flight ? 1 : 0;

	for (const struct qga_cmd *c = g->queue_head; c; c = c->next)
		n++;
	return n;
}

const char *qga_broken(const struct qga *g)
{
	return g->broken[0] ? g->broken : NULL;
}

/* ---- guest-exec ---- */

void qga_exec_result_free(struct qga_exec_result *r)
{
	if (!r)
		return;
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static json_t *string_array(const char *const *v)
{
	json_t *a = json_array();

	for (; a && *v; v++)
		if (json_array_append_new(a, json_string(*v)) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

json_t *qga_exec_args(const char *const *argv, const char *const *env, const void *stdin_data,
		      size_t stdin_len, char *err, size_t errlen)
{
	json_t *args;
	char *b64 = NULL;

	if (!argv || !argv[0] || !argv[0][0]) {
		set_err(err, errlen, "%s", "guest-exec needs a program");
		return NULL;
	}
	/* string_array() fails on a string that is not UTF-8, and then so does
	 * json_pack(). */
	args = json_pack("{s:s, s:o, s:b}", "path", argv[0], "arg", string_array(argv + 1),
			 "capture-output", 1);
	if (!args)
		goto fail;
	if (env && json_object_set_new(args, "env", string_array(env)) < 0)
		goto fail;
	if (stdin_data) {
		b64 = base64_encode(stdin_data, stdin_len, NULL);
		if (!b64 || json_object_set_new(args, "input-data", json_string(b64)) < 0)
			goto fail;
		free(b64);
	}
	return args;
fail:
	free(b64);
	json_decref(args);
	set_err(err, errlen, "%s", "guest-exec: out of memory, or a string is not UTF-8");
	return NULL;
}

int qga_exec_parse_pid(const json_t *ret, int64_t *pid, char *err, size_t errlen)
{
	json_t *p = json_object_get(ret, "pid");

	if (!json_is_integer(p) || json_integer_value(p) <= 0) {
		set_err(err, errlen, "%s", "guest-exec returned no pid");
		return -EPROTO;
	}
	*pid = json_integer_value(p);
	return 0;
}

/* Decodes the base64 member key of ret into *buf (NUL-terminated, at most
 * max bytes kept). */
static int decode_stream(const json_t *ret, const char *key, size_t max, char **buf, size_t *len,
			 bool *truncated, char *err, size_t errlen)
{
	json_t *v = json_object_get(ret, key);
	const char *s;
	size_t n, full, cap;

	*buf = NULL;
	*len = 0;
	if (!v) {
		*buf = calloc(1, 1);
		goto check;
	}
	if (!json_is_string(v)) {
		set_err(err, errlen, "guest-exec-status: %s is not a string", key);
		return -EPROTO;
	}
	s = json_string_value(v);
	n = json_string_length(v);
	cap = n / 4 * 3 + 3;
	if (cap > max)
		cap = max;
	*buf = malloc(cap + 1);
	if (!*buf)
		goto check;
	if (base64_decode(s, n, *buf, cap, &full) < 0) {
		free(*buf);
		*buf = NULL;
		set_err(err, errlen, "guest-exec-status: %s is not base64", key);
		return -EPROTO;
	}
	if (full > cap) {
		*truncated = true;
		full = cap;
	}
	*len = full;
	(*buf)[full] = '\0';
check:
	if (!*buf) {
		set_err(err, errlen, "%s", "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int qga_exec_parse_status(const json_t *ret, size_t max_output, struct qga_exec_result *r,
			  char *err, size_t errlen)
{
	json_t *exited = json_object_get(ret, "exited");
	json_t *code = json_object_get(ret, "exitcode");
	json_t *sig = json_object_get(ret, "signal");
	int64_t pid = r->pid;
	int rc;

	qga_exec_result_free(r);
	r->pid = pid;
	if (!json_is_object(ret) || !json_is_boolean(exited)) {
		set_err(err, errlen, "%s", "guest-exec-status returned no exited flag");
		return -EPROTO;
	}
	r->exited = json_is_true(exited);
	if (!r->exited)
		return 0;
	if ((code && !json_is_integer(code)) || (sig && !json_is_integer(sig))) {
		set_err(err, errlen, "%s", "guest-exec-status: exitcode or signal is not a number");
		return -EPROTO;
	}
	r->signal = sig ? (int)json_integer_value(sig) : 0;
	r->exit_code = code && !sig ? (int)json_integer_value(code) : -1;
	r->out_truncated = json_is_true(json_object_get(ret, "out-truncated"));
	r->err_truncated = json_is_true(json_object_get(ret, "err-truncated"));
	rc = decode_stream(ret, "out-data", max_output, &r->out, &r->out_len, &r->out_truncated,
			   err, errlen);
	if (rc == 0)
		rc = decode_stream(ret, "err-data", max_output, &r->err, &r->err_len,
				   &r->err_truncated, err, errlen);
	if (rc < 0) {
		qga_exec_result_free(r);
		r->pid = pid;
	}
	return rc;
}
