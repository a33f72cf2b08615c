/* tests/unit/test_multipart.c: gateway/e2b/multipart.c, the streaming
 * multipart/form-data parser of E2B's uploads: the parts, names, filenames
 * and bytes of a body are the same fed whole, in every split in two and a
 * byte at a time (and so are the bytes held back of a body cut short);
 * a delimiter's prefix inside content is content; the
 * boundary's forms; malformed bodies fail and stay failed; the
 * Content-Disposition parameters (quoted with escapes, tokens, too long). */
#include "common/bytebuf.h"
#include "gateway/e2b/multipart.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* What the parser said, as one text: "P{name}|{filename}:" bytes "#E;" */
static int on_part(void *u, const char *name, const char *filename)
{
	return bytebuf_printf(u, "P%s|%s:", name, filename);
}

static int on_data(void *u, const void *p, size_t n)
{
	return bytebuf_append(u, p, n);
}

static int on_end(void *u)
{
	return bytebuf_append(u, "#E;", 3);
}

static const struct multipart_ops ops = { on_part, on_data, on_end };

/* Parses body[n] in pieces of at most step (0: whole) into *out; the last
 * feed's status. */
static int parse(const char *ctype, const char *body, size_t n, size_t step, struct bytebuf *out,
		 bool *done)
{
	struct multipart m;
	int rc = multipart_init(&m, ctype);

	*out = (struct bytebuf){ 0 };
	if (rc < 0)
		return rc;
	for (size_t off = 0; off < n && rc == 0;) {
		size_t k = step && n - off > step ? step : n - off;

		rc = multipart_feed(&m, body + off, k, &ops, out);
		off += k;
	}
	*done = multipart_done(&m);
	return rc;
}

static const char body[] =
	"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\n"
	"no\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; "
	"filename=\"/tmp/a \\\"q\\\".bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
	"\0\r\n--X\r\n--XyZ\r\ncontent-disposition: form-data; name=file; filename=rel/b\r\n\r\n"
	"\r\n--XyZ--\r\nepilogue";
static const char want[] = "Pother|:no#E;Pfile|/tmp/a \"q\".bin:\0\r\n--X#E;Pfile|rel/b:#E;";

static void test_splits(void **state)
{
	struct bytebuf whole, piece;
	bool done;

	(void)state;
	assert_int_equal(parse("multipart/form-data; boundary=XyZ", body, sizeof(body) - 1, 0,
			       &whole, &done),
			 0);
	assert_true(done);
	assert_int_equal(whole.len, sizeof(want) - 1);
	assert_memory_equal(whole.data, want, sizeof(want) - 1);
	for (size_t step = 1; step < sizeof(body); step++) {
		assert_int_equal(parse("multipart/form-data; boundary=XyZ", body, sizeof(body) - 1,
				       step, &piece, &done),
				 0);
		assert_true(done);
		assert_int_equal(piece.len, whole.len);
		assert_memory_equal(piece.data, whole.data, whole.len);
		bytebuf_free(&piece);
	}
	/* a body whose first bytes are its first delimiter */
	assert_int_equal(parse("multipart/form-data; boundary=\"XyZ\"", strstr(body, "--XyZ"),
			       strlen(strstr(body, "--XyZ")), 0, &piece, &done),
			 0);
	/* (cut at the content's NUL: the second part has begun, not ended) */
	assert_int_equal(piece.len, 34);
	assert_memory_equal(piece.data, want, 34);
	bytebuf_free(&piece);
	bytebuf_free(&whole);
}

/* fuzz_multipart's find: content that ends in bytes that start no
 * delimiter ("--") before ones that may ("\r\n") was held back more when
 * fed whole than a byte at a time; only the delimiter's possible start is. */
static void test_held_back(void **state)
{
	static const char cut[] = "--B\r\n\r\nab\r\n--x--\r\n";
	struct bytebuf whole, bytes;
	bool done;

	(void)state;
	assert_int_equal(parse("multipart/form-data; boundary=B", cut, sizeof(cut) - 1, 0, &whole,
			       &done),
			 0);
	assert_false(done);
	assert_int_equal(parse("multipart/form-data; boundary=B", cut, sizeof(cut) - 1, 1, &bytes,
			       &done),
			 0);
	assert_int_equal(whole.len, strlen("P|:ab\r\n--x--"));
	assert_memory_equal(whole.data, "P|:ab\r\n--x--", whole.len);
	assert_int_equal(bytes.len, whole.len);
	assert_memory_equal(bytes.data, whole.data, whole.len);
	bytebuf_free(&whole);
	bytebuf_free(&bytes);
}

static void test_refused(void **state)
{
	struct bytebuf out;
	struct multipart m;
	bool done = false;
	char big[MULTIPART_HEAD_MAX + 64];

	(void)state;
	assert_int_equal(multipart_init(&m, "text/plain"), -EINVAL);
	assert_int_equal(multipart_init(&m, "multipart/form-data"), -EINVAL);
	assert_int_equal(multipart_init(&m, "multipart/form-data; boundary="), -EINVAL);
	assert_int_equal(multipart_init(&m, "multipart/form-data; boundary=\"open"), -EINVAL);
	memset(big, 'b', sizeof(big));
	snprintf(big, sizeof(big), "multipart/form-data; boundary=%071d", 0);
	assert_int_equal(multipart_init(&m, big), -EINVAL); /* 71 > 70 */
	/* cut short: not done */
	assert_int_equal(parse("multipart/form-data; boundary=XyZ", body, 120, 0, &out, &done), 0);
	assert_false(done);
	bytebuf_free(&out);
	/* garbage after a delimiter, and the parse stays failed */
	assert_int_equal(multipart_init(&m, "multipart/form-data; boundary=B"), 0);
	out = (struct bytebuf){ 0 };
	assert_int_equal(multipart_feed(&m, "--Bxx", 5, &ops, &out), -EPROTO);
	assert_int_equal(multipart_feed(&m, "\r\n", 2, &ops, &out), -EPROTO);
	bytebuf_free(&out);
	/* headers past the bound */
	assert_int_equal(multipart_init(&m, "multipart/form-data; boundary=B"), 0);
	assert_int_equal(multipart_feed(&m, "--B\r\n", 5, &ops, &out), 0);
	memset(big, 'h', sizeof(big));
	assert_int_equal(multipart_feed(&m, big, sizeof(big), &ops, &out), -EPROTO);
	bytebuf_free(&out);
}

static void test_param(void **state)
{
	char v[8];

	(void)state;
	assert_int_equal(multipart_param(" form-data; name=\"a\\\"b\"", "name", v, sizeof(v)), 0);
	assert_string_equal(v, "a\"b");
	assert_int_equal(multipart_param(" form-data; NAME=tok; x=1", "name", v, sizeof(v)), 0);
	assert_string_equal(v, "tok");
	/* "filename" is not "name" */
	assert_int_equal(multipart_param(" form-data; filename=\"f\"", "name", v, sizeof(v)),
			 -ENOENT);
	assert_int_equal(multipart_param(" form-data; name=\"12345678\"", "name", v, sizeof(v)),
			 -E2BIG);
	assert_int_equal(multipart_param(" form-data; name=\"open", "name", v, sizeof(v)), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splits),
		cmocka_unit_test(test_held_back),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_param),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
