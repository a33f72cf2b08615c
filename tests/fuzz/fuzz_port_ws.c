/* tests/fuzz/fuzz_port_ws.c: libFuzzer target for the reader of a guest
 * server's WebSocket frames (gateway/ports/port_ws.c), every byte of which
 * is the guest's. The input is read twice: in pieces whose sizes the first
 * byte picks, and one byte at a time. Checked besides "no crash":
 *   - each step uses at least one byte of a non-empty piece unless it
 *     reports an error, and never more than it was given; nothing after
 *     an error;
 *   - a data piece lies inside the bytes given, a control payload within
 *     125 bytes;
 *   - both readings tell the same: the same message bytes in the same
 *     order, the same control frames, the same messages begun and ended,
 *     the same error or none. */
#include "gateway/ports/port_ws.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct tally {
	uint8_t *bytes; /* message bytes, and a marker per control frame */
	size_t n;
	unsigned firsts, finals;
	bool error;
};

static void add(struct tally *t, const uint8_t *p, size_t n)
{
	memcpy(t->bytes + t->n, p, n);
	t->n += n;
}

static void readall(const uint8_t *data, size_t size, size_t piece, struct tally *t)
{
	struct port_ws_rx rx = { 0 };
	struct port_ws_ev ev;
	size_t off = 0;

	while (off < size) {
		size_t give = size - off < piece ? size - off : piece;
		size_t used = port_ws_rx_step(&rx, data + off, give, &ev);

		if (ev.kind == PORT_WS_EV_ERROR) {
			if (used)
				__builtin_trap();
			t->error = true;
			if (port_ws_rx_step(&rx, data + off, give, &ev) ||
			    ev.kind != PORT_WS_EV_ERROR)
				__builtin_trap();
			return;
		}
		if (!used || used > give)
			__builtin_trap();
		switch (ev.kind) {
		case PORT_WS_EV_DATA:
			if (ev.p < data + off || ev.p + ev.n > data + off + used)
				__builtin_trap();
			add(t, ev.p, ev.n);
			t->firsts += ev.first;
			t->finals += ev.final;
			break;
		case PORT_WS_EV_PING:
		case PORT_WS_EV_PONG:
		case PORT_WS_EV_CLOSE: {
			uint8_t mark[3] = { 0xff, (uint8_t)ev.kind, (uint8_t)ev.n };

			if (ev.n > PORT_WS_CONTROL_MAX)
				__builtin_trap();
			add(t, mark, sizeof(mark));
			add(t, ev.p, ev.n);
			break;
		}
		default:
			break;
		}
		off += used;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tally a = { 0 }, b = { 0 };
	size_t piece;

	if (size < 1)
		return 0;
	piece = (size_t)data[0] % 32 + 1;
	/* at most every byte plus three markers for each */
	a.bytes = malloc(4 * size);
	b.bytes = malloc(4 * size);
	if (a.bytes && b.bytes) {
		readall(data + 1, size - 1, piece, &a);
		readall(data + 1, size - 1, 1, &b);
		if (a.error != b.error || a.n != b.n || memcmp(a.bytes, b.bytes, a.n) ||
		    (!a.error && (a.firsts != b.firsts || a.finals != b.finals)))
			__builtin_trap();
	}
	free(a.bytes);
	free(b.bytes);
	return 0;
}
