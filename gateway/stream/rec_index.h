/* gateway/stream/rec_index.h: the on-disk format of a session recording
 * (docs/api.md "Recordings"), pure so it is unit-tested and fuzzed: the
 * index file's lines, one per frame or timeline entry, and the ffconcat
 * list that feeds the frames, each held until the next one's time, to
 * ffmpeg for the WebM export. No I/O, no threads.
 *
 * A recording is a directory with frames.bin (the JPEGs, back to back) and
 * index.log, appended to, one line each:
 *	F <i> <t_ms> <offset> <bytes> <width> <height>\n   a frame in frames.bin
 *	E <JSON object>\n                                 a timeline entry
 * t_ms counts from the recording's start. */
#ifndef VITRINE_GATEWAY_STREAM_REC_INDEX_H
#define VITRINE_GATEWAY_STREAM_REC_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* Bigger than any frame the mirror makes (display/frame.h's 64 MiB of
 * RGBX never encodes larger as JPEG at quality 60). */
#define REC_FRAME_MAX_BYTES (64u << 20)
#define REC_LINE_MAX 64 /* a frame line, newline and NUL included */

struct rec_frame {
	uint32_t i; /* 0, 1, ... in time order */
	int64_t t_ms; /* from the recording's start, >= 0 */
	uint64_t offset; /* in frames.bin */
	uint32_t bytes; /* 1..REC_FRAME_MAX_BYTES */
	int width, height; /* 1..8192 */
};

enum rec_line_kind { REC_LINE_FRAME = 1, REC_LINE_ENTRY = 2 };

/* Writes f's line (with its newline) into buf; returns its length, or
 * -ENOSPC when len is too small (REC_LINE_MAX always does). */
int rec_index_frame_line(const struct rec_frame *f, char *buf, size_t len);

/* Parses one line (len bytes, its newline optional; no NUL needed).
 * Returns REC_LINE_FRAME with *f filled, REC_LINE_ENTRY with *json and
 * *json_len naming the entry's JSON text inside line (not checked here),
 * or -EINVAL for anything else (fields out of range included). Can't fail
 * otherwise. */
int rec_index_parse_line(const char *line, size_t len, struct rec_frame *f, const char **json,
			 size_t *json_len);

/* The ffconcat list showing frames[0..n) of frames_path, each for the time
 * until the next one's t_ms and the last until end_ms (at least 1 ms
 * each), for ffmpeg's concat demuxer (-safe 0, protocols file and subfile).
 * Returns a malloc'd NUL-terminated text, or NULL when n is 0, a path holds
 * a newline, or out of memory. */
char *rec_concat_list(const struct rec_frame *frames, size_t n, int64_t end_ms,
		      const char *frames_path);

#endif
