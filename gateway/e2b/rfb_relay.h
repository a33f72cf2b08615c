/* gateway/e2b/rfb_relay.h: the RFB handshakes of noVNC's /websockify
 * (e2b/e2b_websockify.c), where the gateway stands between a WebSocket
 * client and the session's VNC door (stream/vnc.h). To the client the
 * gateway is the RFB server, with the security the E2B SDK asked x11vnc for:
 * None (`-nopw`), or VNC Authentication with the password the SDK stored
 * (`-usepw`). To the door it is a client with the door's view or control
 * password. Once both sides are through security, the gateway steps aside:
 * ClientInit, ServerInit and everything after go through unchanged (RFC
 * 6143 from section 7.3 on; the door has a 3.8 server, and 3.3, 3.7 and 3.8
 * are the same from there).
 *
 * Both handshakes run at once: the client is greeted while the door's
 * handshake is under way, and its SecurityResult waits for the door's.
 * What a side sends past its own handshake while the other's is under way
 * (a client that sends ClientInit without waiting) is held, RFB_RELAY_HELD
 * bytes at most, until both are through.
 *
 * Pure: bytes in, bytes out, no I/O; the caller gives the challenge's
 * random bytes. Any thread, one relay at a time. */
#ifndef VITRINE_GATEWAY_RFB_RELAY_H
#define VITRINE_GATEWAY_RFB_RELAY_H

#include "display/vnc_share.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RFB_RELAY_HELD 256 /* bytes a side may send ahead of the other's handshake */
#define RFB_RELAY_OUT 512 /* what one call can give to each side: fits everything it may */

/* What one call gives to send, to each side, in order. */
struct rfb_relay_out {
	uint8_t to_client[RFB_RELAY_OUT];
	size_t client_len;
	uint8_t to_door[RFB_RELAY_OUT];
	size_t door_len;
};

enum rfb_relay_status {
	RFB_RELAY_FAILED = -1, /* why says; send what out holds for the client, then close */
	RFB_RELAY_HANDSHAKE = 0, /* more to come */
	RFB_RELAY_OPEN = 1, /* through: send what out holds, then relay bytes as they are */
};

struct rfb_relay {
	int cl, door; /* each side's state (rfb_relay.c) */
	int minor; /* the client's protocol: 3 (3.3), 7 or 8 */
	bool auth; /* VNC Authentication towards the client, else None */
	uint8_t challenge[VNC_AUTH_CHALLENGE_LEN];
	uint8_t expect[VNC_AUTH_CHALLENGE_LEN]; /* the client's right answer */
	char door_pw[VNC_SHARE_PASSWORD_LEN + 1];
	uint8_t cl_msg[VNC_AUTH_CHALLENGE_LEN]; /* the client's message being read */
	size_t cl_got;
	uint8_t door_msg[256]; /* the door's message being read */
	size_t door_got, door_need;
	uint8_t cl_held[RFB_RELAY_HELD]; /* sent past its handshake */
	size_t cl_held_len;
	uint8_t door_held[RFB_RELAY_HELD];
	size_t door_held_len;
	enum rfb_relay_status status;
	char why[128]; /* FAILED: a sentence */
};

/* Starts a relay: towards the client, VNC Authentication with client_pw
 * (its first VNC_SHARE_PASSWORD_LEN characters) and challenge, or None when
 * client_pw is NULL or ""; towards the door, door_pw. out gets the
 * client's greeting (the server's ProtocolVersion). Can't fail. */
void rfb_relay_init(struct rfb_relay *r, const char *client_pw, const char *door_pw,
		    const uint8_t challenge[VNC_AUTH_CHALLENGE_LEN], struct rfb_relay_out *out);

/* len bytes from the client, or from the door, in any pieces. out is
 * emptied first, then gets what to send. *used says how many of the bytes
 * the handshake took: all of them, but when the relay opens in the middle
 * of in, the rest is the caller's to relay after out's. Returns the
 * relay's status: once FAILED or OPEN it stays so, and takes no more bytes
 * (*used 0). */
enum rfb_relay_status rfb_relay_from_client(struct rfb_relay *r, const uint8_t *in, size_t len,
					    size_t *used, struct rfb_relay_out *out);
enum rfb_relay_status rfb_relay_from_door(struct rfb_relay *r, const uint8_t *in, size_t len,
					  size_t *used, struct rfb_relay_out *out);

#endif
