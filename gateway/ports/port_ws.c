/* gateway/ports/port_ws.c: see port_ws.h. */
#include "gateway/ports/port_ws.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

size_t port_ws_frame_head(uint8_t out[PORT_WS_HEAD_MAX], enum port_ws_opcode op, bool fin,
			  uint64_t len, const uint8_t mask[4])
{
	size_t n = 2;

	out[0] = (uint8_t)((fin ? 0x80 : 0) | (op & 0x0f));
	if (len < 126) {
		out[1] = (uint8_t)(0x80 | len);
	} else if (len <= 0xffff) {
		out[1] = 0x80 | 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		n = 4;
	} else {
		out[1] = 0x80 | 127;
		for (int i = 0; i < 8; i++)
			out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
		n = 10;
	}
	memcpy(out + n, mask, 4);
	return n + 4;
}

void port_ws_mask(uint8_t *p, size_t n, const uint8_t mask[4], uint64_t offset)
{
	for (size_t i = 0; i < n; i++)
		p[i] ^= mask[(offset + i) & 3];
}

/* Standard base64 of n bytes (16 or 20 here) into out (with its NUL). */
static void b64(const uint8_t *in, size_t n, char *out)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		out[o++] = abc[v >> 18 & 63];
		out[o++] = abc[v >> 12 & 63];
		out[o++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? abc[v & 63] : '=';
	}
	out[o] = '\0';
}

void port_ws_key(const uint8_t random[16], char key[PORT_WS_KEY_LEN])
{
	b64(random, 16, key);
}

void port_ws_accept(const char *key, void (*sha1)(const void *, size_t, uint8_t[20]),
		    char accept[PORT_WS_ACCEPT_LEN])
{
	char both[PORT_WS_KEY_LEN + sizeof(GUID)];
	uint8_t md[20];
	int n = snprintf(both, sizeof(both), "%s%s", key, GUID);

	sha1(both, n > 0 && (size_t)n < sizeof(both) ? (size_t)n : 0, md);
	b64(md, sizeof(md), accept);
}

/* The value of header name in h (the first), trimmed; NULL when none. */
static const struct port_header *header(const struct port_head *h, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < h->n; i++)
		if (h->h[i].name_len == nl && !strncasecmp(h->h[i].name, name, nl))
			return &h->h[i];
	return NULL;
}

static bool value_is(const struct port_header *v, const char *want)
{
	return v && v->value_len == strlen(want) && !strncasecmp(v->value, want, v->value_len);
}

/* Whether a comma-separated value holds token (without regard to case). */
static bool has_token(const struct port_header *v, const char *token)
{
	size_t tl = strlen(token), i = 0;

	while (v && i < v->value_len) {
		size_t s, e;

		while (i < v->value_len && (v->value[i] == ' ' || v->value[i] == '\t'))
			i++;
		s = i;
		while (i < v->value_len && v->value[i] != ',')
			i++;
		e = i;
		while (e > s && (v->value[e - 1] == ' ' || v->value[e - 1] == '\t'))
			e--;
		if (e - s == tl && !strncasecmp(v->value + s, token, tl))
			return true;
		i++;
	}
	return false;
}

int port_ws_check_answer(const struct port_head *h, const char *accept, const char **why)
{
	if (h->status != 101)
		*why = "the guest's server did not take the upgrade";
	else if (!value_is(header(h, "upgrade"), "websocket"))
		*why = "the guest's server answered 101 without Upgrade: websocket";
	else if (!has_token(header(h, "connection"), "upgrade"))
		*why = "the guest's server answered 101 without Connection: upgrade";
	else if (!value_is(header(h, "sec-websocket-accept"), accept))
		*why = "the guest's server answered a wrong Sec-WebSocket-Accept";
	else if (header(h, "sec-websocket-extensions"))
		*why = "the guest's server chose an extension that was not offered";
	else
		return 0;
	return -1;
}

static size_t fail(struct port_ws_rx *rx, struct port_ws_ev *ev, const char *why)
{
	rx->failed = true;
	ev->kind = PORT_WS_EV_ERROR;
	ev->why = why;
	return 0;
}

/* The head's length so far known: 2 until the second byte is in. */
static size_t head_need(const struct port_ws_rx *rx)
{
	if (rx->head_have < 2)
		return 2;
	switch (rx->head[1] & 0x7f) {
	case 126:
		return 4;
	case 127:
		return 10;
	default:
		return 2;
	}
}

static bool close_code_ok(int c)
{
	return (c >= 1000 && c <= 1014 && c != 1004 && c != 1005 && c != 1006) ||
	       (c >= 3000 && c <= 4999);
}

