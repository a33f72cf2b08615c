/* common/tar.c: see tar.h. */
#include "common/tar.h"

#include <stdio.h>
#include <string.h>

#define TAR_MAX_SIZE 077777777777ull /* 11 octal digits: 8 GiB - 1 */

static uint64_t padded(uint64_t n)
{
	return (n + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

uint64_t tar_layout(struct tar_member *m, size_t n)
{
	uint64_t off = 0;

	for (size_t i = 0; i < n; i++) {
		size_t len = strnlen(m[i].name, sizeof(m[i].name));

		if (len == 0 || len > TAR_NAME_MAX)
			return 0;
		m[i].size = 0;
		for (size_t p = 0; p < m[i].n_pieces; p++)
			m[i].size += m[i].pieces[p].len;
		if (m[i].size > TAR_MAX_SIZE)
			return 0;
		m[i].offset = off;
		off += TAR_BLOCK + padded(m[i].size);
	}
	return off + 2 * TAR_BLOCK;
}

/* An octal field of width bytes: width - 1 digits and a NUL. */
static void octal(unsigned char *field, size_t width, uint64_t v)
{
	char tmp[24];

	snprintf(tmp, sizeof(tmp), "%0*llo", (int)(width - 1), (unsigned long long)v);
	memcpy(field, tmp, width - 1);
	field[width - 1] = '\0';
}

void tar_header(const struct tar_member *m, unsigned char out[TAR_BLOCK])
{
	unsigned sum = 0;

	memset(out, 0, TAR_BLOCK);
	memcpy(out, m->name, strnlen(m->name, TAR_NAME_MAX));
	octal(out + 100, 8, 0644); /* mode */
	octal(out + 108, 8, 0); /* uid */
	octal(out + 116, 8, 0); /* gid */
	octal(out + 124, 12, m->size);
	octal(out + 136, 12, m->mtime > 0 ? (uint64_t)m->mtime : 0);
	out[156] = '0'; /* a regular file */
	memcpy(out + 257, "ustar", 6); /* magic, with its NUL */
	memcpy(out + 263, "00", 2); /* version */
	memcpy(out + 265, "vitrine", 7); /* uname */
	memcpy(out + 297, "vitrine", 7); /* gname */
	/* The checksum is taken with its own field as spaces. */
	memset(out + 148, ' ', 8);
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += out[i];
	snprintf((char *)out + 148, 8, "%06o", sum);
	out[155] = ' ';
}

/* Copies bytes [from, from + cap) of member m's data into buf (the range
 * lies inside it). */
static void copy_data(const struct tar_member *m, uint64_t from, unsigned char *buf, size_t cap)
{
	uint64_t at = 0;

	for (size_t p = 0; p < m->n_pieces && cap; p++) {
		const struct tar_piece *pc = &m->pieces[p];
		uint64_t skip;
		size_t k;

		if (from >= at + pc->len) {
			at += pc->len;
			continue;
		}
		skip = from - at;
		k = pc->len - (size_t)skip < cap ? pc->len - (size_t)skip : cap;
		memcpy(buf, (const unsigned char *)pc->data + skip, k);
		buf += k;
		cap -= k;
		from += k;
		at += pc->len;
	}
}

size_t tar_read(const struct tar_member *m, size_t n, uint64_t total, uint64_t off,
		unsigned char *buf, size_t cap)
{
	size_t done = 0;
	size_t i = 0;

	if (off >= total)
		return 0;
	if (cap > total - off)
		cap = (size_t)(total - off);
	/* The first member that ends past off (members are in order). */
	while (i < n && off >= m[i].offset + TAR_BLOCK + padded(m[i].size))
		i++;
	while (done < cap) {
		uint64_t in, end;
		size_t k;

		if (i == n) { /* the two zero blocks */
			memset(buf + done, 0, cap - done);
			return cap;
		}
		in = off - m[i].offset;
		end = TAR_BLOCK + padded(m[i].size);
		k = end - in < cap - done ? (size_t)(end - in) : cap - done;
		if (in < TAR_BLOCK) {
			unsigned char h[TAR_BLOCK];

			if (k > TAR_BLOCK - in)
				k = (size_t)(TAR_BLOCK - in);
			tar_header(&m[i], h);
			memcpy(buf + done, h + in, k);
		} else if (in - TAR_BLOCK < m[i].size) {
			uint64_t left = m[i].size - (in - TAR_BLOCK);

			if (k > left)
				k = (size_t)left;
			copy_data(&m[i], in - TAR_BLOCK, buf + done, k);
		} else {
			memset(buf + done, 0, k); /* padding */
		}
		done += k;
		off += k;
		if (off == m[i].offset + end)
			i++;
	}
	return done;
}
