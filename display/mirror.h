/* display/mirror.h: one guest's screen, mirrored from QEMU's VNC server.
 *
 * A worker thread owns a libvncclient connection (Raw encoding only: the hop
 * is a local socket, and encoding happens later, once per frame). After each
 * completed update that changed pixels it publishes a new immutable frame in
 * a locked "latest frame" slot and calls on_frame(ud) from the worker thread;
 * on_frame must only wake the consumer (the gateway calls
 * lws_cancel_service()). Readers take references with display_mirror_latest().
 *
 * Freshness: QEMU's VNC refresh timer backs off to 3 s on an idle screen, so
 * a screen change can sit in QEMU for seconds before it is sent. Any client
 * message of type > 3 resets the timer to 30 ms (ui/vnc.c
 * protocol_client_msg). display_mirror_request_fresh() sends such a message
 * that the guest never sees (a key-up of a key the VNC client never pressed:
 * QEMU's keyboard state tracker drops it) plus a non-incremental update
 * request for one probe pixel, which QEMU must answer at its next refresh
 * together with all pending damage. When that answer has been applied, the
 * mirror is current as of that refresh, whether or not anything changed.
 *
 * A connection the server ends while the guest lives (QEMU does, when its
 * queue towards the mirror outgrows the screen's new size) is made again at
 * once (the last frame stays until the new connection's first), up to 3
 * times with no frame between; then, or when connecting fails, the mirror
 * ends: waits return -EPIPE and display_mirror_error says why.
 *
 * Size: the mirror follows the guest's resolution changes (QEMU announces
 * them as NewFBSize; the next frame has the new size and the whole screen
 * as damage). QEMU 7.2's VNC server shows at most the top-left
 * DISPLAY_MIRROR_MAX_WIDTH x DISPLAY_MIRROR_MAX_HEIGHT of a larger guest
 * screen: a frame that wide (or high) says only that the screen is at
 * least that. A screen over DISPLAY_MAX_SIDE /
 * DISPLAY_MAX_PIXELS (frame.h) is refused before any buffer of that size
 * exists, and never connected to again. At connect time start
 * fails with -EFBIG; later (the guest switched resolution) the mirror ends
 * as if the connection were lost: waits return -EPIPE, display_mirror_error
 * names the size and the limit, the last good frame stays readable. Other
 * mirrors are not affected. */
#ifndef VITRINE_DISPLAY_MIRROR_H
#define VITRINE_DISPLAY_MIRROR_H

#include "display/frame.h"
#include "display/settle.h"

#include <stddef.h>
#include <stdint.h>

/* QEMU 7.2's ui/vnc.h VNC_MAX_WIDTH and VNC_MAX_HEIGHT. */
#define DISPLAY_MIRROR_MAX_WIDTH 2560
#define DISPLAY_MIRROR_MAX_HEIGHT 2048

struct display_mirror;

/* Connects to the VNC server at vnc_socket_path (a unix socket; no auth),
 * completes the handshake and starts the worker. Returns 0 with *out owning
 * the mirror, or -errno (-ECONNREFUSED, -ENOENT, -EPROTO for a failed
 * handshake, -EFBIG for a screen over the size limit, -ENOMEM, ...) with a
 * sentence in err and nothing left behind.
 * on_frame may be NULL. */
int display_mirror_start(const char *vnc_socket_path, void (*on_frame)(void *ud), void *ud,
			 struct display_mirror **out, char *err, size_t errlen);

/* Stops and joins the worker, closes the connection and frees everything.
 * Frames handed out stay valid until unreferenced. Accepts NULL. */
void display_mirror_stop(struct display_mirror *m);

/* A new reference to the latest frame, or NULL before the first complete
 * frame. Thread-safe; never blocks on the network. */
struct display_frame *display_mirror_latest(struct display_mirror *m);

/* A new reference to the guest's latest pointer shape, or NULL while the
 * guest has defined none (the tiny guest never does). Thread-safe. The
 * mirror announces RichCursor to QEMU for this; QEMU never draws the
 * pointer into the frames either way. */
struct display_cursor *display_mirror_cursor(struct display_mirror *m);

/* Waits up to timeout_ms for a frame newer than seq (0: any frame). Returns
 * 0 with *out a new reference, -ETIMEDOUT, or -EPIPE once the connection is
 * lost (display_mirror_error says why). */
int display_mirror_wait_frame(struct display_mirror *m, uint64_t seq, int timeout_ms,
			      struct display_frame **out);

/* Makes the next frame arrive promptly despite QEMU's idle back-off (see
 * the header comment). Thread-safe, never blocks, can't fail. */
void display_mirror_request_fresh(struct display_mirror *m);

/* Keeps the mirror current without being asked: probes on its own whenever
 * the last answer is interval_ms old (0 stops it). Costs QEMU a refresh at
 * its base rate (30 ms) and wakes on_frame per answer, but a screenshot can
 * then be served from display_mirror_latest() at once. Can't fail. */
void display_mirror_keep_fresh(struct display_mirror *m, int interval_ms);
/* The moment (fs_now_ms clock, common/fsutil.h) as of which the latest frame is known
 * to be current: the send time of the newest answered probe; 0 if none. */
int64_t display_mirror_current_as_of(struct display_mirror *m);

/* The non-blocking form of display_mirror_wait_fresh() for an event loop:
 * requests freshness and returns a ticket. display_mirror_fresh_poll()
 * returns 1 once the mirror reflects the screen as of a moment after
 * fresh_begin (then display_mirror_latest() is current), 0 while pending,
 * -EPIPE once the connection is lost. on_frame is called when a probe is
 * answered, with or without a new frame, so the loop wakes to poll. */
uint64_t display_mirror_fresh_begin(struct display_mirror *m);
int display_mirror_fresh_poll(struct display_mirror *m, uint64_t ticket);

/* Requests freshness and blocks until the mirror reflects the screen as of
 * some moment after this call: either a newer frame was published or a
 * round trip confirmed that nothing changed. Returns 0 (then
 * display_mirror_latest() is current), -ETIMEDOUT, or -EPIPE once the
 * connection is lost. */
int display_mirror_wait_fresh(struct display_mirror *m, int timeout_ms);

/* Blocks until the screen has not changed for quiet_ms (checked with fresh
 * round trips, so QEMU's back-off cannot fake quiet), or timeout_ms passed.
 * Fills *result (settled or not). Returns 0, or -EPIPE once the connection
 * is lost. */
int display_mirror_wait_settled(struct display_mirror *m, int quiet_ms, int timeout_ms,
				struct display_settle_result *result);

/* Why the connection ended ("" while it is up). The string lives as long as
 * the mirror. */
const char *display_mirror_error(struct display_mirror *m);

#endif
