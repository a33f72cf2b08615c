/* tests/lib/route_calls.h: one call of every route and method of the
 * gateway's route table (gateway/api/route_table.c), with the rights it
 * needs: the table that test_gateway_auth runs against every kind of
 * credential and test_gateway_projects against two projects' keys. A
 * route without a call fails both (route_calls_missing). */
#ifndef VITRINE_TESTS_ROUTE_CALLS_H
#define VITRINE_TESTS_ROUTE_CALLS_H

#include "gateway/api/routes.h"

#include <stddef.h>

/* One call of a route: method, path ("%s" is the session's id), body, and
 * the rights it needs as docs/api.md says (AUTH_R_*, or routes.h's
 * ROUTE_NO_TOKEN and ROUTE_OPERATOR_KEY). A body or query that is wrong on
 * purpose makes an allowed call answer 400 without doing anything. Every
 * route and method of the route table must have a call here, and its row
 * must say the rights the call needs (but "root" or "share" that a body
 * asks for). */
struct route_call {
	const char *method, *path, *body;
	unsigned need;
};
extern const struct route_call route_calls[];
extern const size_t route_calls_n;

/* A method's name as route_parse knows it (M_OTHER for none). */
enum route_method route_call_method(const char *name);
/* tmpl with its "%s" replaced by id, into out. */
void route_call_path(const char *tmpl, const char *id, char *out, size_t len);
/* The route c is on session id, as the table's parser sees it. */
struct route route_call_route(const struct route_call *c, const char *id);
/* Whether the call's path names a session ("%s", or one that is not there). */
int route_call_names_session(const struct route_call *c);

#endif
