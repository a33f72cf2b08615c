/* common/strv.h: a growable, NULL-terminated vector of owned strings, the
 * shape execv() wants. Used to build QEMU command lines. */
#ifndef VITRINE_COMMON_STRV_H
#define VITRINE_COMMON_STRV_H

#include <stddef.h>

struct strv {
	char **v; /* owned, NULL-terminated once anything was pushed */
	size_t len;
	size_t cap;
	int oom; /* set when an allocation failed; later pushes are no-ops */
};

/* Appends a copy of s. Failure is sticky in v->oom; check it once at the end. */
void strv_push(struct strv *v, const char *s);
void strv_pushf(struct strv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees every string and the vector; leaves v empty and reusable. Accepts an empty v. */
void strv_free(struct strv *v);
/* Joins the strings with spaces into buf (truncating). For logs only. */
void strv_join(const struct strv *v, char *buf, size_t len);

#endif
