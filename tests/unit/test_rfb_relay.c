/* tests/unit/test_rfb_relay.c: the RFB handshakes of noVNC's /websockify
 * (gateway/e2b/rfb_relay.h), scripted byte for byte on both sides: a 3.8,
 * 3.7 and 3.3 client with and without VNC Authentication, the door's 3.8
 * handshake with its password, wrong passwords and types, what each side
 * sends ahead held and handed over, bytes in any pieces, and the VNC
 * Authentication answer itself against a vector made with openssl's DES
 * (the key's bits reversed, as VNC does). */
#include "display/vnc_share.h"
#include "gateway/e2b/rfb_relay.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define S(lit) (const uint8_t *)(lit), sizeof(lit) - 1

static const uint8_t chal[16] = "0123456789abcdef";
static const uint8_t door_chal[16] = "fedcba9876543210";

struct run {
	struct rfb_relay r;
	struct rfb_relay_out out;
	enum rfb_relay_status st;
	size_t used;
};

static void from_client(struct run *t, const uint8_t *p, size_t n)
{
	t->st = rfb_relay_from_client(&t->r, p, n, &t->used, &t->out);
}

static void from_door(struct run *t, const uint8_t *p, size_t n)
{
	t->st = rfb_relay_from_door(&t->r, p, n, &t->used, &t->out);
}

static void client_got(const struct run *t, const void *want, size_t n)
{
	assert_int_equal(t->out.client_len, n);
	assert_memory_equal(t->out.to_client, want, n);
}

static void door_got(const struct run *t, const void *want, size_t n)
{
	assert_int_equal(t->out.door_len, n);
	assert_memory_equal(t->out.to_door, want, n);
}

/* The door's whole 3.8 handshake with VNC Authentication: what the relay
 * sends it at each step (the last step's output is the caller's to check). */
static void door_through(struct run *t, const char *door_pw)
{
	uint8_t resp[16];

	from_door(t, S("RFB 003.008\n"));
	assert_int_equal(t->st, RFB_RELAY_HANDSHAKE);
	door_got(t, "RFB 003.008\n", 12);
	from_door(t, S("\x01\x02"));
	door_got(t, "\x02", 1);
	from_door(t, door_chal, 16);
	display_vnc_auth_response(door_chal, door_pw, resp);
	door_got(t, resp, 16);
	from_door(t, S("\0\0\0\0"));
}

static void test_auth_response_vector(void **state)
{
	static const uint8_t want[16] = { 0x2a, 0x94, 0x18, 0xc5, 0xee, 0xad, 0x41, 0x77,
					  0x8d, 0xcd, 0xd7, 0x6e, 0xa4, 0x12, 0x86, 0x46 };
	static const uint8_t want_short[16] = { 0x84, 0x5f, 0x7b, 0xd7, 0xd2, 0x19, 0x0e, 0xc2,
						0x13, 0x93, 0x82, 0x38, 0xde, 0x53, 0x37, 0x3b };
	uint8_t got[16];

	(void)state;
	display_vnc_auth_response(chal, "secretpw", got);
	assert_memory_equal(got, want, 16);
	/* only the first 8 characters count */
	display_vnc_auth_response(chal, "secretpwAndMore1", got);
	assert_memory_equal(got, want, 16);
	/* a shorter one is padded with NULs */
	display_vnc_auth_response(chal, "pw", got);
	assert_memory_equal(got, want_short, 16);
}

static void test_none_38(void **state)
{
	struct run t;

	(void)state;
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	client_got(&t, "RFB 003.008\n", 12);
	assert_int_equal(t.out.door_len, 0);
	from_client(&t, S("RFB 003.008\n"));
	assert_int_equal(t.st, RFB_RELAY_HANDSHAKE);
	client_got(&t, "\x01\x01", 2); /* one type: None */
	from_client(&t, S("\x01"));
	assert_int_equal(t.st, RFB_RELAY_HANDSHAKE); /* the door is not through yet */
	assert_int_equal(t.out.client_len, 0);
	door_through(&t, "doorpass");
	assert_int_equal(t.st, RFB_RELAY_OPEN);
	client_got(&t, "\0\0\0\0", 4); /* 3.8: a SecurityResult for None too */
	/* open: the relay takes no more */
	from_client(&t, S("\x01"));
	assert_int_equal(t.st, RFB_RELAY_OPEN);
	assert_int_equal(t.used, 0);
	from_door(&t, S("x"));
	assert_int_equal(t.used, 0);
}

static void test_vnc_auth_38(void **state)
{
	struct run t;
	uint8_t resp[16];

	(void)state;
	rfb_relay_init(&t.r, "secretpwAndMore1", "viewpass", chal, &t.out);
	door_through(&t, "viewpass"); /* the door first this time */
	assert_int_equal(t.st, RFB_RELAY_HANDSHAKE);
	from_client(&t, S("RFB 003.008\n"));
	client_got(&t, "\x01\x02", 2);
	from_client(&t, S("\x02"));
	client_got(&t, chal, 16);
	/* the client's answer with the first 8 characters, in two pieces */
	display_vnc_auth_response(chal, "secretpw", resp);
	from_client(&t, resp, 5);
	assert_int_equal(t.st, RFB_RELAY_HANDSHAKE);
	assert_int_equal(t.used, 5);
	from_client(&t, resp + 5, 11);
	assert_int_equal(t.st, RFB_RELAY_OPEN);
	client_got(&t, "\0\0\0\0", 4);
	assert_int_equal(t.out.door_len, 0);
}

