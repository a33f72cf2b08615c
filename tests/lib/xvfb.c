/* tests/lib/xvfb.c: see xvfb.h. */
#include "tests/lib/xvfb.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t xvfb_start(int from, const char *size, char *display, size_t len)
{
	char lock[64], sock[64];
	pid_t pid;

	for (int n = from;; n++) {
		snprintf(lock, sizeof(lock), "/tmp/.X%d-lock", n);
		if (access(lock, F_OK) == 0)
			continue;
		snprintf(display, len, ":%d", n);
		snprintf(sock, sizeof(sock), "/tmp/.X11-unix/X%d", n);
		break;
	}
	pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execlp("Xvfb", "Xvfb", display, "-screen", "0", size, "-nolisten", "tcp",
		       (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	for (int i = 0; i < 100; i++) {
		if (access(sock, F_OK) == 0)
			return pid;
		usleep(100 * 1000);
	}
	fprintf(stderr, "Xvfb did not start on %s\n", display);
	xvfb_stop(pid);
	return -1;
}

void xvfb_stop(pid_t pid)
{
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
}
