/* vmm-qemu/qcow2_hdr.c: see qcow2_hdr.h. The layout is QEMU's
 * docs/interop/qcow2.txt; the limits are those QEMU 7.2's qcow2_do_open
 * and qcow2_read_extensions apply, so that a header parsed here is the
 * header QEMU would read. */
#include "vmm-qemu/qcow2_hdr.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define EXT_END 0x00000000u
#define EXT_BACKING_FMT 0xe2792acau
#define EXT_CRYPTO 0x0537be77u
#define EXT_DATA_FILE 0x44415441u

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* The extensions from off up to end (the backing name's offset, or the
 * cluster's end), as QEMU walks them. */
static int read_extensions(const unsigned char *b, size_t n, uint64_t off, uint64_t end,
			   struct qcow2_hdr *h, char *err, size_t errlen)
{
	while (off < end) {
		uint32_t magic, len;

		if (off + 8 > n) {
			snprintf(err, errlen, "header extensions reach past the bytes read");
			return -ENODATA;
		}
		magic = be32(b + off);
		len = be32(b + off + 4);
		off += 8;
		if (off > end || len > end - off) {
			snprintf(err, errlen, "a header extension (0x%08x) is too large", magic);
			return -EPROTO;
		}
		if (magic == EXT_END)
			return 0;
		if (off + len > n) {
			snprintf(err, errlen, "header extensions reach past the bytes read");
			return -ENODATA;
		}
		if (magic == EXT_BACKING_FMT) {
			if (len > QCOW2_FMT_MAX || memchr(b + off, '\0', len)) {
				snprintf(err, errlen, "a bad backing format extension");
				return -EPROTO;
			}
			memcpy(h->backing_fmt, b + off, len);
			h->backing_fmt[len] = '\0';
		} else if (magic == EXT_DATA_FILE) {
			h->data_file = true;
		} else if (magic == EXT_CRYPTO) {
			h->crypto_ext = true;
		}
		off += ((uint64_t)len + 7) & ~(uint64_t)7;
	}
	return 0;
}

int qcow2_hdr_parse(const void *buf, size_t n, struct qcow2_hdr *h, char *err, size_t errlen)
{
	const unsigned char *b = buf;
	uint64_t cluster, backing_off, header_len = 72;
	uint32_t backing_len;
	int rc;

	memset(h, 0, sizeof(*h));
	if (n < 72) {
		snprintf(err, errlen, "%s",
			 n >= 4 && !memcmp(b, "QFI\xfb", 4) ? "a short header"
							    : "not a qcow2 image");
		return n >= 4 && !memcmp(b, "QFI\xfb", 4) ? -ENODATA : -EPROTO;
	}
	if (memcmp(b, "QFI\xfb", 4)) {
		snprintf(err, errlen, "not a qcow2 image");
		return -EPROTO;
	}
	h->version = be32(b + 4);
	backing_off = be64(b + 8);
	backing_len = be32(b + 16);
	h->cluster_bits = be32(b + 20);
	h->size = be64(b + 24);
	h->crypt_method = be32(b + 32);
	if (h->version < 2 || h->version > 3) {
		snprintf(err, errlen, "qcow2 version %u", h->version);
		return -EPROTO;
	}
	if (h->cluster_bits < 9 || h->cluster_bits > 21) {
		snprintf(err, errlen, "cluster bits %u", h->cluster_bits);
		return -EPROTO;
	}
	cluster = (uint64_t)1 << h->cluster_bits;
	if (h->version == 3) {
		if (n < 104) {
			snprintf(err, errlen, "a short header");
			return -ENODATA;
		}
		h->incompat = be64(b + 72);
		h->compat = be64(b + 80);
		h->autoclear = be64(b + 88);
		header_len = be32(b + 100);
		if (header_len < 104 || header_len > cluster) {
			snprintf(err, errlen, "header length %llu", (unsigned long long)header_len);
			return -EPROTO;
		}
	}
	if (h->incompat & QCOW2_INCOMPAT_DATA_FILE)
		h->data_file = true;
	if (backing_off) {
		if (backing_off > cluster || backing_len > QCOW2_BACKING_MAX ||
		    backing_len > cluster - backing_off) {
			snprintf(err, errlen, "a backing file name out of bounds");
			return -EPROTO;
		}
	}
	rc = read_extensions(b, n, header_len, backing_off ? backing_off : cluster, h, err, errlen);
	if (rc < 0 || !backing_off)
		return rc;
	if (backing_off + backing_len > n) {
		snprintf(err, errlen, "the backing file name reaches past the bytes read");
		return -ENODATA;
	}
	if (memchr(b + backing_off, '\0', backing_len)) {
		snprintf(err, errlen, "a backing file name with a NUL in it");
		return -EPROTO;
	}
	memcpy(h->backing, b + backing_off, backing_len);
	h->backing[backing_len] = '\0';
	return 0;
}

int qcow2_hdr_check(const struct qcow2_hdr *h, const char *backing, const char *backing_fmt,
		    char *err, size_t errlen)
{
	const uint64_t known = QCOW2_INCOMPAT_DIRTY | QCOW2_INCOMPAT_COMPRESSION |
			       QCOW2_INCOMPAT_EXTL2;

	if (h->data_file) {
		snprintf(err, errlen, "it names an external data file");
		return -EPERM;
	}
	if (h->crypt_method || h->crypto_ext) {
		snprintf(err, errlen, "it is encrypted");
		return -EPERM;
	}
	if (h->incompat & ~known) {
		snprintf(err, errlen, "incompatible features 0x%llx",
			 (unsigned long long)(h->incompat & ~known));
		return -EPERM;
	}
	if (!backing)
		return 0;
	if (strcmp(h->backing, backing)) {
		snprintf(err, errlen, "its backing file is '%.200s', not '%.200s'", h->backing,
			 backing[0] ? backing : "(none)");
		return -EPERM;
	}
	if (backing[0] && strcmp(h->backing_fmt, backing_fmt ? backing_fmt : "")) {
		snprintf(err, errlen, "its backing format is '%s', not '%s'", h->backing_fmt,
			 backing_fmt ? backing_fmt : "");
		return -EPERM;
	}
	return 0;
}
