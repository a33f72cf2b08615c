/* vmm-qemu/agent_frame.h: the host's side of vitrine-agent's wire format
 * (common/agent_proto.h, docs/agent.md) as pure machines over bytes, no
 * I/O and no locks, so that what a hostile guest can make the host do is
 * decided here, unit-tested and fuzzed (tests/unit/test_agent_frame.c,
 * tests/fuzz/fuzz_agent_frame.c); vmm-qemu/agent_link.c is the socket
 * glue around them.
 *
 * agent_rx: the byte stream from the guest cut into frames, dropping
 * bytes that do not start a frame (resync). It holds at most one partial
 * frame beyond what was fed last.
 *
 * agent_chan_state: one channel as the host sees it: which frames the
 * guest may send on it in which order, and both windows. The guest may
 * have at most the credit we gave it in DATA in flight; more is an overrun
 * and the channel is given up. What we send is held to the credit it
 * returned (never more than AGENT_WINDOW). */
#ifndef VITRINE_VMM_AGENT_FRAME_H
#define VITRINE_VMM_AGENT_FRAME_H

#include "common/agent_proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Version 1 of vitrine-agent (images built before version 2) relayed
 * whole DevTools messages: it read the browser's socket only while it had
 * credit, but a read (64 KiB) that completed a message sent all of it,
 * and a message may be up to 64 MiB. So on a link whose agent answered
 * RESET as version 1, a CDP channel may overrun the window by one message
 * and one read: such guests still run (sessions adopted after an upgrade,
 * paused to disk, booted from an image not yet rebuilt). Version 2 keeps
 * to the window on every channel and gets no slack; nor do exec, TCP and
 * egress channels of any version. */
#define AGENT_CDP_V1_SLACK ((64u << 20) + 2u * AGENT_MAX_PAYLOAD)

struct agent_rx {
	unsigned char *buf; /* owned */
	size_t off, len, cap;
	uint64_t dropped; /* bytes skipped looking for a frame */
	uint64_t frames;
};

/* Appends n bytes from the guest. 0 or -ENOMEM. */
int agent_rx_feed(struct agent_rx *rx, const void *p, size_t n);
/* The next whole frame: returns 1 with *h and *payload (h->len bytes,
 * valid until the next agent_rx_feed), 0 when more bytes are needed.
 * Bytes that cannot start a frame are dropped (rx->dropped). */
int agent_rx_next(struct agent_rx *rx, struct agent_header *h, const unsigned char **payload);
/* Bytes held: at most one partial frame once agent_rx_next returned 0. */
size_t agent_rx_held(const struct agent_rx *rx);
void agent_rx_free(struct agent_rx *rx);

enum agent_chan_kind {
	AGENT_CHAN_EXEC, /* we opened it with EXEC */
	AGENT_CHAN_TCP, /* with TCP */
	AGENT_CHAN_CDP, /* with CDP */
	AGENT_CHAN_ACCEPTED, /* the guest opened it with ACCEPT (egress) */
};

struct agent_chan_state {
	enum agent_chan_kind kind;
	bool opened; /* OPENED seen (an accepted channel is open at once) */
	bool eof[2]; /* the guest ended a stream (exec: stdout, stderr; else [0]) */
	bool in_message; /* cdp: the last DATA had AGENT_FLAG_MORE */
	int64_t rx_room; /* DATA the guest may still send before it overruns */
	int64_t rx_max; /* rx_room when nothing is unreturned */
	int64_t tx_credit; /* DATA we may still send */
	uint64_t bytes_in, bytes_out;
};

enum agent_verdict {
	AGENT_DELIVER, /* pass the frame on */
	AGENT_IGNORE, /* harmless, nothing to pass on (a duplicate EOF, an empty DATA) */
	AGENT_VIOLATION, /* the guest broke the protocol: give the channel up */
	AGENT_OVERRUN, /* DATA beyond the credit we gave: give the channel up */
};

/* The version in the agent's answer to RESET ("vitrine-agent N"): N, or 0
 * when the payload is not one. Pure. */
unsigned agent_version_parse(const unsigned char *p, size_t n);
/* A new channel on a link whose agent is of version agent_version (what
 * agent_version_parse said): only version 1's CDP channels get
 * AGENT_CDP_V1_SLACK. */
void agent_chan_state_init(struct agent_chan_state *s, enum agent_chan_kind kind,
			   unsigned agent_version);
/* Judges a frame the guest sent on this channel (RESET, PONG and ACCEPT
 * are the link's) and updates s: DATA uses the guest's credit, a
 * WINDOW_UPDATE adds to ours. *why says what was wrong on a violation or
 * an overrun (a static string). Pure. */
enum agent_verdict agent_chan_rx(struct agent_chan_state *s, const struct agent_header *h,
				 const unsigned char *payload, const char **why);
/* We returned n bytes of credit to the guest (a WINDOW_UPDATE); never past
 * rx_max. */
void agent_chan_returned(struct agent_chan_state *s, size_t n);
/* We sent n bytes of DATA (it may take tx_credit below zero: a relay's
 * first bytes). */
void agent_chan_sent(struct agent_chan_state *s, size_t n);

#endif
