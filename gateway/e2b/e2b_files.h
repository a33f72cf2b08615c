/* gateway/e2b/e2b_files.h: envd's GET and POST /files for a sandbox, each
 * file streamed through the gateway (e2b_files.c says how). Loop thread. */
#ifndef VITRINE_GATEWAY_E2B_FILES_H
#define VITRINE_GATEWAY_E2B_FILES_H

#include "gateway/api/http.h"

#include <stdbool.h>

struct e2b_call;
struct sess;

/* Serves /files for s as the user (root or not): called once for a GET or
 * a POST with no body, and twice for a POST with one (by the door's early
 * check before its body, which starts the upload and takes the body as it
 * comes, then once the body is whole). Answers r, now or later. */
void e2b_files(struct http_req *r, struct sess *s, bool root);
/* What c's /files call holds let go of (its commands stopped if still
 * running). Accepts a call without one. */
void e2b_files_release(struct e2b_call *c);

#endif