/* A whole control frame (rx->ctl) into *ev. */
static size_t control_done(struct port_ws_rx *rx, struct port_ws_ev *ev, size_t used)
{
	rx->in_frame = false;
	ev->p = rx->ctl;
	ev->n = rx->ctl_len;
	if (rx->op == PORT_WS_PING) {
		ev->kind = PORT_WS_EV_PING;
	} else if (rx->op == PORT_WS_PONG) {
		ev->kind = PORT_WS_EV_PONG;
	} else {
		if (rx->ctl_len == 1)
			return fail(rx, ev, "the guest's server sent a close of one byte");
		ev->kind = PORT_WS_EV_CLOSE;
		ev->code = rx->ctl_len ? rx->ctl[0] << 8 | rx->ctl[1] : 0;
		if (rx->ctl_len && !close_code_ok(ev->code))
			return fail(rx, ev, "the guest's server sent a close code it may not send");
		ev->p = rx->ctl + (rx->ctl_len ? 2 : 0);
		ev->n = rx->ctl_len ? rx->ctl_len - 2 : 0;
	}
	rx->ctl_len = 0;
	return used;
}

/* The head is whole: checks it and sets the frame up. */
static int head_done(struct port_ws_rx *rx, const char **why)
{
	uint8_t b0 = rx->head[0], b1 = rx->head[1];
	uint64_t len = b1 & 0x7f;

	rx->op = b0 & 0x0f;
	rx->fin = b0 & 0x80;
	if (b0 & 0x70)
		*why = "the guest's server set reserved bits (no extension was agreed)";
	else if (b1 & 0x80)
		*why = "the guest's server masked a frame";
	else if (rx->op >= 0x3 && rx->op <= 0x7)
		*why = "the guest's server sent an unknown data opcode";
	else if (rx->op > PORT_WS_PONG)
		*why = "the guest's server sent an unknown control opcode";
	else
		*why = NULL;
	if (*why)
		return -1;
	if (len == 126) {
		len = (uint64_t)rx->head[2] << 8 | rx->head[3];
	} else if (len == 127) {
		len = 0;
		for (int i = 0; i < 8; i++)
			len = len << 8 | rx->head[2 + i];
		if (len >> 63) {
			*why = "the guest's server sent a frame length with its top bit set";
			return -1;
		}
	}
	if (rx->op & 0x8) {
		if (!rx->fin || len > PORT_WS_CONTROL_MAX) {
			*why = "the guest's server sent a fragmented or long control frame";
			return -1;
		}
	} else if (rx->op == PORT_WS_CONT && !rx->in_message) {
		*why = "the guest's server sent a continuation with no message begun";
		return -1;
	} else if (rx->op != PORT_WS_CONT && rx->in_message) {
		*why = "the guest's server began a message inside another";
		return -1;
	}
	if (rx->op == PORT_WS_TEXT || rx->op == PORT_WS_BINARY) {
		rx->in_message = true;
		rx->message_binary = rx->op == PORT_WS_BINARY;
		rx->piece_sent = false;
	}
	rx->left = len;
	rx->in_frame = true;
	rx->head_have = 0;
	return 0;
}

/* Payload bytes of a data frame: one DATA event (an empty final frame
 * makes an empty one, so the message's end is told). */
static size_t data(struct port_ws_rx *rx, const uint8_t *buf, size_t len, size_t used,
		   struct port_ws_ev *ev)
{
	size_t n = len - used < rx->left ? len - used : (size_t)rx->left;

	rx->left -= n;
	ev->p = buf + used;
	ev->n = n;
	ev->binary = rx->message_binary;
	ev->first = !rx->piece_sent;
	ev->final = rx->fin && !rx->left;
	if (!n && !ev->final) {
		ev->kind = PORT_WS_EV_NONE; /* no byte yet, not the end: nothing to tell */
	} else {
		ev->kind = PORT_WS_EV_DATA;
		rx->piece_sent = true;
	}
	if (!rx->left) {
		rx->in_frame = false;
		if (rx->fin)
			rx->in_message = false;
	}
	return used + n;
}

size_t port_ws_rx_step(struct port_ws_rx *rx, const uint8_t *buf, size_t len, struct port_ws_ev *ev)
{
	size_t used = 0;
	const char *why;

	memset(ev, 0, sizeof(*ev));
	if (rx->failed)
		return fail(rx, ev, "the guest's server broke the protocol before");
	while (!rx->in_frame) {
		size_t need = head_need(rx);

		if (used == len)
			return used; /* NONE: more bytes */
		rx->head[rx->head_have++] = buf[used++];
		if (rx->head_have < need || (need == 2 && head_need(rx) > 2))
			continue;
		if (head_done(rx, &why) < 0)
			return fail(rx, ev, why);
		if (!(rx->op & 0x8))
			return data(rx, buf, len, used, ev);
		if (!rx->left)
			return control_done(rx, ev, used);
	}
	if (!(rx->op & 0x8)) {
		if (used == len && rx->left)
			return used;
		return data(rx, buf, len, used, ev);
	}
	{
		size_t n = len - used < rx->left ? len - used : (size_t)rx->left;

		memcpy(rx->ctl + rx->ctl_len, buf + used, n);
		rx->ctl_len += n;
		rx->left -= n;
		used += n;
	}
	if (rx->left)
		return used;
	return control_done(rx, ev, used);
}
