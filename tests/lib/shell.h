/* tests/lib/shell.h: a command line run through the shell, for tests of
 * the `vitrine` binary's own words and exit status. */
#ifndef VITRINE_TESTS_SHELL_H
#define VITRINE_TESTS_SHELL_H

#include <stddef.h>

/* Runs cmd with sh -c (add 2>&1 to it for stderr too) and puts its stdout
 * in out (len bytes with the NUL; the rest is read and dropped). Returns
 * its exit status, 128 when it did not exit, or -1 when it could not run. */
int shell_run(const char *cmd, char *out, size_t len);

#endif
