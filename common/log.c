/* common/log.c: see log.h. */
#include "common/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int min_level = -1;

void log_set_level(enum log_level level)
{
	min_level = (int)level;
}

static int level_from_env(void)
{
	const char *v = getenv("VITRINE_LOG");

	if (!v)
		return LOG_INFO;
	if (!strcmp(v, "debug"))
		return LOG_DEBUG;
	if (!strcmp(v, "warn"))
		return LOG_WARN;
	if (!strcmp(v, "error"))
		return LOG_ERROR;
	return LOG_INFO;
}

void log_msg(enum log_level level, const char *component, const char *fmt, ...)
{
	static const char *names[] = { "debug", "info", "warn", "error" };
	char line[2048];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n;

	if (min_level < 0)
		min_level = level_from_env();
	if ((int)level < min_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld %-5s %s: ", tm.tm_hour, tm.tm_min,
		     tm.tm_sec, ts.tv_nsec / 1000000, names[level], component);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One fputs per line so lines from several threads do not interleave. */
	strncat(line, "\n", sizeof(line) - strlen(line) - 1);
	fputs(line, stderr);
}
