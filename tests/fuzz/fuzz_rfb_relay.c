/* tests/fuzz/fuzz_rfb_relay.c: libFuzzer target for the RFB handshakes of
 * noVNC's /websockify (gateway/e2b/rfb_relay.c), whose one side is any
 * WebSocket client. The first byte says whether the client must give a
 * password; then a script of pieces (a byte: bit 0 door, else client; a
 * length byte; that many bytes) is fed to one relay as it comes and to
 * another a byte at a time, in the same order. Checked: the same bytes to
 * each side, the same bytes taken, the same end; the client is greeted
 * with 3.8 and the door only ever gets 3.8; a relay that opens with a
 * password had the client's right answer in its place; nothing is taken
 * once it opened or failed. */
#include "display/vnc_share.h"
#include "gateway/e2b/rfb_relay.h"

#include <stdint.h>
#include <string.h>

#define STREAM_MAX 8192

struct side {
	struct rfb_relay r;
	uint8_t to_client[STREAM_MAX], to_door[STREAM_MAX];
	size_t client_len, door_len;
	uint8_t from_client[STREAM_MAX]; /* what the handshake took of the client */
	size_t took_client, took_door;
	enum rfb_relay_status st;
};

static void keep(struct side *s, const struct rfb_relay_out *out)
{
	if (out->client_len > RFB_RELAY_OUT || out->door_len > RFB_RELAY_OUT ||
	    s->client_len + out->client_len > STREAM_MAX ||
	    s->door_len + out->door_len > STREAM_MAX)
		__builtin_trap();
	memcpy(s->to_client + s->client_len, out->to_client, out->client_len);
	s->client_len += out->client_len;
	memcpy(s->to_door + s->door_len, out->to_door, out->door_len);
	s->door_len += out->door_len;
}

static void feed(struct side *s, bool door, const uint8_t *p, size_t n)
{
	struct rfb_relay_out out;
	enum rfb_relay_status before = s->st;
	size_t used = 0;

	s->st = door ? rfb_relay_from_door(&s->r, p, n, &used, &out)
		     : rfb_relay_from_client(&s->r, p, n, &used, &out);
	if (used > n || (before != RFB_RELAY_HANDSHAKE && (used || s->st != before)))
		__builtin_trap();
	if (before == RFB_RELAY_HANDSHAKE)
		keep(s, &out);
	if (door) {
		s->took_door += used;
	} else {
		if (s->took_client + used > STREAM_MAX)
			__builtin_trap();
		memcpy(s->from_client + s->took_client, p, used);
		s->took_client += used;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t chal[VNC_AUTH_CHALLENGE_LEN] = "0123456789abcdef";
	static struct side a, b; /* large: not on the stack */
	const char *pw;
	struct rfb_relay_out out;
	size_t off = 1;

	if (size < 1 || size > 4096)
		return 0;
	pw = data[0] & 1 ? "secretpwXY" : NULL;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	rfb_relay_init(&a.r, pw, "doorpass", chal, &out);
	keep(&a, &out);
	rfb_relay_init(&b.r, pw, "doorpass", chal, &out);
	keep(&b, &out);
	while (off + 2 <= size) {
		bool door = data[off] & 1;
		size_t len = data[off + 1];
		const uint8_t *piece = data + off + 2;

		if (off + 2 + len > size)
			len = size - off - 2;
		off += 2 + len;
		feed(&a, door, piece, len);
		for (size_t i = 0; i < len; i++)
			feed(&b, door, piece + i, 1);
	}
	if (a.st != b.st || a.client_len != b.client_len || a.door_len != b.door_len ||
	    memcmp(a.to_client, b.to_client, a.client_len) ||
	    memcmp(a.to_door, b.to_door, a.door_len) || a.took_client != b.took_client ||
	    a.took_door != b.took_door || strcmp(a.r.why, b.r.why))
		__builtin_trap();
	if (a.client_len < 12 || memcmp(a.to_client, "RFB 003.008\n", 12))
		__builtin_trap();
	if (a.door_len && (a.door_len < 12 || memcmp(a.to_door, "RFB 003.008\n", 12)))
		__builtin_trap();
	if (a.st == RFB_RELAY_OPEN && pw) {
		/* the answer follows the version, and the type from 3.7 on */
		size_t at = 12 + (a.r.minor >= 7 ? 1 : 0);
		uint8_t want[VNC_AUTH_CHALLENGE_LEN];

		display_vnc_auth_response(chal, pw, want);
		if (a.took_client < at + VNC_AUTH_CHALLENGE_LEN ||
		    memcmp(a.from_client + at, want, VNC_AUTH_CHALLENGE_LEN))
			__builtin_trap();
	}
	return 0;
}
