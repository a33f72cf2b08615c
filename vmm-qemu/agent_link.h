/* vmm-qemu/agent_link.h: the host's end of vitrine-agent's virtio-serial
 * port (common/agent_proto.h, docs/agent.md): one connection
 * per guest, many channels on it (commands, the DevTools relay, the guest's
 * egress connections). A thread of its own reads and writes the socket and
 * runs the channels' callbacks; any thread may open, send and close.
 *
 * Flow control: DATA to the guest waits for the agent's window (queued
 * here, up to AGENT_SEND_HIGH a channel: agent_chan_send says when to stop
 * and writable() when to go on); DATA from the guest counts against our
 * window until the consumer returns it with agent_chan_ack. A guest that
 * sends more than it was given, or breaks the protocol on a channel, loses
 * that channel (agent_frame.h; counted in agent_link_stats). A channel can
 * also be tied to a file descriptor (agent_chan_relay), in which case the
 * link copies both ways and acks by itself, and can have the link watch a
 * socket's connect for it (agent_chan_dial), so no thread waits on one. */
#ifndef VITRINE_VMM_AGENT_LINK_H
#define VITRINE_VMM_AGENT_LINK_H

#include "common/agent_proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_link;

/* A channel's queue towards the guest (DATA waiting for its window) that
 * makes agent_chan_send answer AGENT_SEND_FULL. */
#define AGENT_SEND_HIGH (1024 * 1024)
#define AGENT_SEND_FULL 1

/* What a guest did wrong on a link (and, for agent_link_stats_total, on
 * every link of this process). */
struct agent_link_stats {
	uint64_t overruns; /* channels lost for DATA past the window */
	uint64_t violations; /* channels lost for other broken rules */
	uint64_t dropped_bytes; /* skipped while looking for a frame */
	uint64_t frames; /* read, whole */
};

/* A channel's callbacks, all on the link's thread, never under its lock
 * (they may call any agent_ function). closed is always the last, exactly
 * once: after it the link never touches u again. */
struct agent_chan_ops {
	void (*opened)(void *u, const char *info); /* OPENED: "pid=N" for exec */
	void (*data)(void *u, uint8_t flags, const void *p, size_t n); /* ack what you consumed */
	void (*eof)(void *u, uint8_t stream);
	void (*exit)(void *u, const char *status); /* exec: "exit=N" or "signal=N" */
	/* reason: "" when it ended normally; bytes: DATA from and to the guest */
	void (*closed)(void *u, const char *reason, uint64_t bytes_in, uint64_t bytes_out);
	/* After agent_chan_send said AGENT_SEND_FULL or -ENOBUFS: the queue
	 * has room again (once). May be NULL. */
	void (*writable)(void *u);
	/* A dial's end (agent_chan_dial): err 0 and fd connected, the
	 * caller's again; or -errno (-ETIMEDOUT: its time was up) and fd -1
	 * (closed). Not called when the channel ends first. May be NULL. */
	void (*dialed)(void *u, int fd, int err);
};

/* A guest-opened channel (a connection to the agent's egress listener):
 * the handler must agent_chan_bind it or agent_chan_close it. On the
 * link's thread. */
typedef void (*agent_accept_fn)(void *au, struct agent_link *l, uint32_t chan, const char *info);

/* Connects to the agent's socket at path (QEMU's chardev), resets the
 * agent and waits for its answer for up to timeout_ms. Returns 0 with *out
 * or -errno with a reason in err (-ETIMEDOUT: no agent answered). */
int agent_link_open(const char *path, int timeout_ms, struct agent_link **out, char *err,
		    size_t errlen);
/* The same on a connected stream socket (tests); the link owns fd. */
int agent_link_open_fd(int fd, int timeout_ms, struct agent_link **out, char *err, size_t errlen);
/* The owner's end: closes every channel (closed: "agent link closed"),
 * stops the thread, closes the socket, and lets go of the owner's
 * reference. Accepts NULL. Not from a callback. */
void agent_link_destroy(struct agent_link *l);
/* Other threads that use a link another owns hold a reference while they
 * do (a destroyed link answers every call as down). hold returns l. */
struct agent_link *agent_link_hold(struct agent_link *l);
void agent_link_release(struct agent_link *l);
/* False once the connection broke (the guest went away). */
bool agent_link_alive(struct agent_link *l);
/* Who handles guest-opened channels (before it is set they are closed). */
void agent_link_on_accept(struct agent_link *l, agent_accept_fn fn, void *au);
/* A rule the guest broke on channel chan, as the link counted it (the
 * link logs nothing): why, whether it was an overrun (else another
 * violation), and n, that kind's count on this link. Said for the first 8
 * of a kind, then at powers of two, so a guest that keeps at it cannot
 * fill its owner's log. On the link's thread, under its lock: log or
 * count, and call no agent_ function. */
