/* gateway/e2b/rfb_relay.c: see rfb_relay.h. Message layouts: RFC 6143,
 * 7.1 (ProtocolVersion, Security, SecurityResult) and 7.2.2 (VNC
 * Authentication). */
#include "gateway/e2b/rfb_relay.h"

#include <stdio.h>
#include <string.h>

enum { CL_VERSION, CL_TYPE, CL_RESPONSE, CL_DONE };
enum { DOOR_VERSION, DOOR_NTYPES, DOOR_TYPES, DOOR_CHALLENGE, DOOR_RESULT, DOOR_DONE };

#define VERSION_LEN 12
#define SEC_NONE 1
#define SEC_VNC 2

static const char version_38[] = "RFB 003.008\n";

static void put(uint8_t *buf, size_t *len, const void *p, size_t n)
{
	/* RFB_RELAY_OUT holds the most one call gives (rfb_relay.h) */
	memcpy(buf + *len, p, n);
	*len += n;
}

static void put_u32(uint8_t *buf, size_t *len, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	put(buf, len, b, 4);
}

static enum rfb_relay_status fail(struct rfb_relay *r, const char *why)
{
	snprintf(r->why, sizeof(r->why), "%s", why);
	r->status = RFB_RELAY_FAILED;
	return r->status;
}

/* A client-side refusal the client can read: a failed SecurityResult (with
 * its reason from 3.8 on). */
static enum rfb_relay_status refuse(struct rfb_relay *r, struct rfb_relay_out *out, const char *why)
{
	put_u32(out->to_client, &out->client_len, 1);
	if (r->minor == 8) {
		put_u32(out->to_client, &out->client_len, (uint32_t)strlen(why));
		put(out->to_client, &out->client_len, why, strlen(why));
	}
	return fail(r, why);
}

static uint8_t offered(const struct rfb_relay *r)
{
	return r->auth ? SEC_VNC : SEC_NONE;
}

/* Both sides through: the client's SecurityResult (3.8 has one for None
 * too; 3.3 and 3.7 only after VNC Authentication), then what each side
 * sent ahead. */
static void open_if_ready(struct rfb_relay *r, struct rfb_relay_out *out)
{
	if (r->cl != CL_DONE || r->door != DOOR_DONE)
		return;
	if (r->minor == 8 || r->auth)
		put_u32(out->to_client, &out->client_len, 0);
	put(out->to_door, &out->door_len, r->cl_held, r->cl_held_len);
	put(out->to_client, &out->client_len, r->door_held, r->door_held_len);
	r->cl_held_len = r->door_held_len = 0;
	r->status = RFB_RELAY_OPEN;
}

void rfb_relay_init(struct rfb_relay *r, const char *client_pw, const char *door_pw,
		    const uint8_t challenge[VNC_AUTH_CHALLENGE_LEN], struct rfb_relay_out *out)
{
	memset(r, 0, sizeof(*r));
	r->cl = CL_VERSION;
	r->door = DOOR_VERSION;
	r->auth = client_pw && client_pw[0];
	memcpy(r->challenge, challenge, VNC_AUTH_CHALLENGE_LEN);
	if (r->auth)
		display_vnc_auth_response(challenge, client_pw, r->expect);
	snprintf(r->door_pw, sizeof(r->door_pw), "%s", door_pw ? door_pw : "");
	out->client_len = out->door_len = 0;
	put(out->to_client, &out->client_len, version_38, VERSION_LEN);
}

/* "RFB xxx.yyy\n": the minor version as the server counts it (RFC 6143
 * 7.1.1: anything but 3.7 and 3.8 is 3.3), or -1. */
static int client_minor(const uint8_t *m)
{
	int major = 0, minor = 0;

	if (memcmp(m, "RFB ", 4) || m[7] != '.' || m[11] != '\n')
		return -1;
	for (int i = 4; i < 11; i++) {
		if (i == 7)
			continue;
		if (m[i] < '0' || m[i] > '9')
			return -1;
		if (i < 7)
			major = major * 10 + (m[i] - '0');
		else
			minor = minor * 10 + (m[i] - '0');
	}
	if (major != 3)
		return -1;
	return minor == 8 ? 8 : minor == 7 ? 7 : 3;
}

/* Constant time in the response's length. */
static bool same_response(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;

	for (int i = 0; i < VNC_AUTH_CHALLENGE_LEN; i++)
		d |= (uint8_t)(a[i] ^ b[i]);
	return d == 0;
}

/* The client's security is settled: a challenge, or done. */
static void client_security(struct rfb_relay *r, struct rfb_relay_out *out)
{
	if (r->auth) {
		put(out->to_client, &out->client_len, r->challenge, VNC_AUTH_CHALLENGE_LEN);
		r->cl = CL_RESPONSE;
		return;
	}
	r->cl = CL_DONE;
	open_if_ready(r, out);
}

/* The client's message in r->cl_msg is whole. */
static void client_step(struct rfb_relay *r, struct rfb_relay_out *out)
{
	uint8_t types[2] = { 1, offered(r) };

	switch (r->cl) {
	case CL_VERSION:
		if ((r->minor = client_minor(r->cl_msg)) < 0) {
			fail(r, "not an RFB client (its ProtocolVersion)");
			return;
		}
		if (r->minor >= 7) {
			put(out->to_client, &out->client_len, types, 2);
			r->cl = CL_TYPE;
			return;
		}
		put_u32(out->to_client, &out->client_len, offered(r));
		client_security(r, out);
		return;
	case CL_TYPE:
		if (r->cl_msg[0] != offered(r)) {
			if (r->minor == 8)
				refuse(r, out, "that security type is not offered");
			else
				fail(r, "that security type is not offered");
			return;
		}
		client_security(r, out);
		return;
	case CL_RESPONSE:
		if (!same_response(r->cl_msg, r->expect)) {
			refuse(r, out, "the password is wrong");
			return;
		}
		r->cl = CL_DONE;
		open_if_ready(r, out);
		return;
	default:
		return;
	}
}

