/* gateway/stream/rec_export.h: a recording as WebM video, made by Debian's
 * ffmpeg as a child process on a worker of the gateway's bulk queue (never
 * the loop: common/work_queue.h). The frames go in through the concat
 * demuxer, each held until the next one's time (rec_index.h), and come out
 * VP8 (libvpx) in WebM at the recording's size. ffmpeg rather than
 * libavcodec linked in: the encoder runs outside the gateway's address
 * space, so a crash or a hang in it (killed after a time limit) cannot take
 * the gateway down, and one well-kept program does both the encoding and
 * the muxing.
 *
 * The loop starts an export; its done comes back on the loop with the
 * video. Until then the export belongs to the queue's job; whoever started
 * it may abandon it (ffmpeg is told to stop), and then hears, on the loop,
 * when ffmpeg has gone and the recording's files are free to remove. */
#ifndef VITRINE_GATEWAY_STREAM_REC_EXPORT_H
#define VITRINE_GATEWAY_STREAM_REC_EXPORT_H

#include "gateway/stream/rec_index.h"

#include <stddef.h>
#include <stdint.h>

struct rec_export;
struct work_queue;

/* Loop thread: the export ended. rc 0 with data (malloc'd, the WebM file,
 * the callee's from now on) and len, or -errno with a sentence in err
 * (-ECANCELED: it never ran, the gateway is stopping). The export is freed
 * right after. */
typedef void (*rec_export_done_fn)(void *ud, int rc, uint8_t *data, size_t len, const char *err);

/* Starts exporting frames[0..n) (copied) of dir/frames.bin, the last one
 * held until end_ms, scaled to width x height, into dir/recording.webm,
 * as a job of q's on behalf of owner (the session). done(ud, ...) follows
 * on the loop, unless the export is abandoned first. Returns 0 with *out
 * the export, or with nothing started -ENOMEM, or -EBUSY (the queue is
 * full). Loop thread. */
int rec_export_start(struct work_queue *q, const void *owner, const char *dir,
		     const struct rec_frame *frames, size_t n, int64_t end_ms, int width,
		     int height, rec_export_done_fn done, void *ud, struct rec_export **out);
/* Lets go of an export whose done has not come: ffmpeg is told to stop
 * (killed at its next check, within 50 ms), done will not be called, and
 * once the export's work has ended (or now, when it never started) gone(
 * gone_ud) is called on the loop (gone may be NULL). Accepts NULL. Loop
 * thread. */
void rec_export_abandon(struct rec_export *x, void (*gone)(void *gone_ud), void *gone_ud);

#endif
