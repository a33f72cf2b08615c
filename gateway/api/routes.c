/* gateway/api/routes.c: see routes.h. The rows are route_table.c's. */
#include "gateway/api/routes.h"

#include "gateway/core/gw.h"

#include <string.h>

_Static_assert(ROUTE_SESSION_ID_MAX == GW_NODE_MAX + SESS_ID_RANDOM,
	       "routes.h's longest session id is the one sess_alloc makes");
_Static_assert(ROUTE_SESSION_ID_MAX < SESS_ID_MAX, "a session id fits struct sess");

const char *route_kind_names[R_KIND_COUNT] = {
#define ROUTE_KIND_NAME(kind, name) [kind] = name,
	ROUTE_KINDS(ROUTE_KIND_NAME)
#undef ROUTE_KIND_NAME
};

static size_t id_len(const char *p)
{
	size_t n = 0;

	while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
	       (p[n] >= '0' && p[n] <= '9') || p[n] == '_' || p[n] == '-')
		n++;
	return n;
}

/* What a placeholder takes, and where its value goes. */
struct placeholder {
	const char *name;
	size_t max;
	bool digits; /* [0-9] instead of id characters */
	bool sub; /* into route.sub instead of route.id */
};

static const struct placeholder placeholders[] = {
	{ "{id}", ROUTE_SESSION_ID_MAX, false, false },
	{ "{name}", ROUTE_ID_MAX, false, false },
	{ "{key}", ROUTE_ID_MAX, false, false },
	{ "{tid}", ROUTE_SUB_MAX, false, true },
	{ "{kid}", ROUTE_SUB_MAX, false, true }, /* an API key's id */
	{ "{n}", 9, true, true },
};

static const struct placeholder *placeholder_at(const char *pattern)
{
	for (size_t i = 0; i < sizeof(placeholders) / sizeof(placeholders[0]); i++)
		if (!strncmp(pattern, placeholders[i].name, strlen(placeholders[i].name)))
			return &placeholders[i];
	return NULL;
}

bool route_pattern_match(const char *pattern, const char *path, struct route *out)
{
	char id[ROUTE_ID_MAX + 1] = "", sub[ROUTE_SUB_MAX + 1] = "";

	while (*pattern) {
		const struct placeholder *ph = *pattern == '{' ? placeholder_at(pattern) : NULL;
		size_t n;

		if (!strcmp(pattern, "/?")) { /* the last slash, or none */
			path += *path == '/';
			break;
		}
		if (!strcmp(pattern, "{rest}")) { /* a '/' and the rest */
			if (*path != '/')
				return false;
			path += strlen(path);
			break;
		}
		if (!ph) {
			if (*path++ != *pattern++)
				return false;
			continue;
		}
		n = ph->digits ? strspn(path, "0123456789") : id_len(path);
		if (n == 0 || n > ph->max)
			return false;
		memcpy(ph->sub ? sub : id, path, n);
		(ph->sub ? sub : id)[n] = '\0';
		path += n;
		pattern += strlen(ph->name);
	}
	if (*path)
		return false;
	if (out) {
		memcpy(out->id, id, sizeof(id));
		memcpy(out->sub, sub, sizeof(sub));
	}
	return true;
}

struct route route_parse(enum route_method m, const char *path)
{
	struct route r = { .kind = R_NOT_FOUND }, first = { .kind = R_NOT_FOUND };

	for (int k = 0; k < R_KIND_COUNT; k++) {
		const struct route_def *d = &route_table[k];

		if (!d->pattern || !route_pattern_match(d->pattern, path, &r))
			continue;
		if (d->methods & (1u << m)) {
			r.kind = (enum route_kind)k;
			return r;
		}
		if (first.kind == R_NOT_FOUND) {
			first = r;
			first.kind = R_METHOD_NOT_ALLOWED;
		}
	}
	return first;
}

bool route_names_session(enum route_kind kind)
{
	const char *p = route_table[kind].pattern;

	return p && strstr(p, "{id}");
}

unsigned route_right(enum route_kind kind, enum route_method method)
{
	const struct route_def *d = &route_table[kind];

	return method < M_OTHER && d->right_of[method] ? d->right_of[method] : d->right;
}
