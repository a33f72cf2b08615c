/* tests/unit/test_ports.c: gateway/ports/port_parse.c: host names
 * {port}-{id}.{domain} (case, a listener's port, the root's dot, ports
 * out of range, other names), port numbers, request targets that read
 * back as lws decoded them, and the head of a guest server's answer
 * (lengths, chunked, bounds, a smuggler's both lengths); and the route
 * table's ports rows: any method, any rest of the path; links: signed
 * values good for their session's port until their expiry only, the
 * cookie found in a Cookie header and stripped from it; WebSockets
 * (port_ws.c): the masked client frames at each length form, the key and
 * the accept of RFC 6455's example, the server's answer checked, and the
 * server's frames read byte by byte and whole: fragmented messages with
 * control frames between them, closes, and each protocol error. */
#include "gateway/api/routes.h"
#include "gateway/ports/port_link.h"
#include "gateway/ports/port_parse.h"
#include "gateway/ports/port_ws.h"

#include <libwebsockets.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_port_number(void **state)
{
	(void)state;
	assert_int_equal(port_number_parse("1"), 1);
	assert_int_equal(port_number_parse("8080"), 8080);
	assert_int_equal(port_number_parse("65535"), 65535);
	assert_int_equal(port_number_parse("65536"), -1);
	assert_int_equal(port_number_parse("0"), -1);
	assert_int_equal(port_number_parse("080"), -1);
	assert_int_equal(port_number_parse("123456"), -1);
	assert_int_equal(port_number_parse("-1"), -1);
	assert_int_equal(port_number_parse("80a"), -1);
	assert_int_equal(port_number_parse(""), -1);
	assert_int_equal(port_number_parse(NULL), -1);
}

