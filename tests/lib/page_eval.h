/* tests/lib/page_eval.h: reading a desktop guest's page state from a test:
 * `vitrine-ready eval` run in the guest through qemu-ga (the guest's
 * DevTools port is on its loopback only). */
#ifndef VITRINE_TESTS_PAGE_EVAL_H
#define VITRINE_TESTS_PAGE_EVAL_H

#include <jansson.h>

/* Evaluates expr in the page of the guest whose agent socket is qga_path
 * and returns its JSON value (a new reference). Returns NULL with a reason
 * in err (at least 512 bytes) when the agent or the evaluation fails. When
 * the page's DevTools socket does not answer within vitrine-ready's 5 s
 * (a guest slowed by a fork's copy on a loaded host), asked up to 3 times:
 * only for expressions that may run twice. */
json_t *page_eval(const char *qga_path, const char *expr, char *err, size_t errlen);

#endif
