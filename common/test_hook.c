/* common/test_hook.c: see test_hook.h. */
#include "common/test_hook.h"

#include <stdlib.h>

long test_hook_get(const char *name, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return 0;
	n = strtol(v, &end, 10);
	if (*end || n < 1)
		return 0;
	return n > max ? max : n;
}
