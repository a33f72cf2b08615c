/* tests/fuzz/fuzz_multipart.c: the streaming multipart/form-data parser
 * (gateway/e2b/multipart.c) on E2B's uploads, the bytes of any client.
 * The first byte picks a split point; the rest is the body, under the
 * boundary "B". Checked besides "no crash" and no leak:
 *   - fed whole, in two pieces at the split and a byte at a time, the
 *     parts (names, filenames, bytes, ends) are the same, and so is the
 *     outcome (taken, done, or failed);
 *   - no more content comes out than went in, and names fit their
 *     bounds. */
#include "common/bytebuf.h"
#include "gateway/e2b/multipart.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	struct bytebuf t;
	size_t content;
};

static int on_part(void *u, const char *name, const char *filename)
{
	struct seen *s = u;

	if (strlen(name) >= MULTIPART_NAME_MAX || strlen(filename) >= MULTIPART_NAME_MAX)
		__builtin_trap();
	return bytebuf_printf(&s->t, "P%s|%s:", name, filename);
}

static int on_data(void *u, const void *p, size_t n)
{
	struct seen *s = u;

	if (!n)
		__builtin_trap();
	s->content += n;
	return bytebuf_append(&s->t, p, n);
}

static int on_end(void *u)
{
	struct seen *s = u;

	return bytebuf_append(&s->t, "#E;", 3);
}

static const struct multipart_ops ops = { on_part, on_data, on_end };

/* Parses b[n] cut at the given points (sorted, within n): the outcome
 * (0 taken, 1 done, -1 failed). */
static int run(const uint8_t *b, size_t n, size_t step, size_t split, struct seen *s)
{
	struct multipart m;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (multipart_init(&m, "multipart/form-data; boundary=B") < 0)
		__builtin_trap();
	if (step) {
		for (size_t i = 0; i < n && rc == 0; i += step)
			rc = multipart_feed(&m, b + i, n - i < step ? n - i : step, &ops, s);
	} else {
		rc = multipart_feed(&m, b, split, &ops, s);
		if (rc == 0)
			rc = multipart_feed(&m, b + split, n - split, &ops, s);
	}
	if (rc < 0 && rc != -EPROTO)
		__builtin_trap(); /* the callbacks here fail only when out of memory */
	if (s->content > n)
		__builtin_trap();
	return rc < 0 ? -1 : multipart_done(&m) ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen whole, two, bytes;
	size_t split;
	int a, b, c;

	if (size < 1 || size > 4096)
		return 0;
	split = data[0] % size;
	data++;
	size--;
	if (split > size)
		split = size;
	a = run(data, size, 0, size, &whole);
	b = run(data, size, 0, split, &two);
	c = run(data, size, 1, 0, &bytes);
	if (a != b || a != c)
		__builtin_trap();
	if (a >= 0 && (whole.t.len != two.t.len || whole.t.len != bytes.t.len ||
		       (whole.t.len && (memcmp(whole.t.data, two.t.data, whole.t.len) ||
					memcmp(whole.t.data, bytes.t.data, whole.t.len)))))
		__builtin_trap();
	bytebuf_free(&whole.t);
	bytebuf_free(&two.t);
	bytebuf_free(&bytes.t);
	return 0;
}
