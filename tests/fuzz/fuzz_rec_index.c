/* tests/fuzz/fuzz_rec_index.c: libFuzzer target for a recording's index
 * lines (gateway/stream/rec_index.c), which the video export reads back:
 * the state dir is the gateway's own, but a damaged or foreign file must
 * not get further than a refusal. Checks: an accepted frame line is within
 * its bounds and formats back into a line that parses to the same frame;
 * an accepted entry names a {...} inside the input without a newline; the
 * ffconcat list of accepted frames is made (or refused) without a crash. */
#include "gateway/stream/rec_index.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line = (const char *)data, *json = NULL;
	struct rec_frame f, g;
	size_t json_len = 0;
	char buf[REC_LINE_MAX];
	int rc = rec_index_parse_line(line, size, &f, &json, &json_len);

	if (rc == REC_LINE_ENTRY) {
		if (json < line || json + json_len > line + size || json_len < 2 || *json != '{' ||
		    json[json_len - 1] != '}' || memchr(json, '\n', json_len))
			__builtin_trap();
		return 0;
	}
	if (rc != REC_LINE_FRAME)
		return 0;
	if (f.t_ms < 0 || !f.bytes || f.bytes > REC_FRAME_MAX_BYTES || f.width < 1 ||
	    f.width > 8192 || f.height < 1 || f.height > 8192)
		__builtin_trap();
	rc = rec_index_frame_line(&f, buf, sizeof(buf));
	if (rc <= 0 ||
	    rec_index_parse_line(buf, (size_t)rc, &g, &json, &json_len) != REC_LINE_FRAME ||
	    f.i != g.i || f.t_ms != g.t_ms || f.offset != g.offset || f.bytes != g.bytes ||
	    f.width != g.width || f.height != g.height)
		__builtin_trap();
	free(rec_concat_list(&f, 1, f.t_ms + 1000, "/state/recordings/x.1/frames.bin"));
	return 0;
}
