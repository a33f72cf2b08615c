/* common/strv.c: see strv.h. */
#include "common/strv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void push_owned(struct strv *v, char *s)
{
	if (!s) {
		v->oom = 1;
		return;
	}
	if (v->oom) {
		free(s);
		return;
	}
	if (v->len + 2 > v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		char **nv = realloc(v->v, cap * sizeof(*nv));

		if (!nv) {
			free(s);
			v->oom = 1;
			return;
		}
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->len++] = s;
	v->v[v->len] = NULL;
}

void strv_push(struct strv *v, const char *s)
{
	push_owned(v, strdup(s));
}

void strv_pushf(struct strv *v, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	push_owned(v, s);
}

void strv_free(struct strv *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->v[i]);
	free(v->v);
	memset(v, 0, sizeof(*v));
}

void strv_join(const struct strv *v, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < v->len && used + 1 < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? " " : "", v->v[i]);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}
