/* gateway/core/logfile.h: an append-only JSON-lines file with a size cap (the
 * audit log and the access log). One line is one O_APPEND write(2) on a
 * descriptor kept open: no fsync and no rotation work beyond a rename and an
 * open once the cap is passed, so writing from the loop stays cheap. Past
 * max_bytes the file becomes FILE.1 (FILE.1 becomes FILE.2, and so on up
 * to FILE.KEEP: keep old files are kept, the oldest is replaced) and a new
 * FILE is started. Loop thread only. */
#ifndef VITRINE_GATEWAY_LOGFILE_H
#define VITRINE_GATEWAY_LOGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOGFILE_DEFAULT_MAX_BYTES (64ll << 20)
#define AUDIT_LOG_DEFAULT_KEEP 8 /* serve --audit-log-keep */
#define LOGFILE_MAX_KEEP 1000 /* old generations at most (FILE.1 .. FILE.1000) */

struct logfile {
	char path[512]; /* "" : no file */
	int64_t max_bytes; /* <= 0: LOGFILE_DEFAULT_MAX_BYTES */
	int keep; /* old generations kept, FILE.1 (newest) .. FILE.keep, 1..LOGFILE_MAX_KEEP */
	int fd; /* -1 until first written (or after a failure) */
	int64_t size; /* what the file holds, as far as we know */
	bool warned; /* a failure was logged (once until a write works again) */
};

/* Sets lf up for path ("" or NULL: disabled), cap and the old generations
 * kept (<= 0: 1; clamped to LOGFILE_MAX_KEEP). Opens nothing. */
void logfile_init(struct logfile *lf, const char *path, int64_t max_bytes, int keep);
/* Appends line (len bytes, no newline: one is added) as one write, rotating
 * first when it would pass the cap. Failures are logged once and dropped:
 * this function can't fail for the caller. No-op when disabled. */
void logfile_append(struct logfile *lf, const char *line, size_t len);
/* Closes the descriptor (lf may be reused: the next append reopens). */
void logfile_close(struct logfile *lf);

/* Pure parts, for the unit tests. Whether a file of size bytes must be
 * rotated before a line of add bytes (newline included) is written under
 * max_bytes (a file with nothing in it never is: a line larger than the cap
 * is still written). */
bool logfile_must_rotate(int64_t size, size_t add, int64_t max_bytes);
/* The name of generation gen (1: the newest old file), path + ".GEN", into
 * out. Returns 0, or -1 when it does not fit. */
int logfile_rotated_name(const char *path, int gen, char *out, size_t outlen);

#endif