static void test_host(void **state)
{
	char id[40];
	int port = 0;

	(void)state;
	assert_int_equal(port_host_parse("3000-vmabc123.ports.example.org", "ports.example.org",
					 &port, id, sizeof(id)),
			 0);
	assert_int_equal(port, 3000);
	assert_string_equal(id, "vmabc123");
	/* a listener's port, any case, the root's dot on either */
	assert_int_equal(port_host_parse("8080-VMx9.Ports.Example.ORG.:8443", "ports.example.org.",
					 &port, id, sizeof(id)),
			 0);
	assert_int_equal(port, 8080);
	assert_string_equal(id, "vmx9");
	assert_int_equal(port_host_parse("1-a.d", "d", &port, id, sizeof(id)), 0);
	assert_int_equal(port_host_parse("65535-a.d", "d", &port, id, sizeof(id)), 0);
	assert_int_equal(port, 65535);
	/* the shape, but no port */
	assert_int_equal(port_host_parse("65536-a.d", "d", &port, id, sizeof(id)), -ERANGE);
	assert_string_equal(id, "a");
	assert_int_equal(port_host_parse("9999999-a.d", "d", &port, id, sizeof(id)), -ERANGE);
	/* other names */
	assert_int_equal(port_host_parse("0-a.d", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("08-a.d", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("80-a.d", "", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("80-a.xd", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("80-a.b.d", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("80-.d", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("80a.d", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("-a.d", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("80-a_b.d", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("80-a-b.d", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("d", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("80-a.d:", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("80-a.d:8x", "d", &port, id, sizeof(id)), -EINVAL);
	assert_int_equal(port_host_parse("127.0.0.1:8080", "0.0.1", &port, id, sizeof(id)),
			 -EINVAL);
	/* an id longer than its place */
	assert_int_equal(port_host_parse("80-abcdef.d", "d", &port, id, 6), -EINVAL);
	assert_int_equal(port_host_parse("80-abcde.d", "d", &port, id, 6), 0);
}

static void expect_target(const char *path, const char *const *args, size_t n, const char *want)
{
	char out[256];
	long len = port_target(out, sizeof(out), path, args, n);

	assert_true(len >= 0);
	assert_string_equal(out, want);
	assert_int_equal((size_t)len, strlen(want));
}

static void test_target(void **state)
{
	const char *q1[] = { "a=1", "b=x y&z", "flag", "e=a=b" };
	const char *q2[] = { "n%=+#" };
	char small[8];

	(void)state;
	expect_target("/", NULL, 0, "/");
	expect_target("", NULL, 0, "/");
	expect_target("/a/b.html", NULL, 0, "/a/b.html");
	expect_target("/s p/%/?#/\xc3\xa9", NULL, 0, "/s%20p/%25/%3F%23/%C3%A9");
	expect_target("/x", q1, 4, "/x?a=1&b=x%20y%26z&flag&e=a%3Db");
	expect_target("/", q2, 1, "/?n%25=%2B%23");
	assert_int_equal(port_target(small, sizeof(small), "/abcdefgh", NULL, 0), -1);
	assert_int_equal(port_target(small, sizeof(small), "/abcdef", NULL, 0), 7);
	assert_int_equal(port_target(small, sizeof(small), "x", NULL, 0), -1);
}

static long parse(const char *text, struct port_head *h)
{
	return port_head_parse(text, strlen(text), h);
}

static void test_head(void **state)
{
	const char *ok = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 11\r\n"
			 "X-Empty:\r\n\r\nhello-port\n";
	struct port_head h;
	char *big;

	(void)state;
	assert_int_equal(parse(ok, &h), strstr(ok, "hello") - ok);
	assert_int_equal(h.status, 200);
	assert_int_equal(h.minor, 1);
	assert_int_equal(h.n, 3);
	assert_int_equal(h.content_length, 11);
	assert_false(h.chunked);
	assert_memory_equal(h.h[0].name, "Content-Type", 12);
	assert_int_equal(h.h[0].value_len, 9);
	assert_memory_equal(h.h[0].value, "text/html", 9);
	assert_int_equal(h.h[2].value_len, 0);
	/* every prefix: more is needed */
	for (size_t n = 0; n < (size_t)(strstr(ok, "hello") - ok); n++)
		assert_int_equal(port_head_parse(ok, n, &h), 0);
	/* LF alone (busybox's CGI), a reason-less status, chunked, close */
	assert_int_equal(parse("HTTP/1.0 404\nTransfer-Encoding: gzip, chunked\n"
			       "Connection: keep-alive, Close\n\nbody",
			       &h),
			 strlen("HTTP/1.0 404\nTransfer-Encoding: gzip, chunked\n"
				"Connection: keep-alive, Close\n\n"));
	assert_int_equal(h.status, 404);
	assert_true(h.chunked);
	assert_true(h.conn_close);
	assert_int_equal(h.content_length, -1);
	assert_true(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", &h) > 0);
	assert_false(h.chunked);
	/* the same length twice is one; two lengths, or a length and chunks, are not */
	assert_true(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n", &h) >
		    0);
	assert_int_equal(h.content_length, 5);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
			       &h),
			 -1);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
			       "Transfer-Encoding: chunked\r\n\r\n",
			       &h),
			 -1);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", &h), -1);
	/* malformed */
	assert_int_equal(parse("HTTP/2 200 OK\r\n\r\n", &h), -1);
	assert_int_equal(parse("HTTP/1.1 20 OK\r\n\r\n", &h), -1);
	assert_int_equal(parse("HTTP/1.1 099 OK\r\n\r\n", &h), -1);
	assert_int_equal(parse("HTTP/1.1 200OK\r\n\r\n", &h), -1);
	assert_int_equal(parse("SSH-2.0-OpenSSH\r\n\r\n", &h), -1);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nNo colon\r\n\r\n", &h), -1);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\n: empty name\r\n\r\n", &h), -1);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", &h), -1);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", &h), -1);
	/* too many headers; a head that never ends within the bound */
	big = malloc(PORT_HEAD_MAX + 64);
	assert_non_null(big);
	strcpy(big, "HTTP/1.1 200 OK\r\n");
	for (int i = 0; i <= PORT_HEADERS_MAX; i++)
		strcat(big, "A: b\r\n");
	strcat(big, "\r\n");
	assert_int_equal(parse(big, &h), -1);
	memset(big, 'x', PORT_HEAD_MAX + 63);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	assert_int_equal(port_head_parse(big, PORT_HEAD_MAX - 1, &h), 0);
	assert_int_equal(port_head_parse(big, PORT_HEAD_MAX + 63, &h), -1);
	free(big);
}

static void test_hop(void **state)
{
	(void)state;
	assert_true(port_header_hop("Connection", 10));
	assert_true(port_header_hop("keep-alive", 10));
	assert_true(port_header_hop("Upgrade", 7));
	assert_true(port_header_hop("TE", 2));
	assert_false(port_header_hop("Transfer-Encoding", 17));
	assert_false(port_header_hop("Content-Length", 14));
	assert_false(port_header_hop("Te", 1));
}

static void test_routes(void **state)
{
	static const enum route_method all[] = { M_GET, M_POST, M_DELETE, M_PUT, M_OTHER };
	struct route r;

	(void)state;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		r = route_parse(all[i], "/v1/sessions/vmabc/ports/8080/a/b.html");
		assert_int_equal(r.kind, R_SESSION_PORT);
		assert_string_equal(r.id, "vmabc");
		assert_string_equal(r.sub, "8080");
	}
	assert_int_equal(route_parse(M_GET, "/v1/sessions/vmabc/ports/8080/").kind, R_SESSION_PORT);
	/* without the slash: the port's settings */
	r = route_parse(M_PUT, "/v1/sessions/vmabc/ports/8080");
	assert_int_equal(r.kind, R_SESSION_PORT_SETTINGS);
	assert_string_equal(r.sub, "8080");
	assert_int_equal(route_parse(M_GET, "/v1/sessions/vmabc/ports/8080").kind,
			 R_SESSION_PORT_SETTINGS);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/vmabc/ports/8080").kind,
			 R_SESSION_PORT_SETTINGS);
	assert_int_equal(route_parse(M_DELETE, "/v1/sessions/vmabc/ports/8080").kind,
			 R_METHOD_NOT_ALLOWED);
	/* a port out of range is the handler's 400; no number is no route */
	r = route_parse(M_GET, "/v1/sessions/vmabc/ports/99999999/");
	assert_int_equal(r.kind, R_SESSION_PORT);
	assert_string_equal(r.sub, "99999999");
	assert_int_equal(route_parse(M_GET, "/v1/sessions/vmabc/ports/80x/").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/vmabc/ports/").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/vmabc/ports/1234567890/").kind,
			 R_NOT_FOUND);
	/* the other routes are as they were: M_OTHER is still 405 there */
	assert_int_equal(route_parse(M_OTHER, "/v1/sessions/vmabc/exec").kind,
			 R_METHOD_NOT_ALLOWED);
}

static void test_link(void **state)
{
	uint8_t key[PORT_LINK_SECRET], other[PORT_LINK_SECRET];
	char v[PORT_LINK_VALUE_MAX], bad[PORT_LINK_VALUE_MAX], out[128];

	(void)state;
	memset(key, 7, sizeof(key));
	memset(other, 8, sizeof(other));
	port_link_sign(key, "vmabc", 8080, 2000000000, v);
	assert_int_equal(strlen(v), 10 + 1 + 64);
	assert_true(port_link_check(key, "vmabc", 8080, 1999999999, v));
	assert_false(port_link_check(key, "vmabc", 8080, 2000000000, v)); /* expired */
	assert_false(port_link_check(key, "vmabd", 8080, 0, v));
	assert_false(port_link_check(key, "vmabc", 8081, 0, v));
	assert_false(port_link_check(other, "vmabc", 8080, 0, v));
	strcpy(bad, v);
	bad[20] = bad[20] == 'a' ? 'b' : 'a';
	assert_false(port_link_check(key, "vmabc", 8080, 0, bad));
	strcpy(bad, v);
	bad[0] = '3'; /* a later expiry under the same MAC */
	assert_false(port_link_check(key, "vmabc", 8080, 0, bad));
	assert_false(port_link_check(key, "vmabc", 8080, 0, ""));
	assert_false(port_link_check(key, "vmabc", 8080, 0, ".abc"));
	/* the cookie among others, and without it */
	assert_true(port_link_cookie("a=1; vitrine_port=xyz; b=2", out, sizeof(out)));
	assert_string_equal(out, "xyz");
	assert_true(port_link_cookie("vitrine_port=", out, sizeof(out)));
	assert_string_equal(out, "");
	assert_false(port_link_cookie("a=1; xvitrine_port=1; vitrine_portx=2", out, sizeof(out)));
	assert_false(port_link_cookie("vitrine_port=toolong", out, 4));
	assert_int_equal(port_link_cookie_strip("a=1; vitrine_port=xyz;b=2", out, sizeof(out)), 8);
	assert_string_equal(out, "a=1; b=2");
	assert_int_equal(port_link_cookie_strip("vitrine_port=xyz", out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(port_link_cookie_strip("a=1; bb=2", out, 6), 3);
	assert_string_equal(out, "a=1");
}

/* ---- WebSockets (port_ws.c) ---- */

static void sha1(const void *p, size_t n, uint8_t out[20])
{
	lws_SHA1(p, n, out);
}

static void test_ws_frame_head(void **state)
{
	static const uint8_t mask[4] = { 0x37, 0xfa, 0x21, 0x3d };
	uint8_t h[PORT_WS_HEAD_MAX], p[5] = { 'H', 'e', 'l', 'l', 'o' };

	(void)state;
	/* RFC 6455 5.7: a masked "Hello" */
	assert_int_equal(port_ws_frame_head(h, PORT_WS_TEXT, true, 5, mask), 6);
	assert_memory_equal(h, "\x81\x85\x37\xfa\x21\x3d", 6);
	port_ws_mask(p, 5, mask, 0);
	assert_memory_equal(p, "\x7f\x9f\x4d\x51\x58", 5);
	port_ws_mask(p, 2, mask, 0); /* in two pieces: the phase follows the offset */
	port_ws_mask(p + 2, 3, mask, 2);
	assert_memory_equal(p, "Hello", 5);
	assert_int_equal(port_ws_frame_head(h, PORT_WS_BINARY, false, 125, mask), 6);
	assert_memory_equal(h, "\x02\xfd", 2);
	assert_int_equal(port_ws_frame_head(h, PORT_WS_CONT, true, 126, mask), 8);
	assert_memory_equal(h, "\x80\xfe\x00\x7e\x37\xfa\x21\x3d", 8);
	assert_int_equal(port_ws_frame_head(h, PORT_WS_CONT, true, 65535, mask), 8);
	assert_memory_equal(h, "\x80\xfe\xff\xff", 4);
	assert_int_equal(port_ws_frame_head(h, PORT_WS_BINARY, true, 65536, mask), 14);
	assert_memory_equal(h, "\x82\xff\x00\x00\x00\x00\x00\x01\x00\x00\x37\xfa\x21\x3d", 14);
	assert_int_equal(port_ws_frame_head(h, PORT_WS_CLOSE, true, 0, mask), 6);
	assert_memory_equal(h, "\x88\x80", 2);
}

static struct port_head head_of(const char *text)
{
	struct port_head h;

	assert_true(port_head_parse(text, strlen(text), &h) > 0);
	return h;
}

static void test_ws_handshake(void **state)
{
	static const uint8_t sample[16] = "the sample nonce";
	char key[PORT_WS_KEY_LEN], acc[PORT_WS_ACCEPT_LEN];
	const char *why = NULL;
	struct port_head h;

	(void)state;
	port_ws_key(sample, key);
	assert_string_equal(key, "dGhlIHNhbXBsZSBub25jZQ==");
	port_ws_accept(key, sha1, acc);
	assert_string_equal(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	h = head_of("HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\n"
		    "Connection: keep-alive, Upgrade\r\n"
		    "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n");
	assert_int_equal(port_ws_check_answer(&h, acc, &why), 0);
	h = head_of("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
	assert_int_equal(port_ws_check_answer(&h, acc, &why), -1);
	assert_non_null(strstr(why, "did not take"));
	h = head_of("HTTP/1.1 101 x\r\nupgrade: websocket\r\nconnection: upgrade\r\n"
		    "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo\r\n\r\n");
	assert_int_equal(port_ws_check_answer(&h, acc, &why), -1);
	assert_non_null(strstr(why, "Accept"));
	h = head_of("HTTP/1.1 101 x\r\nupgrade: websocket\r\nconnection: upgraded\r\n"
		    "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n");
	assert_int_equal(port_ws_check_answer(&h, acc, &why), -1);
	assert_non_null(strstr(why, "Connection"));
	h = head_of("HTTP/1.1 101 x\r\nupgrade: h2c\r\nconnection: upgrade\r\n"
		    "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n");
	assert_int_equal(port_ws_check_answer(&h, acc, &why), -1);
	h = head_of("HTTP/1.1 101 x\r\nupgrade: websocket\r\nconnection: upgrade\r\n"
		    "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
		    "sec-websocket-extensions: permessage-deflate\r\n\r\n");
	assert_int_equal(port_ws_check_answer(&h, acc, &why), -1);
	assert_non_null(strstr(why, "extension"));
}

/* Feeds bytes[len] to a fresh reader, step by step (whole or one byte a
 * call), and writes what it told into out: "D<f><l><b>:<text>" for data,
 * "P:", "O:" (pong), "C<code>:<reason>", "E" for an error. */
static void read_frames(const char *bytes, size_t len, bool by_byte, char *out, size_t cap)
{
	struct port_ws_rx rx = { 0 };
	struct port_ws_ev ev;
	size_t off = 0, o = 0;

	out[0] = '\0';
	while (off < len) {
		size_t give = by_byte ? 1 : len - off;
		size_t used = port_ws_rx_step(&rx, (const uint8_t *)bytes + off, give, &ev);

		if (ev.kind == PORT_WS_EV_ERROR) {
			assert_int_equal(used, 0);
			o += (size_t)snprintf(out + o, cap - o, "E");
			return;
		}
		assert_true(used >= 1 && used <= give);
		off += used;
		switch (ev.kind) {
		case PORT_WS_EV_DATA:
			o += (size_t)snprintf(out + o, cap - o, "D%d%d%d:%.*s ", ev.first, ev.final,
					      ev.binary, (int)ev.n, (const char *)ev.p);
			break;
		case PORT_WS_EV_PING:
			o += (size_t)snprintf(out + o, cap - o, "P:%.*s ", (int)ev.n,
					      (const char *)ev.p);
			break;
		case PORT_WS_EV_PONG:
			o += (size_t)snprintf(out + o, cap - o, "O:%.*s ", (int)ev.n,
					      (const char *)ev.p);
			break;
		case PORT_WS_EV_CLOSE:
			o += (size_t)snprintf(out + o, cap - o, "C%d:%.*s ", ev.code, (int)ev.n,
					      (const char *)ev.p);
			break;
		default:
			break;
		}
	}
}

#define FRAMES(lit) lit, sizeof(lit) - 1

static void test_ws_rx(void **state)
{
	char out[1024], joined[1024], big[4 + 300];

	(void)state;
	/* whole: "Hel" + ping + "lo" (RFC 6455 5.7), a binary, a close */
	read_frames(FRAMES("\x01\x03Hel\x89\x02hi\x80\x02lo\x82\x01x\x88\x04\x03\xe8ok"), false,
		    out, sizeof(out));
	assert_string_equal(out, "D100:Hel P:hi D010:lo D111:x C1000:ok ");
	/* byte by byte: every payload byte a piece of its own */
	read_frames(FRAMES("\x01\x03Hel\x89\x02hi\x80\x02lo\x82\x01x\x88\x04\x03\xe8ok"), true, out,
		    sizeof(out));
	assert_string_equal(out, "D100:H D000:e D000:l P:hi D000:l D010:o D111:x C1000:ok ");
	/* an empty message, an empty final continuation, a pong, a bare close */
	read_frames(FRAMES("\x81\x00\x01\x00\x00\x01"
			   "a\x80\x00\x8a\x00\x88\x00"),
		    false, out, sizeof(out));
	assert_string_equal(out, "D110: D100:a D010: O: C0: ");
	/* a 300-byte frame (16-bit length) comes whole, or in pieces */
	memcpy(big, "\x82\x7e\x01\x2c", 4);
	memset(big + 4, 'z', 300);
	read_frames(big, sizeof(big), false, joined, sizeof(joined));
	assert_int_equal(strlen(joined), 5 + 300 + 1);
	assert_memory_equal(joined, "D111:", 5);
	/* a 64-bit length (small, but in the long form) */
	read_frames(FRAMES("\x81\x7f\x00\x00\x00\x00\x00\x00\x00\x02ok"), false, out, sizeof(out));
	assert_string_equal(out, "D110:ok ");
	/* protocol errors */
	static const struct {
		const char *b;
		size_t n;
	} bad[] = {
		{ FRAMES("\x81\x82\x00\x00\x00\x00"
			 "ab") }, /* masked */
		{ FRAMES("\xc1\x01"
			 "a") }, /* RSV1 */
		{ FRAMES("\x83\x01"
			 "a") }, /* opcode 3 */
		{ FRAMES("\x8b\x00") }, /* opcode 0xb */
		{ FRAMES("\x80\x01"
			 "a") }, /* continuation first */
		{ FRAMES("\x01\x01"
			 "a\x81\x01"
			 "b") }, /* a message in a message */
		{ FRAMES("\x09\x00") }, /* a fragmented ping */
		{ FRAMES("\x89\x7e\x00\x7e") }, /* a long ping */
		{ FRAMES("\x88\x01\x03") }, /* a close of one byte */
		{ FRAMES("\x88\x02\x03\xed") }, /* 1005 */
		{ FRAMES("\x88\x02\x00\x10") }, /* 16 */
		{ FRAMES("\x82\x7f\x80\x00\x00\x00\x00\x00\x00\x00") }, /* top bit */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		read_frames(bad[i].b, bad[i].n, false, out, sizeof(out));
		assert_non_null(strchr(out, 'E'));
		read_frames(bad[i].b, bad[i].n, true, out, sizeof(out));
		assert_non_null(strchr(out, 'E'));
	}
	/* the close codes a server may send */
	read_frames(FRAMES("\x88\x02\x0b\xb8\x88\x02\x13\x87"), false, out, sizeof(out));
	assert_string_equal(out, "C3000: C4999: ");
	{
		struct port_ws_rx rx = { 0 };
		struct port_ws_ev ev;

		/* nothing given: nothing used; after an error nothing more */
		assert_int_equal(port_ws_rx_step(&rx, (const uint8_t *)"", 0, &ev), 0);
		assert_int_equal(ev.kind, PORT_WS_EV_NONE);
		assert_int_equal(port_ws_rx_step(&rx, (const uint8_t *)"\xf1\x00", 2, &ev), 0);
		assert_int_equal(ev.kind, PORT_WS_EV_ERROR);
		assert_int_equal(port_ws_rx_step(&rx, (const uint8_t *)"\x81\x00", 2, &ev), 0);
		assert_int_equal(ev.kind, PORT_WS_EV_ERROR);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port_number),  cmocka_unit_test(test_host),
		cmocka_unit_test(test_target),	     cmocka_unit_test(test_head),
		cmocka_unit_test(test_hop),	     cmocka_unit_test(test_routes),
		cmocka_unit_test(test_link),	     cmocka_unit_test(test_ws_frame_head),
		cmocka_unit_test(test_ws_handshake), cmocka_unit_test(test_ws_rx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
