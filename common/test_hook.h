/* common/test_hook.h: the test hooks, environment variables with which
 * tests shorten a fixed wait of the product (a deadline, a timeout) so that
 * they need not sit through it; each is listed in docs/vmm.md, "Test
 * hooks". Never set in production. */
#ifndef VITRINE_COMMON_TEST_HOOK_H
#define VITRINE_COMMON_TEST_HOOK_H

/* The hook name's value: a decimal integer, max when it is larger (a hook
 * shortens a wait: max is the product's own value), or 0 when the variable
 * is unset, empty, not a whole number or below 1. Reads the environment:
 * call it once, before threads start. This function can't fail. */
long test_hook_get(const char *name, long max);

#endif
