/* tests/unit/test_tpl_archive.c: the reader of a template's export file
 * (vmm-qemu/tpl_archive.c) on archives made here byte by byte: a whole one
 * in one piece and one byte at a time, members handed on as they are; a
 * flipped byte, every cut, members out of order, unknown, twice or
 * missing, sizes over their limits, broken headers and data after the end
 * refused, each with its reason. */
#include "common/sha256.h"
#include "common/tar.h"
#include "vmm-qemu/tpl_archive.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct member {
	const char *name;
	const char *data;
	size_t len;
};

/* An archive of the members given, then SHA256SUMS of the digests of
 * those named in sums_of (NULL: all of them, right), two zero blocks. */
static unsigned char *make(const struct member *m, size_t n, bool right_sums, size_t *len)
{
	bool present[TPL_FILE_COUNT] = { 0 };
	uint8_t digest[TPL_FILE_COUNT][SHA256_LEN] = { { 0 } };
	char sums[TPL_ARCHIVE_SUMS_MAX + 1];
	unsigned char *out = calloc(1, 1 << 20);
	size_t at = 0, ns;

	assert_non_null(out);
	for (size_t i = 0; i <= n; i++) {
		struct tar_member tm = { .mtime = 1 };
		const char *data;
		size_t dlen;

		if (i == n) {
			ns = tpl_archive_sums(present, digest, sums, sizeof(sums));
			if (!right_sums)
				sums[3] ^= 1;
			snprintf(tm.name, sizeof(tm.name), "SHA256SUMS");
			data = sums;
			dlen = ns;
		} else {
			snprintf(tm.name, sizeof(tm.name), "%s", m[i].name);
			data = m[i].data;
			dlen = m[i].len;
			for (int f = 0; f < TPL_FILE_SUMS; f++)
				if (!strcmp(m[i].name, tpl_file_names[f])) {
					present[f] = true;
					sha256(data, dlen, digest[f]);
				}
		}
		tm.size = dlen;
		tar_header(&tm, out + at);
		at += TAR_BLOCK;
		memcpy(out + at, data, dlen);
		at += (dlen + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
	}
	*len = at + 2 * TAR_BLOCK;
	return out;
}

static const struct member good[] = {
	{ "template.json", "{\"machine\":3}", 13 },
	{ "ram", "RAMRAMRAM", 9 },
	{ "state", "state bytes that run past nothing", 33 },
	{ "screen.ppm", "P6 1 1 255 xyz", 14 },
};

/* What the ops saw. */
struct seen {
	char got[TPL_FILE_COUNT][256];
	size_t len[TPL_FILE_COUNT];
	uint64_t size[TPL_FILE_COUNT];
	int begun, ended;
};

static int on_begin(void *ud, enum tpl_file f, uint64_t size, char *err, size_t errlen)
{
	struct seen *s = ud;

	(void)err, (void)errlen;
	s->size[f] = size;
	s->begun++;
	return 0;
}

static int on_data(void *ud, enum tpl_file f, const void *p, size_t n, char *err, size_t errlen)
{
	struct seen *s = ud;

	(void)err, (void)errlen;
	assert_true(s->len[f] + n <= s->size[f]);
	if (s->len[f] + n <= sizeof(s->got[f]))
		memcpy(s->got[f] + s->len[f], p, n);
	s->len[f] += n;
	return 0;
}

static int on_end(void *ud, enum tpl_file f, char *err, size_t errlen)
{
	struct seen *s = ud;

	(void)err, (void)errlen;
	assert_int_equal(s->len[f], s->size[f]);
	s->ended++;
	return 0;
}

static const struct tpl_unpack_ops ops = { on_begin, on_data, on_end };

/* Feeds a in pieces of step bytes; returns finish's result, u kept. */
static int run(const unsigned char *a, size_t len, size_t step, struct tpl_unpack *u,
	       struct seen *s)
{
	memset(s, 0, sizeof(*s));
	tpl_unpack_init(u, &ops, s);
	for (size_t at = 0; at < len; at += step)
		if (tpl_unpack_feed(u, a + at, len - at < step ? len - at : step) < 0)
			return -1;
	return tpl_unpack_finish(u);
}

static void test_whole(void **state)
{
	static struct tpl_unpack u;
	struct seen s;
	size_t len;
	unsigned char *a = make(good, 4, true, &len);

	(void)state;
	for (size_t step = 1; step <= len; step = step * 3 + 1) {
		assert_int_equal(run(a, len, step, &u, &s), 0);
		assert_int_equal(s.begun, 5);
		assert_int_equal(s.ended, 5);
		assert_int_equal(s.len[TPL_FILE_STATE], 33);
		assert_memory_equal(s.got[TPL_FILE_RAM], "RAMRAMRAM", 9);
		assert_int_equal(s.len[TPL_FILE_DISK], 0);
	}
	/* tar pads to its records with more zeros: still whole */
	a = realloc(a, len + 8192);
	memset(a + len, 0, 8192);
	assert_int_equal(run(a, len + 8192, 4096, &u, &s), 0);
	a[len + 5000] = 1;
	assert_int_equal(run(a, len + 8192, 4096, &u, &s), -1);
	assert_non_null(strstr(u.err, "after the end"));
	free(a);
}

static void test_corrupt_and_truncated(void **state)
{
	static struct tpl_unpack u;
	struct seen s;
	size_t len;
	unsigned char *a = make(good, 4, true, &len);

	(void)state;
	a[1536 + 2] ^= 0x20; /* ram's data */
	assert_int_equal(run(a, len, 100, &u, &s), -1);
	assert_non_null(strstr(u.err, "checksum mismatch"));
	a[1536 + 2] ^= 0x20;
	for (size_t cut = 0; cut < len; cut += 97) {
		assert_int_equal(run(a, cut, 64, &u, &s), -1);
		assert_non_null(strstr(u.err, "truncated"));
	}
	free(a);
	a = make(good, 4, false, &len); /* a wrong SHA256SUMS */
	assert_int_equal(run(a, len, 512, &u, &s), -1);
	assert_non_null(strstr(u.err, "checksum mismatch"));
	free(a);
}

static void expect_refused(const struct member *m, size_t n, const char *why)
{
	static struct tpl_unpack u;
	struct seen s;
	size_t len;
	unsigned char *a = make(m, n, true, &len);

	assert_int_equal(run(a, len, 700, &u, &s), -1);
	if (!strstr(u.err, why))
		fail_msg("refused for '%s', not '%s'", u.err, why);
	free(a);
}

static void test_members(void **state)
{
	static char big[TPL_ARCHIVE_META_MAX + 1];
	const struct member order[] = { good[1], good[0], good[2] };
	const struct member unknown[] = { good[0], good[1], { "../etc/passwd", "x", 1 } };
	const struct member twice[] = { good[0], good[1], good[1], good[2] };
	const struct member no_state[] = { good[0], good[1] };
	const struct member no_ram[] = { good[0], good[2] };
	const struct member huge[] = { { "template.json", big, sizeof(big) }, good[1], good[2] };

	(void)state;
	expect_refused(order, 3, "must come first");
	expect_refused(unknown, 3, "unknown member");
	expect_refused(twice, 4, "twice");
	expect_refused(no_state, 2, "no state");
	expect_refused(no_ram, 2, "no ram");
	memset(big, ' ', sizeof(big));
	expect_refused(huge, 3, "over its limit");
}

static void test_headers(void **state)
{
	static struct tpl_unpack u;
	struct seen s;
	size_t len;
	unsigned char *a = make(good, 4, true, &len);

	(void)state;
	a[1024 + 10] = 'x'; /* ram's name, its checksum now wrong */
	assert_int_equal(run(a, len, 512, &u, &s), -1);
	assert_non_null(strstr(u.err, "bad header checksum"));
	free(a);
	a = make(good, 4, true, &len);
	a[1024 + 156] = '5'; /* a directory (checksum left wrong too: either refuses) */
	assert_int_equal(run(a, len, 512, &u, &s), -1);
	free(a);
	a = make(good, 4, true, &len);
	memset(a + 1024 + 257, 0, 6); /* no ustar magic */
	assert_int_equal(run(a, len, 512, &u, &s), -1);
	free(a);
	/* after a refusal every call refuses */
	tpl_unpack_init(&u, NULL, NULL);
	assert_int_equal(tpl_unpack_feed(&u, "garbage", 7), 0);
	{
		static unsigned char junk[512];

		memset(junk, 'j', sizeof(junk));
		assert_int_equal(tpl_unpack_feed(&u, junk, sizeof(junk)), -1);
		assert_int_equal(tpl_unpack_feed(&u, junk, 1), -1);
		assert_int_equal(tpl_unpack_finish(&u), -1);
	}
}

static void test_sums_text(void **state)
{
	bool present[TPL_FILE_COUNT] = { [TPL_FILE_META] = true, [TPL_FILE_RAM] = true };
	uint8_t digest[TPL_FILE_COUNT][SHA256_LEN] = { { 0 } };
	char out[256];
	size_t n;

	(void)state;
	sha256("", 0, digest[TPL_FILE_RAM]);
	n = tpl_archive_sums(present, digest, out, sizeof(out));
	assert_int_equal(n, 2 * (64 + 2) + strlen("template.json\n") + strlen("ram\n"));
	assert_non_null(strstr(out,
			       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
			       "  ram\n"));
	assert_int_equal(tpl_archive_sums(present, digest, out, 100), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),	  cmocka_unit_test(test_corrupt_and_truncated),
		cmocka_unit_test(test_members),	  cmocka_unit_test(test_headers),
		cmocka_unit_test(test_sums_text),
	};

	return cmocka_run_group_tests_name("template export files", tests, NULL, NULL);
}
