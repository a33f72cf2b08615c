/* gateway/e2b/e2b_route.c: see e2b_route.h. */
#include "gateway/e2b/e2b_route.h"

#include <stdio.h>
#include <string.h>

/* The id segment at p (up to '/' or the end) into out; its end, or NULL
 * when empty, too long or not [A-Za-z0-9_-]. */
static const char *id_at(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	while (p[n] && p[n] != '/') {
		char c = p[n];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-') ||
		    n + 1 >= cap)
			return NULL;
		n++;
	}
	if (!n)
		return NULL;
	memcpy(out, p, n);
	out[n] = '\0';
	return p + n;
}

static struct e2b_route envd_route(const char *method, const char *path)
{
	struct e2b_route r = { .kind = E2B_ENVD_NOT_FOUND };
	bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
	const char *slash;

	if (!strcmp(path, "/health")) {
		r.kind = get ? E2B_ENVD_HEALTH : E2B_BAD_METHOD;
	} else if (!strcmp(path, "/files")) {
		r.kind = get || post ? E2B_ENVD_FILES : E2B_BAD_METHOD;
	} else if (path[0] == '/' && (slash = strchr(path + 1, '/')) && slash > path + 1 &&
		   slash[1] && !strchr(slash + 1, '/') && strlen(path + 1) < sizeof(r.rpc)) {
		snprintf(r.rpc, sizeof(r.rpc), "%s", path + 1);
		r.kind = post ? E2B_ENVD_RPC : E2B_BAD_METHOD;
	}
	return r;
}

struct e2b_route e2b_route_parse(const char *method, const char *path, bool envd)
{
	struct e2b_route r = { .kind = E2B_NONE };
	bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST"),
	     del = !strcmp(method, "DELETE"), put = !strcmp(method, "PUT");
	const char *p, *rest;

	if (envd)
		return envd_route(method, path);
	if (!strcmp(path, "/snapshots")) {
		r.kind = get ? E2B_SNAPSHOT_LIST : E2B_BAD_METHOD;
		return r;
	}
	if (!strncmp(path, "/templates/",
		     11)) { /* deleteSnapshot's; E2B's other template calls are not served */
		if (del && (rest = id_at(path + 11, r.id, sizeof(r.id))) && !*rest)
			r.kind = E2B_SNAPSHOT_DELETE;
		else
			r.id[0] = '\0';
		return r;
	}
	if (!strncmp(path, "/v2/sandboxes", 13))
		p = path + 13;
	else if (!strncmp(path, "/sandboxes", 10))
		p = path + 10;
	else
		return r;
	if (!*p) {
		r.kind = post ? E2B_CREATE : get ? E2B_LIST : E2B_BAD_METHOD;
		return r;
	}
	if (*p != '/' || !(rest = id_at(p + 1, r.id, sizeof(r.id))))
		return r;
	if (!*rest) {
		r.kind = get ? E2B_GET : del ? E2B_KILL : E2B_BAD_METHOD;
		if (path[1] == 'v') /* /v2/sandboxes/{id} is no path of ours */
			r.kind = E2B_NONE;
	} else if (!strcmp(rest, "/timeout") && path[1] != 'v') {
		r.kind = post ? E2B_TIMEOUT : E2B_BAD_METHOD;
	} else if (!strcmp(rest, "/pause") && path[1] != 'v') {
		r.kind = post ? E2B_PAUSE : E2B_BAD_METHOD;
	} else if (!strcmp(rest, "/connect") || (!strcmp(rest, "/resume") && path[1] != 'v')) {
		r.kind = post ? E2B_CONNECT : E2B_BAD_METHOD;
	} else if (!strcmp(rest, "/metrics") && path[1] != 'v') {
		r.kind = get ? E2B_METRICS : E2B_BAD_METHOD;
	} else if (!strcmp(rest, "/network") && path[1] != 'v') {
		r.kind = put ? E2B_NETWORK : E2B_BAD_METHOD;
	} else if (!strcmp(rest, "/fork") && path[1] != 'v') {
		r.kind = post ? E2B_FORK : E2B_BAD_METHOD;
	} else if (!strcmp(rest, "/snapshots") && path[1] != 'v') {
		r.kind = post ? E2B_SNAPSHOT_CREATE : E2B_BAD_METHOD;
	}
	if (r.kind == E2B_NONE)
		r.id[0] = '\0';
	return r;
}
