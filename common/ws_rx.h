/* common/ws_rx.h: one WebSocket message put back together from the pieces
 * a WebSocket library hands over, with a bound on its size. libwebsockets
 * delivers a message in as many RECEIVE callbacks as it likes (one per frame
 * of a fragmented message, and a large frame in several); the caller passes
 * each piece with the flags lws reports for it:
 *
 *	case LWS_CALLBACK_RECEIVE:
 *		rc = ws_rx_append(&c->rx, in, len, lws_is_first_fragment(wsi),
 *				  lws_is_final_fragment(wsi), lws_frame_is_binary(wsi));
 *		if (rc == -EMSGSIZE)
 *			... close with LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE (1009),
 *			    or answer an error and carry on
 *		if (rc == WS_RX_COMPLETE)
 *			... use c->rx.buf, c->rx.len, c->rx.binary (or ws_rx_take)
 *
 * Pure: no I/O, no lws, no threads of its own. A struct ws_rx belongs to
 * one connection and is used by the thread that receives on it. */
#ifndef VITRINE_COMMON_WS_RX_H
#define VITRINE_COMMON_WS_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ws_rx_append's results besides negative errnos. */
#define WS_RX_PARTIAL 0 /* more pieces to come */
#define WS_RX_COMPLETE 1 /* buf/len hold a whole message */

struct ws_rx {
	uint8_t *buf; /* owned; len bytes then a NUL; NULL until a byte is kept */
	size_t len, cap; /* cap: bytes allocated, the NUL included */
	size_t max; /* bytes a message may have */
	bool binary; /* the message's first frame was binary */
	bool complete; /* buf holds a whole message; the next piece starts another */
	bool dropping; /* the message went over max (or memory): its rest is skipped */
	bool started; /* a piece of the current message has arrived */
};

/* Prepares m for messages of at most max bytes (0 is allowed: only empty
 * messages). Allocates nothing. Can't fail. */
void ws_rx_init(struct ws_rx *m, size_t max);

/* Adds one received piece of len bytes (in may be NULL when len is 0).
 * first: the piece starts a message (lws_is_first_fragment; a message in
 * progress is then discarded); final: it ends one (lws_is_final_fragment);
 * binary: the message is binary (lws_frame_is_binary; taken from the piece
 * that starts the message).
 *
 * Returns WS_RX_PARTIAL while the message is not whole; WS_RX_COMPLETE
 * when this piece ended it: buf (never NULL then, NUL-terminated so a text
 * message is a C string) holds len bytes until the next call; -EMSGSIZE
 * once, on the piece that takes the message past max; -ENOMEM once, when
 * its buffer cannot grow. After either error nothing of that message is
 * kept (binary still says what it was) and its remaining pieces return
 * WS_RX_PARTIAL; the message after it is received normally. */
int ws_rx_append(struct ws_rx *m, const void *in, size_t len, bool first, bool final, bool binary);

/* Hands the completed message's buffer to the caller (free() it; never
 * NULL), *len its length; m keeps receiving with a new buffer. Only right
 * after WS_RX_COMPLETE; NULL otherwise. */
uint8_t *ws_rx_take(struct ws_rx *m, size_t *len);

/* Forgets the message in progress (or the completed one); keeps the buffer
 * for the next. Can't fail. */
void ws_rx_reset(struct ws_rx *m);

/* Frees the buffer; m stays usable (same max). Accepts NULL. */
void ws_rx_free(struct ws_rx *m);

#endif
