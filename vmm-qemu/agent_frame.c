/* vmm-qemu/agent_frame.c: see agent_frame.h. */
#include "vmm-qemu/agent_frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int agent_rx_feed(struct agent_rx *rx, const void *p, size_t n)
{
	size_t live = rx->len - rx->off;

	if (!n)
		return 0;
	if (rx->off) { /* what was parsed goes first: one partial frame is left */
		memmove(rx->buf, rx->buf + rx->off, live);
		rx->off = 0;
		rx->len = live;
	}
	if (live + n > rx->cap) {
		size_t cap = rx->cap ? rx->cap : 4096;
		unsigned char *b;

		while (cap < live + n)
			cap *= 2;
		if (!(b = realloc(rx->buf, cap)))
			return -ENOMEM;
		rx->buf = b;
		rx->cap = cap;
	}
	memcpy(rx->buf + rx->len, p, n);
	rx->len += n;
	return 0;
}

int agent_rx_next(struct agent_rx *rx, struct agent_header *h, const unsigned char **payload)
{
	while (rx->off < rx->len) {
		const unsigned char *p = rx->buf + rx->off;
		size_t have = rx->len - rx->off;
		long fl = agent_frame_parse(p, have, h);

		if (fl == 0)
			return 0;
		if (fl < 0) {
			size_t skip = agent_resync(p, have);

			rx->off += skip;
			rx->dropped += skip;
			continue;
		}
		*payload = p + AGENT_HEADER;
		rx->off += (size_t)fl;
		rx->frames++;
		return 1;
	}
	return 0;
}

size_t agent_rx_held(const struct agent_rx *rx)
{
	return rx->len - rx->off;
}

void agent_rx_free(struct agent_rx *rx)
{
	free(rx->buf);
	memset(rx, 0, sizeof(*rx));
}

unsigned agent_version_parse(const unsigned char *p, size_t n)
{
	static const char prefix[] = "vitrine-agent ";
	size_t k = sizeof(prefix) - 1;
	unsigned v = 0;

	if (n <= k || n > k + 4 || memcmp(p, prefix, k) || p[k] == '0')
		return 0;
	for (; k < n; k++) {
		if (p[k] < '0' || p[k] > '9')
			return 0;
		v = v * 10 + (unsigned)(p[k] - '0');
	}
	return v;
}

void agent_chan_state_init(struct agent_chan_state *s, enum agent_chan_kind kind,
			   unsigned agent_version)
{
	bool v1_cdp = kind == AGENT_CHAN_CDP && agent_version == 1;

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->opened = kind == AGENT_CHAN_ACCEPTED;
	s->rx_max = AGENT_WINDOW + (v1_cdp ? (int64_t)AGENT_CDP_V1_SLACK : 0);
	s->rx_room = s->rx_max;
	s->tx_credit = AGENT_WINDOW;
}

static enum agent_verdict violation(const char **why, const char *what)
{
	*why = what;
	return AGENT_VIOLATION;
}

static enum agent_verdict rx_data(struct agent_chan_state *s, const struct agent_header *h,
				  const char **why)
{
	unsigned stream = s->kind == AGENT_CHAN_EXEC ? h->flags & AGENT_STREAM_MASK : 0;
	bool more = s->kind == AGENT_CHAN_CDP && (h->flags & AGENT_FLAG_MORE);
	bool ends_message = s->in_message && !more;

	if (!s->opened)
		return violation(why, "DATA before OPENED");
	if (s->eof[stream])
		return violation(why, "DATA after EOF");
	if ((int64_t)h->len > s->rx_room) {
		*why = "the guest overran the channel's window";
		return AGENT_OVERRUN;
	}
	s->rx_room -= h->len;
	s->bytes_in += h->len;
	if (s->kind == AGENT_CHAN_CDP)
		s->in_message = more;
	/* An empty DATA carries nothing, unless it ends a DevTools message
	 * whose parts came before: passing the others on would let a guest
	 * queue work without using any window. */
	return h->len || ends_message ? AGENT_DELIVER : AGENT_IGNORE;
}

enum agent_verdict agent_chan_rx(struct agent_chan_state *s, const struct agent_header *h,
				 const unsigned char *payload, const char **why)
{
	*why = "";
	switch (h->type) {
	case AGENT_OPENED:
		if (s->opened)
			return violation(why, "a second OPENED");
		s->opened = true;
		return AGENT_DELIVER;
	case AGENT_DATA:
		return rx_data(s, h, why);
	case AGENT_EOF: {
		unsigned stream = s->kind == AGENT_CHAN_EXEC ? h->flags & AGENT_STREAM_MASK : 0;

		if (!s->opened)
			return violation(why, "EOF before OPENED");
		if (s->kind == AGENT_CHAN_CDP)
			return violation(why, "EOF on a DevTools channel");
		if (s->eof[stream])
			return AGENT_IGNORE;
		s->eof[stream] = true;
		return AGENT_DELIVER;
	}
	case AGENT_EXIT:
		if (s->kind != AGENT_CHAN_EXEC)
			return violation(why, "EXIT on a channel that is not a command");
		if (!s->opened)
			return violation(why, "EXIT before OPENED");
		return AGENT_DELIVER;
	case AGENT_WINDOW_UPDATE: {
		uint32_t n;

		if (h->len != 4)
			return violation(why, "a WINDOW_UPDATE that is not 4 bytes");
		n = agent_get32(payload);
		/* The guest returns what we sent; more would let it make us
		 * queue past the window. */
		s->tx_credit = s->tx_credit + (int64_t)n > AGENT_WINDOW ? AGENT_WINDOW
									: s->tx_credit + (int64_t)n;
		return AGENT_DELIVER;
	}
	case AGENT_CLOSE:
		return AGENT_DELIVER;
	default: /* EXEC, TCP, CDP, SIGNAL, PING are the host's to send */
		return violation(why, "a frame type only the host sends");
	}
}

void agent_chan_returned(struct agent_chan_state *s, size_t n)
{
	s->rx_room = s->rx_room + (int64_t)n > s->rx_max ? s->rx_max : s->rx_room + (int64_t)n;
}

void agent_chan_sent(struct agent_chan_state *s, size_t n)
{
	s->tx_credit -= (int64_t)n;
	s->bytes_out += n;
}
