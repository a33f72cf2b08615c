/* vmm-qemu/tpl_archive.c: see tpl_archive.h. The reader checks every
 * header field it relies on (name, type, size, checksum, magic) and the
 * order of members before a byte of data is handed on, so a consumer only
 * ever sees a known member's bytes within its announced size. */
#include "vmm-qemu/tpl_archive.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const tpl_file_names[TPL_FILE_COUNT] = {
	[TPL_FILE_META] = "template.json", [TPL_FILE_RAM] = "ram",
	[TPL_FILE_STATE] = "state",	   [TPL_FILE_DISK] = "disk.qcow2",
	[TPL_FILE_PAGE] = "page.html",	   [TPL_FILE_SCREEN] = "screen.ppm",
	[TPL_FILE_SUMS] = "SHA256SUMS",
};

/* ustar's largest size: 11 octal digits. */
#define TPL_ARCHIVE_SIZE_MAX 077777777777ull

size_t tpl_archive_sums(const bool present[TPL_FILE_COUNT],
			const uint8_t digest[TPL_FILE_COUNT][SHA256_LEN], char *out, size_t cap)
{
	size_t len = 0;

	if (cap)
		out[0] = '\0';
	for (int f = TPL_FILE_META; f < TPL_FILE_SUMS; f++) {
		char hex[SHA256_HEX_LEN + 1];
		int n;

		if (!present[f])
			continue;
		sha256_hex_of(digest[f], hex);
		n = snprintf(out + len, cap - len, "%s  %s\n", hex, tpl_file_names[f]);
		if (n < 0 || (size_t)n >= cap - len)
			return 0;
		len += (size_t)n;
	}
	return len;
}

static int broken(struct tpl_unpack *u, const char *fmt, ...)
{
	va_list ap;

	if (u->state == TPL_UNPACK_BROKEN)
		return -1;
	va_start(ap, fmt);
	vsnprintf(u->err, sizeof(u->err), fmt, ap);
	va_end(ap);
	u->state = TPL_UNPACK_BROKEN;
	return -1;
}

void tpl_unpack_init(struct tpl_unpack *u, const struct tpl_unpack_ops *ops, void *ud)
{
	memset(u, 0, sizeof(*u));
	u->ops = ops;
	u->ud = ud;
	u->state = TPL_UNPACK_HEADER;
}

/* An octal field: digits, then NULs or spaces to its end. -1 for anything
 * else (or no digit). */
static int octal_field(const unsigned char *p, size_t width, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < width && p[i] == ' ')
		i++;
	if (i == width || p[i] < '0' || p[i] > '7')
		return -1;
	for (; i < width && p[i] >= '0' && p[i] <= '7'; i++) {
		if (v > (UINT64_MAX >> 3))
			return -1;
		v = v << 3 | (uint64_t)(p[i] - '0');
	}
	for (; i < width; i++)
		if (p[i] != '\0' && p[i] != ' ')
			return -1;
	*out = v;
	return 0;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The largest a member may be. */
static uint64_t size_max(enum tpl_file f)
{
	return f == TPL_FILE_META   ? TPL_ARCHIVE_META_MAX
	       : f == TPL_FILE_SUMS ? TPL_ARCHIVE_SUMS_MAX
				    : TPL_ARCHIVE_SIZE_MAX;
}

/* A whole header in u->block: checks it and starts its member. */
static int take_header(struct tpl_unpack *u)
{
	const unsigned char *h = u->block;
	uint64_t sum_field, size;
	unsigned sum = 0;
	char name[101];
	int f;

	if (all_zero(h, TAR_BLOCK))
		return broken(u, "truncated: the archive ends before %s",
			      u->n_members == 0 ? tpl_file_names[TPL_FILE_META]
						: tpl_file_names[TPL_FILE_SUMS]);
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	if (octal_field(h + 148, 8, &sum_field) < 0 || sum_field != sum)
		return broken(u, "member %d: bad header checksum", u->n_members + 1);
	if (memcmp(h + 257, "ustar", 5))
		return broken(u, "member %d: not a ustar header", u->n_members + 1);
	if (h[156] != '0' && h[156] != '\0')
		return broken(u, "member %d: not a regular file", u->n_members + 1);
	if (!memchr(h, '\0', 100) || h[345] != '\0')
		return broken(u, "member %d: name too long", u->n_members + 1);
	memcpy(name, h, 100);
	name[100] = '\0';
	for (f = 0; f < TPL_FILE_COUNT && strcmp(name, tpl_file_names[f]); f++)
		;
	if (f == TPL_FILE_COUNT)
		return broken(u, "unknown member '%.64s'", name);
	if (u->seen[f])
		return broken(u, "member %s twice", name);
	if ((u->n_members == 0) != (f == TPL_FILE_META))
		return broken(u, "%s must come first", tpl_file_names[TPL_FILE_META]);
	if (f == TPL_FILE_SUMS && (!u->seen[TPL_FILE_RAM] || !u->seen[TPL_FILE_STATE]))
		return broken(u, "no %s member", u->seen[TPL_FILE_RAM] ? "state" : "ram");
	if (octal_field(h + 124, 12, &size) < 0)
		return broken(u, "%s: bad size", name);
	if (size > size_max((enum tpl_file)f))
		return broken(u, "%s: %llu bytes, over its limit", name, (unsigned long long)size);
	u->cur = (enum tpl_file)f;
	u->seen[f] = true;
	u->n_members++;
	u->left = size;
	sha256_init(&u->sha);
	if (u->ops && u->ops->begin &&
	    u->ops->begin(u->ud, u->cur, size, u->err, sizeof(u->err)) < 0)
		return broken(u, "%s", u->err);
	u->state = TPL_UNPACK_DATA;
	return 0;
}

