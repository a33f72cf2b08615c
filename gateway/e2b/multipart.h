/* gateway/e2b/multipart.h: a multipart/form-data body parsed as it comes
 * (RFC 7578, as E2B's SDKs send envd's POST /files: one part named "file"
 * per file, its filename the path), so an upload of any size is passed on
 * part by part without the body ever being whole in memory. Pure: bytes in
 * any pieces, callbacks out; unit-tested (tests/unit/test_multipart.c) and
 * fuzzed (tests/fuzz/fuzz_multipart.c). */
#ifndef VITRINE_GATEWAY_MULTIPART_H
#define VITRINE_GATEWAY_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>

#define MULTIPART_BOUNDARY_MAX 70 /* RFC 2046 */
#define MULTIPART_HEAD_MAX 8192 /* a part's headers */
#define MULTIPART_NAME_MAX 1024 /* a part's name and filename */

/* What a body's parts say, as they come. Each returns 0, or a negative
 * number that stops the parse (multipart_feed returns it). */
struct multipart_ops {
	/* A part begins: its form name and filename ("" when none). */
	int (*part)(void *u, const char *name, const char *filename);
	/* Bytes of the current part's content (any number of calls). */
	int (*data)(void *u, const void *p, size_t n);
	/* The current part's content is whole. */
	int (*part_end)(void *u);
};

struct multipart {
	char delim[MULTIPART_BOUNDARY_MAX + 5]; /* "\r\n--" boundary */
	size_t dl;
	int state;
	bool in_part; /* a part's content is being passed on (else: the preamble) */
	unsigned char tail[MULTIPART_BOUNDARY_MAX + 5]; /* content that may start a delimiter */
	size_t tl;
	char after[2]; /* the two bytes after a delimiter */
	size_t al;
	char head[MULTIPART_HEAD_MAX];
	size_t hl;
	char name[MULTIPART_NAME_MAX], filename[MULTIPART_NAME_MAX];
};

/* Starts a parse for a body of content_type (multipart/form-data with a
 * boundary). 0, or -EINVAL for any other type or a bad boundary. */
int multipart_init(struct multipart *m, const char *content_type);
/* Feeds n more bytes. Returns 0, -EPROTO for a malformed body (the parse
 * stays failed), or a callback's error. Bytes after the closing delimiter
 * (the epilogue) are ignored. */
int multipart_feed(struct multipart *m, const void *p, size_t n, const struct multipart_ops *ops,
		   void *u);
/* True once the closing delimiter came. */
bool multipart_done(const struct multipart *m);

/* The first value of parameter key ("name", "filename") in a part's
 * Content-Disposition header value hv (quoted with backslash escapes, or a
 * token), into out (cap bytes). 0, or -ENOENT (absent), -E2BIG (longer
 * than cap - 1 or holding NUL). Pure. */
int multipart_param(const char *hv, const char *key, char *out, size_t cap);

#endif
