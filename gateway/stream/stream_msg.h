/* gateway/stream/stream_msg.h: what a viewer may send on WS /v1/sessions/{id}/stream
 * (one JSON object per text message; docs/stream.md), parsed and validated
 * without I/O so the rules are unit-tested: which message, which fields, and
 * for a malformed one the WebSocket close code it earns. Also maps the DOM
 * KeyboardEvent.code names viewers send to QEMU qcodes. */
#ifndef VITRINE_GATEWAY_STREAM_MSG_H
#define VITRINE_GATEWAY_STREAM_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STREAM_MSG_MAX 4096 /* bytes in one client message */
#define STREAM_NAME_MAX 32
#define STREAM_TEXT_MAX 256 /* bytes of one text message's text */

/* Close codes (RFC 6455 section 7.4.1). */
#define STREAM_CLOSE_GOING_AWAY 1001 /* session deleted, gateway stopping, idle */
#define STREAM_CLOSE_UNSUPPORTED 1003 /* a binary message */
#define STREAM_CLOSE_INVALID 1007 /* not a JSON object */
#define STREAM_CLOSE_POLICY 1008 /* unknown type, bad field, bad token */
#define STREAM_CLOSE_TOO_BIG 1009 /* over STREAM_MSG_MAX */

enum stream_msg_kind {
	SM_AUTH, /* {"type":"auth","token":T[,"name":N][,"quality":Q][,"max_fps":F]} */
	SM_SETTINGS, /* {"type":"settings"[,"quality":1..100][,"max_fps":1..60][,"name":N]} */
	SM_TAKE, /* {"type":"take"} */
	SM_RELEASE, /* {"type":"release"} */
	SM_POINTER, /* {"type":"pointer","x":X,"y":Y,"buttons":0..31} */
	SM_WHEEL, /* {"type":"wheel","x":X,"y":Y,"dx":-10..10,"dy":-10..10} */
	SM_KEY, /* {"type":"key","code":"KeyA"[,"key":"q"],"down":true}: key is what
		 * the person's layout gives (KeyboardEvent.key), one character */
	SM_TEXT, /* {"type":"text","text":T}: what the person typed (1..STREAM_TEXT_MAX bytes),
		  * at once and in order with their keys, unanswered */
	SM_PING, /* {"type":"ping"[,"t":NUMBER]} -> {"type":"pong","t":NUMBER} */
	SM_TYPE, /* {"type":"type","text":T}: a paste: T typed exactly, as the type action
		  * does, paced, answered with {"type":"typed"} or an error */
	SM_CLIPBOARD, /* {"type":"clipboard"} -> {"type":"clipboard","text":T}: the guest's */
};

/* buttons bits */
#define STREAM_BTN_LEFT 1
#define STREAM_BTN_MIDDLE 2
#define STREAM_BTN_RIGHT 4
#define STREAM_BTN_BACK 8
#define STREAM_BTN_FORWARD 16

struct stream_msg {
	enum stream_msg_kind kind;
	char token[160];
	char name[STREAM_NAME_MAX + 1]; /* "" when not given */
	int quality, max_fps; /* 0 when not given */
	int x, y, buttons, dx, dy;
	const char *qcode; /* SM_KEY: static; NULL when only key was given */
	uint32_t key_char; /* SM_KEY: the key's character (a code point), 0 for none */
	bool down;
	double t;
	bool has_t;
	/* SM_TEXT (1..STREAM_TEXT_MAX bytes) and SM_TYPE: UTF-8, text_len bytes,
	 * no NUL */
	char text[STREAM_MSG_MAX + 1];
	size_t text_len;
};

/* Parses one text message against a screen_w x screen_h screen (pointer
 * coordinates must be on it). Returns 0 with *m filled, or a close code
 * (STREAM_CLOSE_*) with a short reason (fits a close frame: < 120 bytes) in
 * reason. */
int stream_msg_parse(const char *text, size_t len, int screen_w, int screen_h, struct stream_msg *m,
		     char *reason, size_t reasonlen);

/* How many bytes of text (len > 0 bytes of UTF-8) a person's paste types
 * next: STREAM_TYPE_PIECE when all of it is characters the keymap types
 * (keys: a burst of them would overflow a slow guest's input queue, so they
 * go a few at a time), else all of it (the guest agent types it whole, or
 * none of it). Pure. */
#define STREAM_TYPE_PIECE 2
size_t stream_type_piece(const char *text, size_t len);

/* The QEMU qcode for a DOM KeyboardEvent.code ("KeyA" -> "a", "Enter" ->
 * "ret", "ShiftLeft" -> "shift"), or NULL when unknown. Pure. */
const char *stream_code_to_qcode(const char *code);

/* The code point of s (len bytes of valid UTF-8) when it is one printable
 * character (no control character), else 0. Pure. */
uint32_t stream_one_char(const char *s, size_t len);

#endif