typedef void (*agent_violation_fn)(void *vu, uint32_t chan, const char *why, bool overrun,
				   uint64_t n);
/* Who hears of broken rules (before it is set they are only counted). */
void agent_link_on_violation(struct agent_link *l, agent_violation_fn fn, void *vu);
/* The link was lost (the guest or its agent went away; not said for the
 * owner's agent_link_destroy): on the link's thread under its lock, or in
 * agent_link_on_down itself when it was lost before. Once. Wake the
 * owner (lws_cancel_service) and call no agent_ function. */
typedef void (*agent_down_fn)(void *du);
/* Who hears that the link was lost (before it is set, no one). */
void agent_link_on_down(struct agent_link *l, agent_down_fn fn, void *du);
/* A PING round trip: 0, -ETIMEDOUT, or -EPIPE when the link is down. */
int agent_link_ping(struct agent_link *l, int timeout_ms);
/* The link's counters; the process's, all links added up. Any thread. */
void agent_link_stats(struct agent_link *l, struct agent_link_stats *out);
/* The version the agent gave in its RESET answer (0: not one we know).
 * Version 1 agents' CDP channels may pass the window by one message
 * (AGENT_CDP_V1_SLACK, agent_frame.h). */
unsigned agent_link_version(struct agent_link *l);
void agent_link_stats_total(struct agent_link_stats *out);

/* Opens a channel: type AGENT_EXEC, AGENT_TCP or AGENT_CDP with its
 * payload. Returns the channel id, or 0 when the link is down. */
uint32_t agent_chan_open(struct agent_link *l, uint8_t type, const void *payload, size_t len,
			 const struct agent_chan_ops *ops, void *u);
/* Gives an accepted channel its callbacks. 0 or -ENOENT. */
int agent_chan_bind(struct agent_link *l, uint32_t chan, const struct agent_chan_ops *ops, void *u);
/* Sends DATA (flags: stream, AGENT_FLAG_MORE; split into frames as needed,
 * queued while the window is shut), EOF or SIGNAL (payload). Returns 0;
 * AGENT_SEND_FULL when it was queued but the channel now holds
 * AGENT_SEND_HIGH or more (or the link's queue is long): send no more DATA
 * until ops->writable; -ENOBUFS when DATA found the queue full already (or
 * the link's queue very long, or many EOF/SIGNAL queued): nothing was
 * queued, writable comes later; -ENOENT; -EINVAL (EOF or SIGNAL payload
 * too long). One send of any size is taken while there is room. */
int agent_chan_send(struct agent_link *l, uint32_t chan, uint8_t type, uint8_t flags, const void *p,
		    size_t n);
/* DATA for chan waiting for the agent's window, in bytes. */
size_t agent_chan_pending(struct agent_link *l, uint32_t chan);
/* Returns n bytes of the guest's DATA as consumed. */
void agent_chan_ack(struct agent_link *l, uint32_t chan, size_t n);
/* Ties chan to fd (owned from now on, made non-blocking): guest DATA is
 * written to fd, what fd reads is sent as DATA, EOF both ways; the channel
 * ends when both directions have (or on an error). to_guest goes to the
 * guest and to_fd to fd before anything else; the last unacked bytes of
 * to_fd are guest DATA the caller did not ack (the link acks them once
 * written). 0 or -ENOENT (fd closed). */
int agent_chan_relay(struct agent_link *l, uint32_t chan, int fd, const void *to_guest,
		     size_t to_guest_len, const void *to_fd, size_t to_fd_len, size_t unacked);
/* Watches fd, a socket whose non-blocking connect is under way (owned
 * from now on), on the link's poll for chan: once it connects or fails, or
 * timeout_ms passes, it goes back through chan's dialed(). No thread waits
 * for it; the channel's frames go to its callbacks meanwhile. A channel
 * that ends first closes it. One dial at a time, not on a relay. 0 or
 * -ENOENT (no such channel, or busy: fd closed). */
int agent_chan_dial(struct agent_link *l, uint32_t chan, int fd, int timeout_ms);
/* More guest bytes for a relayed chan's fd, not acked yet (the link acks
 * them once written): for a data callback that raced agent_chan_relay.
 * 0, -ENOENT (not a relay), -ENOMEM. */
int agent_chan_relay_feed(struct agent_link *l, uint32_t chan, const void *p, size_t n);
/* Ends chan: CLOSE to the agent (a command is killed), then closed(). */
void agent_chan_close(struct agent_link *l, uint32_t chan, const char *reason);

#endif
