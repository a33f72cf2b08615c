/* tests/lib/ws_client.c: see ws_client.h. */
#include "tests/lib/ws_client.h"

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
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[1024], resp[2048];
	size_t used = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), n, st = 0;

	if (status)
		*status = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
		     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		     "Sec-WebSocket-Version: 13\r\n%s%s%s%s%s%s\r\n",
		     path, port, token ? "Authorization: Bearer " : "", token ? token : "",
		     token ? "\r\n" : "", origin ? "Origin: " : "", origin ? origin : "",
		     origin ? "\r\n" : "");
	if (write(fd, req, (size_t)n) != n)
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
	sscanf(resp, "HTTP/1.1 %d", &st);
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

int ws_send_text(int fd, const char *text)
{
	size_t n = strlen(text), h = 0;
	unsigned char *frame = malloc(n + 14), mask[4] = { 0x12, 0x34, 0x56, 0x78 };
	int rc;

	if (!frame)
		return -1;
	frame[h++] = 0x81; /* FIN, text */
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
		frame[h + i] = (unsigned char)text[i] ^ mask[i % 4];
	rc = write(fd, frame, h + n) == (ssize_t)(h + n) ? 0 : -1;
	free(frame);
	return rc;
}

char *ws_recv_text(int fd, int timeout_ms)
{
	unsigned char hdr[2], ext[8];
	uint64_t n;
	char *buf;

	for (;;) {
		if (read_full(fd, hdr, 2, timeout_ms) < 0)
			return NULL;
		n = hdr[1] & 0x7f;
		if (n == 126) {
			if (read_full(fd, ext, 2, timeout_ms) < 0)
				return NULL;
			n = (uint64_t)ext[0] << 8 | ext[1];
		} else if (n == 127) {
			if (read_full(fd, ext, 8, timeout_ms) < 0)
				return NULL;
			n = 0;
			for (int i = 0; i < 8; i++)
				n = n << 8 | ext[i];
		}
		if (n > (64u << 20) || !(buf = malloc((size_t)n + 1)))
			return NULL;
		if (read_full(fd, buf, (size_t)n, timeout_ms) < 0) {
			free(buf);
			return NULL;
		}
		buf[n] = '\0';
		if ((hdr[0] & 0x0f) == 0x8) { /* close */
			free(buf);
			return NULL;
		}
		if ((hdr[0] & 0x0f) == 0x1)
			return buf;
		free(buf); /* ping/pong/binary: not for these tests */
	}
}
