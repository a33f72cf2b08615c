/* tests/lib/test_home.h: a VITRINE_HOME of a test's own, for the tests
 * whose gateway makes templates (so that their templates and imports stay
 * apart from the shared home's), and a shell line with printf arguments.
 * The images are the shared home's tiny image, linked (copied across
 * filesystems). */
#ifndef VITRINE_TESTS_TEST_HOME_H
#define VITRINE_TESTS_TEST_HOME_H

#include <stdbool.h>
#include <stddef.h>

/* Makes VITRINE_RUN (or /tmp)/TAG-home-PID into home (len bytes), with
 * templates/ and images/tiny. With raw_rootfs the image is images/tinyd
 * instead: tiny's kernel and initrd with a 16 MiB raw rootfs the guest
 * never mounts, so that sessions get a real qcow2 overlay (a disk in
 * their checkpoints and templates). 0, or -1 (the shell said why). */
int test_home_make(char *home, size_t len, const char *tag, bool raw_rootfs);

/* Runs the printf-formatted command with sh -c; its system() status. */
int test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
