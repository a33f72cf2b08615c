/* tests/fuzz/fuzz_agent_frame.c: libFuzzer target for the host's machine over
 * vitrine-agent's bytes (vmm-qemu/agent_frame.c). The input's first byte
 * picks the chunk size; the rest is the guest's stream, fed to an agent_rx
 * whose frames go to four channels (exec, tcp, cdp, accepted, by channel
 * id) as the link would, returning credit for every other DATA; its top
 * bit says whether the agent is of version 1 (CDP's slack) or the latest. Whatever
 * the guest sends: no crash, no leak, no undefined behaviour, at most one
 * partial frame held, and neither window ever past its bound. */
#include "vmm-qemu/agent_frame.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_rx rx = { 0 };
	struct agent_chan_state ch[4];
	struct agent_header h;
	const unsigned char *p;
	size_t chunk;
	unsigned n = 0, version;

	if (size < 1)
		return 0;
	{ /* a terminal's size (EXEC's pty=, RESIZE): what it takes, it says back */
		unsigned cols, rows;
		char again[16];

		if (agent_winsize_parse(data + 1, size - 1, &cols, &rows) == 0 &&
		    (cols < 1 || cols > 65535 || rows < 1 || rows > 65535 ||
		     (size_t)snprintf(again, sizeof(again), "%ux%u", cols, rows) != size - 1 ||
		     memcmp(again, data + 1, size - 1)))
			abort();
	}
	chunk = (size_t)(data[0] % 61) + 1;
	version = data[0] & 0x80 ? 1 : AGENT_VERSION_NUM; /* 1: CDP's slack */
	for (int i = 0; i < 4; i++)
		agent_chan_state_init(&ch[i], (enum agent_chan_kind)i, version);
	for (size_t pos = 1; pos < size; pos += chunk) {
		size_t k = size - pos < chunk ? size - pos : chunk;

		if (agent_rx_feed(&rx, data + pos, k))
			break;
		while (agent_rx_next(&rx, &h, &p)) {
			struct agent_chan_state *s = &ch[h.chan % 4];
			const char *why = NULL;
			enum agent_verdict v = agent_chan_rx(s, &h, p, &why);

			if (!why || h.len > AGENT_MAX_PAYLOAD)
				abort();
			if (v == AGENT_OVERRUN || v == AGENT_VIOLATION) {
				if (!why[0])
					abort();
				agent_chan_state_init(s, s->kind,
						      version); /* a new channel there */
			} else if (v == AGENT_DELIVER && h.type == AGENT_DATA && (n++ & 1)) {
				agent_chan_returned(s, h.len);
			}
			if (s->rx_room < 0 || s->rx_room > s->rx_max || s->tx_credit > AGENT_WINDOW)
				abort();
			if (h.type == AGENT_WINDOW_UPDATE)
				agent_chan_sent(s, h.len * 1000u);
		}
		if (agent_rx_held(&rx) > AGENT_HEADER + AGENT_MAX_PAYLOAD + chunk)
			abort();
	}
	agent_rx_free(&rx);
	return 0;
}
