/* gateway/e2b/multipart.c: see multipart.h. The body is read as if it
 * began with "\r\n", so the first delimiter is found as every other one
 * ("\r\n--BOUNDARY"). Content that may be the start of a delimiter is held
 * back (at most the delimiter's length) until the next bytes say. */
#include "gateway/e2b/multipart.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum { S_SEARCH, S_AFTER, S_HEAD, S_DONE, S_FAILED };

int multipart_init(struct multipart *m, const char *content_type)
{
	const char *b = content_type ? strcasestr(content_type, "boundary=") : NULL;
	size_t bl;

	memset(m, 0, sizeof(*m));
	m->state = S_FAILED;
	if (!b || strncasecmp(content_type, "multipart/form-data", 19))
		return -EINVAL;
	b += 9;
	if (*b == '"') {
		b++;
		bl = strcspn(b, "\"");
		if (b[bl] != '"')
			return -EINVAL;
	} else {
		bl = strcspn(b, "; \t");
	}
	if (bl == 0 || bl > MULTIPART_BOUNDARY_MAX)
		return -EINVAL;
	m->dl = (size_t)snprintf(m->delim, sizeof(m->delim), "\r\n--%.*s", (int)bl, b);
	memcpy(m->tail, "\r\n", 2);
	m->tl = 2;
	m->state = S_SEARCH;
	return 0;
}

bool multipart_done(const struct multipart *m)
{
	return m->state == S_DONE;
}

int multipart_param(const char *hv, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	const char *p = hv;

	while ((p = strchr(p, ';'))) {
		size_t n = 0;

		p++;
		p += strspn(p, " \t");
		if (strncasecmp(p, key, kl) || p[kl] != '=')
			continue;
		p += kl + 1;
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				if (n + 1 >= cap)
					return -E2BIG;
				out[n++] = *p;
			}
			if (*p != '"')
				return -E2BIG; /* unterminated */
		} else {
			size_t tl = strcspn(p, "; \t");

			if (tl + 1 > cap)
				return -E2BIG;
			memcpy(out, p, tl);
			n = tl;
		}
		out[n] = '\0';
		return 0;
	}
	return -ENOENT;
}

/* The part's headers came whole (head holds them, "\r\n\r\n" last). */
static int headers(struct multipart *m, const struct multipart_ops *ops, void *u)
{
	char *line = m->head, *end = m->head + m->hl - 4;

	*end = '\0';
	m->name[0] = m->filename[0] = '\0';
	while (line < end) {
		char *nl = strstr(line, "\r\n");

		if (nl)
			*nl = '\0';
		if (!strncasecmp(line, "content-disposition:", 20)) {
			if (multipart_param(line + 20, "name", m->name, sizeof(m->name)) ==
				    -E2BIG ||
			    multipart_param(line + 20, "filename", m->filename,
					    sizeof(m->filename)) == -E2BIG)
				return -EPROTO;
		}
		line = nl ? nl + 2 : end;
	}
	m->in_part = true;
	return ops->part(u, m->name, m->filename);
}

/* Content (or preamble, dropped) passed on. */
static int emit(struct multipart *m, const void *p, size_t n, const struct multipart_ops *ops,
		void *u)
{
	return m->in_part && n ? ops->data(u, p, n) : 0;
}

/* S_SEARCH over p[n]: content up to the next delimiter. Returns the bytes
 * of p used (the delimiter's included, then state is S_AFTER), or a
 * negative error. */
static long search(struct multipart *m, const unsigned char *p, size_t n,
		   const struct multipart_ops *ops, void *u)
{
	unsigned char comb[2 * sizeof(m->tail)];
	size_t cl, take = n < m->dl ? n : m->dl;
	const unsigned char *hit;
	int rc;

	/* a delimiter that starts in the held bytes */
	memcpy(comb, m->tail, m->tl);
	memcpy(comb + m->tl, p, take);
	cl = m->tl + take;
	for (size_t i = 0; i < m->tl; i++) {
		size_t have = cl - i < m->dl ? cl - i : m->dl;

		if (memcmp(comb + i, m->delim, have))
			continue;
		if ((rc = emit(m, m->tail, i, ops, u)) < 0)
			return rc;
		if (have < m->dl) { /* all of p may be its start: hold it */
			memmove(m->tail, comb + i, cl - i);
			m->tl = cl - i;
			return (long)n;
		}
		m->tl = 0;
		m->state = S_AFTER;
		m->al = 0;
		return (long)(i + m->dl - (cl - take));
	}
	if ((rc = emit(m, m->tail, m->tl, ops, u)) < 0)
		return rc;
	m->tl = 0;
	hit = memmem(p, n, m->delim, m->dl);
	if (hit) {
		if ((rc = emit(m, p, (size_t)(hit - p), ops, u)) < 0)
			return rc;
		m->state = S_AFTER;
		m->al = 0;
		return (long)((size_t)(hit - p) + m->dl);
	}
	/* the longest end of p that starts a delimiter is held (so the same
	 * bytes are held however the body is cut) */
	for (take = n < m->dl - 1 ? n : m->dl - 1; take; take--)
		if (!memcmp(p + n - take, m->delim, take))
			break;
	if ((rc = emit(m, p, n - take, ops, u)) < 0)
		return rc;
	memcpy(m->tail, p + n - take, take);
	m->tl = take;
	return (long)n;
}

static int feed(struct multipart *m, const unsigned char *p, size_t n,
		const struct multipart_ops *ops, void *u)
{
	int rc;

	while (n) {
		switch (m->state) {
		case S_SEARCH: {
			long used = search(m, p, n, ops, u);

			if (used < 0)
				return (int)used;
			p += used;
			n -= (size_t)used;
			break;
		}
		case S_AFTER:
			m->after[m->al++] = (char)*p++;
			n--;
			if (m->al < 2)
				break;
			if (m->in_part && (rc = ops->part_end(u)) < 0)
				return rc;
			m->in_part = false;
			if (!memcmp(m->after, "--", 2)) {
				m->state = S_DONE;
			} else if (!memcmp(m->after, "\r\n", 2)) {
				m->state = S_HEAD;
				m->hl = 0;
			} else {
				return -EPROTO;
			}
			break;
		case S_HEAD:
			if (m->hl == sizeof(m->head))
				return -EPROTO;
			m->head[m->hl++] = (char)*p++;
			n--;
			if (m->hl >= 4 && !memcmp(m->head + m->hl - 4, "\r\n\r\n", 4)) {
				m->state = S_SEARCH;
				if ((rc = headers(m, ops, u)) < 0)
					return rc;
			} else if (m->hl == 2 && !memcmp(m->head, "\r\n", 2)) {
				/* a part with no headers */
				m->state = S_SEARCH;
				m->name[0] = m->filename[0] = '\0';
				m->in_part = true;
				if ((rc = ops->part(u, "", "")) < 0)
					return rc;
			}
			break;
		case S_DONE:
			return 0; /* the epilogue */
		default:
			return -EPROTO;
		}
	}
	return 0;
}

int multipart_feed(struct multipart *m, const void *p, size_t n, const struct multipart_ops *ops,
		   void *u)
{
	int rc = feed(m, p, n, ops, u);

	if (rc < 0)
		m->state = S_FAILED;
	return rc;
}
