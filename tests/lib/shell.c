/* tests/lib/shell.c: see shell.h. */
#include "tests/lib/shell.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

int shell_run(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t used = 0;
	char drop[4096];
	int st;

	if (len)
		out[0] = '\0';
	if (!p)
		return -1;
	while (used + 1 < len && fgets(out + used, (int)(len - used), p))
		used += strlen(out + used);
	while (fgets(drop, sizeof(drop), p)) /* a full out: the command still finishes */
		;
	st = pclose(p);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : st < 0 ? -1 : 128;
}
