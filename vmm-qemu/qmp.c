/* vmm-qemu/qmp.c: see qmp.h. */
#include "vmm-qemu/qmp.h"

#include "vmm-qemu/line_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct qmp_out {
	struct qmp_out *next; /* qmp::out_head list or qmp::held_head list */
	char *data; /* owned */
	size_t len, off;
	int fd;
};

struct qmp_pending {
	uint64_t id;
	qmp_reply_fn fn;
	void *ud;
};

struct qmp {
	qmp_event_fn on_event;
	void *ud;
	struct line_reader in; /* owned: bytes of a line not yet terminated */
	bool greeted, ready;
	uint64_t caps_id;
	uint64_t next_id;
	struct qmp_pending *pending; /* owned array */
	size_t n_pending, cap_pending;
	/* Written as soon as possible. */
	struct qmp_out *out_head, **out_tail;
	/* Commands queued before capability negotiation finished. */
	struct qmp_out *held_head, **held_tail;
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

int qmp_parse_message(const char *line, size_t len, struct qmp_msg *msg, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root, *id, *v;

	memset(msg, 0, sizeof(*msg));
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		set_err(err, errlen, "malformed JSON: %s", jerr.text);
		return -EPROTO;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		set_err(err, errlen, "%s", "message is not a JSON object");
		return -EPROTO;
	}
	msg->root = root;
	id = json_object_get(root, "id");
	if (json_is_integer(id) && json_integer_value(id) > 0) {
		msg->has_id = true;
		msg->id = (uint64_t)json_integer_value(id);
	}
	if (json_is_object(json_object_get(root, "QMP"))) {
		msg->kind = QMP_MSG_GREETING;
		return 0;
	}
	if ((v = json_object_get(root, "return"))) {
		msg->kind = QMP_MSG_RETURN;
		msg->ret = v;
		return 0;
	}
	if ((v = json_object_get(root, "error"))) {
		const char *cls = json_string_value(json_object_get(v, "class"));
		const char *desc = json_string_value(json_object_get(v, "desc"));

		if (!json_is_object(v) || !cls) {
			set_err(err, errlen, "%s", "error reply without a class");
			goto fail;
		}
		msg->kind = QMP_MSG_ERROR;
		snprintf(msg->error.cls, sizeof(msg->error.cls), "%s", cls);
		snprintf(msg->error.desc, sizeof(msg->error.desc), "%s", desc ? desc : "");
		return 0;
	}
	if ((v = json_object_get(root, "event"))) {
		if (!json_is_string(v)) {
			set_err(err, errlen, "%s", "event name is not a string");
			goto fail;
		}
		msg->kind = QMP_MSG_EVENT;
		msg->event = json_string_value(v);
		msg->data = json_object_get(root, "data");
		return 0;
	}
	set_err(err, errlen, "%s", "message is neither greeting, return, error nor event");
fail:
	json_decref(root);
	msg->root = NULL;
	return -EPROTO;
}

struct qmp *qmp_create(qmp_event_fn on_event, void *ud)
{
	struct qmp *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->on_event = on_event;
	q->ud = ud;
	q->next_id = 1;
	line_reader_init(&q->in, -1);
	q->out_tail = &q->out_head;
	q->held_tail = &q->held_head;
	return q;
}

static void free_list(struct qmp_out *o)
{
	while (o) {
		struct qmp_out *next = o->next;

		free(o->data);
		free(o);
		o = next;
	}
}

void qmp_destroy(struct qmp *q)
{
	struct qmp_error gone = { .cls = "Disconnected", .desc = "the monitor connection closed" };

	if (!q)
		return;
	/* Callbacks run while q is still intact, but must not queue new commands. */
	for (size_t i = 0; i < q->n_pending; i++)
		if (q->pending[i].fn)
			q->pending[i].fn(q->pending[i].ud, NULL, &gone);
	free(q->pending);
	free_list(q->out_head);
	free_list(q->held_head);
	line_reader_free(&q->in);
	free(q);
}

