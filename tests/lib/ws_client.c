/* tests/lib/ws_client.c: see ws_client.h. */
#include "tests/lib/ws_client.h"

#include "common/fsutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int read_full(int fd, void *buf, size_t n, int timeout_ms)
{
	unsigned char *p = buf;

	while (n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -1;
		r = read(fd, p, n);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int ws_connect(int port, const char *path, const char *token, const char *origin, int *status)
{
	char extra[768];

	snprintf(extra, sizeof(extra), "%s%s%s%s%s%s", token ? "Authorization: Bearer " : "",
		 token ? token : "", token ? "\r\n" : "", origin ? "Origin: " : "",
		 origin ? origin : "", origin ? "\r\n" : "");
	return ws_connect_with(port, NULL, path, extra, status);
}

int ws_connect_with(int port, const char *host, const char *path, const char *extra, int *status)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[2048], resp[2048], own[32];
	size_t used = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), n, st = 0;

	if (status)
		*status = 0;
	snprintf(own, sizeof(own), "127.0.0.1:%d", port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
		     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		     "Sec-WebSocket-Version: 13\r\n%s\r\n",
		     path, host ? host : own, extra ? extra : "");
	if (n < 0 || (size_t)n >= sizeof(req) || write(fd, req, (size_t)n) != n)
		goto fail;
	/* Read the response head byte by byte: frames may follow it. */
	while (used + 1 < sizeof(resp)) {
		if (read_full(fd, resp + used, 1, 5000) < 0)
			break;
		used++;
		resp[used] = '\0';
		if (used >= 4 && !memcmp(resp + used - 4, "\r\n\r\n", 4))
			break;
	}
	resp[used] = '\0';
	sscanf(resp, "HTTP/%*d.%*d %d", &st); /* lws answers a refusal in 1.0 */
	if (status)
		*status = st;
	if (st != 101)
		goto fail;
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int ws_send(int fd, int opcode, const void *data, size_t n)
{
	size_t h = 0;
	unsigned char *frame = malloc(n + 14), mask[4] = { 0x12, 0x34, 0x56, 0x78 };
	int rc;

	if (!frame)
		return -1;
	frame[h++] = (unsigned char)(0x80 | opcode); /* FIN */
	if (n < 126) {
		frame[h++] = (unsigned char)(0x80 | n);
	} else if (n < 65536) {
		frame[h++] = 0x80 | 126;
		frame[h++] = (unsigned char)(n >> 8);
		frame[h++] = (unsigned char)n;
	} else {
		frame[h++] = 0x80 | 127;
		for (int i = 7; i >= 0; i--)
			frame[h++] = (unsigned char)((uint64_t)n >> (8 * i));
	}
	memcpy(frame + h, mask, 4);
	h += 4;
	for (size_t i = 0; i < n; i++)
		frame[h + i] = ((const unsigned char *)data)[i] ^ mask[i % 4];
	rc = write(fd, frame, h + n) == (ssize_t)(h + n) ? 0 : -1;
	free(frame);
	return rc;
}

void ws_msg_free(struct ws_msg *m)
{
	free(m->data);
	m->data = NULL;
}

int ws_recv(int fd, int timeout_ms, struct ws_msg *m)
{
	int64_t deadline = fs_now_ms() + timeout_ms;
	unsigned char hdr[2], ext[8];
	uint64_t n;

	memset(m, 0, sizeof(*m));
	for (;;) {
		int left = (int)(deadline - fs_now_ms());
		unsigned char *buf;
		int op;

		if (left <= 0 || read_full(fd, hdr, 2, left) < 0)
			return -1;
		n = hdr[1] & 0x7f;
		if (n == 126) {
			if (read_full(fd, ext, 2, left) < 0)
				return -1;
			n = (uint64_t)ext[0] << 8 | ext[1];
		} else if (n == 127) {
			if (read_full(fd, ext, 8, left) < 0)
				return -1;
			n = 0;
			for (int i = 0; i < 8; i++)
				n = n << 8 | ext[i];
		}
		if (n > (64u << 20) || !(buf = malloc((size_t)n + 1)))
			return -1;
		if (read_full(fd, buf, (size_t)n, left) < 0) {
			free(buf);
			return -1;
		}
		buf[n] = '\0';
		op = hdr[0] & 0x0f;
		if (op == 0x9) { /* PING: answer */
			ws_send(fd, 0xA, buf, (size_t)n);
			free(buf);
			continue;
		}
		if (op == 0xA) {
			free(buf);
			continue;
		}
		m->opcode = op;
		m->fin = hdr[0] >> 7;
		m->data = buf;
		m->len = (size_t)n;
		if (op == WS_CLOSE)
			m->close_code = n >= 2 ? buf[0] << 8 | buf[1] : 1005;
		return 0;
	}
}

int ws_recv_message(int fd, int timeout_ms, struct ws_msg *m)
{
	struct ws_msg f;

	if (ws_recv(fd, timeout_ms, m) < 0)
		return -1;
	while (!m->fin && m->opcode != WS_CLOSE) {
		unsigned char *more;

		if (ws_recv(fd, timeout_ms, &f) < 0 || f.opcode != 0 ||
		    !(more = realloc(m->data, m->len + f.len + 1))) {
			ws_msg_free(&f);
			ws_msg_free(m);
			return -1;
		}
		m->data = more;
		memcpy(m->data + m->len, f.data, f.len + 1);
		m->len += f.len;
		m->fin = f.fin;
		ws_msg_free(&f);
	}
	return 0;
}

int ws_send_text(int fd, const char *text)
{
	return ws_send(fd, WS_TEXT, text, strlen(text));
}

char *ws_recv_text(int fd, int timeout_ms)
{
	struct ws_msg m;

	/* Binary messages are not for the tests that use this: skipped. */
	while (ws_recv(fd, timeout_ms, &m) == 0) {
		if (m.opcode == WS_TEXT)
			return (char *)m.data;
		ws_msg_free(&m);
		if (m.opcode == WS_CLOSE)
			break;
	}
	return NULL;
}
