/* tests/unit/test_qcow2_hdr.c: the qcow2 header reader and its policy
 * (vmm-qemu/qcow2_hdr.c) on headers laid out here as qemu-img 7.2 writes
 * them (version 3, a backing format extension, a feature table, the end
 * marker, the backing name), then bent: a forged backing name or format,
 * an external data file (its bit or its extension alone), encryption,
 * unknown incompatible bits, version 2, every cut, names and extensions
 * out of bounds, a NUL in the name. */
#include "vmm-qemu/qcow2_hdr.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define ROOTFS "/var/lib/vitrine/images/tiny/rootfs.img"

struct img {
	unsigned char b[4096];
	size_t n; /* bytes that matter: up to the end of the name */
};

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}

/* An extension at *off: magic, length, data, padding to 8. */
static void ext(struct img *m, size_t *off, uint32_t magic, const void *data, uint32_t len)
{
	put32(m->b + *off, magic);
	put32(m->b + *off + 4, len);
	memcpy(m->b + *off + 8, data, len);
	*off += 8 + ((len + 7) & ~7u);
}

/* qemu-img create -f qcow2 -F fmt -b backing (backing NULL: none). */
static void make(struct img *m, const char *backing, const char *fmt)
{
	static const unsigned char table[48] = "\0\0dirty bit"; /* a feature table's first entry */
	size_t off = 112;

	memset(m, 0, sizeof(*m));
	memcpy(m->b, "QFI\xfb", 4);
	put32(m->b + 4, 3);
	put32(m->b + 20, 16); /* 64 KiB clusters */
	put64(m->b + 24, 1ull << 30);
	put32(m->b + 96, 4); /* refcount order */
	put32(m->b + 100, 112);
	if (fmt)
		ext(m, &off, 0xe2792acau, fmt, (uint32_t)strlen(fmt));
	ext(m, &off, 0x6803f857u, table, sizeof(table));
	ext(m, &off, 0, "", 0);
	if (backing) {
		put64(m->b + 8, off);
		put32(m->b + 16, (uint32_t)strlen(backing));
		memcpy(m->b + off, backing, strlen(backing));
		off += strlen(backing);
	}
	m->n = off;
}

static int parse_check(const struct img *m, const char *backing, const char *fmt)
{
	struct qcow2_hdr h;
	char err[600];
	int rc = qcow2_hdr_parse(m->b, m->n, &h, err, sizeof(err));

	return rc < 0 ? rc : qcow2_hdr_check(&h, backing, fmt, err, sizeof(err));
}

static void test_as_made(void **state)
{
	struct qcow2_hdr h;
	struct img m;
	char err[256];

	(void)state;
	make(&m, ROOTFS, "raw");
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), 0);
	assert_int_equal(h.version, 3);
	assert_int_equal(h.cluster_bits, 16);
	assert_string_equal(h.backing, ROOTFS);
	assert_string_equal(h.backing_fmt, "raw");
	assert_false(h.data_file);
	assert_int_equal(qcow2_hdr_check(&h, ROOTFS, "raw", err, sizeof(err)), 0);
	assert_int_equal(qcow2_hdr_check(&h, NULL, NULL, err, sizeof(err)), 0);
	/* No backing file at all. */
	make(&m, NULL, NULL);
	assert_int_equal(parse_check(&m, "", NULL), 0);
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), -EPERM);
}

static void test_forged(void **state)
{
	struct qcow2_hdr h;
	struct img m;
	char err[600];

	(void)state;
	/* The hole: another file named as the backing file. */
	make(&m, "/etc/shadow", "raw");
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), 0);
	assert_int_equal(qcow2_hdr_check(&h, ROOTFS, "raw", err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "/etc/shadow"));
	/* A name that only starts like the right one, or a relative one. */
	make(&m, ROOTFS "x", "raw");
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), -EPERM);
	make(&m, "rootfs.img", "raw");
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), -EPERM);
	/* The right name, the wrong format, or none (QEMU would probe). */
	make(&m, ROOTFS, "qcow2");
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), -EPERM);
	make(&m, ROOTFS, NULL);
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), -EPERM);
	/* A backing file where none may be. */
	make(&m, ROOTFS, "raw");
	assert_int_equal(parse_check(&m, "", NULL), -EPERM);
}