static void test_wrong_password(void **state)
{
	static const char refusal[] = "\0\0\0\x01\0\0\0\x15the password is wrong";
	struct run t;
	uint8_t resp[16];

	(void)state;
	rfb_relay_init(&t.r, "secretpw", "doorpass", chal, &t.out);
	from_client(&t, S("RFB 003.008\n\x02"));
	client_got(&t,
		   "\x01\x02"
		   "0123456789abcdef",
		   18);
	display_vnc_auth_response(chal, "secretpX", resp);
	from_client(&t, resp, 16);
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	client_got(&t, refusal, sizeof(refusal) - 1);
	assert_string_equal(t.r.why, "the password is wrong");
	/* and nothing more, from either side */
	from_door(&t, S("RFB 003.008\n"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	assert_int_equal(t.used, 0);
	assert_int_equal(t.out.door_len, 0);
}

static void test_none_37_held(void **state)
{
	struct run t;

	(void)state;
	rfb_relay_init(&t.r, "", "doorpass", chal, &t.out); /* "" is no password */
	from_client(&t, S("RFB 003.007\n"));
	client_got(&t, "\x01\x01", 2);
	/* the type, then ClientInit at once (3.7 has no SecurityResult for
	 * None): held while the door's handshake is under way */
	from_client(&t, S("\x01\x01"));
	assert_int_equal(t.st, RFB_RELAY_HANDSHAKE);
	assert_int_equal(t.used, 2);
	assert_int_equal(t.out.client_len, 0);
	door_through(&t, "doorpass");
	assert_int_equal(t.st, RFB_RELAY_OPEN);
	door_got(&t, "\x01", 1); /* ClientInit, handed over */
	assert_int_equal(t.out.client_len, 0); /* no SecurityResult in 3.7 for None */
}

static void test_33(void **state)
{
	struct run t;
	uint8_t resp[16];

	(void)state;
	/* VNC Authentication: the type as a word, then the challenge */
	rfb_relay_init(&t.r, "secretpw", "doorpass", chal, &t.out);
	from_client(&t, S("RFB 003.003\n"));
	client_got(&t,
		   "\0\0\0\x02"
		   "0123456789abcdef",
		   20);
	display_vnc_auth_response(chal, "secretpw", resp);
	from_client(&t, resp, 16);
	assert_int_equal(t.st, RFB_RELAY_HANDSHAKE);
	door_through(&t, "doorpass");
	assert_int_equal(t.st, RFB_RELAY_OPEN);
	client_got(&t, "\0\0\0\0", 4);
	/* None: no SecurityResult at all; other versions count as 3.3 */
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_client(&t, S("RFB 003.889\n"));
	client_got(&t, "\0\0\0\x01", 4);
	door_through(&t, "doorpass");
	assert_int_equal(t.st, RFB_RELAY_OPEN);
	assert_int_equal(t.out.client_len, 0);
	assert_int_equal(t.r.minor, 3);
}

static void test_client_refusals(void **state)
{
	static const char not_offered[] = "\0\0\0\x01\0\0\0\x21that security type is not offered";
	struct run t;

	(void)state;
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_client(&t, S("GET / HTTP/1.1\r\n"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	assert_string_equal(t.r.why, "not an RFB client (its ProtocolVersion)");
	assert_int_equal(t.out.client_len, 0);
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_client(&t, S("RFB 004.000\n"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_client(&t, S("RFB 003.0x8\n"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	/* a type that was not offered: 3.8 says why */
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_client(&t, S("RFB 003.008\n\x02"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	client_got(&t,
		   "\x01\x01"
		   "\0\0\0\x01\0\0\0\x21that security type is not offered",
		   2 + sizeof(not_offered) - 1);
	/* 3.7: closed without a word */
	rfb_relay_init(&t.r, "pw", "doorpass", chal, &t.out);
	from_client(&t, S("RFB 003.007\n\x01"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	client_got(&t, "\x01\x02", 2);
}

static void test_door_refusals(void **state)
{
	struct run t;

	(void)state;
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_door(&t, S("RFB 003.007\n"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	assert_string_equal(t.r.why, "the VNC door does not speak RFB 3.8");
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_door(&t, S("RFB 003.008\n\0\0\0\0\x05nope!"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	assert_string_equal(t.r.why, "the VNC door refused the connection");
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_door(&t, S("RFB 003.008\n\x02\x10\x12"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	assert_string_equal(t.r.why, "the VNC door offers no security the gateway speaks");
	/* None offered among others: taken, and its SecurityResult read */
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_door(&t, S("RFB 003.008\n\x02\x10\x01"));
	assert_int_equal(t.st, RFB_RELAY_HANDSHAKE);
	door_got(&t, "RFB 003.008\n\x01", 13);
	from_door(&t, S("\0\0\0\x01\0\0\0\x04lock"));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	assert_string_equal(t.r.why, "the VNC door refused its password");
}

/* The same bytes, whole or one at a time, give the same bytes out. */
static void test_pieces(void **state)
{
	static const uint8_t door[] = "RFB 003.008\n\x01\x02"
				      "fedcba9876543210"
				      "\0\0\0\0";
	uint8_t cl[12 + 1 + 16], resp[16];
	uint8_t whole_c[1024], whole_d[1024], bit_c[1024], bit_d[1024];
	size_t wc = 0, wd = 0, bc = 0, bd = 0;
	struct run t;

	(void)state;
	memcpy(cl, "RFB 003.008\n\x02", 13);
	display_vnc_auth_response(chal, "secretpw", resp);
	memcpy(cl + 13, resp, 16);
	/* whole: the door's bytes, then the client's */
	rfb_relay_init(&t.r, "secretpw", "doorpass", chal, &t.out);
	memcpy(whole_c, t.out.to_client, t.out.client_len);
	wc = t.out.client_len;
	from_door(&t, door, sizeof(door) - 1);
	memcpy(whole_d + wd, t.out.to_door, t.out.door_len);
	wd += t.out.door_len;
	from_client(&t, cl, sizeof(cl));
	assert_int_equal(t.st, RFB_RELAY_OPEN);
	memcpy(whole_c + wc, t.out.to_client, t.out.client_len);
	wc += t.out.client_len;
	/* a byte at a time, the two sides interleaved */
	rfb_relay_init(&t.r, "secretpw", "doorpass", chal, &t.out);
	memcpy(bit_c, t.out.to_client, t.out.client_len);
	bc = t.out.client_len;
	for (size_t i = 0; i < sizeof(door) - 1 || i < sizeof(cl); i++) {
		if (i < sizeof(door) - 1) {
			from_door(&t, door + i, 1);
			memcpy(bit_d + bd, t.out.to_door, t.out.door_len);
			bd += t.out.door_len;
			memcpy(bit_c + bc, t.out.to_client, t.out.client_len);
			bc += t.out.client_len;
		}
		if (i < sizeof(cl)) {
			from_client(&t, cl + i, 1);
			memcpy(bit_d + bd, t.out.to_door, t.out.door_len);
			bd += t.out.door_len;
			memcpy(bit_c + bc, t.out.to_client, t.out.client_len);
			bc += t.out.client_len;
		}
	}
	assert_int_equal(t.st, RFB_RELAY_OPEN);
	assert_int_equal(bc, wc);
	assert_memory_equal(bit_c, whole_c, wc);
	assert_int_equal(bd, wd);
	assert_memory_equal(bit_d, whole_d, wd);
}

/* Opening in the middle of a piece leaves the rest to the caller; too
 * much ahead of the other side's handshake fails. */
static void test_open_mid_piece_and_bounds(void **state)
{
	uint8_t big[RFB_RELAY_HELD + 1];
	struct run t;

	(void)state;
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	door_through(&t, "doorpass");
	from_client(&t, S("RFB 003.008\n\x01\x01\x00\x00\x00"));
	assert_int_equal(t.st, RFB_RELAY_OPEN);
	assert_int_equal(t.used, 13); /* ClientInit and on are the caller's */
	assert_int_equal(t.out.door_len, 0);
	client_got(&t, "\x01\x01\0\0\0\0", 6);
	/* the door's bytes past its handshake, held up to the bound */
	rfb_relay_init(&t.r, "pw", "doorpass", chal, &t.out);
	memset(big, 'x', sizeof(big));
	from_door(&t, S("RFB 003.008\n\x01\x01\0\0\0\0"));
	assert_int_equal(t.st, RFB_RELAY_HANDSHAKE);
	from_door(&t, big, RFB_RELAY_HELD);
	assert_int_equal(t.st, RFB_RELAY_HANDSHAKE);
	from_door(&t, big, 1);
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	assert_string_equal(t.r.why, "the VNC door sent too much before the client was ready");
	/* and the client's */
	rfb_relay_init(&t.r, NULL, "doorpass", chal, &t.out);
	from_client(&t, S("RFB 003.007\n\x01"));
	from_client(&t, big, sizeof(big));
	assert_int_equal(t.st, RFB_RELAY_FAILED);
	assert_int_equal(t.used, RFB_RELAY_HELD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_response_vector),
		cmocka_unit_test(test_none_38),
		cmocka_unit_test(test_vnc_auth_38),
		cmocka_unit_test(test_wrong_password),
		cmocka_unit_test(test_none_37_held),
		cmocka_unit_test(test_33),
		cmocka_unit_test(test_client_refusals),
		cmocka_unit_test(test_door_refusals),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_open_mid_piece_and_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