/* The current member's data is all in: its digest, and for SHA256SUMS the
 * check of every digest. */
static int end_member(struct tpl_unpack *u, uint64_t size)
{
	sha256_final(&u->sha, u->digest[u->cur]);
	if (u->ops && u->ops->end && u->ops->end(u->ud, u->cur, u->err, sizeof(u->err)) < 0)
		return broken(u, "%s", u->err);
	if (u->cur == TPL_FILE_SUMS) {
		char want[TPL_ARCHIVE_SUMS_MAX + 1];
		size_t n = tpl_archive_sums(u->seen, u->digest, want, sizeof(want));

		if (n == 0 || n != u->n_sums || memcmp(want, u->sums, n))
			return broken(u, "checksum mismatch: the file is corrupt");
	}
	u->left = (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK;
	u->state = TPL_UNPACK_PAD;
	return 0;
}

int tpl_unpack_feed(struct tpl_unpack *u, const void *data, size_t n)
{
	const unsigned char *p = data;

	while (n > 0 && u->state != TPL_UNPACK_BROKEN) {
		size_t k = 0;

		switch (u->state) {
		case TPL_UNPACK_HEADER:
		case TPL_UNPACK_TRAILER:
			k = TAR_BLOCK - u->n_block < n ? TAR_BLOCK - u->n_block : n;
			memcpy(u->block + u->n_block, p, k);
			u->n_block += k;
			if (u->n_block < TAR_BLOCK)
				break;
			u->n_block = 0;
			if (u->state == TPL_UNPACK_HEADER) {
				if (take_header(u) < 0)
					return -1;
				if (u->left == 0 && end_member(u, 0) < 0)
					return -1;
			} else if (!all_zero(u->block, TAR_BLOCK)) {
				return broken(u, "data after %s", tpl_file_names[TPL_FILE_SUMS]);
			} else if (++u->n_zero_blocks == 2) {
				u->state = TPL_UNPACK_DONE;
			}
			break;
		case TPL_UNPACK_DATA:
			k = u->left < n ? (size_t)u->left : n;
			sha256_update(&u->sha, p, k);
			if (u->cur == TPL_FILE_SUMS) {
				memcpy(u->sums + u->n_sums, p, k); /* within its limit */
				u->n_sums += k;
			}
			if (u->ops && u->ops->data &&
			    u->ops->data(u->ud, u->cur, p, k, u->err, sizeof(u->err)) < 0)
				return broken(u, "%s", u->err);
			u->left -= k;
			/* all of it hashed: sha.len is the member's size */
			if (u->left == 0 && end_member(u, u->sha.len) < 0)
				return -1;
			break;
		case TPL_UNPACK_PAD:
			k = u->left < n ? (size_t)u->left : n;
			if (!all_zero(p, k))
				return broken(u, "%s: padding not zero", tpl_file_names[u->cur]);
			u->left -= k;
			break;
		case TPL_UNPACK_DONE:
			k = n;
			if (!all_zero(p, k))
				return broken(u, "data after the end of the archive");
			break;
		case TPL_UNPACK_BROKEN:
			return -1;
		}
		p += k;
		n -= k;
		u->total += k;
		if (u->state == TPL_UNPACK_PAD && u->left == 0)
			u->state = u->cur == TPL_FILE_SUMS ? TPL_UNPACK_TRAILER : TPL_UNPACK_HEADER;
	}
	return u->state == TPL_UNPACK_BROKEN ? -1 : 0;
}

int tpl_unpack_finish(struct tpl_unpack *u)
{
	if (u->state == TPL_UNPACK_BROKEN)
		return -1;
	if (u->state != TPL_UNPACK_DONE)
		return broken(u, "truncated: the file ends after %llu bytes, inside %s",
			      (unsigned long long)u->total,
			      u->n_members ? tpl_file_names[u->cur] : "the first header");
	return 0;
}