static void test_data_file_and_features(void **state)
{
	struct img m;
	size_t off;

	(void)state;
	/* The bit. */
	make(&m, ROOTFS, "raw");
	put64(m.b + 72, QCOW2_INCOMPAT_DATA_FILE);
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), -EPERM);
	assert_int_equal(parse_check(&m, NULL, NULL), -EPERM);
	/* The extension without the bit. */
	make(&m, NULL, NULL);
	off = 112;
	ext(&m, &off, 0x44415441u, "/etc/shadow", 11);
	ext(&m, &off, 0, "", 0);
	m.n = off;
	assert_int_equal(parse_check(&m, NULL, NULL), -EPERM);
	/* Encryption: the method or its extension. */
	make(&m, ROOTFS, "raw");
	put32(m.b + 32, 2);
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), -EPERM);
	make(&m, NULL, NULL);
	off = 112;
	ext(&m, &off, 0x0537be77u, "0123456789abcdef", 16);
	ext(&m, &off, 0, "", 0);
	m.n = off;
	assert_int_equal(parse_check(&m, NULL, NULL), -EPERM);
	/* Incompatible bits: dirty, compression, extended L2 pass; corrupt
	 * and unknown ones do not. */
	make(&m, ROOTFS, "raw");
	put64(m.b + 72, QCOW2_INCOMPAT_DIRTY | QCOW2_INCOMPAT_COMPRESSION | QCOW2_INCOMPAT_EXTL2);
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), 0);
	put64(m.b + 72, QCOW2_INCOMPAT_CORRUPT);
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), -EPERM);
	put64(m.b + 72, 1ull << 40);
	assert_int_equal(parse_check(&m, ROOTFS, "raw"), -EPERM);
}

static void test_version2(void **state)
{
	struct qcow2_hdr h;
	struct img m;
	char err[256];

	(void)state;
	memset(&m, 0, sizeof(m));
	memcpy(m.b, "QFI\xfb", 4);
	put32(m.b + 4, 2);
	put32(m.b + 20, 16);
	put64(m.b + 8, 72); /* no extensions: the name right after the header */
	put32(m.b + 16, (uint32_t)strlen(ROOTFS));
	memcpy(m.b + 72, ROOTFS, strlen(ROOTFS));
	m.n = 72 + strlen(ROOTFS);
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), 0);
	assert_int_equal(h.incompat, 0);
	assert_string_equal(h.backing, ROOTFS);
	assert_string_equal(h.backing_fmt, ""); /* version 2 has no format: refused */
	assert_int_equal(qcow2_hdr_check(&h, ROOTFS, "raw", err, sizeof(err)), -EPERM);
}

static void test_malformed(void **state)
{
	struct qcow2_hdr h;
	struct img m;
	char err[256];

	(void)state;
	make(&m, ROOTFS, "raw");
	/* Every cut: never accepted with a name it did not read whole. */
	for (size_t n = 0; n < m.n; n++) {
		int rc = qcow2_hdr_parse(m.b, n, &h, err, sizeof(err));

		assert_true(rc == -ENODATA || rc == -EPROTO);
	}
	m.b[0] = 'X';
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), -EPROTO);
	make(&m, ROOTFS, "raw");
	put32(m.b + 4, 4);
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), -EPROTO);
	make(&m, ROOTFS, "raw");
	put32(m.b + 20, 22);
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), -EPROTO);
	make(&m, ROOTFS, "raw");
	put32(m.b + 100, 96); /* header length too short */
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), -EPROTO);
	/* A name past QEMU's limit, past the cluster, with a NUL inside. */
	make(&m, ROOTFS, "raw");
	put32(m.b + 16, 1024);
	assert_int_equal(qcow2_hdr_parse(m.b, sizeof(m.b), &h, err, sizeof(err)), -EPROTO);
	make(&m, ROOTFS, "raw");
	put64(m.b + 8, (1u << 16) + 8);
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), -EPROTO);
	make(&m, ROOTFS, "raw");
	m.b[m.n - 3] = '\0';
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), -EPROTO);
	/* An extension that runs into the name. */
	make(&m, ROOTFS, "raw");
	put32(m.b + 112 + 4, 4000);
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), -EPROTO);
	/* A format name too long for QEMU. */
	make(&m, ROOTFS, "raw-but-longer-than-16");
	assert_int_equal(qcow2_hdr_parse(m.b, m.n, &h, err, sizeof(err)), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_made),
		cmocka_unit_test(test_forged),
		cmocka_unit_test(test_data_file_and_features),
		cmocka_unit_test(test_version2),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests_name("qcow2 headers", tests, NULL, NULL);
}
