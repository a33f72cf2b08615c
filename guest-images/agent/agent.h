/* guest-images/agent/agent.h: vitrine-agent's shared state: the link to
 * the host (one virtio-serial port), its channels, and the helpers the
 * exec and WebSocket parts use. One thread, one poll loop (agent.c). */
#ifndef VITRINE_AGENT_H
#define VITRINE_AGENT_H

#include "common/agent_proto.h"

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A byte queue: data[off..len) still to go. */
struct bq {
	unsigned char *data;
	size_t off, len, cap;
};

int bq_put(struct bq *q, const void *p, size_t n);
size_t bq_size(const struct bq *q);
void bq_consume(struct bq *q, size_t n);
void bq_free(struct bq *q);

enum chan_kind { CHAN_EXEC, CHAN_TCP, CHAN_CDP };

/* Where agent_ws_next is in the browser's frames. */
struct ws_reader {
	uint64_t left; /* payload bytes of the current data frame not yet passed on */
	uint64_t msg_len; /* bytes of the message so far (at most WS_MAX_MESSAGE) */
	bool in_frame; /* a data frame's payload is being passed on */
	bool fin; /* that frame ends its message */
};

struct chan {
	uint32_t id;
	enum chan_kind kind;
	int sink; /* where the host's DATA goes: stdin pipe or socket; -1 closed */
	int src[2]; /* read and sent to the host: stdout/stderr pipes, or the socket in [0] */
	struct bq to_sink; /* host DATA (cdp: encoded frames) not yet written */
	bool sink_eof; /* the host sent EOF: close sink once to_sink is empty */
	int64_t credit; /* bytes we may still send to the host */
	uint32_t owed; /* bytes passed to the sink, not yet returned as WINDOW */
	/* exec */
	pid_t pid;
	bool pty; /* on a pseudo-terminal: src[0] and sink are its master */
	bool reaped;
	int status;
	int64_t reaped_ms;
	/* cdp: bytes from the browser not yet passed on (at most about two
	 * reads: the socket is not read while they wait for credit), where in
	 * its frames they are, the host's message being joined */
	struct bq ws_in, msg;
	struct ws_reader ws;
	struct chan *next;
};

/* Sending to the host (agent.c). Frames queue in the link's buffer. */
void agent_send(uint32_t chan, uint8_t type, uint8_t flags, const void *p, size_t n);
void agent_send_text(uint32_t chan, uint8_t type, const char *text);
int64_t agent_now_ms(void);

/* agent_exec.c: starts the command described by payload (key=value
 * entries: arg=, env=, cwd=, uid=, gid=, pty=) for c. 0, or -1 with a
 * reason. */
int agent_exec_start(struct chan *c, const char *payload, size_t len, char *err, size_t errlen);
/* RESIZE: gives c's terminal the size in p[n] ("COLSxROWS"). 0, or -1
 * (not a command on a terminal, a malformed size). */
int agent_exec_resize(struct chan *c, const void *p, size_t n);

/* agent_watch.c: `vitrine-agent watch [--recursive] DIR`, a mode of its
 * own (not the agent's loop): inotify events on stdout, one line each.
 * Returns the process's exit status. */
int agent_watch_main(int argc, char **argv);
/* agent_xwait.c: `vitrine-agent xwait MASK [TIMEOUT_MS]`, a mode of its
 * own: waits until the X server's modifier and button state holds MASK
 * (the barrier between modifiers and the pointer input they go with). */
int agent_xwait_main(int argc, char **argv);

/* agent_ws.c: the browser's DevTools WebSocket on 127.0.0.1:port.
 * Returns a connected socket (handshake done, blocking), or -1 with a
 * reason. */
int agent_ws_connect(int port, char *err, size_t errlen);
/* Appends a masked text frame of msg to out. 0 or -1 (out of memory). */
int agent_ws_frame(struct bq *out, const void *msg, size_t len);
/* The next piece of a message out of in, at most max bytes (the host's
 * credit), without waiting for the rest of the message: returns 1 with
 * *p, *n (valid until the next bq_put on in) and *end (the piece ends its
 * message: text or binary, fragments in order; an empty piece may end
 * one). Control frames on the way are handled: pings answered into pong.
 * Returns 0 when more bytes (or credit, max 0) are needed, 2 when the
 * peer closed, -1 on a protocol error (a masked or oversized frame, a
 * reserved opcode, out of memory). Pure but for pong. */
int agent_ws_next(struct ws_reader *r, struct bq *in, struct bq *pong, size_t max,
		  const unsigned char **p, size_t *n, bool *end);

#endif
