/* tests/fuzz/fuzz_ws_rx.c: libFuzzer target for WebSocket message
 * reassembly (common/ws_rx.c). The input is a script of pieces (a flags
 * byte: bit 0 first, bit 1 final, bit 2 binary; a length byte; that many
 * bytes), fed to a ws_rx with a small bound and checked against a plain
 * model: same results, same messages, the bound kept. */
#include "common/ws_rx.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define MAX 600

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ws_rx rx;
	uint8_t model[MAX];
	size_t mlen = 0, off = 0;
	bool started = false, dropping = false, mbin = false;

	ws_rx_init(&rx, MAX);
	while (off + 2 <= size) {
		bool first = data[off] & 1, final = data[off] & 2, bin = data[off] & 4;
		size_t len = data[off + 1];
		const uint8_t *piece = data + off + 2;
		int want = WS_RX_PARTIAL, got;

		if (off + 2 + len > size)
			len = size - off - 2;
		off += 2 + len;
		if (first || !started) {
			mlen = 0;
			dropping = false;
			started = true;
			mbin = bin;
		}
		if (!dropping) {
			if (mlen + len > MAX) {
				dropping = true;
				mlen = 0;
				want = -EMSGSIZE;
			} else {
				memcpy(model + mlen, piece, len);
				mlen += len;
			}
		}
		if (final) {
			started = false;
			if (dropping)
				dropping = false;
			else
				want = WS_RX_COMPLETE;
		}
		got = ws_rx_append(&rx, piece, len, first, final, bin);
		if (got == -ENOMEM)
			break;
		if (got != want || rx.len > MAX || (rx.buf && rx.cap > MAX + 1))
			__builtin_trap();
		if (got == WS_RX_COMPLETE &&
		    (!rx.buf || rx.len != mlen || memcmp(rx.buf, model, mlen) ||
		     rx.buf[mlen] != 0 || rx.binary != mbin))
			__builtin_trap();
	}
	ws_rx_free(&rx);
	return 0;
}
