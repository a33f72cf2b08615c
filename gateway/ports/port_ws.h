/* gateway/ports/port_ws.h: the pure parts of a WebSocket through a guest's
 * port (docs/api.md, "Ports"): the gateway ends the client's WebSocket
 * itself (lws) and is a WebSocket client of the guest's server over an
 * agent TCP channel, so it writes masked client frames (RFC 6455 5.2,
 * 5.3), reads the server's frames as they come, and checks the server's
 * answer to the upgrade (Sec-WebSocket-Accept, 4.2.2). No I/O: unit
 * tested and fuzzed (tests/fuzz/fuzz_port_ws.c), since every byte of the
 * server's side is the guest's. */
#ifndef VITRINE_GATEWAY_PORT_WS_H
#define VITRINE_GATEWAY_PORT_WS_H

#include "gateway/ports/port_parse.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest frame head: 2 + 8 (length) + 4 (mask). */
#define PORT_WS_HEAD_MAX 14
/* A Sec-WebSocket-Key (base64 of 16 bytes) and its accept (base64 of a
 * SHA-1), with their NULs. */
#define PORT_WS_KEY_LEN 25
#define PORT_WS_ACCEPT_LEN 29
/* A control frame's payload at most (5.5). */
#define PORT_WS_CONTROL_MAX 125

enum port_ws_opcode {
	PORT_WS_CONT = 0x0,
	PORT_WS_TEXT = 0x1,
	PORT_WS_BINARY = 0x2,
	PORT_WS_CLOSE = 0x8,
	PORT_WS_PING = 0x9,
	PORT_WS_PONG = 0xa,
};

/* The head of one masked client frame of len payload bytes into out:
 * its length (2..PORT_WS_HEAD_MAX). Can't fail. */
size_t port_ws_frame_head(uint8_t out[PORT_WS_HEAD_MAX], enum port_ws_opcode op, bool fin,
			  uint64_t len, const uint8_t mask[4]);
/* XORs p[n] with mask, p being the payload's bytes from offset on (the
 * mask's phase follows the offset). Its own inverse. */
void port_ws_mask(uint8_t *p, size_t n, const uint8_t mask[4], uint64_t offset);

/* The Sec-WebSocket-Key from 16 random bytes into key. */
void port_ws_key(const uint8_t random[16], char key[PORT_WS_KEY_LEN]);
/* The Sec-WebSocket-Accept a server answers key with into accept
 * (base64 of SHA-1 of key and the RFC's GUID). The SHA-1 is the caller's
 * (sha1(data, len, out[20])): the gateway takes libwebsockets'. */
void port_ws_accept(const char *key, void (*sha1)(const void *, size_t, uint8_t[20]),
		    char accept[PORT_WS_ACCEPT_LEN]);
/* Whether a server's answer head h takes the upgrade: status 101,
 * Upgrade: websocket, Connection holding the token upgrade,
 * Sec-WebSocket-Accept equal to accept, and no extension (none was
 * offered). 0, or -1 with why (a sentence) set. */
int port_ws_check_answer(const struct port_head *h, const char *accept, const char **why);

/* What port_ws_rx_step found. */
enum port_ws_event {
	PORT_WS_EV_NONE, /* all the bytes given were used: more are needed */
	PORT_WS_EV_DATA, /* a piece of a text or binary message */
	PORT_WS_EV_PING, /* a whole ping: answer its payload with a pong */
	PORT_WS_EV_PONG, /* a whole pong */
	PORT_WS_EV_CLOSE, /* a whole close: code (0: none given) and reason */
	PORT_WS_EV_ERROR, /* the server broke the protocol: why */
};

struct port_ws_ev {
	enum port_ws_event kind;
	const uint8_t *p; /* DATA: into the bytes given; PING, PONG, CLOSE (the reason): into rx */
	size_t n;
	bool first, final, binary; /* DATA: the message's first and last piece, and its kind */
	int code; /* CLOSE */
	const char *why; /* ERROR */
};

/* The server's frames as they come, one connection's. Zero it to start. */
struct port_ws_rx {
	uint8_t head[PORT_WS_HEAD_MAX];
	size_t head_have;
	bool in_frame; /* the head is read: left payload bytes follow */
	uint8_t op;
	bool fin;
	uint64_t left;
	bool in_message; /* a text or binary message has begun and not ended */
	bool message_binary;
	bool piece_sent; /* a piece of the current message went out */
	uint8_t ctl[PORT_WS_CONTROL_MAX + 1];
	size_t ctl_len;
	bool failed;
};

/* Reads from buf[len]: how many bytes it used, with *ev what they made
 * (at most one event a call). It uses at least one byte unless len is 0
 * or it reports ERROR (after which it uses nothing more). A DATA event's
 * bytes are only good until buf changes. Errors: a masked frame, RSV bits
 * set, an unknown opcode, a continuation with no message begun or a new
 * message within one, a control frame fragmented or longer than 125, a
 * 64-bit length with its top bit set, a close of one byte or with a code
 * outside what may be sent. */
size_t port_ws_rx_step(struct port_ws_rx *rx, const uint8_t *buf, size_t len,
		       struct port_ws_ev *ev);

#endif
