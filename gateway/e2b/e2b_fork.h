/* gateway/e2b/e2b_fork.h: POST /sandboxes/{id}/fork (the SDK's
 * sandbox.fork({count, timeoutMs}) and Sandbox.fork(id)) on Vitrine's
 * fork (session.h's sess_fork: the running sandbox's disk and memory
 * copied while it stands still a moment, then it runs on, its id and end
 * untouched). Vitrine forks one at a time (the source is busy while it is
 * copied), so count forks are made in turn, each waited for until its
 * agent is up; the answer (201) is one entry per fork asked for, the
 * sandbox as create answers it or the error that stopped that fork. A
 * fork copies the source's template name, metadata, envVars and egress
 * rules; its timeout (E2B's default 15 s) counts from when it runs. The
 * body's parser is pure (tests/unit/test_e2b_api.c). Loop thread. */
#ifndef VITRINE_GATEWAY_E2B_FORK_H
#define VITRINE_GATEWAY_E2B_FORK_H

#include <stddef.h>

#define E2B_FORK_DEFAULT_TIMEOUT_S 15
#define E2B_FORK_MAX 100

/* {"timeout": s (0..86400, default E2B_FORK_DEFAULT_TIMEOUT_S; 0 the
 * default too), "count": n (1..E2B_FORK_MAX, default 1)}; an empty body
 * is {}. Returns 0, or -EINVAL with a sentence in err. */
int e2b_fork_parse(const char *body, size_t len, int *timeout_s, int *count, char *err,
		   size_t errlen);

#endif
