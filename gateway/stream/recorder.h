/* gateway/stream/recorder.h: a session's recording (docs/api.md
 * "Recordings"): the screen, a JPEG whenever the mirror publishes a changed
 * frame (at most gw->record_fps a second, encoded on the encoder pool),
 * and on the same timeline the actions, commands, events and control
 * changes. Frames and the index go to disk, to
 * STATE_DIR/recordings/ID/ (rec_index.h): the state dir is the gateway's
 * own (the run dir is the guest's, and what a guest can write would have
 * to be parsed as hostile), and the session's record lives there too.
 * The timeline and frame list are also kept in memory for the API.
 *
 * The recorder is the stream room's per-session state, found with
 * sess_find_listener (nothing in struct sess); it hears the session's
 * events and its end, when its directory is removed (on the bulk queue: a big
 * file's unlink is slow). Writes on the loop are small appends (one JPEG,
 * one index line). Loop thread only. */
#ifndef VITRINE_GATEWAY_STREAM_RECORDER_H
#define VITRINE_GATEWAY_STREAM_RECORDER_H

#include "gateway/core/api_error.h"
#include "gateway/core/gw.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REC_DEFAULT_FPS 5
#define REC_DEFAULT_MAX_BYTES (512ll << 20)
#define REC_QUALITY 60
#define REC_MAX_ENTRIES 20000 /* timeline entries kept; later ones are counted */

struct sess;

/* Starts recording s (a first frame as soon as the screen is there).
 * Returns 0, or -errno with *e: 409 already_recording, 503 when the
 * gateway has no state dir, 500 when the files cannot be made. An earlier
 * recording of s is replaced. */
int rec_start(struct sess *s, struct api_error *e);
/* Stops recording s (reason goes to the "recording_stopped" event).
 * Returns 0, or -ENOENT with *e 409 not_recording. */
int rec_stop(struct sess *s, const char *reason, struct api_error *e);
/* Whether s has a recording (running or stopped). */
bool rec_exists(const struct sess *s);
/* {recording, started_unix_ms, duration_ms, width, height, frame_count,
 * entry_count, bytes}: a new object, or NULL when s never recorded. */
json_t *rec_summary(const struct sess *s);
/* The whole recording as GET .../recording answers it (with frames and
 * entries); NULL when s never recorded or out of memory. */
json_t *rec_json(const struct sess *s);
/* Frame i's JPEG (malloc'd into *data): 0, -ENOENT (no such frame or no
 * recording), -EIO. A pread of one frame from frames.bin. */
int rec_frame_read(const struct sess *s, uint32_t i, uint8_t **data, size_t *len);

/* An action (request text as received, HTTP status of its answer) that
 * began at t0_ms and ended at end_ms (fs_now_ms clock); via: "http" or
 * "control". Nothing when s does not record. */
void rec_note_action(struct sess *s, const char *text, size_t len, int status, int64_t t0_ms,
		     int64_t end_ms, const char *via);
/* A command: argv (borrowed JSON array, may be NULL), exit_code (-1:
 * none), HTTP status, times as above. */
void rec_note_command(struct sess *s, json_t *argv, int exit_code, int status, int64_t t0_ms,
		      int64_t end_ms);

/* The video: returns 1 when the WebM of the recording as of now is ready
 * (*gen names it: rec_webm_get), 0 when it is being made (wait for
 * generation *gen: the session's waiters are woken when it is done), or
 * -errno with *e (404 no recording, 409 no frames yet, 500). */
int rec_webm_begin(struct sess *s, int64_t *gen, struct api_error *e);
/* For a waiter of generation gen: 1 with *data and *len (borrowed until the
 * loop runs again) when ready, 0 while it is being made, -EIO with *e
 * when it failed. */
int rec_webm_get(struct sess *s, int64_t gen, const uint8_t **data, size_t *len,
		 struct api_error *e);

/* The loop woke: records new frames. */
void rec_poke_all(struct gw *gw);

#endif
