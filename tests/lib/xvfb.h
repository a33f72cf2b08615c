/* tests/lib/xvfb.h: an Xvfb of a test's own, on the first free display
 * from a number of the test's choosing up (tests that need an X server:
 * vitrine-view, vitrine-agent xwait). */
#ifndef VITRINE_TESTS_XVFB_H
#define VITRINE_TESTS_XVFB_H

#include <stddef.h>
#include <sys/types.h>

/* Starts Xvfb at size ("1280x800x24") on the first display from :from up
 * whose lock file is free, its name (":N") into display (len bytes), and
 * waits up to 10 s for its socket. Returns its pid, or -1 after saying
 * why. */
pid_t xvfb_start(int from, const char *size, char *display, size_t len);
/* Stops it (SIGTERM) and reaps it. Accepts pid <= 0. */
void xvfb_stop(pid_t pid);

#endif
