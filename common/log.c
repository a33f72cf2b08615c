/* common/log.c: see log.h. */
#include "common/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int min_level = -1, format = -1;

void log_set_level(enum log_level level)
{
	min_level = (int)level;
}

void log_set_format(enum log_format f)
{
	format = (int)f;
}

int log_format_parse(const char *s, enum log_format *out)
{
	if (!s || (strcmp(s, "text") && strcmp(s, "json")))
		return -1;
	*out = strcmp(s, "json") ? LOG_FORMAT_TEXT : LOG_FORMAT_JSON;
	return 0;
}

/* text as a JSON string's contents into out (which has room for n). */
static size_t json_escape(const char *text, char *out, size_t n)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)text; *p && o + 7 < n; p++) {
		if (*p == '"' || *p == '\\') {
			out[o++] = '\\';
			out[o++] = (char)*p;
		} else if (*p < 0x20) {
			o += (size_t)snprintf(out + o, n - o, "\\u%04x", *p);
		} else {
			out[o++] = (char)*p;
		}
	}
	out[o] = '\0';
	return o;
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
	char msg[2048], line[4096 + 256], when[64];
	struct timespec ts;
	struct tm tm;
	va_list ap;

	if (min_level < 0)
		min_level = level_from_env();
	if ((int)level < min_level)
		return;
	if (format < 0) {
		enum log_format f = LOG_FORMAT_TEXT;

		log_format_parse(getenv("VITRINE_LOG_FORMAT"), &f);
		format = (int)f;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (format == LOG_FORMAT_JSON) {
		char comp[128], text[4096];

		json_escape(component, comp, sizeof(comp));
		json_escape(msg, text, sizeof(text));
		snprintf(line, sizeof(line),
			 "{\"time\":\"%s\",\"level\":\"%s\",\"component\":\"%s\",\"msg\":\"%s\"}\n",
			 when, names[level], comp, text);
	} else {
		snprintf(line, sizeof(line), "%s %-5s %s: %s\n", when, names[level], component,
			 msg);
	}
	/* One fputs per line so lines from several threads do not interleave. */
	fputs(line, stderr);
}
