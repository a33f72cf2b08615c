/* common/ws_rx.c: see ws_rx.h. */
#include "common/ws_rx.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ws_rx_init(struct ws_rx *m, size_t max)
{
	memset(m, 0, sizeof(*m));
	m->max = max;
}

/* Makes room for need bytes (the NUL included), growing by doubling but
 * never past max + 1. Returns 0 or -ENOMEM. */
static int reserve(struct ws_rx *m, size_t need)
{
	size_t cap = m->cap ? m->cap : 256;
	uint8_t *nb;

	if (need <= m->cap)
		return 0;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (m->max < SIZE_MAX && cap > m->max + 1)
		cap = m->max + 1;
	if (cap < need)
		cap = need;
	nb = realloc(m->buf, cap);
	if (!nb)
		return -ENOMEM;
	m->buf = nb;
	m->cap = cap;
	return 0;
}

/* The message is lost: keep nothing of it and skip its remaining pieces. */
static void drop(struct ws_rx *m)
{
	m->dropping = true;
	m->len = 0;
}

int ws_rx_append(struct ws_rx *m, const void *in, size_t len, bool first, bool final, bool binary)
{
	int rc = WS_RX_PARTIAL;

	if (first || m->complete || !m->started) {
		m->len = 0;
		m->complete = false;
		m->dropping = false;
		m->started = true;
		m->binary = binary;
	}
	if (!m->dropping) {
		if (len > m->max - m->len) {
			drop(m);
			rc = -EMSGSIZE;
		} else if (reserve(m, m->len + len + 1) < 0) {
			drop(m);
			rc = -ENOMEM;
		} else {
			if (len)
				memcpy(m->buf + m->len, in, len);
			m->len += len;
			m->buf[m->len] = '\0';
		}
	}
	if (!final)
		return rc;
	m->started = false;
	if (m->dropping) {
		m->dropping = false;
		return rc;
	}
	m->complete = true;
	return WS_RX_COMPLETE;
}

uint8_t *ws_rx_take(struct ws_rx *m, size_t *len)
{
	uint8_t *b = m->buf;

	if (!m->complete)
		return NULL;
	*len = m->len;
	m->buf = NULL;
	m->cap = m->len = 0;
	m->complete = false;
	return b;
}

void ws_rx_reset(struct ws_rx *m)
{
	m->len = 0;
	m->complete = m->dropping = m->started = false;
}

void ws_rx_free(struct ws_rx *m)
{
	if (!m)
		return;
	free(m->buf);
	ws_rx_init(m, m->max);
}
