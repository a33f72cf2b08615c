/* vmm-qemu/qmp.h: the QEMU Machine Protocol, as a pure state machine.
 *
 * No I/O happens here: bytes read from the monitor socket go in through
 * qmp_feed(), bytes to write come out through qmp_next_output(). That keeps the
 * whole protocol (greeting, capability negotiation, ids, errors, events that
 * arrive at any time, partial reads) testable without QEMU. qmp_client.c is
 * the socket glue. Modelled on libvirt's qemu_monitor_json.c. */
#ifndef VITRINE_VMM_QMP_H
#define VITRINE_VMM_QMP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest single QMP message accepted; a longer line is a protocol error. */
#define QMP_MAX_LINE (8u << 20)

enum qmp_msg_kind {
	QMP_MSG_GREETING, /* {"QMP": {...}} */
	QMP_MSG_RETURN, /* {"return": ..., "id": ...} */
	QMP_MSG_ERROR, /* {"error": {"class", "desc"}, "id": ...} */
	QMP_MSG_EVENT, /* {"event": NAME, "data": {...}, "timestamp": ...} */
};

struct qmp_error {
	char cls[64]; /* e.g. "GenericError", or "Disconnected" when the monitor went away */
	char desc[512];
};

/* One parsed message. The json_t pointers borrow from root. */
struct qmp_msg {
	enum qmp_msg_kind kind;
	json_t *root; /* owned by whoever called qmp_parse_message */
	bool has_id;
	uint64_t id; /* our ids are positive integers; others are treated as absent */
	const json_t *ret; /* QMP_MSG_RETURN */
	struct qmp_error error; /* QMP_MSG_ERROR */
	const char *event; /* QMP_MSG_EVENT */
	const json_t *data; /* QMP_MSG_EVENT, may be NULL */
};

/* Parses one line (without its line terminator). On success fills *msg, whose
 * root the caller must json_decref, and returns 0. On malformed or unknown
 * input returns -EPROTO with a reason in err. */
int qmp_parse_message(const char *line, size_t len, struct qmp_msg *msg, char *err, size_t errlen);

/* Reply to a command: ret is the "return" value on success and NULL on error,
 * err is NULL on success. Both are only valid during the call. */
typedef void (*qmp_reply_fn)(void *ud, const json_t *ret, const struct qmp_error *err);
/* An asynchronous event. data may be NULL. */
typedef void (*qmp_event_fn)(void *ud, const char *name, const json_t *data);

struct qmp;

/* Creates a session that waits for the greeting, then negotiates capabilities
 * on its own. Commands queued before that are sent once it is done.
 * Returns NULL when out of memory. */
struct qmp *qmp_create(qmp_event_fn on_event, void *ud);
/* Fails every pending command with class "Disconnected", then frees. Accepts NULL. */
void qmp_destroy(struct qmp *q);

/* Queues cmd with args (a JSON object, or NULL; the reference is stolen
 * either way). fd >= 0 travels with the command as SCM_RIGHTS (for getfd and
 * add-fd); it is not owned by the session. fn may be NULL.
 * Returns the command's id (> 0), or -ENOMEM. */
int64_t qmp_command(struct qmp *q, const char *cmd, json_t *args, int fd, qmp_reply_fn fn,
		    void *ud);

/* Drops the callback of command id: its reply, if it comes, is discarded.
 * This function can't fail; an unknown id is ignored. */
void qmp_forget(struct qmp *q, uint64_t id);

/* Feeds bytes read from the monitor. Dispatches every complete message to the
 * callbacks (which may queue further commands). Returns 0, or -EPROTO when the
 * stream is broken (reason in err); the session must then be torn down. */
int qmp_feed(struct qmp *q, const char *bytes, size_t len, char *err, size_t errlen);

/* The next chunk to write: *data and *len, and *fd (-1 when none) that must be
 * sent with its first byte. Returns false when nothing is waiting. */
bool qmp_next_output(struct qmp *q, const char **data, size_t *len, int *fd);
/* Marks n bytes of the chunk from qmp_next_output() as written. */
void qmp_output_done(struct qmp *q, size_t n);

/* True once the greeting arrived and qmp_capabilities succeeded. */
bool qmp_ready(const struct qmp *q);
/* Number of commands still waiting for a reply. */
size_t qmp_pending(const struct qmp *q);

#endif
