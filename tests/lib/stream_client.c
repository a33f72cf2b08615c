/* tests/lib/stream_client.c: see stream_client.h. */
#include "tests/lib/stream_client.h"

#include "common/fsutil.h"
#include "display/stream_wire.h"
#include "tests/lib/png.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
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

int sc_send(int fd, int opcode, const void *data, size_t n)
{
	size_t h = 0;
	unsigned char *frame = malloc(n + 14), mask[4] = { 0x9a, 0x3c, 0x51, 0x07 };
	int rc;

	if (!frame)
		return -1;
	frame[h++] = (unsigned char)(0x80 | opcode);
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

int sc_send_json(int fd, json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);
	int rc = text ? sc_send(fd, 1, text, strlen(text)) : -1;

	json_decref(j);
	free(text);
	return rc;
}

void sc_msg_free(struct sc_msg *m)
{
	free(m->data);
	m->data = NULL;
}

int sc_recv(int fd, int timeout_ms, struct sc_msg *m)
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
			sc_send(fd, 0xA, buf, (size_t)n);
			free(buf);
			continue;
		}
		if (op == 0xA) {
			free(buf);
			continue;
		}
		m->opcode = op;
		m->data = buf;
		m->len = (size_t)n;
		if (op == SC_CLOSE)
			m->close_code = n >= 2 ? buf[0] << 8 | buf[1] : 1005;
		return 0;
	}
}

void sc_screen_free(struct sc_screen *s)
{
	ppm_free(&s->img);
	memset(s, 0, sizeof(*s));
}

int sc_apply(struct sc_screen *s, const unsigned char *msg, size_t len)
{
	struct stream_wire_rect rects[256];
	struct stream_wire_frame f;
	bool vis;

	if (stream_wire_type(msg, len) == STREAM_WIRE_CURSOR_SHAPE) {
		const uint8_t *rgba;
		int hx, hy;

		if (stream_wire_parse_shape(msg, len, &s->shape_w, &s->shape_h, &hx, &hy, &rgba) < 0)
			return -1;
		s->shapes++;
		return 3;
	}
	if (stream_wire_type(msg, len) == STREAM_WIRE_CURSOR) {
		if (stream_wire_parse_cursor(msg, len, &s->cursor_x, &s->cursor_y, &vis) < 0)
			return -1;
		s->cursors++;
		return 2;
	}
	if (stream_wire_parse_frame(msg, len, &f, rects, 256) < 0)
		return -1;
	if (s->img.width != f.width || s->img.height != f.height) {
		if (!f.key)
			return -1; /* a resize must come as a whole frame */
		ppm_free(&s->img);
		s->img.width = f.width;
		s->img.height = f.height;
		s->img.rgb = calloc((size_t)f.width * f.height, 3);
		if (!s->img.rgb)
			return -1;
	}
	for (int i = 0; i < f.rects; i++) {
		struct ppm part;

		if (jpeg_decode(rects[i].data, rects[i].len, &part) < 0 || part.width != rects[i].w ||
		    part.height != rects[i].h) {
			return -1;
		}
		for (int y = 0; y < part.height; y++)
			memcpy(s->img.rgb + ((size_t)(rects[i].y + y) * f.width + rects[i].x) * 3,
			       part.rgb + (size_t)y * part.width * 3, (size_t)part.width * 3);
		ppm_free(&part);
	}
	s->seq = f.seq;
	s->frames++;
	s->keys += f.key;
	s->last_time_us = f.time_us;
	return 1;
}

json_t *sc_wait_json(int fd, const char *type, struct sc_screen *s, int timeout_ms)
{
	int64_t deadline = fs_now_ms() + timeout_ms;
	struct sc_msg m;

	while (fs_now_ms() < deadline) {
		if (sc_recv(fd, (int)(deadline - fs_now_ms()), &m) < 0 || m.opcode == SC_CLOSE) {
			sc_msg_free(&m);
			return NULL;
		}
		if (m.opcode == SC_BINARY && s)
			sc_apply(s, m.data, m.len);
		if (m.opcode == SC_TEXT) {
			json_t *j = json_loads((const char *)m.data, 0, NULL);
			const char *t = json_string_value(json_object_get(j, "type"));

			if (t && !strcmp(t, type)) {
				sc_msg_free(&m);
				return j;
			}
			json_decref(j);
		}
		sc_msg_free(&m);
	}
	return NULL;
}

int sc_wait_frame(int fd, struct sc_screen *s, uint32_t after, int timeout_ms)
{
	int64_t deadline = fs_now_ms() + timeout_ms;
	struct sc_msg m;

	while (fs_now_ms() < deadline) {
		if (sc_recv(fd, (int)(deadline - fs_now_ms()), &m) < 0 || m.opcode == SC_CLOSE) {
			sc_msg_free(&m);
			return -1;
		}
		if (m.opcode == SC_BINARY) {
			int k = sc_apply(s, m.data, m.len);

			sc_msg_free(&m);
			if (k < 0)
				return -1;
			if (k == 1 && s->seq > after)
				return 0;
			continue;
		}
		sc_msg_free(&m);
	}
	return -1;
}
