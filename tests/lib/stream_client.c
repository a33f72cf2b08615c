/* tests/lib/stream_client.c: see stream_client.h. */
#include "tests/lib/stream_client.h"

#include "common/fsutil.h"
#include "display/stream_wire.h"
#include "tests/lib/png.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sc_send_json(int fd, json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);
	int rc = text ? ws_send(fd, 1, text, strlen(text)) : -1;

	json_decref(j);
	free(text);
	return rc;
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

		if (stream_wire_parse_shape(msg, len, &s->shape_w, &s->shape_h, &hx, &hy, &rgba) <
		    0)
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

		if (jpeg_decode(rects[i].data, rects[i].len, &part) < 0 ||
		    part.width != rects[i].w || part.height != rects[i].h) {
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
	struct ws_msg m;

	while (fs_now_ms() < deadline) {
		if (ws_recv(fd, (int)(deadline - fs_now_ms()), &m) < 0 || m.opcode == WS_CLOSE) {
			ws_msg_free(&m);
			return NULL;
		}
		if (m.opcode == WS_BINARY && s)
			sc_apply(s, m.data, m.len);
		if (m.opcode == WS_TEXT) {
			json_t *j = json_loads((const char *)m.data, 0, NULL);
			const char *t = json_string_value(json_object_get(j, "type"));

			if (t && !strcmp(t, type)) {
				ws_msg_free(&m);
				return j;
			}
			json_decref(j);
		}
		ws_msg_free(&m);
	}
	return NULL;
}

int sc_wait_frame(int fd, struct sc_screen *s, uint32_t after, int timeout_ms)
{
	int64_t deadline = fs_now_ms() + timeout_ms;
	struct ws_msg m;

	while (fs_now_ms() < deadline) {
		if (ws_recv(fd, (int)(deadline - fs_now_ms()), &m) < 0 || m.opcode == WS_CLOSE) {
			ws_msg_free(&m);
			return -1;
		}
		if (m.opcode == WS_BINARY) {
			int k = sc_apply(s, m.data, m.len);

			ws_msg_free(&m);
			if (k < 0)
				return -1;
			if (k == 1 && s->seq > after)
				return 0;
			continue;
		}
		ws_msg_free(&m);
	}
	return -1;
}
