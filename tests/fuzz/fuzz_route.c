/* tests/fuzz/fuzz_route.c: libFuzzer target for route_parse
 * (gateway/api/routes.c), which every request's path goes through before
 * any authentication. The first byte picks the method, the rest is the
 * path. Checked besides "no crash":
 *   - an id is 1..ROUTE_SESSION_ID_MAX (a session) or 1..ROUTE_ID_MAX (a
 *     template, an API key, a project) characters of [A-Za-z0-9_-], copied
 *     from the path right after "/v1/sessions/", "/v1/templates/",
 *     "/v1/keys/" or "/v1/projects/", and ends there;
 *     a token's id likewise after ".../tokens/" and a project key's after
 *     ".../keys/" (1..ROUTE_SUB_MAX), and no other route has one;
 *   - the methods agree: a path is either unknown to every method, or known
 *     to every one (each gives a handler or "method not allowed"), and
 *     "method not allowed" means some other method has a handler, and only
 *     a guest's port (any method) takes the methods of no name;
 *   - a port's number is the digits right after ".../ports/". */
#include "gateway/api/routes.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* Whether a route of kind k names a session, a template or a key: its
 * row's pattern has a placeholder (gateway/api/route_table.c). */
static bool has_id(enum route_kind k)
{
	return route_table[k].pattern && strchr(route_table[k].pattern, '{');
}

static void check_id(const struct route *r, const char *path)
{
	size_t n = strlen(r->id), skip;

	/* the id follows the name of what it is: a session's is the shorter */
	static const char *const named[] = { "/v1/templates/", "/v1/keys/", "/v1/projects/" };
	const char *prefix = "/v1/sessions/";
	bool named_id = false;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strncmp(path, named[i], strlen(named[i]))) {
			prefix = named[i];
			named_id = true;
		}

	if (r->kind == R_METHOD_NOT_ALLOWED && n == 0)
		return; /* a route without an id */
	if (!has_id(r->kind) && r->kind != R_METHOD_NOT_ALLOWED) {
		if (n)
			__builtin_trap();
		return;
	}
	if (n == 0 || n > (named_id ? ROUTE_ID_MAX : ROUTE_SESSION_ID_MAX))
		__builtin_trap();
	for (size_t i = 0; i < n; i++)
		if (!id_char(r->id[i]))
			__builtin_trap();
	skip = strlen(prefix);
	if (strncmp(path, prefix, skip) || strncmp(path + skip, r->id, n) ||
	    id_char(path[skip + n]))
		__builtin_trap();
	/* a token's id: copied whole from right after ".../tokens/" */
	if (r->kind == R_SESSION_TOKEN || r->kind == R_SESSION_TOKEN_ROTATE) {
		const char *sub = path + skip + n + strlen("/tokens/");
		size_t m = strlen(r->sub);

		if (strncmp(path + skip + n, "/tokens/", 8) || m == 0 || m > ROUTE_SUB_MAX ||
		    strncmp(sub, r->sub, m) || id_char(sub[m]))
			__builtin_trap();
	} else if (r->kind == R_PROJECT_KEY) {
		/* a project's key's id: copied whole from right after "/keys/" */
		const char *sub = path + skip + n + strlen("/keys/");
		size_t m = strlen(r->sub);

		if (strncmp(path + skip + n, "/keys/", 6) || m == 0 || m > ROUTE_SUB_MAX ||
		    strncmp(sub, r->sub, m) || id_char(sub[m]))
			__builtin_trap();
	} else if (r->kind == R_SESSION_RECORDING_FRAME) {
		/* a frame's number: 1 to 9 digits, the rest of the path */
		const char *sub = path + skip + n + strlen("/recording/frames/");
		size_t m = strlen(r->sub);

		if (strncmp(path + skip + n, "/recording/frames/", 18) || m == 0 || m > 9 ||
		    strspn(r->sub, "0123456789") != m || strcmp(sub, r->sub))
			__builtin_trap();
	} else if (r->kind == R_SESSION_PORT || r->kind == R_SESSION_PORT_SETTINGS) {
		/* a port's number: 1 to 9 digits, then a '/' (the port) or the
		 * path's end (its settings) */
		const char *sub = path + skip + n + strlen("/ports/");
		size_t m = strlen(r->sub);

		if (strncmp(path + skip + n, "/ports/", 7) || m == 0 || m > 9 ||
		    strspn(r->sub, "0123456789") != m || strncmp(sub, r->sub, m) ||
		    sub[m] != (r->kind == R_SESSION_PORT ? '/' : '\0'))
			__builtin_trap();
	} else if (r->sub[0] && r->kind != R_METHOD_NOT_ALLOWED) {
		__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum route_method methods[] = { M_GET, M_POST, M_DELETE, M_PUT, M_PATCH, M_OTHER };
	struct route r[M_OTHER + 1];
	char *path;
	int handled = 0, unknown = 0;

	if (size < 1)
		return 0;
	path = malloc(size);
	if (!path)
		return 0;
	memcpy(path, data + 1, size - 1);
	path[size - 1] = '\0';
	for (int i = 0; i <= M_OTHER; i++) {
		r[i] = route_parse(methods[i], path);
		check_id(&r[i], path);
		handled += r[i].kind != R_NOT_FOUND && r[i].kind != R_METHOD_NOT_ALLOWED;
		unknown += r[i].kind == R_NOT_FOUND;
	}
	if ((unknown != 0 && unknown != M_OTHER + 1) || (unknown == 0 && handled == 0) ||
	    (r[M_OTHER].kind != R_NOT_FOUND && r[M_OTHER].kind != R_METHOD_NOT_ALLOWED &&
	     r[M_OTHER].kind != R_SESSION_PORT))
		__builtin_trap();
	/* The same answer twice: no state. */
	if (route_parse(methods[data[0] % (M_OTHER + 1)], path).kind !=
	    r[data[0] % (M_OTHER + 1)].kind)
		__builtin_trap();
	free(path);
	return 0;
}
