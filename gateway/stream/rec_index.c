/* gateway/stream/rec_index.c: see rec_index.h. */
#include "gateway/stream/rec_index.h"

#include "common/bytebuf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rec_index_frame_line(const struct rec_frame *f, char *buf, size_t len)
{
	int n = snprintf(buf, len, "F %" PRIu32 " %" PRId64 " %" PRIu64 " %" PRIu32 " %d %d\n",
			 f->i, f->t_ms, f->offset, f->bytes, f->width, f->height);

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

/* Reads a decimal number of 1 to 19 digits, at most max, at *p (before
 * end) and advances past it. */
static int number(const char **p, const char *end, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	while (*p < end && **p >= '0' && **p <= '9') {
		if (++digits > 19)
			return -EINVAL;
		v = v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	if (!digits || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int rec_index_parse_line(const char *line, size_t len, struct rec_frame *f, const char **json,
			 size_t *json_len)
{
	const char *p = line + 2, *end = line + len;
	uint64_t v[6];
	static const uint64_t max[6] = { UINT32_MAX,	      INT64_MAX, INT64_MAX,
					 REC_FRAME_MAX_BYTES, 8192,	 8192 };

	if (len && line[len - 1] == '\n')
		end--;
	if (end - line < 3 || line[1] != ' ')
		return -EINVAL;
	if (line[0] == 'E') {
		if (*p != '{' || end[-1] != '}' || memchr(p, '\n', (size_t)(end - p)))
			return -EINVAL;
		*json = p;
		*json_len = (size_t)(end - p);
		return REC_LINE_ENTRY;
	}
	if (line[0] != 'F')
		return -EINVAL;
	for (int k = 0; k < 6; k++) {
		if (number(&p, end, max[k], &v[k]) < 0)
			return -EINVAL;
		if (k < 5 && (p >= end || *p++ != ' '))
			return -EINVAL;
	}
	if (p != end || !v[3] || !v[4] || !v[5])
		return -EINVAL;
	f->i = (uint32_t)v[0];
	f->t_ms = (int64_t)v[1];
	f->offset = v[2];
	f->bytes = (uint32_t)v[3];
	f->width = (int)v[4];
	f->height = (int)v[5];
	return REC_LINE_FRAME;
}

/* One frame's file line: the bytes of frames_path it occupies. ffconcat
 * quotes with '...', a quote inside written as '\''. */
static bool add_file(struct bytebuf *b, const struct rec_frame *f, const char *path)
{
	if (bytebuf_printf(b, "file 'subfile,,start,%" PRIu64 ",end,%" PRIu64 ",,:", f->offset,
			   f->offset + f->bytes) < 0)
		return false;
	for (const char *c = path; *c; c++)
		if ((*c == '\'' ? bytebuf_printf(b, "'\\''") : bytebuf_printf(b, "%c", *c)) < 0)
			return false;
	return bytebuf_printf(b, "'\n") == 0;
}

char *rec_concat_list(const struct rec_frame *frames, size_t n, int64_t end_ms,
		      const char *frames_path)
{
	struct bytebuf b = { 0 };

	if (!n || strchr(frames_path, '\n') || bytebuf_printf(&b, "ffconcat version 1.0\n") < 0)
		goto fail;
	for (size_t k = 0; k < n; k++) {
		int64_t until = k + 1 < n ? frames[k + 1].t_ms : end_ms;
		int64_t d = until - frames[k].t_ms;

		if (d < 1)
			d = 1;
		if (!add_file(&b, &frames[k], frames_path) ||
		    bytebuf_printf(&b, "duration %" PRId64 ".%03d\n", d / 1000, (int)(d % 1000)) <
			    0)
			goto fail;
	}
	/* The concat demuxer holds the last frame for its duration only when
	 * a file follows it. */
	if (!add_file(&b, &frames[n - 1], frames_path))
		goto fail;
	return b.data;
fail:
	bytebuf_free(&b);
	return NULL;
}
