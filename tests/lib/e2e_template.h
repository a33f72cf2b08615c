/* tests/lib/e2e_template.h: the desktop template the end-to-end tests share,
 * so that one desktop boot serves every test binary that does not test the
 * boot itself (each used to boot its own: about a minute each, in each
 * build). It is tests/e2e/pages/life.html at the default screen size
 * (1280x800), made through POST /v1/templates by the first binary that asks.
 *
 * With $VITRINE_E2E_TEMPLATE set (tests/run.sh sets it, and removes that
 * template before and after the suites), the template has that name and is
 * kept for the next binary, whatever gateway asks; without it, each process
 * makes one of its own, which e2e_template_release removes. */
#ifndef VITRINE_TESTS_E2E_TEMPLATE_H
#define VITRINE_TESTS_E2E_TEMPLATE_H

#include <stddef.h>

struct gateway_proc;

/* The page in it (relative to the repository's root). */
#define E2E_TEMPLATE_PAGE "tests/e2e/pages/life.html"

/* Finds the shared template on g's VITRINE_HOME, or makes it through g
 * (waiting up to 900 s). Returns 0 with its name in name (size bytes) and
 * its creation time (Unix s) in *created_at (may be NULL), or -1 after
 * printing why. */
int e2e_template_get(const struct gateway_proc *g, char *name, size_t size, long long *created_at);
/* Removes the template through g unless it is the shared, named one (then
 * the next binary uses it). g's sessions must be gone. */
void e2e_template_release(const struct gateway_proc *g, const char *name);

#endif