static size_t client_need(const struct rfb_relay *r)
{
	return r->cl == CL_VERSION ? VERSION_LEN : r->cl == CL_TYPE ? 1 : VNC_AUTH_CHALLENGE_LEN;
}

/* One side as the loop both share sees it: its state and the state that
 * means "through", the message being read, what it sent ahead. */
struct side {
	const int *state;
	int done;
	uint8_t *msg, *held;
	size_t *got, *held_len;
	size_t (*need)(const struct rfb_relay *r);
	void (*step)(struct rfb_relay *r, struct rfb_relay_out *out);
	const char *too_much; /* why, when it sends more ahead than is held */
};

static size_t at_most(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Reads a side's messages one whole message at a time and steps it; once
 * the side is through, holds what it sends until the other is. */
static enum rfb_relay_status feed(struct rfb_relay *r, const struct side *sd, const uint8_t *in,
				  size_t len, size_t *used, struct rfb_relay_out *out)
{
	size_t i = 0;

	out->client_len = out->door_len = 0;
	while (i < len && r->status == RFB_RELAY_HANDSHAKE) {
		size_t need, take;

		if (*sd->state == sd->done) { /* the other's handshake is still under way */
			take = at_most(len - i, RFB_RELAY_HELD - *sd->held_len);
			if (!take) {
				fail(r, sd->too_much);
				break;
			}
			memcpy(sd->held + *sd->held_len, in + i, take);
			*sd->held_len += take;
			i += take;
			continue;
		}
		need = sd->need(r);
		take = at_most(len - i, need - *sd->got);
		memcpy(sd->msg + *sd->got, in + i, take);
		*sd->got += take;
		i += take;
		if (*sd->got < need)
			break;
		*sd->got = 0;
		sd->step(r, out);
	}
	*used = i;
	return r->status;
}

enum rfb_relay_status rfb_relay_from_client(struct rfb_relay *r, const uint8_t *in, size_t len,
					    size_t *used, struct rfb_relay_out *out)
{
	const struct side sd = {
		.state = &r->cl,
		.done = CL_DONE,
		.msg = r->cl_msg,
		.held = r->cl_held,
		.got = &r->cl_got,
		.held_len = &r->cl_held_len,
		.need = client_need,
		.step = client_step,
		.too_much = "the client sent too much before the VNC door was ready",
	};

	return feed(r, &sd, in, len, used, out);
}

/* The door's message in r->door_msg is whole. */
static void door_step(struct rfb_relay *r, struct rfb_relay_out *out)
{
	uint8_t resp[VNC_AUTH_CHALLENGE_LEN], type;

	switch (r->door) {
	case DOOR_VERSION:
		if (memcmp(r->door_msg, version_38, VERSION_LEN)) {
			fail(r, "the VNC door does not speak RFB 3.8");
			return;
		}
		put(out->to_door, &out->door_len, version_38, VERSION_LEN);
		r->door = DOOR_NTYPES;
		return;
	case DOOR_NTYPES:
		if (!r->door_msg[0]) {
			fail(r, "the VNC door refused the connection");
			return;
		}
		r->door_need = r->door_msg[0];
		r->door = DOOR_TYPES;
		return;
	case DOOR_TYPES:
		type = memchr(r->door_msg, SEC_VNC, r->door_need)    ? SEC_VNC
		       : memchr(r->door_msg, SEC_NONE, r->door_need) ? SEC_NONE
								     : 0;
		if (!type) {
			fail(r, "the VNC door offers no security the gateway speaks");
			return;
		}
		put(out->to_door, &out->door_len, &type, 1);
		r->door = type == SEC_VNC ? DOOR_CHALLENGE : DOOR_RESULT;
		return;
	case DOOR_CHALLENGE:
		display_vnc_auth_response(r->door_msg, r->door_pw, resp);
		put(out->to_door, &out->door_len, resp, sizeof(resp));
		r->door = DOOR_RESULT;
		return;
	case DOOR_RESULT:
		if (memcmp(r->door_msg, "\0\0\0\0", 4)) {
			fail(r, "the VNC door refused its password");
			return;
		}
		r->door = DOOR_DONE;
		open_if_ready(r, out);
		return;
	default:
		return;
	}
}

static size_t door_need(const struct rfb_relay *r)
{
	switch (r->door) {
	case DOOR_VERSION:
		return VERSION_LEN;
	case DOOR_NTYPES:
		return 1;
	case DOOR_TYPES:
		return r->door_need;
	case DOOR_CHALLENGE:
		return VNC_AUTH_CHALLENGE_LEN;
	default:
		return 4;
	}
}

enum rfb_relay_status rfb_relay_from_door(struct rfb_relay *r, const uint8_t *in, size_t len,
					  size_t *used, struct rfb_relay_out *out)
{
	const struct side sd = {
		.state = &r->door,
		.done = DOOR_DONE,
		.msg = r->door_msg,
		.held = r->door_held,
		.got = &r->door_got,
		.held_len = &r->door_held_len,
		.need = door_need,
		.step = door_step,
		.too_much = "the VNC door sent too much before the client was ready",
	};

	return feed(r, &sd, in, len, used, out);
}
