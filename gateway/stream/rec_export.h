/* gateway/stream/rec_export.h: a recording as WebM video, made by Debian's
 * ffmpeg as a child process on a thread of its own (never the loop). The
 * frames go in through the concat demuxer, each held until the next one's
 * time (rec_index.h), and come out VP8 (libvpx) in WebM at the
 * recording's size. ffmpeg rather than libavcodec linked in: the encoder
 * runs outside the gateway's address space, so a crash or a hang in it
 * (killed after a time limit) cannot take the gateway down, and one
 * well-kept program does both the encoding and the muxing.
 *
 * The loop starts an export and polls it (the thread wakes the loop with
 * lws_cancel_service when it ends); the export belongs to whoever started
 * it, who either finishes it once done or hands it to rec_export_wait_free
 * on another thread. */
#ifndef VITRINE_GATEWAY_STREAM_REC_EXPORT_H
#define VITRINE_GATEWAY_STREAM_REC_EXPORT_H

#include "gateway/stream/rec_index.h"

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_export;

/* Starts exporting frames[0..n) (copied) of dir/frames.bin, the last one
 * held until end_ms, scaled to width x height, into dir/recording.webm.
 * Returns the export, or NULL (out of memory, no thread) with nothing
 * started. Loop thread. */
struct rec_export *rec_export_start(struct lws_context *ctx, const char *dir,
				    const struct rec_frame *frames, size_t n, int64_t end_ms,
				    int width, int height);
/* Whether the thread has ended. Any thread. */
bool rec_export_done(struct rec_export *x);
/* Joins a done export and frees it: 0 with *data (malloc'd, the WebM
 * file) and *len, or -errno with a sentence in err. */
int rec_export_finish(struct rec_export *x, uint8_t **data, size_t *len, char *err, size_t errlen);
/* Tells ffmpeg to stop (killed at its next check, within 50 ms), waits for
 * the thread and frees: for a thread that may block (it joins). Accepts
 * NULL. */
void rec_export_cancel_free(struct rec_export *x);

/* Waits up to timeout_ms for the export threads to end (they wake the lws
 * context: it must outlive them; a destroyed session's export is told to
 * stop). Returns true when none is left. */
bool rec_export_wait_threads(int timeout_ms);

#endif
