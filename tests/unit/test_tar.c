/* tests/unit/test_tar.c: the ustar writer (common/tar.c) read back by a
 * small parser of its own: header checksums, names, sizes and modes, the
 * NUL padding to 512, the two zero blocks at the end; the same bytes
 * whatever the chunk size the archive is read in; and `tar -t` lists it. */
#include "common/tar.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static uint64_t octal_field(const unsigned char *f, size_t width)
{
	uint64_t v = 0;

	for (size_t i = 0; i < width && f[i] >= '0' && f[i] <= '7'; i++)
		v = v * 8 + (uint64_t)(f[i] - '0');
	return v;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The archive whole, read in chunks of chunk bytes. */
static unsigned char *read_all(const struct tar_member *m, size_t n, uint64_t total, size_t chunk)
{
	unsigned char *buf = malloc(total + 1);
	uint64_t off = 0;

	assert_non_null(buf);
	while (off < total) {
		size_t got = tar_read(m, n, total, off, buf + off, chunk);

		assert_true(got > 0);
		assert_true(got == chunk || off + got == total);
		off += got;
	}
	assert_int_equal(tar_read(m, n, total, total, buf, 1), 0);
	return buf;
}

/* Parses buf as ustar: each member's name and data must be what was given. */
static void parse_back(const unsigned char *buf, uint64_t total, const char *const *names,
		       const char *const *data, size_t n)
{
	uint64_t off = 0;

	for (size_t i = 0; i < n; i++) {
		const unsigned char *h = buf + off;
		unsigned char copy[TAR_BLOCK];
		unsigned sum = 0;
		uint64_t size = octal_field(h + 124, 12), len = strlen(data[i]);

		assert_true(off + TAR_BLOCK <= total);
		assert_string_equal((const char *)h, names[i]);
		assert_memory_equal(h + 257,
				    "ustar\0"
				    "00",
				    8);
		assert_int_equal(h[156], '0');
		assert_int_equal(octal_field(h + 100, 8), 0644);
		memcpy(copy, h, TAR_BLOCK);
		memset(copy + 148, ' ', 8);
		for (size_t k = 0; k < TAR_BLOCK; k++)
			sum += copy[k];
		assert_int_equal(octal_field(h + 148, 8), sum);
		assert_int_equal(size, len);
		off += TAR_BLOCK;
		assert_memory_equal(buf + off, data[i], len);
		/* padded with NULs to the next block */
		assert_true(all_zero(buf + off + len, (TAR_BLOCK - len % TAR_BLOCK) % TAR_BLOCK));
		off += (len + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
	}
	assert_int_equal(total - off, 2 * TAR_BLOCK);
	assert_true(all_zero(buf + off, 2 * TAR_BLOCK));
}

static void test_members_read_back(void **state)
{
	static char big[3000];
	const char *names[] = { "meta.json", "trajectory.jsonl", "images/000001.png", "empty" };
	const char *data[4];
	struct tar_piece p0[] = { { "{\"a\":1}", 7 } };
	struct tar_piece p1[] = { { "line one\n", 9 }, { "", 0 }, { "line two\n", 9 } };
	struct tar_piece p2[1];
	struct tar_member m[4] = {
		{ .name = "meta.json", .mtime = 1700000000, .pieces = p0, .n_pieces = 1 },
		{ .name = "trajectory.jsonl", .mtime = 1700000000, .pieces = p1, .n_pieces = 3 },
		{ .name = "images/000001.png", .mtime = 1700000000, .pieces = p2, .n_pieces = 1 },
		{ .name = "empty", .mtime = 0, .pieces = NULL, .n_pieces = 0 },
	};
	const size_t chunks[] = { 1, 7, 511, 512, 513, 4096, 1 << 20 };
	unsigned char *ref;
	uint64_t total;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[1000] = 'y';
	p2[0] = (struct tar_piece){ big, strlen(big) };
	data[0] = "{\"a\":1}";
	data[1] = "line one\nline two\n";
	data[2] = big;
	data[3] = "";
	total = tar_layout(m, 4);
	/* 512 + 512, 512 + 512, 512 + 3072, 512, and the end's 1024 */
	assert_int_equal(total, 1024 + 1024 + 3584 + 512 + 1024);
	assert_int_equal(m[1].size, 18);
	assert_int_equal(m[2].offset, 2048);
	ref = read_all(m, 4, total, 1 << 20);
	parse_back(ref, total, names, data, 4);
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		unsigned char *b = read_all(m, 4, total, chunks[i]);

		assert_memory_equal(b, ref, total);
		free(b);
	}
	/* reads from odd offsets agree with the whole */
	for (uint64_t off = 0; off < total; off += 97) {
		unsigned char b[300];
		size_t got = tar_read(m, 4, total, off, b, sizeof(b));

		assert_memory_equal(b, ref + off, got);
	}
	free(ref);
}

static void test_empty_archive_and_bad_names(void **state)
{
	struct tar_member m[1] = { { .name = "" } };
	unsigned char buf[2048];

	(void)state;
	assert_int_equal(tar_layout(NULL, 0), 1024);
	assert_int_equal(tar_read(NULL, 0, 1024, 0, buf, sizeof(buf)), 1024);
	assert_true(all_zero(buf, 1024));
	assert_int_equal(tar_layout(m, 1), 0);
	memset(m[0].name, 'a', TAR_NAME_MAX);
	m[0].name[TAR_NAME_MAX] = '\0';
	assert_int_not_equal(tar_layout(m, 1), 0);
}

/* GNU tar lists what the writer made. */
static void test_tar_lists_it(void **state)
{
	struct tar_piece p[] = { { "hello\n", 6 } };
	struct tar_member m[2] = {
		{ .name = "a.txt", .mtime = 1700000000, .pieces = p, .n_pieces = 1 },
		{ .name = "images/000002.jpeg", .mtime = 1700000000, .pieces = p, .n_pieces = 1 },
	};
	char path[] = "/tmp/test_tar_XXXXXX", cmd[128], out[256] = "";
	uint64_t total = tar_layout(m, 2);
	unsigned char *buf = read_all(m, 2, total, 1000);
	FILE *f;
	int fd = mkstemp(path);
	size_t n;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, total), (ssize_t)total);
	close(fd);
	free(buf);
	snprintf(cmd, sizeof(cmd), "tar -tvf %s 2>&1", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	assert_int_equal(pclose(f), 0);
	unlink(path);
	assert_non_null(strstr(out, "a.txt"));
	assert_non_null(strstr(out, "images/000002.jpeg"));
	assert_non_null(strstr(out, "vitrine/vitrine"));
	assert_non_null(strstr(out, "-rw-r--r--"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_members_read_back),
		cmocka_unit_test(test_empty_archive_and_bad_names),
		cmocka_unit_test(test_tar_lists_it),
	};

	return cmocka_run_group_tests_name("tar", tests, NULL, NULL);
}
