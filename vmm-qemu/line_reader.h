/* vmm-qemu/line_reader.h: newline-delimited input with a bound, for the
 * line protocols QEMU speaks (QMP, qemu-ga). Pure: the protocol machines
 * feed it the bytes they are given and take whole lines out, so a line from
 * a guest never grows a buffer past the caller's limit. */
#ifndef VITRINE_VMM_LINE_READER_H
#define VITRINE_VMM_LINE_READER_H

#include "common/bytebuf.h"

#include <stdbool.h>
#include <stddef.h>

struct line_reader {
	struct bytebuf buf; /* owned: a line not yet ended, or the line last returned */
	bool returned; /* buf holds the line last returned; the next call empties it */
	int reset_byte; /* drops the partial line where it occurs (qemu-ga's 0xFF), or -1 */
};

/* An empty reader; reset_byte as on the field. This function can't fail. */
void line_reader_init(struct line_reader *r, int reset_byte);
/* Frees the storage. Accepts a reader that was only initialised. */
void line_reader_free(struct line_reader *r);
/* Drops the partial line (and the line last returned, whose bytes stay
 * readable until the next call). This function can't fail. */
void line_reader_reset(struct line_reader *r);

/* Takes bytes from *bytes (advancing it and decreasing *len) up to the end
 * of the next line. Returns 1 with the line in *line and *line_len, without
 * its '\n' (it points into the input or into r, valid until the next call);
 * 0 when every byte was taken and no line ended (the partial line is kept);
 * -EMSGSIZE when the line would pass max bytes, or -ENOMEM (reason in err,
 * which may be NULL with errlen 0). After an error the partial line and the
 * bytes of the offending segment are dropped, so the caller may go on (to
 * skip stale input) or give up. */
int line_reader_next(struct line_reader *r, size_t max, const char **bytes, size_t *len,
		     const char **line, size_t *line_len, char *err, size_t errlen);

#endif