static int add_pending(struct qmp *q, uint64_t id, qmp_reply_fn fn, void *ud)
{
	if (q->n_pending == q->cap_pending) {
		size_t cap = q->cap_pending ? q->cap_pending * 2 : 8;
		struct qmp_pending *np = realloc(q->pending, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		q->pending = np;
		q->cap_pending = cap;
	}
	q->pending[q->n_pending++] = (struct qmp_pending){ id, fn, ud };
	return 0;
}

/* Encodes one command; appends it to the live queue, or the held one. */
static int64_t enqueue(struct qmp *q, const char *cmd, json_t *args, int fd, bool held,
		       qmp_reply_fn fn, void *ud)
{
	uint64_t id = q->next_id;
	struct qmp_out *o = NULL;
	json_t *obj = NULL;
	char *text = NULL;

	obj = json_pack("{s:s, s:I}", "execute", cmd, "id", (json_int_t)id);
	if (!obj)
		goto oom;
	if (args && json_object_set(obj, "arguments", args) < 0)
		goto oom;
	text = json_dumps(obj, JSON_COMPACT);
	o = calloc(1, sizeof(*o));
	if (!text || !o || add_pending(q, id, fn, ud) < 0)
		goto oom;
	json_decref(obj);
	json_decref(args);
	o->len = strlen(text);
	text[o->len++] = '\n'; /* overwrites the NUL: data is not a C string */
	o->data = text;
	o->fd = fd;
	if (held) {
		*q->held_tail = o;
		q->held_tail = &o->next;
	} else {
		*q->out_tail = o;
		q->out_tail = &o->next;
	}
	q->next_id++;
	return (int64_t)id;
oom:
	free(o);
	free(text);
	json_decref(obj);
	json_decref(args);
	return -ENOMEM;
}

int64_t qmp_command(struct qmp *q, const char *cmd, json_t *args, int fd, qmp_reply_fn fn, void *ud)
{
	return enqueue(q, cmd, args, fd, !q->ready, fn, ud);
}

void qmp_forget(struct qmp *q, uint64_t id)
{
	for (size_t i = 0; i < q->n_pending; i++)
		if (q->pending[i].id == id)
			q->pending[i].fn = NULL;
}

static void release_held(struct qmp *q)
{
	if (!q->held_head)
		return;
	*q->out_tail = q->held_head;
	q->out_tail = q->held_tail;
	q->held_head = NULL;
	q->held_tail = &q->held_head;
}

static int dispatch_reply(struct qmp *q, struct qmp_msg *m, char *err, size_t errlen)
{
	struct qmp_pending p;
	size_t i;

	if (!m->has_id) {
		set_err(err, errlen, "%s", "reply without an id");
		return -EPROTO;
	}
	for (i = 0; i < q->n_pending; i++)
		if (q->pending[i].id == m->id)
			break;
	if (i == q->n_pending) {
		set_err(err, errlen, "%s", "reply to a command that was never sent");
		return -EPROTO;
	}
	p = q->pending[i];
	memmove(&q->pending[i], &q->pending[i + 1], (q->n_pending - i - 1) * sizeof(p));
	q->n_pending--;
	if (p.id == q->caps_id) {
		if (m->kind == QMP_MSG_ERROR) {
			set_err(err, errlen, "qmp_capabilities refused: %s", m->error.desc);
			return -EPROTO;
		}
		q->ready = true;
		release_held(q);
		return 0;
	}
	if (p.fn)
		p.fn(p.ud, m->kind == QMP_MSG_RETURN ? m->ret : NULL,
		     m->kind == QMP_MSG_ERROR ? &m->error : NULL);
	return 0;
}

static int handle_line(struct qmp *q, const char *line, size_t len, char *err, size_t errlen)
{
	struct qmp_msg m;
	int rc;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return 0;
	rc = qmp_parse_message(line, len, &m, err, errlen);
	if (rc < 0)
		return rc;
	if (!q->greeted && m.kind != QMP_MSG_GREETING) {
		set_err(err, errlen, "%s", "first message is not the QMP greeting");
		rc = -EPROTO;
	} else if (m.kind == QMP_MSG_GREETING) {
		if (q->greeted) {
			set_err(err, errlen, "%s", "second QMP greeting");
			rc = -EPROTO;
		} else {
			int64_t id = enqueue(q, "qmp_capabilities", NULL, -1, false, NULL, NULL);

			q->greeted = true;
			if (id < 0) {
				set_err(err, errlen, "%s", "out of memory");
				rc = -ENOMEM;
			} else {
				q->caps_id = (uint64_t)id;
			}
		}
	} else if (m.kind == QMP_MSG_EVENT) {
		if (q->on_event)
			q->on_event(q->ud, m.event, m.data);
	} else {
		rc = dispatch_reply(q, &m, err, errlen);
	}
	json_decref(m.root);
	return rc;
}

int qmp_feed(struct qmp *q, const char *bytes, size_t len, char *err, size_t errlen)
{
	int rc = 0;

	if (q->broken[0]) {
		set_err(err, errlen, "%s", q->broken);
		return -EPROTO;
	}
	while (rc == 0) {
		const char *line;
		size_t n;
		int got = line_reader_next(&q->in, QMP_MAX_LINE, &bytes, &len, &line, &n, err,
					   errlen);

		if (got == 0)
			break;
		if (got == -EMSGSIZE) {
			set_err(err, errlen, "%s", "message longer than QMP_MAX_LINE");
			rc = -EPROTO;
		} else if (got < 0) {
			rc = got;
		} else {
			rc = handle_line(q, line, n, err, errlen);
		}
	}
	if (rc < 0)
		snprintf(q->broken, sizeof(q->broken), "%s", errlen ? err : "protocol error");
	return rc;
}

bool qmp_next_output(struct qmp *q, const char **data, size_t *len, int *fd)
{
	struct qmp_out *o = q->out_head;

	if (!o)
		return false;
	*data = o->data + o->off;
	*len = o->len - o->off;
	*fd = o->off == 0 ? o->fd : -1;
	return true;
}

void qmp_output_done(struct qmp *q, size_t n)
{
	struct qmp_out *o = q->out_head;

	if (!o)
		return;
	o->off += n;
	if (o->off < o->len)
		return;
	q->out_head = o->next;
	if (!q->out_head)
		q->out_tail = &q->out_head;
	free(o->data);
	free(o);
}

bool qmp_ready(const struct qmp *q)
{
	return q->ready;
}

size_t qmp_pending(const struct qmp *q)
{
	return q->n_pending - (q->ready ? 0 : (q->caps_id ? 1 : 0));
}
