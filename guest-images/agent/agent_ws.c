/* guest-images/agent/agent_ws.c: just enough of a WebSocket client to
 * carry the Chrome DevTools Protocol from the guest's Chromium to the
 * host: find the browser's endpoint (GET /json/version), upgrade, frame
 * outgoing messages (masked, as a client must) and unframe incoming ones.
 * The gateway speaks WebSocket to the CDP client on the host; the agent
 * speaks it to Chromium; between them go messages, cut into DATA frames
 * within the host's credit (the last without AGENT_FLAG_MORE). */
#define _GNU_SOURCE
#include "agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define WS_MAX_MESSAGE (64u * 1024 * 1024)

static int connect_local(int port, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { 3, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		snprintf(err, errlen, "connect 127.0.0.1:%d: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads a response head (up to the blank line) into buf; bytes past it are
 * not read (one byte at a time: heads are short, and the WebSocket's first
 * frame must stay in the socket). */
static int read_head(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		ssize_t r = recv(fd, buf + n, 1, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf[++n] = '\0';
		if (n >= 4 && !memcmp(buf + n - 4, "\r\n\r\n", 4))
			return 0;
	}
	return -1;
}

/* The path of webSocketDebuggerUrl in /json/version's answer. */
static int browser_path(int port, char *path, size_t cap, char *err, size_t errlen)
{
	char req[128], head[2048], body[4096], *p, *q;
	int fd = connect_local(port, err, errlen);
	size_t n = 0;

	if (fd < 0)
		return -1;
	snprintf(req, sizeof req,
		 "GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "Connection: close\r\n\r\n",
		 port);
	if (send_all(fd, req, strlen(req)) < 0 || read_head(fd, head, sizeof head) < 0) {
		snprintf(err, errlen, "GET /json/version: no answer");
		close(fd);
		return -1;
	}
	for (;;) {
		ssize_t r = recv(fd, body + n, sizeof body - 1 - n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (n += (size_t)r) >= sizeof body - 1)
			break;
	}
	close(fd);
	body[n] = '\0';
	p = strstr(body, "\"webSocketDebuggerUrl\"");
	p = p ? strstr(p, "ws://") : NULL;
	p = p ? strchr(p + 5, '/') : NULL;
	q = p ? strchr(p, '"') : NULL;
	if (!q || (size_t)(q - p) >= cap) {
		snprintf(err, errlen, "no webSocketDebuggerUrl in /json/version");
		return -1;
	}
	memcpy(path, p, (size_t)(q - p));
	path[q - p] = '\0';
	return 0;
}

int agent_ws_connect(int port, char *err, size_t errlen)
{
	char path[512], req[1024], head[2048];
	int fd;

	if (browser_path(port, path, sizeof path, err, errlen) < 0)
		return -1;
	if ((fd = connect_local(port, err, errlen)) < 0)
		return -1;
	/* The key needs no secrecy here: it only proves the peer speaks WebSocket. */
	snprintf(req, sizeof req,
		 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
		 "Connection: Upgrade\r\nSec-WebSocket-Key: dml0cmluZS1hZ2VudC1rZXk=\r\n"
		 "Sec-WebSocket-Version: 13\r\n\r\n",
		 path, port);
	if (send_all(fd, req, strlen(req)) < 0 || read_head(fd, head, sizeof head) < 0 ||
	    strncmp(head, "HTTP/1.1 101", 12)) {
		snprintf(err, errlen, "DevTools WebSocket upgrade refused: %.60s", head);
		close(fd);
		return -1;
	}
	return fd;
}

int agent_ws_frame(struct bq *out, const void *msg, size_t len)
{
	unsigned char hdr[14], *body;
	const unsigned char *m = msg;
	size_t h = 0;
	uint32_t mask = (uint32_t)agent_now_ms() * 2654435761u ^ (uint32_t)len;
	int rc;

	hdr[h++] = 0x81;
	if (len < 126) {
		hdr[h++] = (unsigned char)(0x80 | len);
	} else if (len < 65536) {
		hdr[h++] = 0x80 | 126;
		hdr[h++] = (unsigned char)(len >> 8);
		hdr[h++] = (unsigned char)len;
	} else {
		hdr[h++] = 0x80 | 127;
		for (int i = 7; i >= 0; i--)
			hdr[h++] = (unsigned char)((uint64_t)len >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		hdr[h++] = (unsigned char)(mask >> (8 * i));
	if (!(body = malloc(len ? len : 1)))
		return -1;
	for (size_t i = 0; i < len; i++)
		body[i] = m[i] ^ hdr[h - 4 + i % 4];
	rc = bq_put(out, hdr, h) || bq_put(out, body, len) ? -1 : 0;
	free(body);
	return rc;
}

/* Takes the header at the start of in: the frame's header length, payload
 * length, opcode and fin bit. 0 when it is not all there, -1 when it is
 * not one a server may send (masked, or longer than a message may be). */
static int ws_header(const struct bq *in, size_t *h, uint64_t *len, unsigned *op, bool *fin)
{
	const unsigned char *p = in->data + in->off;
	size_t avail = bq_size(in);

	if (avail < 2)
		return 0;
	*fin = p[0] & 0x80;
	*op = p[0] & 0x0f;
	*len = p[1] & 0x7f;
	*h = 2;
	if (*len == 126) {
		if (avail < 4)
			return 0;
		*len = (uint64_t)p[2] << 8 | p[3];
		*h = 4;
	} else if (*len == 127) {
		if (avail < 10)
			return 0;
		*len = 0;
		for (int i = 0; i < 8; i++)
			*len = *len << 8 | p[2 + i];
		*h = 10;
	}
	if ((p[1] & 0x80) || *len > WS_MAX_MESSAGE)
		return -1; /* servers never mask */
	return 1;
}

int agent_ws_next(struct ws_reader *r, struct bq *in, struct bq *pong, size_t max,
		  const unsigned char **p, size_t *n, bool *end)
{
	for (;;) {
		uint64_t len;
		size_t h, take;
		unsigned op;
		bool fin;
		int rc;

		if (r->in_frame) {
			take = bq_size(in);
			if (take > r->left)
				take = (size_t)r->left;
			if (take > max)
				take = max;
			if (!take && r->left)
				return 0; /* the rest of the payload, or credit */
			*p = in->data ? in->data + in->off : (const unsigned char *)"";
			*n = take;
			bq_consume(in, take);
			r->left -= take;
			*end = !r->left && r->fin;
			if (!r->left) {
				r->in_frame = false;
				if (r->fin)
					r->msg_len = 0;
			}
			if (take || *end)
				return 1;
			continue; /* an empty fragment */
		}
		if ((rc = ws_header(in, &h, &len, &op, &fin)) <= 0)
			return rc;
		if (op <= 0x2) { /* continuation, text, binary: passed on as it comes */
			if (len > WS_MAX_MESSAGE - r->msg_len)
				return -1;
			bq_consume(in, h);
			r->msg_len += len;
			r->left = len;
			r->fin = fin;
			r->in_frame = true;
			continue;
		}
		if (op < 0x8 || len > 125)
			return -1; /* reserved, or a control frame longer than one may be */
		if (bq_size(in) < h + len)
			return 0;
		if (op == 0x8)
			return 2;
		if (op == 0x9) {
			/* PONG, masked (as a client must) with a zero key. */
			unsigned char hd[2 + 4] = { 0x8a, (unsigned char)(0x80 | len) };

			if (bq_put(pong, hd, sizeof hd) ||
			    bq_put(pong, in->data + in->off + h, (size_t)len))
				return -1;
		}
		bq_consume(in, h + (size_t)len); /* pong and reserved control opcodes: nothing */
	}
}
