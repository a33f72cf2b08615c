/* tests/fuzz/fuzz_stream.c: libFuzzer target for the live stream's parsers:
 * what a viewer sends (gateway/stream_msg.c: any bytes must give a message
 * or a close code, never a crash) and the binary messages viewers read
 * (display/stream_wire.c: frames, cursor, pointer shapes). */
#include "display/stream_wire.h"
#include "gateway/stream/stream_msg.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stream_wire_rect rects[64];
	struct stream_wire_frame f;
	struct stream_msg m;
	const uint8_t *rgba;
	char reason[120];
	int w, h, hx, hy, x, y;
	bool vis;
	int code = stream_msg_parse((const char *)data, size, 1280, 800, &m, reason,
				    sizeof(reason));

	if (code != 0 && code != 1003 && code != 1007 && code != 1008 && code != 1009)
		__builtin_trap();
	if (stream_wire_parse_frame(data, size, &f, rects, 64) == 0)
		for (int i = 0; i < f.rects; i++)
			if (rects[i].data < data || rects[i].data + rects[i].len > data + size ||
			    rects[i].x + rects[i].w > f.width || rects[i].y + rects[i].h > f.height)
				__builtin_trap();
	if (stream_wire_parse_shape(data, size, &w, &h, &hx, &hy, &rgba) == 0 &&
	    rgba + (size_t)w * h * 4 != data + size)
		__builtin_trap();
	(void)stream_wire_parse_cursor(data, size, &x, &y, &vis);
	return 0;
}
