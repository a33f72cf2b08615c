/* common/agent_proto.h: the wire format between the gateway and
 * vitrine-agent, the guest's own agent on the virtio-serial port
 * org.vitrine.agent.0 (docs/agent.md). Header-only so the static guest
 * binary (guest-images/agent) and the host (vmm-qemu/agent_link.c) share
 * one definition without a library. It includes libc headers only: the
 * image recipes compile the agent with no other file of common/, and
 * guest-images/build.sh hashes this file into each image's recipe.
 *
 * One byte stream carries many channels. Every frame is a 16-byte header
 * (little endian) and a payload of at most AGENT_MAX_PAYLOAD bytes:
 *
 *   u32 magic 'VTA1' | u32 payload length | u32 channel | u8 type |
 *   u8 flags | u16 zero
 *
 * The magic lets either side find the next frame after a restore from a
 * snapshot or a reconnect left half a frame behind: a reader that sees
 * no magic drops one byte and looks again. The host opens a link with
 * RESET; the agent closes every channel it had and answers RESET with its
 * version ("vitrine-agent N"), and the host ignores all frames before
 * that answer.
 *
 * Channels: the host picks even ids (exec, tcp, cdp), the agent odd ones
 * (connections to its egress proxy listener, ACCEPT). Each direction of a
 * channel has a window of AGENT_WINDOW bytes of DATA in flight; the
 * receiver returns credit with WINDOW once it has passed bytes on.
 *
 * Versions: 2 holds its DATA to the host's credit on every channel (a
 * DevTools message larger than the credit goes in parts as credit comes
 * back). 1, the agent of images built before, sent a whole DevTools
 * message whatever the credit; the host still allows that to an agent
 * that says it is version 1 (vmm-qemu/agent_frame.h, AGENT_CDP_V1_SLACK).
 * 3 adds pseudo-terminals: EXEC's "pty=COLSxROWS" item and RESIZE; the
 * host sends neither to an agent of an older version. */
#ifndef VITRINE_AGENT_PROTO_H
#define VITRINE_AGENT_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AGENT_MAGIC 0x31415456u /* "VTA1" */
#define AGENT_HEADER 16
#define AGENT_MAX_PAYLOAD (256 * 1024)
#define AGENT_WINDOW (1024 * 1024)
#define AGENT_PORT_NAME "org.vitrine.agent.0"
#define AGENT_VERSION_NUM 3
#define AGENT_VERSION "vitrine-agent 3" /* the RESET answer: "vitrine-agent " NUM */
#define AGENT_VERSION_PTY 3 /* the first that knows pty= and RESIZE */

enum agent_type {
	AGENT_RESET = 1, /* host: forget everything; agent: answer, payload = version */
	AGENT_PING = 2, /* payload echoed in PONG */
	AGENT_PONG = 3,
	AGENT_EXEC = 4, /* host opens: payload = NUL-separated key=value list */
	AGENT_TCP = 5, /* host opens: payload = decimal port on the guest's 127.0.0.1 */
	AGENT_CDP = 6, /* host opens: the browser's DevTools WebSocket, payload = port */
	AGENT_ACCEPT = 7, /* agent opens: a connection to its egress listener */
	AGENT_OPENED = 8, /* answer to EXEC/TCP/CDP: payload = pid (exec) or empty */
	AGENT_DATA = 9, /* flags: stream (exec) and MORE (message continues, cdp) */
	AGENT_EOF = 10, /* a direction (flags: stream) has ended */
	AGENT_EXIT = 11, /* exec: payload = "exit=N" or "signal=N"; last frame */
	AGENT_SIGNAL = 12, /* host: payload = decimal signal, sent to the process group */
	AGENT_WINDOW_UPDATE = 13, /* payload = u32 bytes of credit returned */
	AGENT_CLOSE = 14, /* the channel is gone; payload = reason text (may be empty) */
	AGENT_RESIZE = 15, /* host, a command on a pty: payload = "COLSxROWS" (version 3) */
};

enum agent_flags {
	AGENT_STREAM_STDOUT = 0, /* DATA/EOF of exec: which stream (stdin host->guest) */
	AGENT_STREAM_STDERR = 1,
	AGENT_STREAM_MASK = 1,
	AGENT_FLAG_MORE = 2, /* cdp: this DATA is not the message's last part */
};

struct agent_header {
	uint32_t len, chan;
	uint8_t type, flags;
};

static inline void agent_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline uint32_t agent_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A terminal's size as EXEC's pty= item and RESIZE carry it, "COLSxROWS"
 * (each 1..65535, decimal without leading zeros, nothing else), from p[n]
 * (not NUL-terminated).
 * 0 with *cols and *rows, or -1. Pure. */
static inline int agent_winsize_parse(const void *p, size_t n, unsigned *cols, unsigned *rows)
{
	const unsigned char *b = (const unsigned char *)p;
	unsigned v[2] = { 0, 0 };
	size_t i = 0;

	for (int k = 0; k < 2; k++) {
		size_t start = i;

		if (i < n && b[i] == '0')
			return -1;
		while (i < n && b[i] >= '0' && b[i] <= '9' && i - start < 6)
			v[k] = v[k] * 10 + (unsigned)(b[i++] - '0');
		if (i == start || v[k] < 1 || v[k] > 65535)
			return -1;
		if (k == 0 && (i >= n || b[i++] != 'x'))
			return -1;
	}
	if (i != n)
		return -1;
	*cols = v[0];
	*rows = v[1];
	return 0;
}

/* Writes the header of a frame into out[AGENT_HEADER]. */
static inline void agent_header_put(unsigned char *out, uint32_t chan, uint8_t type, uint8_t flags,
				    uint32_t len)
{
	agent_put32(out, AGENT_MAGIC);
	agent_put32(out + 4, len);
	agent_put32(out + 8, chan);
	out[12] = type;
	out[13] = flags;
	out[14] = out[15] = 0;
}

/* Looks for a frame at the start of buf[len]. Returns the frame's whole
 * size (header + payload) with *h filled when all of it is there; 0 when
 * more bytes are needed; -1 when buf does not start with a valid header
 * (the caller drops one byte and tries again). Pure. */
static inline long agent_frame_parse(const unsigned char *buf, size_t len, struct agent_header *h)
{
	if (len >= 4 && agent_get32(buf) != AGENT_MAGIC)
		return -1;
	if (len < AGENT_HEADER)
		return 0;
	h->len = agent_get32(buf + 4);
	h->chan = agent_get32(buf + 8);
	h->type = buf[12];
	h->flags = buf[13];
	if (h->len > AGENT_MAX_PAYLOAD || h->type < AGENT_RESET || h->type > AGENT_RESIZE ||
	    buf[14] || buf[15])
		return -1;
	if (len < AGENT_HEADER + (size_t)h->len)
		return 0;
	return (long)(AGENT_HEADER + h->len);
}

/* Drops bytes up to the next place the magic could start: the offset in
 * buf[len] of the next 'V' after the first byte (len when none). */
static inline size_t agent_resync(const unsigned char *buf, size_t len)
{
	const unsigned char *p = len > 1 ? memchr(buf + 1, 'V', len - 1) : NULL;

	return p ? (size_t)(p - buf) : len;
}

#endif
